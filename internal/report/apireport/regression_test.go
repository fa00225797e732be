package apireport

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/results"
)

// stepConfigMap is step k's record of benchmark name as the operator
// writes it: the order for step (its load) and a timeline of one window a
// second, of iops[s] I/Os each of latencyNs; a second of 0 IOPS completed
// nothing.
func stepConfigMap(t *testing.T, name string, k int, step plan.Step, iops []float64, latencyNs uint64) *corev1.ConfigMap {
	t.Helper()
	tl := results.Timeline{WindowSeconds: 1}
	for s, v := range iops {
		w := results.Window{StartMs: uint64(s) * 1000, IOs: uint64(v), IOPS: v}
		if v > 0 {
			w.Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(latencyNs), Count: uint64(v)}}}
		}
		tl.Windows = append(tl.Windows, w)
	}
	order, err := exchange.Encode(protocol.StepOrder{Index: k, Step: step, Duration: time.Duration(len(iops)) * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := exchange.Encode(results.StepAggregate{Step: k, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: exchange.StepName(name, k), Namespace: "storagebench"},
		Data:       map[string]string{exchange.KeyOrder: order, exchange.KeyAggregate: agg},
	}
}

// flat is n seconds of v IOPS.
func flat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestRunSamples(t *testing.T) {
	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "oltp", Namespace: "storagebench", UID: "u-1"}}
	// Step 2 was not steady and step 3 is its rerun: step 2 is left out
	// and the rerun takes its place, planned step 1.
	cms := []*corev1.ConfigMap{
		stepConfigMap(t, "oltp", 0, plan.Step{Index: 0, OfferedIOPS: 1000}, flat(6, 1000), 200_000),
		stepConfigMap(t, "oltp", 1, plan.Step{Index: 1, OfferedIOPS: 2000, Attempt: 1}, flat(6, 1500), 900_000),
		stepConfigMap(t, "oltp", 2, plan.Step{Index: 2, OfferedIOPS: 2000, Attempt: 2}, []float64{2000, 0, 2000, 2000}, 400_000),
		stepConfigMap(t, "oltp", 3, plan.Step{Index: 3, OfferedIOPS: 3000}, flat(5, 3000), 800_000),
	}
	// The benchmark controls its records, as the operator writes them:
	// read.
	for _, cm := range cms {
		ofOltp(cm)
	}
	got, err := RunSamples(sb, cms)
	if err != nil {
		t.Fatal(err)
	}
	p99 := func(ns uint64) float64 { return float64(fio.BinValue(fio.IndexOf(ns))) }
	want := []analysis.StepSamples{
		{Planned: 0, Index: 0, Label: "1000 IOPS offered", Offered: 1000, IOPS: flat(6, 1000), P99Ns: flat(6, p99(200_000))},
		// A second without I/O has no p99.
		{Planned: 1, Index: 2, Label: "2000 IOPS offered", Offered: 2000, IOPS: []float64{2000, 0, 2000, 2000}, P99Ns: flat(3, p99(400_000))},
		{Planned: 2, Index: 3, Label: "3000 IOPS offered", Offered: 3000, IOPS: flat(5, 3000), P99Ns: flat(5, p99(800_000))},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples\n got %+v\nwant %+v", got, want)
	}

	// A timeline longer than the operator writes is dropped, as the
	// operator drops it: the step counts, without samples.
	long := ofOltp(stepConfigMap(t, "oltp", 0, plan.Step{OfferedIOPS: 1000}, flat(results.MaxWindows+1, 10), 200_000))
	if got, err := RunSamples(sb, []*corev1.ConfigMap{long}); err != nil || len(got) != 1 || len(got[0].IOPS) != 0 || len(got[0].P99Ns) != 0 {
		t.Errorf("an overlong timeline: %+v, %v; want one step without samples", got, err)
	}

	for _, c := range []struct {
		name string
		cms  []*corev1.ConfigMap
		want string
	}{
		{"another step's record", []*corev1.ConfigMap{cms[1]}, "step 1 of oltp: ConfigMap oltp-step-001 key order.json: holds no order for step 0"},
		{"somebody else's", func() []*corev1.ConfigMap {
			cm := cms[0].DeepCopy()
			cm.OwnerReferences[0].UID, cm.OwnerReferences[0].Name = types.UID("u-0"), "oltp-old"
			return []*corev1.ConfigMap{cm}
		}(), "ConfigMap oltp-step-000 is not a record of storagebenchmark oltp: StorageBenchmark oltp-old controls it"},
		{"no order", []*corev1.ConfigMap{ofOltp(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "oltp-step-000"}, Data: map[string]string{}})}, "step 1 of oltp: ConfigMap oltp-step-000 has no order.json"},
	} {
		if _, err := RunSamples(sb, c.cms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// ofOltp makes the benchmark of TestRunSamples, oltp of UID u-1, cm's
// controller, as the operator does for its records.
func ofOltp(cm *corev1.ConfigMap) *corev1.ConfigMap {
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "storagebench.io/v1alpha1", Kind: "StorageBenchmark", Name: "oltp", UID: "u-1", Controller: ptrTo(true)}}
	return cm
}

