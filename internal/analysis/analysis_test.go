package analysis

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/results"
)

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.WithDefaults()
	want := Options{
		LatencyTarget:     time.Millisecond,
		TargetSelector:    LatencySelector{Metric: "mean", Operation: "total"},
		SaturationPercent: 90,
		Throughput:        "iops",
		Steady:            SteadyOptions{Rounds: 5, RangePercent: 20, SlopePercent: 10},
	}
	if got != want {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	set := Options{LatencyTarget: 2 * time.Millisecond, TargetSelector: LatencySelector{"p99", "read"}, SaturationPercent: 80, Throughput: "bytes",
		Steady: SteadyOptions{Rounds: 3, RangePercent: 30, SlopePercent: 5}}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults() changed set fields: %+v", got)
	}
	if got := (Options{TargetSelector: LatencySelector{Metric: "p99"}}).WithDefaults().TargetSelector; got != (LatencySelector{"p99", "total"}) {
		t.Errorf("partial selector defaulted to %+v", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		wantErr error
	}{
		{"zero", Options{}, nil},
		{"all set", Options{LatencyTarget: time.Millisecond, TargetSelector: LatencySelector{"p99", "worst"}, SaturationPercent: 100, Throughput: "bytes"}, nil},
		{"one percent", Options{SaturationPercent: 1}, nil},
		{"negative target", Options{LatencyTarget: -time.Millisecond}, ErrInvalidOptions},
		{"bad metric", Options{TargetSelector: LatencySelector{Metric: "p42"}}, ErrInvalidSelector},
		{"bad direction", Options{TargetSelector: LatencySelector{Operation: "up"}}, ErrInvalidOptions},
		{"negative saturation", Options{SaturationPercent: -1}, ErrInvalidOptions},
		{"saturation above 100", Options{SaturationPercent: 101}, ErrInvalidOptions},
		{"bad throughput", Options{Throughput: "mibps"}, ErrInvalidOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Validate() = %v, want %v", err, tc.wantErr)
			}
			if _, aerr := Analyze(nil, tc.opts, nil); !errors.Is(aerr, tc.wantErr) {
				t.Errorf("Analyze() = %v, want %v", aerr, tc.wantErr)
			}
		})
	}
}

func TestAnalyzeInvalidInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []StepInput
		slos    []Objective
		wantErr error
	}{
		{"negative offered IOPS", []StepInput{{Aggregate: reads(1, 10, us), OfferedIOPS: -1}}, nil, ErrInvalidStep},
		{"negative offered bytes", []StepInput{{Aggregate: reads(1, 10, us), OfferedBytesPerSec: -1}}, nil, ErrInvalidStep},
		{"invalid objective", nil, []Objective{{Name: "x"}}, ErrNoObjectiveKind},
		{"duplicate names", nil, []Objective{{Name: "x", PeakIOPS: ptr[int64](1)}, {Name: "x", PeakMiBps: ptr[int64](1)}}, ErrDuplicateObjective},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Analyze(tc.steps, Options{}, tc.slos); !errors.Is(err, tc.wantErr) {
				t.Errorf("Analyze() = %v, want %v", err, tc.wantErr)
			}
		})
	}
	// Unnamed objectives may repeat.
	same := Objective{PeakIOPS: ptr[int64](1)}
	if _, err := Analyze(nil, Options{}, []Objective{same, same}); err != nil {
		t.Errorf("unnamed duplicates: %v", err)
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	for _, steps := range [][]StepInput{nil, {}} {
		res, err := Analyze(steps, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := Result{
			Steps:   []StepAnalysis{},
			Summary: Summary{PeakIOPSStep: -1, PeakBytesStep: -1, KneeStep: -1},
			SLOs:    []SLOResult{},
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("Analyze(%#v) = %+v, want %+v", steps, res, want)
		}
	}
}

func TestAnalyzeSaturation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          StepInput
		percent     int32
		wantSat     bool
		wantPercent float64
	}{
		{"exactly 90 % is not saturated", StepInput{Aggregate: reads(1, 900, us), OfferedIOPS: 1000}, 0, false, 90},
		{"just below 90 % is saturated", StepInput{Aggregate: reads(1, 899.9, us), OfferedIOPS: 1000}, 0, true, 89.99},
		{"above offered", StepInput{Aggregate: reads(1, 1010, us), OfferedIOPS: 1000}, 0, false, 101},
		{"nothing achieved", StepInput{Aggregate: results.StepAggregate{Step: 1}, OfferedIOPS: 1000}, 0, true, 0},
		{"custom threshold: exactly 50 %", StepInput{Aggregate: reads(1, 500, us), OfferedIOPS: 1000}, 50, false, 50},
		{"custom threshold: 100 %", StepInput{Aggregate: reads(1, 999, us), OfferedIOPS: 1000}, 100, true, 99.9},
		{"unthrottled is never saturated", StepInput{Aggregate: reads(1, 10, us)}, 0, false, 0},
		{"failed is never saturated", StepInput{Aggregate: failed(reads(1, 10, us)), OfferedIOPS: 1000}, 0, false, 1},
		// 900 IOPS × 8 KiB = 7,372,800 B/s.
		{"bytes: exactly 90 %", StepInput{Aggregate: reads(1, 900, us), OfferedBytesPerSec: 8192000}, 0, false, 90},
		{"bytes: below 90 %", StepInput{Aggregate: reads(1, 800, us), OfferedBytesPerSec: 8192000}, 0, true, 80},
		{"IOPS wins over bytes", StepInput{Aggregate: reads(1, 900, us), OfferedIOPS: 1000, OfferedBytesPerSec: 81920000}, 0, false, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze([]StepInput{tc.in}, Options{SaturationPercent: tc.percent}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Steps[0]
			if s.Saturated != tc.wantSat {
				t.Errorf("Saturated = %v, want %v", s.Saturated, tc.wantSat)
			}
			if d := s.AchievedPercentOfOffered - tc.wantPercent; d > 1e-9 || d < -1e-9 {
				t.Errorf("AchievedPercentOfOffered = %v, want %v", s.AchievedPercentOfOffered, tc.wantPercent)
			}
			if s.OfferedIOPS != tc.in.OfferedIOPS || s.OfferedBytesPerSec != tc.in.OfferedBytesPerSec {
				t.Errorf("offered not copied: %+v", s)
			}
		})
	}
}

