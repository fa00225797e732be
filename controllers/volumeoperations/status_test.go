package volumeoperations

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/volops"
)

// opsBench is a benchmark of ops at the concurrencies, as stored.
func opsBench(name string, ops []v1alpha1.VolumeOperation, concurrency ...int32) *v1alpha1.VolumeOperationsBenchmark {
	return &v1alpha1.VolumeOperationsBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf", UID: "uid", Generation: 3},
		Spec: v1alpha1.VolumeOperationsBenchmarkSpec{
			Storage:     v1alpha1.OperationsStorage{StorageClassName: "fast"},
			Operations:  ops,
			Concurrency: concurrency,
		},
	}
}

var allOps = []v1alpha1.VolumeOperation{
	v1alpha1.OperationProvision, v1alpha1.OperationAttach, v1alpha1.OperationSnapshot, v1alpha1.OperationCloneFromSnapshot,
	v1alpha1.OperationCloneFromVolume, v1alpha1.OperationExpand, v1alpha1.OperationDelete,
}

// stepSamples are the samples of one step of op: object i started at t0
// and took ds[i]; the indices in fail failed (with their reason) after it.
func stepSamples(op v1alpha1.VolumeOperation, ds []time.Duration, fail map[int]string) []volops.Sample {
	out := make([]volops.Sample, len(ds))
	for i, d := range ds {
		out[i] = volops.Sample{Operation: volops.Operation(op), Concurrency: len(ds), Index: i, Start: t0, End: t0.Add(d), Outcome: volops.Succeeded}
		if r, ok := fail[i]; ok {
			out[i].Outcome, out[i].Reason = volops.Failed, r
		}
	}
	return out
}

