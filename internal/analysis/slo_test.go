package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/results"
)

func TestValidateObjective(t *testing.T) {
	sel := LatencySelector{"p99", "read"}
	for _, tc := range []struct {
		name    string
		o       Objective
		wantErr error
		wantMsg string
	}{
		{"latency at load", Objective{LatencyAtLoad: &LatencyAtLoad{sel, 2 * time.Millisecond, 40000}}, nil, ""},
		{"peak IOPS", Objective{PeakIOPS: ptr[int64](1)}, nil, ""},
		{"peak MiB/s", Objective{PeakMiBps: ptr[int64](4000)}, nil, ""},
		{"IOPS at latency, default selector", Objective{IOPSAtLatency: &IOPSAtLatency{MaxLatency: time.Millisecond, MinIOPS: 1}}, nil, ""},
		{"MiB/s at latency", Objective{MiBpsAtLatency: &MiBpsAtLatency{sel, time.Millisecond, 4700}}, nil, ""},
		{"no kind", Objective{Name: "empty"}, ErrNoObjectiveKind, `objective "empty": objective sets no kind`},
		{
			"two kinds", Objective{PeakIOPS: ptr[int64](1), IOPSAtLatency: &IOPSAtLatency{sel, time.Millisecond, 1}},
			ErrMultipleObjectiveKinds, "objective: objective sets more than one kind: PeakIOPS, IOPSAtLatency",
		},
		{
			"bad selector", Objective{Name: "s", LatencyAtLoad: &LatencyAtLoad{LatencySelector{"p98", "read"}, time.Millisecond, 1}},
			ErrInvalidSelector, `objective "s": LatencyAtLoad.Selector: invalid latency selector: unknown latency metric "p98"`,
		},
		{
			"zero max latency", Objective{LatencyAtLoad: &LatencyAtLoad{sel, 0, 1}},
			ErrInvalidThreshold, "LatencyAtLoad.MaxLatency must be positive, got 0s",
		},
		{
			"zero min IOPS", Objective{LatencyAtLoad: &LatencyAtLoad{sel, time.Millisecond, 0}},
			ErrInvalidThreshold, "LatencyAtLoad.MinIOPS must be positive, got 0",
		},
		{"zero peak IOPS", Objective{PeakIOPS: ptr[int64](0)}, ErrInvalidThreshold, "PeakIOPS must be positive, got 0"},
		{"negative peak MiB/s", Objective{PeakMiBps: ptr[int64](-5)}, ErrInvalidThreshold, "PeakMiBps must be positive, got -5"},
		{
			"IOPS at latency: bad operation", Objective{IOPSAtLatency: &IOPSAtLatency{LatencySelector{"p99", "reads"}, time.Millisecond, 1}},
			ErrInvalidSelector, `IOPSAtLatency.Selector: invalid latency selector: unknown operation "reads"`,
		},
		{
			"IOPS at latency: negative latency", Objective{IOPSAtLatency: &IOPSAtLatency{sel, -time.Millisecond, 1}},
			ErrInvalidThreshold, "IOPSAtLatency.MaxLatency must be positive, got -1ms",
		},
		{
			"IOPS at latency: zero IOPS", Objective{IOPSAtLatency: &IOPSAtLatency{sel, time.Millisecond, 0}},
			ErrInvalidThreshold, "IOPSAtLatency.MinIOPS must be positive, got 0",
		},
		{
			"MiB/s at latency: bad selector", Objective{MiBpsAtLatency: &MiBpsAtLatency{LatencySelector{"avg", ""}, time.Millisecond, 1}},
			ErrInvalidSelector, "MiBpsAtLatency.Selector",
		},
		{
			"MiB/s at latency: zero latency", Objective{MiBpsAtLatency: &MiBpsAtLatency{sel, 0, 1}},
			ErrInvalidThreshold, "MiBpsAtLatency.MaxLatency must be positive",
		},
		{
			"MiB/s at latency: zero MiB/s", Objective{MiBpsAtLatency: &MiBpsAtLatency{sel, time.Millisecond, 0}},
			ErrInvalidThreshold, "MiBpsAtLatency.MinMiBps must be positive, got 0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateObjective(tc.o)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("ValidateObjective() = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ValidateObjective() = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("ValidateObjective() = %q, want it to contain %q", err, tc.wantMsg)
			}
		})
	}
}

