package controllers

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/test/build"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

const blockBytes = 8192

// dirSpec describes one direction of a synthetic step: its IOPS, mean and
// p99; the other figures follow from them.
type dirSpec struct {
	iops      float64
	mean, p99 time.Duration
}

func latencyOf(mean, p99 time.Duration, count uint64) results.LatencySummary {
	return results.LatencySummary{Count: count, MinNs: uint64(mean / 4), MaxNs: uint64(4 * p99), MeanNs: float64(mean),
		StddevNs: float64(mean / 3), P50Ns: uint64(mean), P90Ns: uint64((mean + p99) / 2), P95Ns: uint64(p99 * 3 / 4),
		P99Ns: uint64(p99), P999Ns: uint64(2 * p99), P9999Ns: uint64(3 * p99)}
}

func dirOf(d dirSpec) results.OperationSummary {
	if d.iops == 0 {
		return results.OperationSummary{}
	}
	ios := uint64(d.iops * 60)
	return results.OperationSummary{IOPS: d.iops, BytesPerSec: d.iops * blockBytes, IOs: ios, Bytes: ios * blockBytes,
		Latency: latencyOf(d.mean, d.p99, ios)}
}

// mkAgg is a step aggregate over 3 clients with the given directions and
// total mean latency.
func mkAgg(step int, r, w dirSpec, totalMean time.Duration) results.StepAggregate {
	a := results.StepAggregate{Step: step, Clients: 3, Jobs: 3, Read: dirOf(r), Write: dirOf(w), StartSkew: 2 * time.Millisecond}
	a.Total = results.OperationSummary{IOPS: r.iops + w.iops, BytesPerSec: (r.iops + w.iops) * blockBytes,
		IOs: a.Read.IOs + a.Write.IOs, Bytes: a.Read.Bytes + a.Write.Bytes}
	if a.Total.IOs > 0 {
		a.Total.Latency = latencyOf(totalMean, max(r.p99, w.p99), a.Total.IOs)
	}
	return a
}

func order(index int, s plan.Step) protocol.StepOrder {
	s.Index = index
	return protocol.StepOrder{Index: index, StartAt: t0.Add(time.Duration(index) * time.Minute), Step: s,
		Duration: time.Minute, Ramp: 5 * time.Second}
}

// rec is a step record.
func rec(o protocol.StepOrder, agg results.StepAggregate, name string) run.Step {
	return run.Step{Order: o, Aggregate: agg, Name: name}
}

func TestStepStatus(t *testing.T) {
	ms := time.Millisecond
	agg := results.StepAggregate{
		Step: 4, Clients: 3, Jobs: 12, StartSkew: 1500 * time.Microsecond, Interrupted: true,
		Read: results.OperationSummary{IOPS: 29999.5, BytesPerSec: 245756.49, IOs: 1_799_970,
			Latency: results.LatencySummary{Count: 1_799_970, MeanNs: 812.5, P50Ns: 700, P90Ns: 1200, P99Ns: 2_500_000, P999Ns: 9_000_000, MaxNs: 12_345_678}},
		Write: results.OperationSummary{IOPS: 10000.49, BytesPerSec: 81924.5, IOs: 600_029,
			Latency: results.LatencySummary{Count: 600_029, MeanNs: 1_000_000.4999, P50Ns: 900_000, P90Ns: 1_500_000, P99Ns: 3 * uint64(ms), P999Ns: 10 * uint64(ms), MaxNs: 20 * uint64(ms), Overflow: 7}},
		Total: results.OperationSummary{IOPS: 39999.99, BytesPerSec: 327680.99, IOs: 2_399_999,
			Latency: results.LatencySummary{Count: 2_399_999, MeanNs: 250_609.5, P50Ns: 800, P90Ns: 1_400_000, P99Ns: 2_900_000, P999Ns: 9_900_000, MaxNs: math.MaxUint64}},
		ClientIOPS: results.ClientSpread{MinIOPS: 12999.5, MaxIOPS: 14000.2, CVPercent: 3.49},
	}
	o := order(4, plan.Step{OfferedIOPS: 40000, QueueDepthPerClient: 16, PercentOfMax: 80})
	s := stepStatus(rec(o, agg, "bench-step-004"))

	want := v1alpha1.StepStatus{
		Index: 4, OfferedIOPS: 40000, QueueDepthPerClient: 16, PercentOfMax: 80, Clients: 3,
		StartTime: metav1.Time{Time: o.StartAt}, StartSkew: metav1.Duration{Duration: 1500 * time.Microsecond},
		AchievedIOPS: 40000, AchievedBytesPerSecond: 327681,
		ClientIOPS: &v1alpha1.ClientSpreadStatus{MinIOPS: 13000, MaxIOPS: 14000, CVPercent: 3},
		Latency: &v1alpha1.LatencyStatus{Mean: d(250_610), P50: d(800), P90: d(1_400_000), P99: d(2_900_000), P999: d(9_900_000),
			Max: d(math.MaxInt64)},
		Read: &v1alpha1.OperationStatus{IOPS: 30000, BytesPerSecond: 245756, IOs: 1_799_970,
			Latency: v1alpha1.LatencyStatus{Mean: d(813), P50: d(700), P90: d(1200), P99: d(2_500_000), P999: d(9_000_000), Max: d(12_345_678)}},
		Write: &v1alpha1.OperationStatus{IOPS: 10000, BytesPerSecond: 81925, IOs: 600_029,
			Latency: v1alpha1.LatencyStatus{Mean: d(1_000_000), P50: d(900_000), P90: d(1_500_000), P99: d(3_000_000), P999: d(10_000_000), Max: d(20_000_000), OverflowIOs: 7}},
		Interrupted: true, ConfigMap: "bench-step-004",
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("stepStatus(rec())\n got %s\nwant %s", jsonOf(t, s), jsonOf(t, want))
	}
}

