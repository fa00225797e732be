package run

import (
	"testing"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// recordWith is a recorded step offering iops with the given per-second
// IOPS and p99s.
func recordWith(index int, iops int64, attempt int32, perSecond []float64, p99 []float64) Step {
	windows := make([]results.Window, len(perSecond))
	for k, v := range perSecond {
		windows[k] = results.Window{StartMs: uint64(k) * 1000, IOPS: v, IOs: uint64(v)}
	}
	return Step{Order: protocol.StepOrder{Index: index, Step: plan.Step{Index: index, OfferedIOPS: iops, Attempt: attempt}},
		Aggregate: results.StepAggregate{Timeline: results.Timeline{WindowSeconds: 1, Windows: windows}}, P99Ns: p99}
}

func TestSamplesLeaveSupersededStepsOut(t *testing.T) {
	steps := []Step{
		recordWith(0, 1000, 1, []float64{1000, 999}, []float64{100, 110}),
		recordWith(1, 2000, 1, []float64{1500, 2500}, []float64{300}), // not steady: run again
		recordWith(2, 2000, 2, []float64{2000, 2001}, []float64{200, 210}),
	}
	// Step 3 (index 2) saturated: its latency was closed-loop.
	got := Samples(steps, func(i int) bool { return i == 2 })
	if len(got) != 2 {
		t.Fatalf("got %d steps, want 2 (the superseded run left out): %+v", len(got), got)
	}
	for k, want := range []struct {
		planned, index int
		iops, p99      []float64
	}{{0, 0, []float64{1000, 999}, []float64{100, 110}}, {1, 2, []float64{2000, 2001}, []float64{200, 210}}} {
		g := got[k]
		if g.Planned != want.planned || g.Index != want.index || !equal(g.IOPS, want.iops) || !equal(g.P99Ns, want.p99) {
			t.Errorf("step %d: %+v, want planned %d index %d IOPS %v p99 %v", k, g, want.planned, want.index, want.iops, want.p99)
		}
	}
	if got[1].Label != "2000 IOPS offered" {
		t.Errorf("label %q", got[1].Label)
	}
	if got[0].ClosedLoop || !got[1].ClosedLoop {
		t.Errorf("closed loop %v, %v; want the saturated step's only", got[0].ClosedLoop, got[1].ClosedLoop)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