// TestRunSamplesOwnership: a step's ConfigMap is the run's record only
// when the benchmark controls it (controllers/steps.go readSteps,
// ownedBy): one anybody who may create ConfigMaps planted, with no
// controller, or one another object controls, is refused by name.
func TestRunSamplesOwnership(t *testing.T) {
	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "oltp", Namespace: "storagebench", UID: "u-1"}}
	step := func(k int) *corev1.ConfigMap {
		return stepConfigMap(t, "oltp", k, plan.Step{Index: k, OfferedIOPS: int64(1000 * (k + 1))}, flat(6, float64(1000*(k+1))), 200_000)
	}
	controlledBy := func(cm *corev1.ConfigMap, kind, name string, uid types.UID) *corev1.ConfigMap {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "storagebench.io/v1alpha1", Kind: kind, Name: name, UID: uid, Controller: ptrTo(true)}}
		return cm
	}
	ours := func(k int) *corev1.ConfigMap { return ofOltp(step(k)) }
	if got, err := RunSamples(sb, []*corev1.ConfigMap{ours(0), ours(1)}); err != nil || len(got) != 2 {
		t.Fatalf("the benchmark's own records: %d steps, %v; want 2", len(got), err)
	}
	for _, c := range []struct {
		name string
		cm   *corev1.ConfigMap
		want string
	}{
		{"no controller", step(1), "ConfigMap oltp-step-001 is not a record of storagebenchmark oltp: it has no controller"},
		{"an owner that is not its controller", func() *corev1.ConfigMap {
			cm := ours(1)
			cm.OwnerReferences[0].Controller = nil
			return cm
		}(), "ConfigMap oltp-step-001 is not a record of storagebenchmark oltp: it has no controller"},
		{"controlled by another object", controlledBy(step(1), "StorageBenchmark", "oltp-old", "u-0"),
			"ConfigMap oltp-step-001 is not a record of storagebenchmark oltp: StorageBenchmark oltp-old controls it"},
		{"controlled by a namesake of another UID", controlledBy(step(1), "StorageBenchmark", "oltp", "u-0"),
			"ConfigMap oltp-step-001 is not a record of storagebenchmark oltp: StorageBenchmark oltp controls it"},
	} {
		if got, err := RunSamples(sb, []*corev1.ConfigMap{ours(0), c.cm}); err == nil || err.Error() != c.want {
			t.Errorf("%s: %d steps, err %v; want %q", c.name, len(got), err, c.want)
		}
	}
	// A benchmark saved without its UID cannot tell its records from
	// others: none is read.
	noUID := sb.DeepCopy()
	noUID.UID = ""
	want := "ConfigMap oltp-step-000 is not a record of storagebenchmark oltp: the benchmark has no metadata.uid to match its controller's"
	if _, err := RunSamples(noUID, []*corev1.ConfigMap{ours(0)}); err == nil || err.Error() != want {
		t.Errorf("a benchmark without UID: err %v; want %q", err, want)
	}
}