func d(ns int64) metav1.Duration { return metav1.Duration{Duration: time.Duration(ns)} }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStepStatusOrderFields(t *testing.T) {
	agg := mkAgg(0, dirSpec{1000, time.Millisecond, 2 * time.Millisecond}, dirSpec{}, time.Millisecond)
	tests := []struct {
		name string
		step plan.Step
		want func(s v1alpha1.StepStatus) bool
	}{
		{"IOPS rate", plan.Step{OfferedIOPS: 5000}, func(s v1alpha1.StepStatus) bool {
			return s.OfferedIOPS == 5000 && s.OfferedBytesPerSecond == 0 && !s.Unthrottled
		}},
		{"MiBps rate", plan.Step{OfferedBytesPerSec: 100 << 20}, func(s v1alpha1.StepStatus) bool {
			return s.OfferedIOPS == 0 && s.OfferedBytesPerSecond == 100<<20
		}},
		{"queue depth", plan.Step{QueueDepthPerClient: 32}, func(s v1alpha1.StepStatus) bool {
			return s.QueueDepthPerClient == 32 && s.OfferedIOPS == 0 && s.OfferedBytesPerSecond == 0
		}},
		{"curve unthrottled", plan.Step{Unthrottled: true}, func(s v1alpha1.StepStatus) bool { return s.Unthrottled && s.PercentOfMax == 0 }},
		{"curve percent", plan.Step{PercentOfMax: 70, OfferedIOPS: 7000}, func(s v1alpha1.StepStatus) bool {
			return s.PercentOfMax == 70 && s.OfferedIOPS == 7000 && !s.Unthrottled
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stepStatus(rec(order(0, tt.step), agg, "h"))
			if !tt.want(s) {
				t.Errorf("stepStatus(rec()) = %s", jsonOf(t, s))
			}
			if s.Write != nil || s.Read == nil || s.Latency == nil {
				t.Errorf("read-only step: read %v write %v latency %v", s.Read, s.Write, s.Latency)
			}
		})
	}
}

func TestStepStatusWithoutIO(t *testing.T) {
	s := stepStatus(rec(order(0, plan.Step{OfferedIOPS: 100}), results.StepAggregate{Clients: 2, Interrupted: true}, "h"))
	if s.Read != nil || s.Write != nil || s.Latency != nil || s.AchievedIOPS != 0 {
		t.Errorf("a step without I/O has figures: %s", jsonOf(t, s))
	}
}

func TestStepStatusErrors(t *testing.T) {
	errs := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("client %d: fio: io_u error on file /storagebench/data/job0.dat: Input/output error", i)
		}
		return out
	}
	tests := []struct {
		name   string
		in     []string
		failed int
		want   []string
	}{
		{"none", nil, 0, nil},
		{"one", errs(1), 0, errs(1)},
		{"five kept", errs(5), 0, errs(5)},
		{"six truncated", errs(6), 0, append(errs(4), "… and 2 more errors")},
		{"hundred truncated", errs(100), 0, append(errs(4), "… and 96 more errors")},
		{"a thousand failed, the merger listing 20 and a count", append(errs(20), "… and 980 more clients' errors"), 1000, append(errs(4), "… and 996 more errors")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agg := mkAgg(0, dirSpec{1000, time.Millisecond, 2 * time.Millisecond}, dirSpec{}, time.Millisecond)
			agg.Errors, agg.FailedClients = slices.Clone(tt.in), tt.failed
			s := stepStatus(rec(order(0, plan.Step{OfferedIOPS: 1000}), agg, "h"))
			if !slices.Equal(s.Errors, tt.want) {
				t.Errorf("errors %q, want %q", s.Errors, tt.want)
			}
			if len(s.Errors) > protocol.MaxStepErrors {
				t.Errorf("%d errors kept, the CRD allows %d", len(s.Errors), protocol.MaxStepErrors)
			}
			if !slices.Equal(agg.Errors, tt.in) {
				t.Errorf("stepStatus changed the aggregate's errors to %q", agg.Errors)
			}
		})
	}
}

// curveBench is a benchmark with four finished IOPS steps: 80 % reads,
// offered 10k, 20k, 30k, 40k; achieved 10k, 20k, 29k, 31k (the last
// saturated); mean latency 200 µs, 250 µs, 400 µs, 2 ms (the knee at step 2).
func curveBench(t *testing.T, objectives ...v1alpha1.Objective) (*v1alpha1.StorageBenchmark, spec.Run, []run.Step) {
	t.Helper()
	b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
		l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{10000, 20000, 30000, 40000}}
	}), build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp"}))
	b.Generation = 3
	if len(objectives) > 0 {
		b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: objectives}
	}
	us := time.Microsecond
	var recs []run.Step
	points := []struct {
		offered, achieved  float64
		mean               time.Duration
		readP99, writeP99  time.Duration
		readMean, writeAvg time.Duration
	}{
		{10000, 10000, 200 * us, 400 * us, 600 * us, 180 * us, 280 * us},
		{20000, 20000, 250 * us, 500 * us, 800 * us, 220 * us, 370 * us},
		{30000, 29000, 400 * us, 900 * us, 1500 * us, 350 * us, 600 * us},
		{40000, 31000, 2000 * us, 3000 * us, 5000 * us, 1800 * us, 2800 * us},
	}
	for i, p := range points {
		agg := mkAgg(i, dirSpec{p.achieved * 0.8, p.readMean, p.readP99}, dirSpec{p.achieved * 0.2, p.writeAvg, p.writeP99}, p.mean)
		recs = append(recs, rec(order(i, plan.Step{OfferedIOPS: int64(p.offered)}), agg, exchange.StepName(b.Name, i)))
		b.Status.Steps = append(b.Status.Steps, stepStatus(recs[i]))
	}
	return b, mustDesired(t, b), recs
}