func secs(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// phaseAt is the phase of op at the step-th concurrency of b.
func phaseAt(t *testing.T, b *v1alpha1.VolumeOperationsBenchmark, step int, op v1alpha1.VolumeOperation) phase {
	t.Helper()
	for p := range phases(b) {
		if ph, _ := phaseOf(b, p); ph.step == step && ph.op == op {
			return ph
		}
	}
	t.Fatalf("no phase %s at step %d", op, step)
	return phase{}
}

func mustRecord(t *testing.T, b *v1alpha1.VolumeOperationsBenchmark, step int, op v1alpha1.VolumeOperation, ds []time.Duration, fail map[int]string) {
	t.Helper()
	if err := recordStep(b, phaseAt(t, b, step, op), stepSamples(op, ds, fail)); err != nil {
		t.Fatalf("recordStep(%s, step %d): %v", op, step, err)
	}
}

func TestRecordStep(t *testing.T) {
	prov, att := v1alpha1.OperationProvision, v1alpha1.OperationAttach
	b := opsBench("bench", []v1alpha1.VolumeOperation{prov, att}, 1, 5, 10)

	// Step 1 at 1 at once: one step, no fit.
	mustRecord(t, b, 0, prov, secs(2), nil)
	if n := len(b.Status.Operations); n != 1 {
		t.Fatalf("%d curves after the first step, want 1", n)
	}
	c := b.Status.Operations[0]
	want1 := v1alpha1.OperationStepStatus{Concurrency: 1, Succeeded: 1, Span: dur(2 * time.Second), PerMinute: "30",
		Latency: &v1alpha1.OperationLatencyStatus{Min: dur(2 * time.Second), Mean: dur(2 * time.Second), P50: dur(2 * time.Second),
			P90: dur(2 * time.Second), P99: dur(2 * time.Second), Max: dur(2 * time.Second)}}
	if c.Operation != prov || len(c.Steps) != 1 || !reflect.DeepEqual(c.Steps[0], want1) {
		t.Fatalf("after one step: %+v\nwant the step %+v", c, want1)
	}
	if c.PerOperation != nil || c.KneeConcurrency != nil {
		t.Errorf("one step: perOperation %+v, knee %v; want neither", c.PerOperation, c.KneeConcurrency)
	}

	// The second operation of the step gets its own curve, after it.
	mustRecord(t, b, 0, att, secs(3), nil)
	if n := len(b.Status.Operations); n != 2 || b.Status.Operations[1].Operation != att {
		t.Fatalf("curves %+v, want provision then attach", b.Status.Operations)
	}

	// Step 2, 5 at once, taking 1 … 5 s: the curve has two steps, and
	// perOperation is the slope of the max, (5 s − 2 s) / (5 − 1).
	mustRecord(t, b, 1, prov, secs(1, 2, 3, 4, 5), nil)
	c = b.Status.Operations[0]
	want2 := v1alpha1.OperationStepStatus{Concurrency: 5, Succeeded: 5, Span: dur(5 * time.Second), PerMinute: "60",
		Latency: &v1alpha1.OperationLatencyStatus{Min: dur(time.Second), Mean: dur(3 * time.Second), P50: dur(3 * time.Second),
			P90: dur(5 * time.Second), P99: dur(5 * time.Second), Max: dur(5 * time.Second)}}
	if len(c.Steps) != 2 || !reflect.DeepEqual(c.Steps[0], want1) || !reflect.DeepEqual(c.Steps[1], want2) {
		t.Fatalf("after two steps: %+v\nwant steps %+v, %+v", c.Steps, want1, want2)
	}
	wantFit := &v1alpha1.FittedDuration{Value: dur(750 * time.Millisecond), Low: dur(750 * time.Millisecond), High: dur(750 * time.Millisecond), Steps: 2}
	if !reflect.DeepEqual(c.PerOperation, wantFit) {
		t.Errorf("perOperation %+v, want %+v", c.PerOperation, wantFit)
	}
	if got := b.Status.Operations[1]; len(got.Steps) != 1 {
		t.Errorf("attach's curve changed with provision's step: %+v", got)
	}

	// Step 3, 10 at once, one failed: its reason is kept, its latencies
	// are the others', and it is left out of the fit.
	ds := secs(1, 1, 1, 1, 1, 1, 1, 1, 1, 60)
	mustRecord(t, b, 2, prov, ds, map[int]string{9: "the claim lost its volume", 7: "request refused: quota"})
	c = b.Status.Operations[0]
	if len(c.Steps) != 3 {
		t.Fatalf("after three steps: %d steps", len(c.Steps))
	}
	s3 := c.Steps[2]
	if s3.Concurrency != 10 || s3.Succeeded != 8 || s3.Failed != 2 || s3.TimedOut != 0 || s3.Reason != "request refused: quota" {
		t.Errorf("the failed step: %+v; want 8 succeeded, 2 failed, the lowest index's reason", s3)
	}
	if s3.Latency == nil || s3.Latency.Max.Duration != time.Second {
		t.Errorf("the failed step's latency %+v, want the succeeded ones' (max 1s)", s3.Latency)
	}
	if s3.Span.Duration != time.Minute {
		t.Errorf("the failed step's span %s, want 1m (the failed ones included)", s3.Span.Duration)
	}
	if !reflect.DeepEqual(c.PerOperation, wantFit) {
		t.Errorf("perOperation with a failed step %+v, want the fit of the two steps without failures %+v", c.PerOperation, wantFit)
	}
}

func TestRecordStepTimedOutAndNoneSucceeded(t *testing.T) {
	b := opsBench("bench", []v1alpha1.VolumeOperation{v1alpha1.OperationSnapshot}, 2)
	ph := phaseAt(t, b, 0, v1alpha1.OperationSnapshot)
	samples := []volops.Sample{
		{Operation: volops.Snapshot, Concurrency: 2, Index: 0, Start: t0, End: t0.Add(time.Minute), Outcome: volops.TimedOut, Reason: "not done after 1m0s"},
		{Operation: volops.Snapshot, Concurrency: 2, Index: 1, Start: t0, End: t0.Add(time.Second), Outcome: volops.Failed, Reason: "request refused: x"},
	}
	if err := recordStep(b, ph, samples); err != nil {
		t.Fatal(err)
	}
	got := b.Status.Operations[0].Steps[0]
	want := v1alpha1.OperationStepStatus{Concurrency: 2, Failed: 1, TimedOut: 1, Span: dur(time.Minute), Reason: "not done after 1m0s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v (no latency, no rate)", got, want)
	}
}