func TestObjectiveString(t *testing.T) {
	sel := LatencySelector{"p99", "read"}
	for _, tc := range []struct {
		o    Objective
		want string
	}{
		{Objective{LatencyAtLoad: &LatencyAtLoad{sel, 2 * time.Millisecond, 40000}}, "p99 read latency ≤ 2 ms at ≥ 40,000 IOPS"},
		{Objective{PeakIOPS: ptr[int64](160000)}, "peak IOPS ≥ 160,000"},
		{Objective{PeakMiBps: ptr[int64](4700)}, "peak throughput ≥ 4,700 MiB/s"},
		{Objective{IOPSAtLatency: &IOPSAtLatency{MaxLatency: time.Millisecond, MinIOPS: 113000}}, "≥ 113,000 IOPS at mean latency ≤ 1 ms"},
		{Objective{MiBpsAtLatency: &MiBpsAtLatency{LatencySelector{"p99.9", "worst"}, 1500 * time.Microsecond, 1800}}, "≥ 1,800 MiB/s at p99.9 worst-direction latency ≤ 1.5 ms"},
		{Objective{}, "empty objective"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	if got := formatDuration(-time.Millisecond); got != "-1 ms" {
		t.Errorf("formatDuration(-1ms) = %q", got)
	}
}

// evaluate runs one objective through Analyze.
func evaluate(t *testing.T, steps []StepInput, o Objective) SLOResult {
	t.Helper()
	res, err := Analyze(steps, Options{}, []Objective{o})
	if err != nil {
		t.Fatal(err)
	}
	return res.SLOs[0]
}

type sloCase struct {
	name        string
	steps       []StepInput
	o           Objective
	wantVerdict Verdict
	wantReason  string
}

func runSLOCases(t *testing.T, cases []sloCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := evaluate(t, tc.steps, tc.o)
			if got.Verdict != tc.wantVerdict || got.Reason != tc.wantReason {
				t.Errorf("got %s: %q\nwant %s: %q", got.Verdict, got.Reason, tc.wantVerdict, tc.wantReason)
			}
			wantName := tc.o.Name
			if wantName == "" {
				wantName = tc.o.String()
			}
			if got.Name != wantName {
				t.Errorf("Name = %q, want %q", got.Name, wantName)
			}
		})
	}
}

// p99 returns a read-only step whose p99 read latency is ns (other figures 100 µs).
func p99(step int, iops float64, ns uint64) results.StepAggregate {
	a := reads(step, iops, 100*us)
	a.Read.Latency.P99Ns = ns
	a.Total.Latency.P99Ns = ns
	return a
}