func TestAnalyzeFlagsAndSummary(t *testing.T) {
	b, d, recs := curveBench(t)
	for i := range b.Status.Steps { // stale flags must be recomputed
		b.Status.Steps[i].Saturated, b.Status.Steps[i].Knee = true, true
	}
	if err := analyze(b, &d, recs, false); err != nil {
		t.Fatal(err)
	}
	var saturated, knees, closed []int32
	for _, s := range b.Status.Steps {
		if s.Saturated {
			saturated = append(saturated, s.Index)
		}
		if s.Knee {
			knees = append(knees, s.Index)
		}
		if s.ClosedLoop {
			closed = append(closed, s.Index)
		}
	}
	// The saturated rate step did not sustain its rate: its latency is a
	// closed-loop figure.
	if !slices.Equal(saturated, []int32{3}) || !slices.Equal(knees, []int32{2}) || !slices.Equal(closed, []int32{3}) {
		t.Errorf("saturated %v knee %v closed-loop %v, want [3] [2] [3]", saturated, knees, closed)
	}
	want := &v1alpha1.SummaryStatus{
		PeakIOPS: 31000, PeakIOPSStep: ptr.To[int32](3), PeakBytesPerSecond: 31000 * blockBytes,
		LatencyAtPeak: &metav1.Duration{Duration: 2 * time.Millisecond}, P99LatencyAtPeak: &metav1.Duration{Duration: 5 * time.Millisecond},
		LatencyTarget: &metav1.Duration{Duration: time.Millisecond},
		AtTarget:      &v1alpha1.AtTargetStatus{Step: 2, IOPS: 29000, BytesPerSecond: 29000 * blockBytes, Latency: metav1.Duration{Duration: 400 * time.Microsecond}},
		KneeStep:      ptr.To[int32](2),
	}
	if !reflect.DeepEqual(b.Status.Summary, want) {
		t.Errorf("summary\n got %s\nwant %s", jsonOf(t, b.Status.Summary), jsonOf(t, want))
	}
	if b.Status.SLOs != nil || meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet) != nil {
		t.Errorf("SLOs judged without objectives: %v %v", b.Status.SLOs, b.Status.Conditions)
	}
}

func TestAnalyzeSummaryVariants(t *testing.T) {
	t.Run("p99 at peak is the worse of read and write", func(t *testing.T) {
		b, d, recs := curveBench(t)
		b.Status.Steps[3].Read.Latency.P99 = metav1.Duration{Duration: 7 * time.Millisecond}
		if err := analyze(b, &d, recs, false); err != nil {
			t.Fatal(err)
		}
		if got := b.Status.Summary.P99LatencyAtPeak; got == nil || got.Duration != 7*time.Millisecond {
			t.Errorf("p99 at peak %v, want the read p99 7ms", got)
		}
	})
	t.Run("read-only peak", func(t *testing.T) {
		b, d, recs := curveBench(t)
		b.Status.Steps[3].Write = nil
		if err := analyze(b, &d, recs, false); err != nil {
			t.Fatal(err)
		}
		if got := b.Status.Summary.P99LatencyAtPeak; got == nil || got.Duration != 3*time.Millisecond {
			t.Errorf("p99 at peak %v, want the read p99 3ms", got)
		}
	})
	t.Run("a failed step is never the peak", func(t *testing.T) {
		b, d, recs := curveBench(t)
		recs[3].Aggregate.Errors = []string{"fio: io_u error"}
		if err := analyze(b, &d, recs, false); err != nil {
			t.Fatal(err)
		}
		s := b.Status.Summary
		if s.PeakIOPS != 29000 || s.PeakIOPSStep == nil || *s.PeakIOPSStep != 2 || s.P99LatencyAtPeak.Duration != 1500*time.Microsecond {
			t.Errorf("summary %s, want the peak at step 2", jsonOf(t, s))
		}
		if s.KneeStep == nil || *s.KneeStep != 1 || !b.Status.Steps[1].Knee || b.Status.Steps[2].Knee {
			t.Errorf("knee %v, want step 1 of the three successful steps", s.KneeStep)
		}
		if b.Status.Steps[3].Saturated {
			t.Error("a failed step is flagged saturated")
		}
	})
	t.Run("nothing at target", func(t *testing.T) {
		b, d, recs := curveBench(t)
		d.Analysis.LatencyTarget = 100 * time.Microsecond
		if err := analyze(b, &d, recs, false); err != nil {
			t.Fatal(err)
		}
		if s := b.Status.Summary; s.AtTarget != nil || s.LatencyTarget.Duration != 100*time.Microsecond {
			t.Errorf("atTarget %+v target %v, want none at 100µs", s.AtTarget, s.LatencyTarget)
		}
	})
	t.Run("no steps", func(t *testing.T) {
		b, d, _ := curveBench(t)
		b.Status.Steps = nil
		if err := analyze(b, &d, nil, true); err != nil {
			t.Fatal(err)
		}
		if b.Status.Summary != nil {
			t.Errorf("summary %+v without steps", b.Status.Summary)
		}
	})
}