func TestRecordStepRefusesBadSamples(t *testing.T) {
	prov := v1alpha1.OperationProvision
	tests := []struct {
		name    string
		samples []volops.Sample
	}{
		{"no samples", nil},
		{"fewer samples than the concurrency", stepSamples(prov, secs(1, 2), nil)[:1]},
		{"another operation's samples", stepSamples(v1alpha1.OperationAttach, secs(1, 2), nil)},
		{"an end before its start", []volops.Sample{{Operation: volops.Provision, Concurrency: 1, Start: t0, End: t0.Add(-time.Second), Outcome: volops.Succeeded},
			stepSamples(prov, secs(1, 1), nil)[1]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := opsBench("bench", []v1alpha1.VolumeOperation{prov, v1alpha1.OperationAttach}, 2)
			if err := recordStep(b, phaseAt(t, b, 0, prov), tt.samples); err == nil {
				t.Errorf("recordStep accepted them: %+v", b.Status.Operations)
			}
		})
	}
}

// recorded is a benchmark with curves recorded as the reconciler records
// them: a clean curve with a knee, one with failures and timeouts.
func recorded(t *testing.T) *v1alpha1.VolumeOperationsBenchmark {
	t.Helper()
	prov, snap := v1alpha1.OperationProvision, v1alpha1.OperationSnapshot
	b := opsBench("bench", []v1alpha1.VolumeOperation{prov, snap}, 1, 2, 3, 4, 6)
	flat := func(n int, d float64) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(d*float64(time.Second)) + time.Duration(i)*time.Millisecond
		}
		return out
	}
	for step, n := range []int{1, 2, 3, 4, 6} {
		p50 := 1.0
		if n == 6 {
			p50 = 12
		}
		mustRecord(t, b, step, prov, flat(n, p50), nil)
		var fail map[int]string
		if n == 3 {
			fail = map[int]string{1: "the claim lost its volume"}
		}
		mustRecord(t, b, step, snap, flat(n, 0.5*float64(n)), fail)
	}
	return b
}

func TestStepsOfCurveOfRoundTrip(t *testing.T) {
	b := recorded(t)
	for _, c := range b.Status.Operations {
		t.Run(string(c.Operation)+": status → core → status", func(t *testing.T) {
			t.Log(fmtCurve(c))
			again := curveOf(c.Operation, volops.CurveOf(volops.Operation(c.Operation), stepsOf(&c)))
			if !reflect.DeepEqual(again, c) {
				t.Errorf("round trip changed the curve:\n got %s\nwant %s", fmtCurve(again), fmtCurve(c))
			}
		})
	}
	t.Run("core → status → core", func(t *testing.T) {
		var samples []volops.Sample
		for _, n := range []int{1, 5, 10} {
			ds := make([]time.Duration, n)
			for i := range ds {
				ds[i] = time.Duration(n*100+i*37) * time.Millisecond
			}
			var fail map[int]string
			if n == 10 {
				fail = map[int]string{3: "x"}
			}
			samples = append(samples, stepSamples(v1alpha1.OperationCloneFromVolume, ds, fail)...)
		}
		r, err := volops.Summarize(samples)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := r.Curve(volops.CloneFromVolume)
		st := curveOf(v1alpha1.OperationCloneFromVolume, c)
		if got := stepsOf(&st); !reflect.DeepEqual(got, c.Steps) {
			t.Errorf("steps read back:\n got %+v\nwant %+v", got, c.Steps)
		}
		if got := volops.CurveOf(volops.CloneFromVolume, stepsOf(&st)); !reflect.DeepEqual(got, c) {
			t.Errorf("curve read back:\n got %+v\nwant %+v", got, c)
		}
	})
}

