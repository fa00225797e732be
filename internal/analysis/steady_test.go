package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// timeline builds a one-second timeline whose second k did iops[k] I/Os,
// each of latency ns; its seconds without I/O are its idle spans.
func timeline(ns uint64, iops ...uint64) results.Timeline {
	t := results.Timeline{WindowSeconds: 1, Windows: make([]results.Window, len(iops))}
	for k, n := range iops {
		w := &t.Windows[k]
		w.StartMs, w.IOs, w.IOPS = uint64(k)*1000, n, float64(n)
		if n > 0 {
			w.Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(ns), Count: n}}}
			continue
		}
		if last := len(t.Idle) - 1; last >= 0 && t.Idle[last].EndMs == w.StartMs {
			t.Idle[last].EndMs += 1000
		} else {
			t.Idle = append(t.Idle, results.Span{StartMs: w.StartMs, EndMs: w.StartMs + 1000})
		}
	}
	return t
}

func repeat(v uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestSteady(t *testing.T) {
	ramp := make([]uint64, 50)
	for i := range ramp {
		ramp[i] = 1000 + uint64(i)*10 // +50 % over the step
	}
	cases := []struct {
		name     string
		iops     []uint64
		o        SteadyOptions
		judged   bool
		steady   bool
		rangePct float64
		slopePct float64
	}{
		{"flat", repeat(1000, 60), SteadyOptions{}, true, true, 0, 0},
		{"too short to judge", repeat(1000, 4), SteadyOptions{}, false, false, 0, 0},
		{"nothing completed", repeat(0, 10), SteadyOptions{}, true, false, 0, 0},
		// Rounds of 10 s: 1045, 1145, 1245, 1345, 1445 → range 400 of 1245.
		{"warming up", ramp, SteadyOptions{}, true, false, 400.0 / 1245 * 100, 400.0 / 1245 * 100},
		// Alternating seconds average out within a round.
		{"noisy seconds, steady rounds", append(repeat(900, 1), []uint64{1100, 900, 1100, 900, 1100, 900, 1100, 900, 1100}...),
			SteadyOptions{Rounds: 5}, true, true, 0, 0},
		// One slow round out of five: range 25 %, slope small.
		{"one dip breaks the range", []uint64{1000, 1000, 750, 1000, 1000}, SteadyOptions{}, true, false, 25.0 / 0.95, 0},
		// Looser bounds accept the same dip.
		{"a wider range bound", []uint64{1000, 1000, 750, 1000, 1000}, SteadyOptions{RangePercent: 30}, true, true, 25.0 / 0.95, 0},
		// A remainder of seconds at the start is left out: 11 seconds, 5 rounds of 2.
		{"leading remainder ignored", append([]uint64{1}, repeat(500, 10)...), SteadyOptions{}, true, true, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Steady(timeline(1000, c.iops...), c.o)
			if got.Judged != c.judged || got.Steady != c.steady ||
				math.Abs(got.RangePercent-c.rangePct) > 1e-9 || math.Abs(got.SlopePercent-c.slopePct) > 1e-9 {
				t.Errorf("Steady = %+v, want judged %v steady %v range %.4f slope %.4f", got, c.judged, c.steady, c.rangePct, c.slopePct)
			}
		})
	}
}

func TestSteadyOptionsValidate(t *testing.T) {
	for _, o := range []SteadyOptions{{Rounds: 1}, {Rounds: 61}, {RangePercent: -1}, {SlopePercent: 101}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := (SteadyOptions{}).Validate(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

func TestLongestStall(t *testing.T) {
	slow := func(tl results.Timeline, k int, ns uint64) results.Timeline {
		tl.Windows[k].Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(ns), Count: tl.Windows[k].IOs}}}
		return tl
	}
	fast := fio.BinValue(fio.IndexOf(1000))
	cases := []struct {
		name       string
		tl         results.Timeline
		start, dur time.Duration
		p999Around uint64
	}{
		{"none", timeline(1000, 5, 5, 5), 0, 0, 0},
		// The I/Os that waited through the stall complete in the second
		// after it; seconds further away do not count.
		{"the longest of two", slow(slow(timeline(1000, 5, 0, 5, 0, 0, 0, 5, 5), 6, 3_000_000_000), 1, 9_000_000_000),
			3 * time.Second, 3 * time.Second, fio.BinValue(fio.IndexOf(3_000_000_000))},
		{"at the start", timeline(1000, 0, 0, 5), 0, 2 * time.Second, fast},
		{"at the end", timeline(1000, 5, 0), time.Second, time.Second, fast},
		{"measured to the millisecond", results.Timeline{WindowSeconds: 1,
			Windows: []results.Window{{StartMs: 0, IOs: 1}, {StartMs: 900}, {StartMs: 3300, IOs: 1}},
			Idle:    []results.Span{{StartMs: 900, EndMs: 3300}}}, 900 * time.Millisecond, 2400 * time.Millisecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LongestStall(c.tl)
			want := Stall{Start: c.start, Duration: c.dur, P999AroundNs: c.p999Around}
			if got != want {
				t.Errorf("LongestStall = %+v, want %+v", got, want)
			}
		})
	}
}