func TestAnalyzeSLOs(t *testing.T) {
	peak := func(name string, v int64) v1alpha1.Objective {
		return v1alpha1.Objective{Name: name, PeakIOPS: ptr.To(v)}
	}
	atLatency := v1alpha1.Objective{Name: "iops-at-1ms", IOPSAtLatency: &v1alpha1.IOPSAtLatency{
		MaxLatency: metav1.Duration{Duration: time.Millisecond}, MinIOPS: 25000}}
	unreachable := v1alpha1.Objective{Name: "p99-at-100k", LatencyAtLoad: &v1alpha1.LatencyAtLoad{
		LatencySelector: v1alpha1.LatencySelector{Metric: "p99", Operation: "read"},
		MaxLatency:      metav1.Duration{Duration: 2 * time.Millisecond}, MinIOPS: 100000}}
	tests := []struct {
		name         string
		objectives   []v1alpha1.Objective
		wantVerdicts []v1alpha1.Verdict
		wantStatus   metav1.ConditionStatus
		wantReason   string
		wantMessage  string // "" means: names the objective as below
		wantObj      string
		wantIn       string
	}{
		{"all met", []v1alpha1.Objective{peak("peak", 30000), atLatency}, []v1alpha1.Verdict{"Met", "Met"},
			metav1.ConditionTrue, ReasonAllMet, "every objective was met", "", ""},
		{"not met", []v1alpha1.Objective{peak("peak", 50000), atLatency}, []v1alpha1.Verdict{"NotMet", "Met"},
			metav1.ConditionFalse, ReasonNotMet, "", "peak", "peak 31,000 IOPS < 50,000 IOPS (step 4)"},
		{"not measurable", []v1alpha1.Objective{atLatency, unreachable}, []v1alpha1.Verdict{"Met", "NotMeasurable"},
			metav1.ConditionFalse, ReasonNotMeasurable, "", "p99-at-100k", "no step reached 100,000 IOPS"},
		{"not met outranks not measurable", []v1alpha1.Objective{unreachable, peak("peak", 50000)}, []v1alpha1.Verdict{"NotMeasurable", "NotMet"},
			metav1.ConditionFalse, ReasonNotMet, "", "peak", "< 50,000 IOPS"},
		{"the first not met is named", []v1alpha1.Objective{peak("first", 40000), peak("second", 50000)}, []v1alpha1.Verdict{"NotMet", "NotMet"},
			metav1.ConditionFalse, ReasonNotMet, "", "first", "< 40,000 IOPS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, d, recs := curveBench(t, tt.objectives...)
			if len(d.Objectives) != len(tt.objectives) {
				t.Fatalf("%d objectives translated", len(d.Objectives))
			}
			// While running: no verdicts.
			if err := analyze(b, &d, recs, false); err != nil {
				t.Fatal(err)
			}
			if len(b.Status.SLOs) != 0 || meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet) != nil {
				t.Fatalf("SLOs judged before the run completed: %v", b.Status.SLOs)
			}
			// Complete, twice: the verdicts are recomputed, not appended.
			for range 2 {
				if err := analyze(b, &d, recs, true); err != nil {
					t.Fatal(err)
				}
			}
			var verdicts []v1alpha1.Verdict
			for i, s := range b.Status.SLOs {
				verdicts = append(verdicts, s.Verdict)
				if s.Name != tt.objectives[i].Name || s.Message == "" {
					t.Errorf("slo %d: name %q message %q", i, s.Name, s.Message)
				}
			}
			if !slices.Equal(verdicts, tt.wantVerdicts) {
				t.Errorf("verdicts %v, want %v", verdicts, tt.wantVerdicts)
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet)
			if c == nil {
				t.Fatal("no SLOMet condition")
			}
			if c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.ObservedGeneration != 3 {
				t.Errorf("SLOMet %s/%s gen %d, want %s/%s gen 3", c.Status, c.Reason, c.ObservedGeneration, tt.wantStatus, tt.wantReason)
			}
			wantMsg := tt.wantMessage
			if wantMsg == "" {
				i := slices.IndexFunc(b.Status.SLOs, func(s v1alpha1.SLOStatus) bool { return s.Name == tt.wantObj })
				if i < 0 {
					t.Fatalf("no verdict for %s", tt.wantObj)
				}
				what := "not met"
				if tt.wantReason == ReasonNotMeasurable {
					what = "could not be measured"
				}
				wantMsg = fmt.Sprintf("objective %s %s: %s", tt.wantObj, what, b.Status.SLOs[i].Message)
				if !strings.Contains(b.Status.SLOs[i].Message, tt.wantIn) {
					t.Errorf("verdict message %q does not contain %q", b.Status.SLOs[i].Message, tt.wantIn)
				}
			}
			if c.Message != wantMsg {
				t.Errorf("SLOMet message %q, want %q", c.Message, wantMsg)
			}
		})
	}
}

func TestAnalyzeCompleteWithoutObjectives(t *testing.T) {
	b, d, recs := curveBench(t)
	if err := analyze(b, &d, recs, true); err != nil {
		t.Fatal(err)
	}
	if len(b.Status.SLOs) != 0 || meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet) != nil {
		t.Errorf("SLOMet set without objectives: %v %v", b.Status.SLOs, b.Status.Conditions)
	}
}