func fmtCurve(c v1alpha1.OperationCurveStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s knee=%v perOperation=%+v", c.Operation, ptr.Deref(c.KneeConcurrency, 0), c.PerOperation)
	for _, s := range c.Steps {
		fmt.Fprintf(&b, "\n  %+v latency=%+v", s, s.Latency)
	}
	return b.String()
}

func TestJudge(t *testing.T) {
	prov, snap := v1alpha1.OperationProvision, v1alpha1.OperationSnapshot
	obj := func(name string, op v1alpha1.VolumeOperation, p v1alpha1.OperationPercentile, max time.Duration, upTo int32) v1alpha1.OperationObjective {
		o := v1alpha1.OperationObjective{Name: name, Operation: op, Percentile: p, MaxLatency: dur(max)}
		if upTo > 0 {
			o.UpToConcurrency = ptr.To(upTo)
		}
		return o
	}
	tests := []struct {
		name       string
		objectives []v1alpha1.OperationObjective
		want       []v1alpha1.Verdict
		// wantStatus "": no SLOMet condition.
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{name: "no objectives: no condition, no verdicts"},
		{name: "met", objectives: []v1alpha1.OperationObjective{obj("prov", prov, "p99", 13*time.Second, 0)},
			want: []v1alpha1.Verdict{"Met"}, wantStatus: metav1.ConditionTrue, wantReason: "AllMet", wantMessage: "1 of 1 objectives met"},
		{name: "not met: latency above the bound", objectives: []v1alpha1.OperationObjective{obj("prov", prov, "p99", 2*time.Second, 0)},
			want: []v1alpha1.Verdict{"NotMet"}, wantStatus: metav1.ConditionFalse, wantReason: "NotMet", wantMessage: "0 of 1 objectives met"},
		{name: "met up to a concurrency below the knee", objectives: []v1alpha1.OperationObjective{obj("prov", prov, "p50", 2*time.Second, 4)},
			want: []v1alpha1.Verdict{"Met"}, wantStatus: metav1.ConditionTrue, wantReason: "AllMet", wantMessage: "1 of 1 objectives met"},
		{name: "unset percentile is p99", objectives: []v1alpha1.OperationObjective{obj("prov", prov, "", 2*time.Second, 4)},
			want: []v1alpha1.Verdict{"Met"}, wantStatus: metav1.ConditionTrue, wantReason: "AllMet", wantMessage: "1 of 1 objectives met"},
		{name: "a step with a failure fails the objective whatever its latency", objectives: []v1alpha1.OperationObjective{obj("snap", snap, "p99", time.Hour, 0)},
			want: []v1alpha1.Verdict{"NotMet"}, wantStatus: metav1.ConditionFalse, wantReason: "NotMet", wantMessage: "0 of 1 objectives met"},
		{name: "met below the failed step", objectives: []v1alpha1.OperationObjective{obj("snap", snap, "max", time.Hour, 2)},
			want: []v1alpha1.Verdict{"Met"}, wantStatus: metav1.ConditionTrue, wantReason: "AllMet", wantMessage: "1 of 1 objectives met"},
		{name: "an operation not measured is not met", objectives: []v1alpha1.OperationObjective{obj("att", v1alpha1.OperationAttach, "p99", time.Hour, 0)},
			want: []v1alpha1.Verdict{"NotMet"}, wantStatus: metav1.ConditionFalse, wantReason: "NotMet", wantMessage: "0 of 1 objectives met"},
		{name: "some met: the condition is False, each verdict in spec order",
			objectives: []v1alpha1.OperationObjective{obj("a", prov, "p99", 13*time.Second, 0), obj("b", prov, "p99", 2*time.Second, 0), obj("c", snap, "p50", time.Hour, 2)},
			want:       []v1alpha1.Verdict{"Met", "NotMet", "Met"}, wantStatus: metav1.ConditionFalse, wantReason: "NotMet", wantMessage: "2 of 3 objectives met"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := recorded(t)
			b.Spec.Objectives = tt.objectives
			// What an earlier judgement left must not survive.
			b.Status.Objectives = []v1alpha1.SLOStatus{{Name: "stale", Verdict: "Met"}}
			meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSLOMet, Status: metav1.ConditionUnknown, Reason: "Stale"})
			judge(b)
			var got []v1alpha1.Verdict
			for i, s := range b.Status.Objectives {
				got = append(got, s.Verdict)
				if s.Name != tt.objectives[i].Name || s.Message == "" {
					t.Errorf("objectives[%d] = %+v, want the name %q and a message", i, s, tt.objectives[i].Name)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("verdicts %v, want %v (%+v)", got, tt.want, b.Status.Objectives)
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet)
			if tt.wantStatus == "" {
				if c != nil {
					t.Errorf("SLOMet %+v, want none", c)
				}
				if b.Status.Objectives != nil {
					t.Errorf("objectives %+v, want nil", b.Status.Objectives)
				}
				return
			}
			if c == nil {
				t.Fatal("no SLOMet condition")
			}
			if c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.Message != tt.wantMessage || c.ObservedGeneration != b.Generation {
				t.Errorf("SLOMet %s/%s %q gen %d, want %s/%s %q gen %d", c.Status, c.Reason, c.Message, c.ObservedGeneration,
					tt.wantStatus, tt.wantReason, tt.wantMessage, b.Generation)
			}
		})
	}
	t.Run("the unset percentile is judged as p99", func(t *testing.T) {
		b := recorded(t)
		b.Spec.Objectives = []v1alpha1.OperationObjective{obj("prov", prov, "", 2*time.Second, 4)}
		judge(b)
		if m := b.Status.Objectives[0].Message; !strings.HasPrefix(m, "p99 ") {
			t.Errorf("message %q, want it about p99", m)
		}
	})
}