func TestLatencyAtLoad(t *testing.T) {
	obj := func(maxLat time.Duration, minIOPS int64) Objective {
		return Objective{Name: "oltp", LatencyAtLoad: &LatencyAtLoad{LatencySelector{"p99", "read"}, maxLat, minIOPS}}
	}
	sweep := unthrottled(
		p99(1, 10000, 500*us),
		p99(2, 20000, 800*us),
		p99(3, 31204, 1200*us),
		p99(4, 41230, 1840*us),
		p99(5, 45000, 2610*us),
		p99(6, 46000, 3*ms),
	)
	runSLOCases(t, []sloCase{
		{
			"met", sweep, obj(2*time.Millisecond, 40000),
			Met, "p99 read latency 1.84 ms ≤ 2 ms at 41,230 IOPS (step 5)",
		},
		{
			"met names the highest load that meets", sweep, obj(5*time.Millisecond, 20000),
			Met, "p99 read latency 3 ms ≤ 5 ms at 46,000 IOPS (step 7)",
		},
		{
			"latency exactly at the limit is met", sweep, obj(1840*time.Microsecond, 40000),
			Met, "p99 read latency 1.84 ms ≤ 1.84 ms at 41,230 IOPS (step 5)",
		},
		{
			"load exactly at the minimum counts", sweep, obj(2*time.Millisecond, 41230),
			Met, "p99 read latency 1.84 ms ≤ 2 ms at 41,230 IOPS (step 5)",
		},
		{
			"not met: the best of several steps is named", sweep, obj(1800*time.Microsecond, 40000),
			NotMet, "p99 read latency 1.84 ms > 1.8 ms at 41,230 IOPS (step 5), the lowest of 3 steps at ≥ 40,000 IOPS",
		},
		{
			"not met: one step reached the load", sweep, obj(2*time.Millisecond, 46000),
			NotMet, "p99 read latency 3 ms > 2 ms at 46,000 IOPS (step 7), the only step at ≥ 46,000 IOPS",
		},
		{
			"not met: just over the limit shows the digits", unthrottled(p99(1, 50000, 2*ms+1000)), obj(2*time.Millisecond, 40000),
			NotMet, "p99 read latency 2.001 ms > 2 ms at 50,000 IOPS (step 2), the only step at ≥ 40,000 IOPS",
		},
		{
			"not measurable: load never reached", unthrottled(p99(1, 10000, 500*us), p99(7, 31204, 900*us), p99(8, 30000, 950*us)), obj(2*time.Millisecond, 40000),
			NotMeasurable, "no step reached 40,000 IOPS; peak was 31,204 IOPS (step 8)",
		},
		{
			"not measurable: peak a hair below the load", unthrottled(p99(1, 39999.6, 500*us)), obj(2*time.Millisecond, 40000),
			NotMeasurable, "no step reached 40,000 IOPS; peak was 39,999.6 IOPS (step 2)",
		},
		{
			"not measurable: no step at all", nil, obj(2*time.Millisecond, 40000),
			NotMeasurable, "no step reached 40,000 IOPS; no step completed without errors",
		},
		{
			"not measurable: the loaded steps have no reads", unthrottled(p99(1, 10000, 500*us), writes(2, 50000, 300*us)), obj(2*time.Millisecond, 40000),
			NotMeasurable, "no step at ≥ 40,000 IOPS measured p99 read latency (no read I/O)",
		},
		{
			"a failed step is no evidence", unthrottled(failed(p99(1, 50000, 500*us)), p99(2, 45000, 3*ms)), obj(2*time.Millisecond, 40000),
			NotMet, "p99 read latency 3 ms > 2 ms at 45,000 IOPS (step 3), the only step at ≥ 40,000 IOPS",
		},
		{
			"only failed steps reached the load", unthrottled(p99(1, 30000, 500*us), failed(p99(2, 50000, 500*us))), obj(2*time.Millisecond, 40000),
			NotMeasurable, "no step reached 40,000 IOPS; peak was 30,000 IOPS (step 2)",
		},
		{
			"worst direction: writes slower", unthrottled(mixed(1, 30000, 900*us, 15000, 2500*us)),
			Objective{LatencyAtLoad: &LatencyAtLoad{LatencySelector{"mean", "worst"}, 2 * time.Millisecond, 40000}},
			NotMet, "mean worst-direction latency 2.5 ms > 2 ms at 45,000 IOPS (step 2), the only step at ≥ 40,000 IOPS",
		},
	})
}