func conditionSet(b *v1alpha1.StorageBenchmark) map[string]string {
	out := map[string]string{}
	for _, c := range b.Status.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestSetFailed(t *testing.T) {
	b := newBench()
	b.Generation = 5
	b.Status.CurrentStep = ptr.To[int32](2)
	setProgressing(b, ReasonRunning, "step 3/5 running")
	if finished(b) {
		t.Fatal("finished while running")
	}
	if got := conditionSet(b); !reflect.DeepEqual(got, map[string]string{"Reconciling": "True/Running", "Ready": "False/Running"}) {
		t.Errorf("progressing conditions %v", got)
	}

	setFailed(b, t0, ReasonClientLost, "client 1's pod failed")
	want := map[string]string{
		"Failed": "True/ClientLost", "Stalled": "True/ClientLost", "Ready": "False/ClientLost",
		"Reconciling": "False/Failed", "Complete": "False/ClientLost",
	}
	if got := conditionSet(b); !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	for _, c := range b.Status.Conditions {
		if c.ObservedGeneration != 5 {
			t.Errorf("%s observedGeneration %d, want 5", c.Type, c.ObservedGeneration)
		}
		if c.Type != v1alpha1.ConditionReconciling && c.Message != "client 1's pod failed" {
			t.Errorf("%s message %q", c.Type, c.Message)
		}
		if c.LastTransitionTime.IsZero() {
			t.Errorf("%s has no transition time", c.Type)
		}
	}
	if b.Status.CurrentStep != nil {
		t.Errorf("current step %d after the run ended", *b.Status.CurrentStep)
	}
	if b.Status.CompletionTime == nil || !b.Status.CompletionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("completion time %v, want %s", b.Status.CompletionTime, t0)
	}
	if !finished(b) {
		t.Error("not finished after setFailed")
	}
	setFailed(b, t0.Add(time.Hour), ReasonStepTimedOut, "later")
	if !b.Status.CompletionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("completion time moved to %v", b.Status.CompletionTime)
	}
}

func TestSetComplete(t *testing.T) {
	b, _, _ := curveBench(t)
	b.Generation = 9
	b.Status.CurrentStep = ptr.To[int32](3)
	setProgressing(b, ReasonRunning, "step 4/4 running")
	setComplete(b, t0, "all 4 steps completed")
	want := map[string]string{
		"Complete": "True/Completed", "Ready": "True/Completed", "Reconciling": "False/Completed",
		"Stalled": "False/Completed", "Failed": "False/Completed",
	}
	if got := conditionSet(b); !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	for _, c := range b.Status.Conditions {
		if c.ObservedGeneration != 9 {
			t.Errorf("%s observedGeneration %d, want 9", c.Type, c.ObservedGeneration)
		}
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionComplete); c.Message != "4 steps ran: all 4 steps completed" {
		t.Errorf("Complete message %q", c.Message)
	}
	if b.Status.StopReason != "all 4 steps completed" || b.Status.CurrentStep != nil {
		t.Errorf("stop reason %q current step %v", b.Status.StopReason, b.Status.CurrentStep)
	}
	if b.Status.CompletionTime == nil || !b.Status.CompletionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("completion time %v, want %s", b.Status.CompletionTime, t0)
	}
	if !finished(b) {
		t.Error("not finished after setComplete")
	}
	setComplete(b, t0.Add(time.Hour), "again")
	if !b.Status.CompletionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("completion time moved to %v", b.Status.CompletionTime)
	}
}