// TestStepTimelineOwnership: a step's timeline, for report --timeline and
// the HTML report, is read only from a ConfigMap the benchmark controls,
// by the rule RunSamples applies: a planted one, without a controller or
// with another's, is refused by name.
func TestStepTimelineOwnership(t *testing.T) {
	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "oltp", Namespace: "storagebench", UID: "u-1"}}
	step := func() *corev1.ConfigMap {
		return stepConfigMap(t, "oltp", 2, plan.Step{Index: 2, OfferedIOPS: 3000}, flat(6, 3000), 200_000)
	}
	if tl, err := StepTimeline(sb, ofOltp(step()), 2); err != nil || tl.Step != 2 || len(tl.Points) != 6 {
		t.Fatalf("the benchmark's own record: step %d, %d points, %v; want step 2's 6 points", tl.Step, len(tl.Points), err)
	}
	foreign := ofOltp(step())
	foreign.OwnerReferences[0].UID, foreign.OwnerReferences[0].Name = "u-0", "oltp-old"
	noUID := sb.DeepCopy()
	noUID.UID = ""
	for _, c := range []struct {
		name string
		sb   *v1alpha1.StorageBenchmark
		cm   *corev1.ConfigMap
		want string
	}{
		{"no controller", sb, step(), "ConfigMap oltp-step-002 is not a record of storagebenchmark oltp: it has no controller"},
		{"controlled by another object", sb, foreign, "ConfigMap oltp-step-002 is not a record of storagebenchmark oltp: StorageBenchmark oltp-old controls it"},
		{"a benchmark without UID", noUID, ofOltp(step()), "ConfigMap oltp-step-002 is not a record of storagebenchmark oltp: the benchmark has no metadata.uid to match its controller's"},
	} {
		if _, err := StepTimeline(c.sb, c.cm, 2); err == nil || err.Error() != c.want {
			t.Errorf("%s: err %v; want %q", c.name, err, c.want)
		}
	}
}

// TestClosedLoopOf: a step's latency is closed-loop as its status says
// (status.steps[k].closedLoop), whatever it offered; without its status
// entry, when it offered no rate. RunSamples marks the steps so.
func TestClosedLoopOf(t *testing.T) {
	rate, qd := plan.Step{OfferedIOPS: 1000}, plan.Step{QueueDepthPerClient: 4}
	status := []v1alpha1.StepStatus{{Index: 0}, {Index: 1, ClosedLoop: true}, {Index: 2}, {Index: 4}}
	for _, c := range []struct {
		k    int
		step plan.Step
		want bool
	}{
		{0, rate, false},
		{1, rate, true},                 // saturated: status says so
		{2, qd, false},                  // status is what counts
		{3, rate, false}, {3, qd, true}, // status lost step 3: whether it offered a rate
		{4, qd, true}, // status[4] does not exist (step 4 is at [3])
		{-1, rate, false},
	} {
		if got := ClosedLoopOf(status, c.k, c.step); got != c.want {
			t.Errorf("step %d offering %+v: closed-loop %v, want %v", c.k, c.step, got, c.want)
		}
	}
	if !ClosedLoopOf(nil, 0, qd) || ClosedLoopOf(nil, 0, rate) {
		t.Error("without status: want closed-loop exactly for a step without a rate")
	}

	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "oltp", Namespace: "storagebench", UID: "u-1"}}
	sb.Status.Steps = []v1alpha1.StepStatus{{Index: 0}, {Index: 1, ClosedLoop: true}}
	cms := []*corev1.ConfigMap{
		ofOltp(stepConfigMap(t, "oltp", 0, plan.Step{Index: 0, OfferedIOPS: 1000}, flat(6, 1000), 200_000)),
		ofOltp(stepConfigMap(t, "oltp", 1, plan.Step{Index: 1, OfferedIOPS: 2000}, flat(6, 1800), 900_000)),
		ofOltp(stepConfigMap(t, "oltp", 2, plan.Step{Index: 2, Unthrottled: true}, flat(6, 2500), 2_000_000)),
	}
	got, err := RunSamples(sb, cms)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ClosedLoop || !got[1].ClosedLoop || !got[2].ClosedLoop {
		t.Errorf("closed-loop marks %v, want false, true (saturated, by status), true (no rate, without status)", []bool{got[0].ClosedLoop, got[1].ClosedLoop, got[2].ClosedLoop})
	}
}

