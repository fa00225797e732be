package volops

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestSummarizeRejects(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name    string
		samples []Sample
		is      error
		msg     string
	}{
		{
			"unknown operation",
			[]Sample{{Operation: "resize", Concurrency: 1, Start: t0, End: t0, Outcome: Succeeded}},
			ErrUnknownOperation, `sample 0: unknown operation "resize": must be one of provision,`,
		},
		{
			"unknown outcome",
			concat(step(Provision, s), []Sample{{Operation: Attach, Concurrency: 1, Start: t0, End: t0, Outcome: "Lost"}}),
			ErrUnknownOutcome, `sample 1: attach: unknown outcome "Lost": must be one of Succeeded, Failed, TimedOut`,
		},
		{
			"concurrency 0",
			[]Sample{{Operation: Expand, Start: t0, End: t0, Outcome: Succeeded}},
			ErrInvalidConcurrency, "sample 0: expand: invalid concurrency: concurrency 0, must be at least 1",
		},
		{
			"negative index",
			[]Sample{{Operation: Expand, Concurrency: 2, Index: -1, Start: t0, End: t0, Outcome: Succeeded}},
			ErrInvalidIndex, "sample 0: expand at concurrency 2: index out of range: index -1, must be 0 to 1",
		},
		{
			"index past the concurrency",
			[]Sample{{Operation: Expand, Concurrency: 2, Index: 2, Start: t0, End: t0, Outcome: Succeeded}},
			ErrInvalidIndex, "index 2, must be 0 to 1",
		},
		{
			"end before start",
			[]Sample{{Operation: Snapshot, Concurrency: 1, Start: t0, End: t0.Add(-1500 * time.Millisecond), Outcome: Failed}},
			ErrEndBeforeStart, "sample 0: snapshot at concurrency 1, index 0: end before start: ends 1.5s before it starts",
		},
		{
			"duplicate index",
			concat(step(Delete, s, s), step(Delete, s, s)),
			ErrDuplicateIndex, "samples 0 and 2: duplicate index: both are index 0 of delete at concurrency 2",
		},
		{
			"a step short of its concurrency",
			concat(step(Provision, s, s, s), step(Attach, s, s)[:1]),
			ErrStepCount, "attach at concurrency 2: step sample count differs from its concurrency: 1 samples, want 2",
		},
		{
			// The same index in two steps, or in two operations, is fine:
			// the error is about the short step.
			"index shared across steps and operations",
			concat(step(Provision, s), step(Provision, s, s), step(Delete, s, s)[1:]),
			ErrStepCount, "delete at concurrency 2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Summarize(tc.samples)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Summarize error = %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestSummarizeSteps(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    StepSummary
	}{
		{
			"one sample",
			step(Provision, 1500*ms),
			StepSummary{Concurrency: 1, Count: 1, Succeeded: 1, Min: 1500 * ms, Mean: 1500 * ms,
				P50: 1500 * ms, P90: 1500 * ms, P99: 1500 * ms, Max: 1500 * ms, PerMinute: 40, Span: 1500 * ms},
		},
		{
			// Nearest rank of 4: p50 is the 2nd, p90 and p99 the 4th.
			"four samples, any order",
			step(Provision, 400*ms, 100*ms, 300*ms, 200*ms),
			StepSummary{Concurrency: 4, Count: 4, Succeeded: 4, Min: 100 * ms, Mean: 250 * ms,
				P50: 200 * ms, P90: 400 * ms, P99: 400 * ms, Max: 400 * ms, PerMinute: 600, Span: 400 * ms},
		},
		{
			// The mean of 1, 2 and 2 ns is 5/3 ns, rounded to 2.
			"mean rounds to the nearest nanosecond",
			step(Provision, 1, 2, 2),
			StepSummary{Concurrency: 3, Count: 3, Succeeded: 3, Min: 1, Mean: 2, P50: 2, P90: 2, P99: 2, Max: 2, PerMinute: 3 * 60e9 / 2, Span: 2},
		},
		{
			// Latencies over the succeeded ones; the span over all; the
			// first reason by index, not by input order.
			"failures are counted, not timed",
			func() []Sample {
				ss := step(Attach, 10*time.Second, time.Second, 3*time.Second, 2*time.Second)
				ss = with(ss, 0, TimedOut, "pod not running after 10s")
				ss = with(ss, 2, Failed, "FailedAttachVolume")
				return []Sample{ss[2], ss[1], ss[0], ss[3]}
			}(),
			StepSummary{Concurrency: 4, Count: 4, Succeeded: 2, Failed: 1, TimedOut: 1,
				Min: time.Second, Mean: 1500 * ms, P50: time.Second, P90: 2 * time.Second, P99: 2 * time.Second,
				Max: 2 * time.Second, PerMinute: 12, Span: 10 * time.Second, FirstReason: "pod not running after 10s"},
		},
		{
			"nothing succeeded",
			with(with(step(Snapshot, time.Second, time.Second), 0, Failed, ""), 1, Failed, "no snapshot class"),
			StepSummary{Concurrency: 2, Count: 2, Failed: 2, Span: time.Second, FirstReason: ""},
		},
		{
			"staggered starts: the span runs from the first start to the last end",
			func() []Sample {
				ss := step(Expand, time.Second, time.Second)
				ss[1].Start, ss[1].End = t0.Add(2*time.Second), t0.Add(3*time.Second)
				return ss
			}(),
			StepSummary{Concurrency: 2, Count: 2, Succeeded: 2, Min: time.Second, Mean: time.Second,
				P50: time.Second, P90: time.Second, P99: time.Second, Max: time.Second, PerMinute: 40, Span: 3 * time.Second},
		},
		{
			"zero span: no rate",
			step(Delete, 0, 0),
			StepSummary{Concurrency: 2, Count: 2, Succeeded: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Summarize(tc.samples)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Curves) != 1 || len(r.Curves[0].Steps) != 1 {
				t.Fatalf("Summarize = %+v, want one curve of one step", r)
			}
			if got := r.Curves[0].Steps[0]; got != tc.want {
				t.Errorf("step =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestSummarizeOrder(t *testing.T) {
	s := time.Second
	// Operations and steps given out of order come back in order.
	r, err := Summarize(concat(step(Delete, s), step(Provision, s, s), step(Attach, s), step(Provision, s)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Curves {
		for _, st := range c.Steps {
			got = append(got, string(c.Operation)+"@"+string(rune('0'+st.Concurrency)))
		}
	}
	if want := "provision@1 provision@2 attach@1 delete@1"; strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
	if _, ok := r.Curve(Snapshot); ok {
		t.Error("Curve(Snapshot) found a curve that was not measured")
	}
	if c, ok := r.Curve(Attach); !ok || c.Operation != Attach {
		t.Errorf("Curve(Attach) = %+v, %v", c, ok)
	}
	empty, err := Summarize(nil)
	if err != nil || len(empty.Curves) != 0 {
		t.Errorf("Summarize(nil) = %+v, %v; want an empty result", empty, err)
	}
}

// bruteRank is the nearest-rank percentile by its definition: the smallest
// measured value v such that at least percent % of the values are ≤ v.
func bruteRank(ds []time.Duration, percent int) time.Duration {
	best := time.Duration(-1)
	for _, v := range ds {
		atOrBelow := 0
		for _, w := range ds {
			if w <= v {
				atOrBelow++
			}
		}
		if atOrBelow*100 >= percent*len(ds) && (best < 0 || v < best) {
			best = v
		}
	}
	return best
}

func TestPercentilesAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		maxN   int
		spread int64 // durations are 1..spread ms: small spreads give ties
	}{
		{"small steps, many ties", 12, 5},
		{"steps up to 250, few ties", 250, 1_000_000},
		{"steps around 100, where p99 changes rank", 120, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 300 {
				n := 1 + rng.IntN(tc.maxN)
				ds := make([]time.Duration, n)
				for i := range ds {
					ds[i] = time.Duration(1+rng.Int64N(tc.spread)) * time.Millisecond
				}
				r, err := Summarize(step(Provision, ds...))
				if err != nil {
					t.Fatal(err)
				}
				st := r.Curves[0].Steps[0]
				for _, p := range []struct {
					percent int
					got     time.Duration
				}{{50, st.P50}, {90, st.P90}, {99, st.P99}, {100, st.Max}, {0, st.Min}} {
					if want := bruteRank(ds, p.percent); p.got != want {
						t.Fatalf("trial %d, n %d: p%d = %v, want %v (%v)", trial, n, p.percent, p.got, want, ds)
					}
				}
			}
		})
	}
}