func TestFinished(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: "R"}
	}
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{"none", nil, false},
		{"complete", []metav1.Condition{cond("Complete", metav1.ConditionTrue)}, true},
		{"failed", []metav1.Condition{cond("Failed", metav1.ConditionTrue)}, true},
		{"both false", []metav1.Condition{cond("Complete", metav1.ConditionFalse), cond("Failed", metav1.ConditionFalse)}, false},
		{"unknown", []metav1.Condition{cond("Complete", metav1.ConditionUnknown)}, false},
		{"ready alone", []metav1.Condition{cond("Ready", metav1.ConditionTrue)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench()
			b.Status.Conditions = tt.conds
			if got := finished(b); got != tt.want {
				t.Errorf("finished() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	if got := progress(3, 11); got != "3/11" {
		t.Errorf("progress() = %q", got)
	}
}

// bigStatus is a finished run's status with n steps as 100 clients would
// leave it: both directions, every field set, large figures, the longest
// benchmark name and 16 objectives with their verdicts; with repeat > 1,
// n/repeat levels of repeat runs each, with their repeatability.
func bigStatus(t *testing.T, n, repeat int) *v1alpha1.StorageBenchmark {
	t.Helper()
	name := strings.Repeat("b", 40)
	var objectives []v1alpha1.Objective
	for i := range 16 {
		objectives = append(objectives, v1alpha1.Objective{Name: fmt.Sprintf("objective-%02d-%s", i, strings.Repeat("x", 48)),
			LatencyAtLoad: &v1alpha1.LatencyAtLoad{LatencySelector: v1alpha1.LatencySelector{Metric: "p99.9", Operation: "worst"},
				MaxLatency: metav1.Duration{Duration: 2 * time.Millisecond}, MinIOPS: int64(1_000_000 * (i + 1))}})
	}
	b := newBench(build.Clients(100), build.JobsPerClient(64), func(b *v1alpha1.StorageBenchmark) {
		b.Name = name
		b.Spec.Workload = v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: qty("1Ti")}
		b.Spec.Storage.Size = *qty("1100Gi")
		b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: objectives}
		steps := make([]int64, n/repeat)
		for i := range steps {
			steps[i] = int64(1_000_000 * (i + 1))
		}
		b.Spec.Load.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: steps}
		b.Spec.Load.Repeat = int32(repeat)
		b.Spec.Analysis.MaxVariationPercent = ptr.To[int32](5)
	})
	dsr := mustDesired(t, b)
	var recs []run.Step
	for i := range n {
		// Odd nanosecond figures make the longest duration strings.
		ns := func(base int64) time.Duration { return time.Duration(base + 123_456_789 + int64(i)) }
		r := dirSpec{iops: 9_876_543.21 + float64(i), mean: ns(1_000_000_000), p99: ns(3_000_000_000)}
		w := dirSpec{iops: 4_321_987.65 + float64(i), mean: ns(2_000_000_000), p99: ns(4_000_000_000)}
		agg := mkAgg(i, r, w, ns(1_500_000_000))
		agg.Clients, agg.Jobs, agg.StartSkew = 100, 6400, ns(0)
		agg.Read.IOs, agg.Write.IOs, agg.Total.IOs = 51_851_851_852, 22_690_435_163, 74_542_287_015
		st := plan.Step{OfferedIOPS: int64(1_000_000 * (i + 1)), OfferedBytesPerSec: 123_456_789_012,
			QueueDepthPerClient: 4096, PercentOfMax: 100, Unthrottled: true}
		if repeat > 1 {
			st.Level, st.Repetition = i/repeat, int32(i%repeat+1)
		}
		recs = append(recs, rec(order(i, st), agg, exchange.StepName(name, i)))
		b.Status.Steps = append(b.Status.Steps, stepStatus(recs[i]))
	}
	b.Status.ClientsReady, b.Status.ClientsTotal, b.Status.StepsPlanned = 100, 100, int32(n)
	b.Status.Progress = progress(n, n)
	b.Status.StartTime = &metav1.Time{Time: t0}
	b.Status.ObservedGeneration = 1
	w := dsr.Workload
	b.Status.Workload = &v1alpha1.ResolvedWorkload{BlockSizeBytes: w.BlockSizeBytes, ReadPercent: w.ReadPercent, Pattern: string(w.Pattern),
		IODepth: w.IODepth, IOEngine: string(w.IOEngine), Direct: w.Direct, WorkingSetBytesPerClient: w.WorkingSetBytesPerClient}
	b.Status.Storage = &v1alpha1.StorageStatus{StorageClassName: strings.Repeat("s", 63), Provisioner: strings.Repeat("p", 63),
		Claims: 100, ClaimsBound: 100, Capacity: qty("1100Gi"), VolumeMode: "Filesystem", AccessMode: "ReadWriteOnce"}
	setComplete(b, t0.Add(time.Duration(n)*time.Minute), fmt.Sprintf("all %d steps completed", n))
	if err := analyze(b, &dsr, recs, true); err != nil {
		t.Fatal(err)
	}
	for i := range b.Status.Steps { // every optional field set
		b.Status.Steps[i].Saturated, b.Status.Steps[i].Knee, b.Status.Steps[i].Interrupted = true, true, true
	}
	if len(b.Status.SLOs) != 16 || b.Status.Summary == nil || b.Status.Summary.PeakIOPSStep == nil {
		t.Fatalf("status not fully populated: %d SLOs, summary %+v", len(b.Status.SLOs), b.Status.Summary)
	}
	if want := n / repeat; repeat > 1 && (len(b.Status.Repeatability) != want || b.Status.Repeatability[want-1].P99 == nil ||
		b.Status.Repeatability[want-1].Stable == nil) {
		t.Fatalf("repeatability not fully populated: %d entries, want %d", len(b.Status.Repeatability), want)
	}
	return b
}