func TestBaselineRunsConfigMap(t *testing.T) {
	runs := make([]*v1alpha1.StorageBenchmark, 3)
	samples := make([][]analysis.StepSamples, 3)
	for i := range runs {
		runs[i] = fixture(t, "oltp")
		runs[i].Name = fmt.Sprintf("oltp-%d", i+1)
		samples[i] = []analysis.StepSamples{
			{Planned: 0, Index: 0, Label: "5000 IOPS offered", Offered: 5000, IOPS: flat(30, 5000-float64(i)), P99Ns: flat(30, 600_000)},
			{Planned: 1, Index: 1, Label: "unthrottled", ClosedLoop: true, IOPS: flat(30, 9990), P99Ns: flat(30, 2_000_000)},
		}
	}
	ns := runs[0].Namespace
	cm, err := BaselineRunsConfigMap("oltp-golden", runs, samples)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "oltp-golden" || cm.Namespace != ns || cm.Labels[exchange.LabelBaseline] != "true" || cm.Kind != "ConfigMap" {
		t.Errorf("ConfigMap %s/%s %s, labels %v", cm.Namespace, cm.Name, cm.Kind, cm.Labels)
	}
	b, err := PinnedBaseline(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := analysis.Baseline{Version: analysis.BaselineVersionRuns, Source: ns + "/oltp-1, " + ns + "/oltp-2, " + ns + "/oltp-3",
		Fingerprint: runs[0].Spec.RegressionFingerprint(), Runs: []analysis.BaselineRun{
			{Source: ns + "/oltp-1", Steps: samples[0]}, {Source: ns + "/oltp-2", Steps: samples[1]}, {Source: ns + "/oltp-3", Steps: samples[2]}}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("read back\n got %+v\nwant %+v", b, want)
	}
	if got := b.PinnedRuns(); len(got) != 3 || !got[0].Steps[1].ClosedLoop {
		t.Errorf("pinned runs %+v: want 3, the closed-loop mark kept", got)
	}

	// One run: version 1, exactly what BaselineConfigMap writes.
	one, err := BaselineRunsConfigMap("oltp-golden", runs[:1], samples[:1])
	if err != nil {
		t.Fatal(err)
	}
	if v1, _ := BaselineConfigMap(runs[0], "oltp-golden", samples[0]); !reflect.DeepEqual(one, v1) {
		t.Errorf("one run\n got %+v\nwant %+v", one, v1)
	}

	// Five runs name the first three and how many more.
	five := append(append([]*v1alpha1.StorageBenchmark{}, runs...), runs[0].DeepCopy(), runs[0].DeepCopy())
	five[3].Name, five[4].Name = "oltp-4", "oltp-5"
	cm, err = BaselineRunsConfigMap("oltp-golden", five, append(append([][]analysis.StepSamples{}, samples...), samples[0], samples[1]))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := PinnedBaseline(cm); err != nil || b.Source != ns+"/oltp-1, "+ns+"/oltp-2, "+ns+"/oltp-3, 2 more" || len(b.Runs) != 5 {
		t.Errorf("five runs: source %q, %d runs, %v", b.Source, len(b.Runs), err)
	}

	other := runs[2].DeepCopy()
	other.Spec.Clients.Count++
	elsewhere := runs[2].DeepCopy()
	elsewhere.Namespace = "other"
	many := make([]*v1alpha1.StorageBenchmark, MaxBaselineRuns+1)
	for i := range many {
		many[i] = runs[0]
	}
	for _, c := range []struct {
		name    string
		runs    []*v1alpha1.StorageBenchmark
		samples [][]analysis.StepSamples
		want    string
	}{
		{"another fingerprint", []*v1alpha1.StorageBenchmark{runs[0], runs[1], other}, samples,
			"storagebenchmark oltp-3 measured another clients than oltp-1: a pinned baseline holds runs of the same workload, clients and load"},
		{"a run twice", []*v1alpha1.StorageBenchmark{runs[0], runs[1], runs[0]}, samples,
			"storagebenchmark oltp-1 is named twice: each run counts once in the run-to-run spread"},
		{"another namespace", []*v1alpha1.StorageBenchmark{runs[0], runs[1], elsewhere}, samples,
			`storagebenchmark oltp-3 is in namespace "other", oltp-1 in "` + ns + `": a pinned baseline holds runs of one namespace`},
		{"too many", many, make([][]analysis.StepSamples, len(many)), "21 runs: a pinned baseline holds at most 20"},
		{"no runs", nil, nil, "a pinned baseline needs runs and the samples of each: 0 runs, 0 samples"},
		{"a run without samples", runs[:2], [][]analysis.StepSamples{samples[0], nil}, "the 2 runs cannot be a pinned baseline: invalid baseline: run 1: 0 steps, want 1..100"},
	} {
		if _, err := BaselineRunsConfigMap("oltp-golden", c.runs, c.samples); err == nil || err.Error() != c.want {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBaselineName(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "StorageBenchmark/a"},
		{[]string{"a", "b", "c"}, "StorageBenchmark/a, StorageBenchmark/b, StorageBenchmark/c"},
		{[]string{"a", "b", "c", "d", "e"}, "StorageBenchmark/a, StorageBenchmark/b, StorageBenchmark/c, 2 more"},
	} {
		if got := BaselineName(c.names); got != c.want {
			t.Errorf("%v: %q, want %q", c.names, got, c.want)
		}
	}
}

func TestRegressionOptions(t *testing.T) {
	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "oltp"}}
	if o, err := RegressionOptions(sb); err != nil || o != (analysis.RegressionOptions{}).WithDefaults() {
		t.Errorf("without spec.regression: %+v, %v; want the defaults", o, err)
	}
	sb.Spec.Regression = &v1alpha1.RegressionSpec{Significance: "0.05", MinIOPSDropPercent: 20, MinP99RisePercent: 50}
	want := analysis.RegressionOptions{Significance: 0.05, MinIOPSDropPercent: 20, MinP99RisePercent: 50, MinSamples: analysis.DefaultRegressionMinSamples}
	if o, err := RegressionOptions(sb); err != nil || o != want {
		t.Errorf("spec.regression: %+v, %v; want %+v", o, err, want)
	}
	// Admission defaults the fields; a spec saved without them takes the
	// defaults, as the operator does.
	sb.Spec.Regression = &v1alpha1.RegressionSpec{MinP99RisePercent: 50}
	if o, err := RegressionOptions(sb); err != nil || o.Significance != 0.01 || o.MinIOPSDropPercent != 10 || o.MinP99RisePercent != 50 {
		t.Errorf("partial spec.regression: %+v, %v", o, err)
	}
	for _, c := range []struct {
		spec v1alpha1.RegressionSpec
		want string
	}{
		{v1alpha1.RegressionSpec{Significance: "1%"}, `spec.regression of oltp: significance "1%" is not a decimal fraction`},
		{v1alpha1.RegressionSpec{Significance: "0.5"}, "spec.regression of oltp: invalid analysis options: Significance must be more than 0 and at most 0.2, got 0.5"},
	} {
		sb.Spec.Regression = &c.spec
		if _, err := RegressionOptions(sb); err == nil || err.Error() != c.want {
			t.Errorf("%+v: err %v, want %q", c.spec, err, c.want)
		}
	}
}