func TestPeakObjectives(t *testing.T) {
	steps := unthrottled(reads(1, 10000, us), reads(2, 41230.4, us), reads(3, 30000, us))
	// 64 KiB streaming: 68,864 IOPS × 8 KiB (the helper's block) = 538 MiB/s.
	stream := unthrottled(reads(1, 20000, us), reads(2, 68864, us))
	small := unthrottled(reads(1, 11264, us)) // 88 MiB/s
	runSLOCases(t, []sloCase{
		{"peak IOPS met", steps, Objective{PeakIOPS: ptr[int64](40000)}, Met, "peak 41,230 IOPS ≥ 40,000 IOPS (step 3)"},
		{"peak IOPS not met", steps, Objective{PeakIOPS: ptr[int64](45000)}, NotMet, "peak 41,230 IOPS < 45,000 IOPS (step 3)"},
		{"peak IOPS exactly equal", unthrottled(reads(4, 40000, us)), Objective{Name: "p", PeakIOPS: ptr[int64](40000)}, Met, "peak 40,000 IOPS ≥ 40,000 IOPS (step 5)"},
		{"peak IOPS a hair short", unthrottled(reads(4, 39999.7, us)), Objective{PeakIOPS: ptr[int64](40000)}, NotMet, "peak 39,999.7 IOPS < 40,000 IOPS (step 5)"},
		{"peak IOPS without steps", nil, Objective{PeakIOPS: ptr[int64](1)}, NotMeasurable, "no step completed without errors"},
		{"peak IOPS with only failed steps", unthrottled(failed(reads(1, 50000, us))), Objective{PeakIOPS: ptr[int64](1)}, NotMeasurable, "no step completed without errors"},
		{"peak IOPS of no I/O", unthrottled(results.StepAggregate{Step: 3}), Objective{PeakIOPS: ptr[int64](1)}, NotMet, "peak 0 IOPS < 1 IOPS (step 4)"},
		{"peak MiB/s met", stream, Objective{PeakMiBps: ptr[int64](500)}, Met, "peak 538 MiB/s ≥ 500 MiB/s (step 3)"},
		{"peak MiB/s exactly equal", stream, Objective{PeakMiBps: ptr[int64](538)}, Met, "peak 538 MiB/s ≥ 538 MiB/s (step 3)"},
		{"peak MiB/s not met", stream, Objective{PeakMiBps: ptr[int64](4700)}, NotMet, "peak 538 MiB/s < 4,700 MiB/s (step 3)"},
		{"peak MiB/s small values keep a decimal", small, Objective{PeakMiBps: ptr[int64](100)}, NotMet, "peak 88 MiB/s < 100 MiB/s (step 2)"},
		{"peak MiB/s fraction", unthrottled(reads(1, 11200, us)), Objective{PeakMiBps: ptr[int64](100)}, NotMet, "peak 87.5 MiB/s < 100 MiB/s (step 2)"},
		{"peak MiB/s without steps", nil, Objective{PeakMiBps: ptr[int64](1)}, NotMeasurable, "no step completed without errors"},
	})
}

func TestAtLatencyObjectives(t *testing.T) {
	iops := func(maxLat time.Duration, minIOPS int64) Objective {
		return Objective{Name: "iops@1ms", IOPSAtLatency: &IOPSAtLatency{LatencySelector{"p99", "read"}, maxLat, minIOPS}}
	}
	sweep := unthrottled(
		p99(1, 12000, 600*us),
		p99(2, 31000, 950*us),
		p99(3, 41230, 1*ms), // exactly at the limit
		p99(4, 45000, 1300*us),
	)
	runSLOCases(t, []sloCase{
		{
			"met at the boundary", sweep, iops(time.Millisecond, 40000),
			Met, "41,230 IOPS ≥ 40,000 IOPS with p99 read latency 1 ms ≤ 1 ms (step 4)",
		},
		{
			"throughput exactly at the minimum", sweep, iops(time.Millisecond, 41230),
			Met, "41,230 IOPS ≥ 41,230 IOPS with p99 read latency 1 ms ≤ 1 ms (step 4)",
		},
		{
			"not met: too few IOPS at the latency", sweep, iops(999*time.Microsecond, 40000),
			NotMet, "31,000 IOPS < 40,000 IOPS with p99 read latency 950 µs ≤ 999 µs (step 3), the highest at or below the target",
		},
		{
			"not met: no step at or below the latency", sweep, iops(500*time.Microsecond, 1000),
			NotMet, "no step had p99 read latency ≤ 500 µs; the lowest was 600 µs at 12,000 IOPS (step 2)",
		},
		{
			"not measurable: a step with no reads and a read selector", unthrottled(writes(1, 50000, 300*us)), iops(time.Millisecond, 1000),
			NotMeasurable, "no step measured p99 read latency (no read I/O)",
		},
		{
			"not measurable: write selector on reads", sweep,
			Objective{IOPSAtLatency: &IOPSAtLatency{LatencySelector{"p99", "write"}, time.Millisecond, 1000}},
			NotMeasurable, "no step measured p99 write latency (no write I/O)",
		},
		{
			"not measurable: no I/O at all", unthrottled(results.StepAggregate{Step: 1}),
			Objective{IOPSAtLatency: &IOPSAtLatency{MaxLatency: time.Millisecond, MinIOPS: 1000}},
			NotMeasurable, "no step measured mean latency (no I/O)",
		},
		{
			"not measurable: no step", nil, iops(time.Millisecond, 1000),
			NotMeasurable, "no step completed without errors",
		},
		{
			"failed steps ignored", append(unthrottled(failed(p99(9, 90000, 500*us))), sweep...), iops(time.Millisecond, 40000),
			Met, "41,230 IOPS ≥ 40,000 IOPS with p99 read latency 1 ms ≤ 1 ms (step 4)",
		},
		{
			"MiB/s at latency met", unthrottled(reads(1, 68864, 800*us), reads(2, 80000, 2*ms)),
			Objective{MiBpsAtLatency: &MiBpsAtLatency{MaxLatency: time.Millisecond, MinMiBps: 500}},
			Met, "538 MiB/s ≥ 500 MiB/s with mean latency 800 µs ≤ 1 ms (step 2)",
		},
		{
			"MiB/s at latency not met", unthrottled(reads(1, 68864, 800*us), reads(2, 80000, 2*ms)),
			Objective{MiBpsAtLatency: &MiBpsAtLatency{MaxLatency: time.Millisecond, MinMiBps: 600}},
			NotMet, "538 MiB/s < 600 MiB/s with mean latency 800 µs ≤ 1 ms (step 2), the highest at or below the target",
		},
		{
			"MiB/s at latency: tie on throughput picks the lower latency", unthrottled(reads(1, 68864, 800*us), reads(2, 68864, 700*us)),
			Objective{MiBpsAtLatency: &MiBpsAtLatency{MaxLatency: time.Millisecond, MinMiBps: 500}},
			Met, "538 MiB/s ≥ 500 MiB/s with mean latency 700 µs ≤ 1 ms (step 3)",
		},
	})
}