func TestStatusSize(t *testing.T) {
	tests := []struct {
		steps, repeat int
		limit         int
	}{
		{20, 1, 64 << 10},
		{plan.MaxSteps, 1, 256 << 10},
		// The most repeatability entries: 50 levels of 2 runs.
		{plan.MaxSteps, 2, 256 << 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d steps, repeat %d", tt.steps, tt.repeat), func(t *testing.T) {
			b := bigStatus(t, tt.steps, tt.repeat)
			for _, s := range b.Status.Steps {
				if s.Read == nil || s.Write == nil || s.Latency == nil || s.ConfigMap == "" || s.Clients != 100 {
					t.Fatalf("step %d not fully populated", s.Index)
				}
			}
			raw, err := json.Marshal(b.Status)
			if err != nil {
				t.Fatal(err)
			}
			oneStep, err := json.Marshal(b.Status.Steps[0])
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("status with %d steps: %d bytes (%.1f KiB; one step %d bytes); limit %d KiB",
				tt.steps, len(raw), float64(len(raw))/1024, len(oneStep), tt.limit>>10)
			if len(raw) >= tt.limit {
				t.Errorf("status is %d bytes, want under %d", len(raw), tt.limit)
			}
			// The status survives the trip through JSON.
			var back v1alpha1.StorageBenchmarkStatus
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if len(back.Steps) != tt.steps || back.Steps[tt.steps-1].Latency.P999 != b.Status.Steps[tt.steps-1].Latency.P999 {
				t.Errorf("status does not round-trip through JSON")
			}
		})
	}
}

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestEmitEvents(t *testing.T) {
	base, _, _ := curveBench(t)
	base.Status.Steps = base.Status.Steps[:1]
	base.Status.StepsPlanned = 4
	base.Status.ClientsTotal, base.Status.ClientsReady = 3, 3
	base.Status.Storage = &v1alpha1.StorageStatus{StorageClassName: "fast", Claims: 3, ClaimsBound: 3}
	base.Status.CurrentStep = ptr.To[int32](1)
	setProgressing(base, ReasonRunning, "step 2/4 running")
	full, _, _ := curveBench(t)

	type mod func(b *v1alpha1.StorageBenchmark)
	tests := []struct {
		name     string
		old, new mod
		want     func(b *v1alpha1.StorageBenchmark) []string
	}{
		{"claims bound", func(b *v1alpha1.StorageBenchmark) { b.Status.Storage.ClaimsBound = 2 }, nil,
			func(*v1alpha1.StorageBenchmark) []string {
				return []string{"Normal ClaimsBound 3 claim(s) bound on StorageClass fast"}
			}},
		{"claims bound from nothing", func(b *v1alpha1.StorageBenchmark) { b.Status.Storage = nil }, nil,
			func(*v1alpha1.StorageBenchmark) []string {
				return []string{"Normal ClaimsBound 3 claim(s) bound on StorageClass fast"}
			}},
		{"claims not all bound yet", func(b *v1alpha1.StorageBenchmark) { b.Status.Storage.ClaimsBound = 1 },
			func(b *v1alpha1.StorageBenchmark) { b.Status.Storage.ClaimsBound = 2 }, nil},
		{"no claims (existing claim without class)", func(b *v1alpha1.StorageBenchmark) { b.Status.Storage = nil },
			func(b *v1alpha1.StorageBenchmark) { b.Status.Storage = &v1alpha1.StorageStatus{} }, nil},
		{"clients ready", func(b *v1alpha1.StorageBenchmark) { b.Status.ClientsReady = 2 }, nil,
			func(*v1alpha1.StorageBenchmark) []string {
				return []string{"Normal ClientsReady all 3 clients laid out their files and are ready"}
			}},
		{"clients not all ready", func(b *v1alpha1.StorageBenchmark) { b.Status.ClientsReady = 1 },
			func(b *v1alpha1.StorageBenchmark) { b.Status.ClientsReady = 2 }, nil},
		{"step completed", func(b *v1alpha1.StorageBenchmark) { b.Status.Steps = nil }, nil,
			func(b *v1alpha1.StorageBenchmark) []string {
				return []string{"Normal StepCompleted " + stepLine(&b.Status.Steps[0])}
			}},
		{"two steps completed at once", func(b *v1alpha1.StorageBenchmark) { b.Status.Steps = b.Status.Steps[:1] },
			func(b *v1alpha1.StorageBenchmark) { b.Status.Steps = full.DeepCopy().Status.Steps[:3] },
			func(b *v1alpha1.StorageBenchmark) []string {
				return []string{"Normal StepCompleted " + stepLine(&b.Status.Steps[1]), "Normal StepCompleted " + stepLine(&b.Status.Steps[2])}
			}},
		{"step started", func(b *v1alpha1.StorageBenchmark) { b.Status.CurrentStep = nil }, nil,
			func(*v1alpha1.StorageBenchmark) []string { return []string{"Normal StepStarted step 2/4 ordered"} }},
		{"next step started", func(b *v1alpha1.StorageBenchmark) { b.Status.CurrentStep = ptr.To[int32](0) }, nil,
			func(*v1alpha1.StorageBenchmark) []string { return []string{"Normal StepStarted step 2/4 ordered"} }},
		{"step finished and the next started", func(b *v1alpha1.StorageBenchmark) {
			b.Status.Steps, b.Status.CurrentStep = nil, ptr.To[int32](0)
		}, nil, func(b *v1alpha1.StorageBenchmark) []string {
			return []string{"Normal StepCompleted " + stepLine(&b.Status.Steps[0]), "Normal StepStarted step 2/4 ordered"}
		}},
		{"everything from scratch", func(b *v1alpha1.StorageBenchmark) { b.Status = v1alpha1.StorageBenchmarkStatus{} }, nil,
			func(b *v1alpha1.StorageBenchmark) []string {
				return []string{"Normal ClaimsBound 3 claim(s) bound on StorageClass fast",
					"Normal ClientsReady all 3 clients laid out their files and are ready",
					"Normal StepCompleted " + stepLine(&b.Status.Steps[0]), "Normal StepStarted step 2/4 ordered"}
			}},
		{"completed", nil, func(b *v1alpha1.StorageBenchmark) { setComplete(b, t0, "latency limit reached") },
			func(*v1alpha1.StorageBenchmark) []string {
				return []string{"Normal Completed Completed: 1 steps ran: latency limit reached"}
			}},
		{"failed", nil, func(b *v1alpha1.StorageBenchmark) { setFailed(b, t0, ReasonClientLost, "client 2's pod failed") },
			func(*v1alpha1.StorageBenchmark) []string {
				return []string{"Warning Failed ClientLost: client 2's pod failed"}
			}},
		{"failed with its last step", func(b *v1alpha1.StorageBenchmark) { b.Status.Steps = nil },
			func(b *v1alpha1.StorageBenchmark) {
				b.Status.Steps[0].Errors = []string{"fio: io_u error"}
				setFailed(b, t0, ReasonClientFailed, "step 0: fio: io_u error")
			},
			func(b *v1alpha1.StorageBenchmark) []string {
				return []string{"Normal StepCompleted " + stepLine(&b.Status.Steps[0]), "Warning Failed ClientFailed: step 0: fio: io_u error"}
			}},
		{"SLO met", nil, func(b *v1alpha1.StorageBenchmark) {
			setComplete(b, t0, "done")
			setCondition(b, v1alpha1.ConditionSLOMet, true, ReasonAllMet, t0, "every objective was met")
		}, func(*v1alpha1.StorageBenchmark) []string {
			return []string{"Normal Completed Completed: 1 steps ran: done", "Normal SLOMet every objective was met"}
		}},
		{"SLO not met", nil, func(b *v1alpha1.StorageBenchmark) {
			setComplete(b, t0, "done")
			setCondition(b, v1alpha1.ConditionSLOMet, false, ReasonNotMet, t0, "objective peak not met: peak 10,000 IOPS < 50,000 IOPS (step 0)")
		}, func(*v1alpha1.StorageBenchmark) []string {
			return []string{"Normal Completed Completed: 1 steps ran: done",
				"Warning SLONotMet objective peak not met: peak 10,000 IOPS < 50,000 IOPS (step 0)"}
		}},
		{"SLO not measurable", nil, func(b *v1alpha1.StorageBenchmark) {
			setCondition(b, v1alpha1.ConditionSLOMet, false, ReasonNotMeasurable, t0, "objective x could not be measured: no I/O")
		}, func(*v1alpha1.StorageBenchmark) []string {
			return []string{"Warning SLONotMet objective x could not be measured: no I/O"}
		}},
		{"SLO verdict unchanged", func(b *v1alpha1.StorageBenchmark) {
			setCondition(b, v1alpha1.ConditionSLOMet, false, ReasonNotMet, t0, "before")
		}, func(b *v1alpha1.StorageBenchmark) {
			setCondition(b, v1alpha1.ConditionSLOMet, true, ReasonAllMet, t0, "after")
		}, nil},
		{"run ended earlier", func(b *v1alpha1.StorageBenchmark) { setComplete(b, t0, "done") },
			func(b *v1alpha1.StorageBenchmark) { setComplete(b, t0, "done"); b.Status.Progress = "1/4" }, nil},
		{"step figures changed, same count", nil, func(b *v1alpha1.StorageBenchmark) { b.Status.Steps[0].Knee = true }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := base.DeepCopy(), base.DeepCopy()
			if tt.old != nil {
				tt.old(old)
			}
			if tt.new != nil {
				tt.new(cur)
			}
			rec := record.NewFakeRecorder(100)
			r := &Reconciler{Recorder: rec}
			r.emitEvents(old, cur)
			got := drain(rec)
			var want []string
			if tt.want != nil {
				want = tt.want(cur)
			}
			if !slices.Equal(got, want) {
				t.Errorf("events\n got %q\nwant %q", got, want)
			}
			// Once reported, the same status reports nothing again.
			r.emitEvents(cur.DeepCopy(), cur)
			if again := drain(rec); len(again) > 0 {
				t.Errorf("equal statuses emitted %q", again)
			}
		})
	}
}