func TestPhases(t *testing.T) {
	prov, att, snap := v1alpha1.OperationProvision, v1alpha1.OperationAttach, v1alpha1.OperationSnapshot
	b := opsBench("bench", []v1alpha1.VolumeOperation{prov, att, snap}, 1, 5, 10)
	if n := phases(b); n != 9 {
		t.Fatalf("phases = %d, want 9", n)
	}
	tests := []struct {
		p    int
		want phase
		ok   bool
	}{
		{-1, phase{}, false},
		{0, phase{step: 0, op: prov, concurrency: 1}, true},
		{1, phase{step: 0, op: att, concurrency: 1}, true},
		{2, phase{step: 0, op: snap, concurrency: 1}, true},
		{3, phase{step: 1, op: prov, concurrency: 5}, true},
		{4, phase{step: 1, op: att, concurrency: 5}, true},
		{8, phase{step: 2, op: snap, concurrency: 10}, true},
		{9, phase{}, false},
		{100, phase{}, false},
	}
	for _, tt := range tests {
		got, ok := phaseOf(b, tt.p)
		if got != tt.want || ok != tt.ok {
			t.Errorf("phaseOf(%d) = %+v, %v; want %+v, %v", tt.p, got, ok, tt.want, tt.ok)
		}
	}
	for _, empty := range []*v1alpha1.VolumeOperationsBenchmark{opsBench("b", nil, 1, 5), opsBench("b", []v1alpha1.VolumeOperation{prov})} {
		if n := phases(empty); n != 0 {
			t.Errorf("phases of %v × %v = %d, want 0", empty.Spec.Operations, empty.Spec.Concurrency, n)
		}
		if ph, ok := phaseOf(empty, 0); ok {
			t.Errorf("phaseOf(0) of %v × %v = %+v, want none", empty.Spec.Operations, empty.Spec.Concurrency, ph)
		}
	}
}