// kept is in as a caller keeping the verdicts of its timeline passes it:
// the stall found, the windows dropped.
func kept(in StepInput) StepInput {
	st := LongestStall(in.Aggregate.Timeline)
	in.Stall = &st
	in.Aggregate.Timeline.Windows = nil
	return in
}

func TestMaxStallObjective(t *testing.T) {
	step := func(i int, ios ...uint64) StepInput {
		in := StepInput{Aggregate: results.StepAggregate{Step: i}}
		in.Aggregate.Timeline = timeline(1000, ios...)
		return in
	}
	limit := 2 * time.Second
	o := Objective{MaxStall: &limit}
	failed := step(2, 5, 0, 0, 0, 0, 5)
	failed.Aggregate.Errors = []string{"client 0: fio failed"}
	runSLOCases(t, []sloCase{
		{"no stall", []StepInput{step(0, 5, 5, 5)}, o, Met, "no status tick without a completion (limit 2s)"},
		{"at the limit", []StepInput{step(0, 5, 5), step(1, 5, 0, 0, 5)}, o, Met, "longest stall 2 s (step 2) ≤ 2 s"},
		{"above it", []StepInput{step(0, 5, 0, 5), step(1, 5, 0, 0, 0, 5)}, o, NotMet, "longest stall 3 s (step 2) > 2 s"},
		{"a failed step is not evidence", []StepInput{step(0, 5, 5), failed}, o, Met, "no status tick without a completion (limit 2s)"},
		{"no timeline", []StepInput{{Aggregate: results.StepAggregate{Step: 0}}}, o, NotMeasurable, "no step has a timeline"},
		// The operator keeps a step's stall, not its windows: the same
		// verdict as from the timeline.
		{"the stall given, the windows not kept", []StepInput{kept(step(0, 5, 5)), kept(step(1, 5, 0, 0, 0, 5))}, o, NotMet,
			"longest stall 3 s (step 2) > 2 s"},
	})
	for _, bad := range []time.Duration{0, 1500 * time.Millisecond} {
		if err := ValidateObjective(Objective{MaxStall: &bad}); !errors.Is(err, ErrInvalidThreshold) {
			t.Errorf("MaxStall %s: %v", bad, err)
		}
	}
	if got := (Objective{MaxStall: &limit}).String(); got != "longest stall ≤ 2 s" {
		t.Errorf("String() = %q", got)
	}
}