// TestEmitEventsSkipsTransitionsBeforeStart: a status rebuilt from the
// children by a manager started after the run ended reports its ending
// again only if the manager saw it happen.
func TestEmitEventsSkipsTransitionsBeforeStart(t *testing.T) {
	for _, c := range []struct {
		name  string
		since time.Time
		want  int
	}{
		{"ended before this manager started", t0.Add(time.Minute), 0},
		{"ended while it ran", t0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			wiped := newBench()
			cur := wiped.DeepCopy()
			setComplete(cur, t0, "done")
			setCondition(cur, v1alpha1.ConditionSLOMet, true, ReasonAllMet, t0, "all met")
			rec := record.NewFakeRecorder(100)
			(&Reconciler{Recorder: rec, since: c.since}).emitEvents(wiped, cur)
			n := 0
			for _, e := range drain(rec) {
				if strings.Contains(e, EventCompleted) || strings.Contains(e, EventSLOMet) {
					n++
				}
			}
			if n != c.want {
				t.Errorf("%d ending events, want %d", n, c.want)
			}
		})
	}
}

func TestEmitEventsWithoutRecorder(t *testing.T) {
	b := newBench()
	cur := b.DeepCopy()
	setFailed(cur, t0, ReasonClientLost, "x")
	(&Reconciler{}).emitEvents(b, cur) // must not panic
}

func TestStepLine(t *testing.T) {
	b, _, _ := curveBench(t)
	s := b.Status.Steps[3]
	s.Saturated = true
	got := stepLine(&s)
	want := "step 4: achieved 31,000 IOPS, 242.2 MiB/s (offered 40,000 IOPS); read mean 1.8ms p99 3ms; write mean 2.8ms p99 5ms; saturated"
	if got != want {
		t.Errorf("stepLine() = %q\nwant          %q", got, want)
	}
	bytes := v1alpha1.StepStatus{Index: 1, AchievedIOPS: 100, AchievedBytesPerSecond: 100 << 20, OfferedBytesPerSecond: 200 << 20}
	if got := stepLine(&bytes); got != "step 2: achieved 100 IOPS, 100.0 MiB/s (offered 200.0 MiB/s)" {
		t.Errorf("stepLine() = %q", got)
	}
	bytes.Repetition = 2
	if got := stepLine(&bytes); got != "step 2 (run 2 of its level): achieved 100 IOPS, 100.0 MiB/s (offered 200.0 MiB/s)" {
		t.Errorf("stepLine() of a repeated run = %q", got)
	}
}