func TestNamesFit(t *testing.T) {
	name := "a" + strings.Repeat("b", 38) + "c" // 40, the API's most
	if len(name) != 40 {
		t.Fatal(len(name))
	}
	concurrency := []int32{1, 2, 5, 10, 20, 30, 40, 50, 75, 100} // 10 steps, up to 100
	b := opsBench(name, allOps, concurrency...)
	seen := map[string]string{}
	for p := range phases(b) {
		ph, _ := phaseOf(b, p)
		for _, n := range []string{sourceName(b, ph), timedName(b, ph, 0), timedName(b, ph, 9), timedName(b, ph, ph.concurrency-1)} {
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Errorf("%s (%d characters): %v", n, len(n), errs)
			}
		}
		for i := -1; i < ph.concurrency; i++ {
			n := sourceName(b, ph)
			if i >= 0 {
				n = timedName(b, ph, i)
			}
			who := fmt.Sprintf("%d-%s-%d", ph.step, ph.op, i)
			if other, dup := seen[n]; dup {
				t.Errorf("%s names both %s and %s", n, other, who)
			}
			seen[n] = who
		}
		for k, v := range labelsOf(b, ph, ph.concurrency-1) {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, errs)
			}
		}
	}
	// The longest: the 10th step (index 9), the longest code, object 99.
	ph := phase{step: 9, op: v1alpha1.OperationCloneFromVolume, concurrency: 100}
	for _, n := range []string{timedName(b, ph, 9), timedName(b, ph, 99), sourceName(b, ph)} {
		if len(n) > validation.DNS1123LabelMaxLength {
			t.Errorf("%s: %d characters, more than %d", n, len(n), validation.DNS1123LabelMaxLength)
		}
	}
	for _, op := range allOps {
		if codes[op] == "" {
			t.Errorf("operation %s has no code", op)
		}
	}
}

func TestPlanOfTheLargestPlanTheAPIAllows(t *testing.T) {
	tests := []struct {
		name        string
		ops         []v1alpha1.VolumeOperation
		concurrency []int32
	}{
		{"7 operations, 10 steps up to 100", allOps, []int32{1, 2, 5, 10, 20, 30, 40, 50, 75, 100}},
		{"7 operations, 100 at once", allOps, []int32{100}},
		{"attach alone, 100 at once", []v1alpha1.VolumeOperation{v1alpha1.OperationAttach}, []int32{99, 100}},
		{"cloneFromSnapshot alone, 100 at once", []v1alpha1.VolumeOperation{v1alpha1.OperationCloneFromSnapshot}, []int32{100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := opsBench("bench", tt.ops, tt.concurrency...)
			p := planOf(b)
			if p.MaxObjects != maxObjects {
				t.Errorf("MaxObjects = %d, want %d", p.MaxObjects, maxObjects)
			}
			if len(p.Operations) != len(tt.ops) || len(p.Concurrency) != len(tt.concurrency) {
				t.Fatalf("plan %+v of %v × %v", p, tt.ops, tt.concurrency)
			}
			for i, op := range tt.ops {
				if string(p.Operations[i]) != string(op) {
					t.Errorf("operations[%d] = %s, want %s", i, p.Operations[i], op)
				}
			}
			for i, c := range tt.concurrency {
				if p.Concurrency[i] != int(c) {
					t.Errorf("concurrency[%d] = %d, want %d", i, p.Concurrency[i], c)
				}
			}
			if err := p.Validate(); err != nil {
				t.Errorf("the API allows it, the core refuses it: %v (Objects %d, MaxObjects %d)", err, p.Objects(), p.MaxObjects)
			}
		})
	}
	t.Run("the objects of the API's largest plan", func(t *testing.T) {
		p := planOf(opsBench("bench", allOps, 100))
		if n := p.Objects(); n != 200 || n > maxObjects {
			t.Errorf("Objects = %d, want 200 (attach: a claim and a pod each) within %d", n, maxObjects)
		}
	})
	t.Run("an empty plan is refused", func(t *testing.T) {
		if err := planOf(opsBench("bench", nil)).Validate(); err == nil {
			t.Error("Validate accepted a plan without operations or steps")
		}
	})
}