func TestBaselineConfigMap(t *testing.T) {
	sb := fixture(t, "oltp")
	samples := []analysis.StepSamples{
		{Planned: 0, Index: 0, Label: "5000 IOPS offered", IOPS: flat(30, 5000), P99Ns: flat(30, 600_000)},
		{Planned: 1, Index: 2, Label: "10000 IOPS offered", IOPS: flat(30, 9990), P99Ns: flat(29, 700_000)},
	}
	cm, err := BaselineConfigMap(sb, "oltp-golden", samples)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "oltp-golden" || cm.Namespace != sb.Namespace || cm.Labels[exchange.LabelBaseline] != "true" || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Errorf("ConfigMap %s/%s %s/%s, labels %v", cm.Namespace, cm.Name, cm.APIVersion, cm.Kind, cm.Labels)
	}
	b, err := PinnedBaseline(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := analysis.Baseline{Version: analysis.BaselineVersion, Source: sb.Namespace + "/" + sb.Name, Fingerprint: sb.Spec.RegressionFingerprint(), Steps: samples}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("read back\n got %+v\nwant %+v", b, want)
	}

	// A baseline the operator would refuse is refused when it is made.
	many := make([]analysis.StepSamples, 101)
	for i := range many {
		many[i] = analysis.StepSamples{Planned: i, Index: i, IOPS: flat(5, 1)}
	}
	if _, err := BaselineConfigMap(sb, "x", many); err == nil || !strings.Contains(err.Error(), "storagebenchmark oltp-ontap-nas cannot be a pinned baseline: invalid baseline: 101 steps") {
		t.Errorf("101 steps: err %v", err)
	}
	big := make([]analysis.StepSamples, 100)
	for i := range big {
		big[i] = analysis.StepSamples{Planned: i, Index: i, IOPS: flat(3600, 12345.678), P99Ns: flat(3600, 1234567)}
	}
	if _, err := BaselineConfigMap(sb, "x", big); err == nil || !strings.Contains(err.Error(), "more than a ConfigMap holds (1 MiB)") {
		t.Errorf("a baseline of several MiB: err %v", err)
	}

	for _, c := range []struct {
		name string
		edit func(*corev1.ConfigMap)
		want string
	}{
		{"unlabelled", func(cm *corev1.ConfigMap) { cm.Labels = nil }, "ConfigMap oltp-golden is not labelled storagebench.io/baseline=true, so the operator would not read it as a baseline"},
		{"labelled false", func(cm *corev1.ConfigMap) { cm.Labels[exchange.LabelBaseline] = "false" }, "is not labelled storagebench.io/baseline=true"},
		{"no key", func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"other.json": "{}"} }, "ConfigMap oltp-golden has no key baseline.json"},
		{"another version", func(cm *corev1.ConfigMap) {
			cm.Data[exchange.KeyBaseline] = strings.Replace(cm.Data[exchange.KeyBaseline], `"version":1`, `"version":2`, 1)
		}, "ConfigMap oltp-golden: invalid baseline: version 2, want 1"},
	} {
		x := cm.DeepCopy()
		c.edit(x)
		if _, err := PinnedBaseline(x); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestHistoryOf(t *testing.T) {
	at := metav1.NewTime(time.Date(2025, 6, 3, 2, 0, 0, 0, time.UTC))
	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "oltp-nightly"}}
	s.Status.History = []v1alpha1.ScheduledRun{
		{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-2", ScheduledTime: at}, State: v1alpha1.RunComplete, PeakIOPS: 41000, AtTargetIOPS: 30000,
			SLO: "NotMet", Regression: "Regressed", RegressedMetrics: []string{"iops"}, RegressionMessage: "step 6 …"},
		{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-1", ScheduledTime: metav1.NewTime(at.AddDate(0, 0, -1))}, State: v1alpha1.RunFailed, Reason: "ClientLost"},
	}
	h := HistoryOf(s)
	if h.Name != "oltp-nightly" || len(h.Runs) != 2 || !h.Runs[0].Regressed() || h.Runs[0].Failed() || !h.Runs[1].Failed() || h.Runs[1].Regressed() ||
		h.Runs[0].State != report.StateComplete || !h.Runs[0].Scheduled.Equal(at.Time) {
		t.Errorf("history %+v", h)
	}
	var b strings.Builder
	tbl := ScheduleHistoryTable(s)
	if err := tbl.Text(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"RUN             SCHEDULED             STATE     PEAK IOPS  AT TARGET IOPS  SLO         REGRESSION",
		"oltp-nightly-2  2025-06-03T02:00:00Z  Complete     41,000          30,000  NotMet      Regressed (iops)",
		"oltp-nightly-1  2025-06-02T02:00:00Z  Failed                               ClientLost",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteScheduleDocument(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "oltp-nightly"`, `"regressedMetrics": [`, `"regression": "Regressed"`, `"reason": "ClientLost"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteScheduleDocument(&b, &v1alpha1.StorageBenchmarkSchedule{}); err != nil || !strings.Contains(b.String(), `"history": []`) {
		t.Errorf("a schedule without runs: %q, %v; want an empty history list", b.String(), err)
	}
}
