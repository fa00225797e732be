package analysis

import (
	"slices"
	"testing"

	"github.com/storagebench/storagebench/internal/results"
)

// total is a step's figures over all I/O.
func total(iops, meanLatencyNs float64) results.StepAggregate {
	return results.StepAggregate{Total: results.OperationSummary{IOPS: iops, BytesPerSec: iops * 4096,
		Latency: results.LatencySummary{Count: 1, MeanNs: meanLatencyNs}}}
}

func TestQueueFull(t *testing.T) {
	for _, tc := range []struct {
		name             string
		iops, latNs      float64
		offered, outstdg int64
		wantSat, want    bool
	}{
		// 3,000 IOPS × 10.4 ms = 31.2 of 32 in flight: the queue was full.
		{"saturated, queue full", 3000, 10.4e6, 4500, 32, true, true},
		// 3,000 IOPS × 9.6 ms = 28.8 of 32: exactly 90 %, full.
		{"saturated, at 90 %", 3000, 9.6e6, 4500, 32, true, true},
		// 3,000 IOPS × 1 ms = 3 of 32: the storage held the rate back.
		{"saturated, queue mostly empty", 3000, 1e6, 4500, 32, true, false},
		{"sustained, queue full", 4500, 7e6, 4500, 32, false, false},
		{"saturated, depth unknown", 3000, 10.4e6, 4500, 0, true, false},
		// A log at depth 1 per job, 2 jobs: 300 writes/s × 0.5 ms + 300
		// fdatasync/s × 6 ms = 1.95 of 2 in flight: full, though the
		// writes alone hold 0.15.
		{"a log's sync calls fill its queue", 300, 0.5e6, 1000, 2, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := total(tc.iops, tc.latNs)
			if tc.name == "a log's sync calls fill its queue" {
				a.Sync = dir(tc.iops, 6*ms)
			}
			res, err := Analyze([]StepInput{{Aggregate: a, OfferedIOPS: tc.offered, Outstanding: tc.outstdg}}, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Steps[0]
			if s.Saturated != tc.wantSat || s.QueueFull != tc.want {
				t.Fatalf("saturated %v queue full %v, want %v %v (in flight %.2f of %d)",
					s.Saturated, s.QueueFull, tc.wantSat, tc.want, InFlight(a), tc.outstdg)
			}
		})
	}
}

func TestClientBound(t *testing.T) {
	step := func(n int, iops float64, unthrottled, check bool) StepInput {
		a := total(iops, 1e6)
		a.Step = n
		return StepInput{Aggregate: a, Unthrottled: unthrottled, ClientBoundCheck: check}
	}
	failed := func(s StepInput) StepInput { s.Aggregate.Errors = []string{"client 0: fio exited 1"}; return s }
	for _, tc := range []struct {
		name      string
		steps     []StepInput
		opts      Options
		wantNil   bool
		wantGain  float64
		wantBound bool
		wantMax   []int
		wantCheck []int
	}{
		{name: "storage-bound: no gain", steps: []StepInput{step(0, 10000, true, false), step(1, 10100, true, true), step(2, 5000, false, false)},
			wantGain: 1, wantMax: []int{0}, wantCheck: []int{1}},
		{name: "exactly 5 % is not bound", steps: []StepInput{step(0, 10000, true, false), step(1, 10500, true, true)},
			wantGain: 5, wantMax: []int{0}, wantCheck: []int{1}},
		{name: "client-bound", steps: []StepInput{step(0, 10000, true, false), step(1, 12300, true, true)},
			wantGain: 23, wantBound: true, wantMax: []int{0}, wantCheck: []int{1}},
		{name: "repeated: means of the runs", steps: []StepInput{step(0, 9000, true, false), step(1, 11000, true, false),
			step(2, 10400, true, true), step(3, 10800, true, true)},
			wantGain: 6, wantBound: true, wantMax: []int{0, 1}, wantCheck: []int{2, 3}},
		{name: "failed run left out", steps: []StepInput{step(0, 10000, true, false), failed(step(1, 30000, true, true)), step(2, 10000, true, true)},
			wantGain: 0, wantMax: []int{0}, wantCheck: []int{2}},
		{name: "in bytes", opts: Options{Throughput: ThroughputBytes},
			steps: []StepInput{step(0, 1000, true, false), step(1, 1100, true, true)}, wantGain: 10, wantBound: true, wantMax: []int{0}, wantCheck: []int{1}},
		{name: "check not run yet", steps: []StepInput{step(0, 10000, true, false)}, wantNil: true},
		{name: "no curve", steps: []StepInput{step(0, 10000, false, false)}, wantNil: true},
		{name: "check failed", steps: []StepInput{step(0, 10000, true, false), failed(step(1, 9000, true, true))}, wantNil: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.steps, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			cb := res.ClientBound
			if tc.wantNil {
				if cb != nil {
					t.Fatalf("verdict %+v, want none", cb)
				}
				return
			}
			if cb == nil {
				t.Fatal("no verdict")
			}
			if d := cb.GainPercent - tc.wantGain; d > 1e-9 || d < -1e-9 || cb.Bound != tc.wantBound ||
				!slices.Equal(cb.MaximumSteps, tc.wantMax) || !slices.Equal(cb.CheckSteps, tc.wantCheck) {
				t.Fatalf("verdict %+v, want gain %v bound %v on %v vs %v", cb, tc.wantGain, tc.wantBound, tc.wantMax, tc.wantCheck)
			}
		})
	}
}

// The check runs at another depth: its high latency at the maximum is not
// a point of the curve, and must not hide the curve's knee.
func TestKneeLeavesOutTheClientBoundCheck(t *testing.T) {
	pt := func(n int, iops, latNs float64, unthrottled, check bool) StepInput {
		a := total(iops, latNs)
		a.Step = n
		return StepInput{Aggregate: a, Unthrottled: unthrottled, ClientBoundCheck: check}
	}
	steps := []StepInput{pt(0, 10000, 5e6, true, false), pt(1, 10000, 40e6, true, true),
		pt(2, 2000, 0.2e6, false, false), pt(3, 4000, 0.25e6, false, false), pt(4, 6000, 0.3e6, false, false),
		pt(5, 8000, 0.5e6, false, false), pt(6, 9000, 2e6, false, false)}
	res, err := Analyze(steps, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.KneeStep != 5 {
		t.Fatalf("knee at step %d, want 5 (the check left out)", res.Summary.KneeStep)
	}
	if !res.Steps[1].ClientBoundCheck || res.Steps[1].Knee {
		t.Errorf("check step analysed as %+v", res.Steps[1])
	}
}