func TestAnalyzeSteps(t *testing.T) {
	in := []StepInput{
		{Aggregate: mixed(1, 700, 800*us, 300, 3*ms), OfferedIOPS: 1000},
		{Aggregate: failed(reads(2, 50, 9*ms)), OfferedIOPS: 2000},
		{Aggregate: writes(3, 100, 2*ms)},
	}
	res, err := Analyze(in, Options{TargetSelector: LatencySelector{"p99", "read"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []StepAnalysis{
		{Step: 1, OfferedIOPS: 1000, AchievedIOPS: 1000, AchievedBytesPerSec: 1000 * blockSize, AchievedPercentOfOffered: 100, LatencyNs: 800 * us, HasLatency: true},
		{Step: 2, OfferedIOPS: 2000, AchievedIOPS: 50, AchievedBytesPerSec: 50 * blockSize, AchievedPercentOfOffered: 2.5, LatencyNs: 9 * ms, HasLatency: true, Failed: true},
		{Step: 3, AchievedIOPS: 100, AchievedBytesPerSec: 100 * blockSize},
	}
	if !reflect.DeepEqual(res.Steps, want) {
		t.Errorf("Steps =\n%+v\nwant\n%+v", res.Steps, want)
	}
}

func TestAnalyzeSummary(t *testing.T) {
	// A classic sweep: latency flat, then climbing past 1 ms.
	sweep := unthrottled(
		reads(1, 10000, 400*us),
		reads(2, 20000, 600*us),
		reads(3, 30000, 1*ms), // exactly at the target
		reads(4, 38000, 1*ms+1),
		reads(5, 40000, 4*ms),
	)
	// Peak IOPS and peak bandwidth in different steps.
	splitPeaks := unthrottled(
		reads(1, 50000, 300*us),
		mixed(2, 10, 200*us, 0, 0),
	)
	splitPeaks[1].Aggregate.Total.BytesPerSec = 2e9
	splitPeaks[1].Aggregate.Total.IOPS = 30000
	// A failed step would be the peak and the at-target step.
	withFailed := unthrottled(
		reads(1, 10000, 400*us),
		failed(reads(2, 90000, 300*us)),
		reads(3, 20000, 2*ms),
	)
	// Equal throughput at the target: the lower latency wins, then the
	// earlier step.
	ties := unthrottled(
		reads(1, 20000, 900*us),
		reads(2, 20000, 700*us),
		reads(3, 20000, 700*us),
	)
	for _, tc := range []struct {
		name string
		in   []StepInput
		opts Options
		want Summary
	}{
		{
			"sweep", sweep, Options{},
			Summary{
				PeakIOPS: 40000, PeakIOPSStep: 5, PeakBytesPerSec: 40000 * blockSize, PeakBytesStep: 5,
				LatencyAtPeakNs: 4 * ms,
				AtTarget:        &AtTarget{Step: 3, IOPS: 30000, BytesPerSec: 30000 * blockSize, LatencyNs: 1 * ms},
				KneeStep:        4,
			},
		},
		{
			"target 1 ns below a step's latency excludes it", sweep, Options{LatencyTarget: time.Millisecond - 1},
			Summary{
				PeakIOPS: 40000, PeakIOPSStep: 5, PeakBytesPerSec: 40000 * blockSize, PeakBytesStep: 5,
				LatencyAtPeakNs: 4 * ms,
				AtTarget:        &AtTarget{Step: 2, IOPS: 20000, BytesPerSec: 20000 * blockSize, LatencyNs: 600 * us},
				KneeStep:        4,
			},
		},
		{
			"no step at or below the target", sweep, Options{LatencyTarget: 100 * time.Microsecond},
			Summary{
				PeakIOPS: 40000, PeakIOPSStep: 5, PeakBytesPerSec: 40000 * blockSize, PeakBytesStep: 5,
				LatencyAtPeakNs: 4 * ms, KneeStep: 4,
			},
		},
		{
			"bytes axis picks the highest bandwidth at the target", splitPeaks, Options{Throughput: ThroughputBytes},
			Summary{
				PeakIOPS: 50000, PeakIOPSStep: 1, PeakBytesPerSec: 2e9, PeakBytesStep: 2,
				LatencyAtPeakNs: 300 * us,
				AtTarget:        &AtTarget{Step: 2, IOPS: 30000, BytesPerSec: 2e9, LatencyNs: 200 * us},
				KneeStep:        -1,
			},
		},
		{
			"iops axis picks the highest IOPS at the target", splitPeaks, Options{},
			Summary{
				PeakIOPS: 50000, PeakIOPSStep: 1, PeakBytesPerSec: 2e9, PeakBytesStep: 2,
				LatencyAtPeakNs: 300 * us,
				AtTarget:        &AtTarget{Step: 1, IOPS: 50000, BytesPerSec: 50000 * blockSize, LatencyNs: 300 * us},
				KneeStep:        -1,
			},
		},
		{
			"failed steps are not evidence", withFailed, Options{},
			Summary{
				PeakIOPS: 20000, PeakIOPSStep: 3, PeakBytesPerSec: 20000 * blockSize, PeakBytesStep: 3,
				LatencyAtPeakNs: 2 * ms,
				AtTarget:        &AtTarget{Step: 1, IOPS: 10000, BytesPerSec: 10000 * blockSize, LatencyNs: 400 * us},
				KneeStep:        -1,
			},
		},
		{
			"ties", ties, Options{},
			Summary{
				PeakIOPS: 20000, PeakIOPSStep: 1, PeakBytesPerSec: 20000 * blockSize, PeakBytesStep: 1,
				LatencyAtPeakNs: 900 * us,
				AtTarget:        &AtTarget{Step: 2, IOPS: 20000, BytesPerSec: 20000 * blockSize, LatencyNs: 700 * us},
				KneeStep:        -1,
			},
		},
		{
			"latency at peak without samples for the selector", sweep, Options{TargetSelector: LatencySelector{"p99", "write"}},
			Summary{
				PeakIOPS: 40000, PeakIOPSStep: 5, PeakBytesPerSec: 40000 * blockSize, PeakBytesStep: 5,
				KneeStep: -1,
			},
		},
		{
			"all failed", unthrottled(failed(reads(1, 100, us)), failed(reads(2, 200, us))), Options{},
			Summary{PeakIOPSStep: -1, PeakBytesStep: -1, KneeStep: -1},
		},
		{
			"no I/O moved", unthrottled(results.StepAggregate{Step: 1}), Options{},
			Summary{PeakIOPSStep: -1, PeakBytesStep: -1, KneeStep: -1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.in, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Summary
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Summary =\n%+v (AtTarget %+v)\nwant\n%+v (AtTarget %+v)", got, got.AtTarget, tc.want, tc.want.AtTarget)
			}
		})
	}
}

// A superseded run, the unsteady first try of a step run again, is like a
// failed step: kept in Steps, never the peak, the knee, the at-target step,
// the client-bound check's side or an objective's evidence.
func TestAnalyzeSupersededIsNotEvidence(t *testing.T) {
	in := unthrottled(
		reads(1, 90000, 300*us), // superseded: would be the peak and at target
		reads(2, 20000, 400*us),
		reads(3, 21000, 400*us), // the client-bound check
	)
	in[0].Superseded, in[0].Unthrottled = true, true
	in[1].Unthrottled = true
	in[2].Unthrottled, in[2].ClientBoundCheck = true, true
	peak := Objective{Name: "peak", PeakIOPS: ptr[int64](50000)}
	res, err := Analyze(in, Options{}, []Objective{peak})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Steps[0].Superseded || res.Steps[1].Superseded {
		t.Errorf("Superseded flags %v %v, want true false", res.Steps[0].Superseded, res.Steps[1].Superseded)
	}
	if s := res.Summary; s.PeakIOPSStep != 3 || s.AtTarget == nil || s.AtTarget.Step != 3 {
		t.Errorf("summary %+v: want the peak and at-target step 3, not the superseded step 1", s)
	}
	if cb := res.ClientBound; cb == nil || !reflect.DeepEqual(cb.MaximumSteps, []int{2}) || cb.Maximum != 20000 {
		t.Errorf("client-bound check %+v: want it against step 2 alone", cb)
	}
	if res.SLOs[0].Verdict != NotMet {
		t.Errorf("peak objective %+v: want NotMet, the superseded 90,000 IOPS not counted", res.SLOs[0])
	}
}

func TestAllSLOsMet(t *testing.T) {
	steps := unthrottled(reads(1, 10000, 500*us), reads(2, 20000, 2*ms))
	met := Objective{Name: "met", PeakIOPS: ptr[int64](20000)}
	notMet := Objective{Name: "not met", PeakIOPS: ptr[int64](20001)}
	notMeasurable := Objective{Name: "not measurable", IOPSAtLatency: &IOPSAtLatency{Selector: LatencySelector{"p99", "write"}, MaxLatency: time.Millisecond, MinIOPS: 1}}
	for _, tc := range []struct {
		name string
		slos []Objective
		want bool
	}{
		{"no objectives", nil, false},
		{"one met", []Objective{met}, true},
		{"met and not met", []Objective{met, notMet}, false},
		{"met and not measurable", []Objective{met, notMeasurable}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(steps, Options{}, tc.slos)
			if err != nil {
				t.Fatal(err)
			}
			if res.AllSLOsMet != tc.want {
				t.Errorf("AllSLOsMet = %v, want %v (%+v)", res.AllSLOsMet, tc.want, res.SLOs)
			}
			if len(res.SLOs) != len(tc.slos) {
				t.Fatalf("%d SLO results for %d objectives", len(res.SLOs), len(tc.slos))
			}
			for i := range tc.slos {
				if res.SLOs[i].Name != tc.slos[i].Name {
					t.Errorf("SLO %d named %q, want %q", i, res.SLOs[i].Name, tc.slos[i].Name)
				}
			}
		})
	}
}
