package controllers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
)

// A finished run's status says which steps were closed-loop; a rated
// step it does not list is taken as open-loop.
func TestClosedLoopIn(t *testing.T) {
	steps := []run.Step{{Order: protocol.StepOrder{Index: 0, Step: plan.Step{OfferedIOPS: 1000}}},
		{Order: protocol.StepOrder{Index: 1, Step: plan.Step{Index: 1, OfferedIOPS: 2000}}},
		{Order: protocol.StepOrder{Index: 2, Step: plan.Step{Index: 2, Unthrottled: true}}}}
	status := []v1alpha1.StepStatus{{Index: 0}, {Index: 1, ClosedLoop: true}}
	closed := closedLoopIn(status, steps)
	if closed(0) || !closed(1) || !closed(2) {
		t.Errorf("closed loop %v %v %v, want the saturated step's and the unthrottled one's", closed(0), closed(1), closed(2))
	}
	if closedLoopIn(nil, steps)(1) {
		t.Error("a rated step without status taken as closed-loop")
	}
}

func TestFingerprintNamesWhatDiffers(t *testing.T) {
	b := newBench()
	other := b.DeepCopy()
	other.Spec.Storage.StorageClassName = ptr.To("elsewhere") // storage is what is compared
	if b.Spec.RegressionFingerprint() != other.Spec.RegressionFingerprint() {
		t.Errorf("another StorageClass changed the fingerprint: %s vs %s", b.Spec.RegressionFingerprint(), other.Spec.RegressionFingerprint())
	}
	other.Spec.Load.Rate.Steps = []int64{100, 200, 300}
	other.Spec.Clients.Count++
	if got := v1alpha1.FingerprintDiff(other.Spec.RegressionFingerprint(), b.Spec.RegressionFingerprint()); got != "clients and load" {
		t.Errorf("diff %q, want %q", got, "clients and load")
	}
	if got := v1alpha1.FingerprintDiff("workload=1", "workload=1;load=2"); got != "fingerprint" {
		t.Errorf("diff of unlike fingerprints %q", got)
	}
}

func TestSetRegression(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	regressed := analysis.RegressionTest{Planned: 1, Index: 1, Label: "2000 IOPS offered", Metric: analysis.MetricIOPS,
		BaselineMedian: 2000, CurrentMedian: 1500, Change: -0.25, P: 1e-6, PAdjusted: 4e-6, Judged: true, Regressed: true,
		BaselineN: 10, CurrentN: 10}
	fine := analysis.RegressionTest{Planned: 0, Index: 0, Metric: analysis.MetricP99, BaselineMedian: 100_000, CurrentMedian: 101_000,
		Change: 0.01, P: 0.4, PAdjusted: 0.8, Judged: true, BaselineN: 10, CurrentN: 10}
	unjudged := analysis.RegressionTest{Planned: 2, Index: 2, Metric: analysis.MetricIOPS, Reason: "no baseline step", P: 1, PAdjusted: 1}
	for _, tc := range []struct {
		name     string
		rec      regressionRecord
		recorded bool
		complete bool
		status   metav1.ConditionStatus // "" = no condition
		reason   string
		msg      []string
		tests    []v1alpha1.RegressionVerdict
	}{
		{name: "regressed", recorded: true, complete: true,
			rec:    regressionRecord{Baseline: "StorageBenchmark/base", Result: analysis.RegressionResult{Tests: []analysis.RegressionTest{fine, regressed, unjudged}, Regressed: true}},
			status: metav1.ConditionTrue, reason: ReasonRegressed,
			msg:   []string{"step 2 (2000 IOPS offered): IOPS 2,000 → 1,500 (-25.0 %), p = 4e-06", "1 of 2 tests regressed against StorageBenchmark/base", "significance 0.01"},
			tests: []v1alpha1.RegressionVerdict{v1alpha1.RegressionNotRegressed, v1alpha1.RegressionRegressed, v1alpha1.RegressionNotJudged}},
		{name: "not regressed", recorded: true, complete: true,
			rec:    regressionRecord{Baseline: "ConfigMap/pinned", Result: analysis.RegressionResult{Tests: []analysis.RegressionTest{fine}}},
			status: metav1.ConditionFalse, reason: ReasonNotRegressed, msg: []string{"none of 1 tests on 1 steps regressed against ConfigMap/pinned"},
			tests: []v1alpha1.RegressionVerdict{v1alpha1.RegressionNotRegressed}},
		{name: "nothing judged", recorded: true, complete: true,
			rec:    regressionRecord{Baseline: "StorageBenchmark/base", Result: analysis.RegressionResult{Tests: []analysis.RegressionTest{unjudged}}},
			status: metav1.ConditionUnknown, reason: ReasonNotJudged, msg: []string{"5 per-second samples"},
			tests: []v1alpha1.RegressionVerdict{v1alpha1.RegressionNotJudged}},
		{name: "no baseline", recorded: true, complete: true,
			rec:    regressionRecord{Reason: ReasonNoBaseline, Message: "StorageBenchmarkSchedule/nightly keeps no successful run"},
			status: metav1.ConditionUnknown, reason: ReasonNoBaseline, msg: []string{"keeps no successful run"}},
		{name: "completed without a record", complete: true, status: metav1.ConditionUnknown, reason: ReasonNotCompared},
		{name: "running", recorded: true, rec: regressionRecord{Result: analysis.RegressionResult{Tests: []analysis.RegressionTest{regressed}}}},
	} {
		// Through the record, as project reads it: the verdicts a manager
		// writes today, and the annotation of its own an older one wrote.
		legacy, err := json.Marshal(tc.rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []struct{ key, value string }{
			{annotationVerdicts, run.Verdicts{tc.rec.verdict(at)}.Encode(maxVerdicts)},
			{legacyAnnotationRegression, string(legacy)},
		} {
			t.Run(tc.name+"/"+a.key, func(t *testing.T) {
				b := newBench()
				b.Spec.Regression = &v1alpha1.RegressionSpec{Baseline: v1alpha1.RegressionBaseline{Benchmark: ptr.To("base")}}
				// A condition left from before is replaced or removed.
				setCondition(b, v1alpha1.ConditionRegressed, true, ReasonRegressed, at, "stale")
				plan := &metav1.PartialObjectMetadata{}
				if tc.recorded {
					plan.Annotations = map[string]string{a.key: a.value}
				}
				setVerdicts(b, verdictsOf(plan, at), tc.complete, at)
				checkRegression(t, b, tc.status, tc.reason, tc.msg, tc.tests)
			})
		}
	}
}

// checkRegression checks b's Regressed condition (none when status is
// empty), its message and the tests' verdicts in status.
func checkRegression(t *testing.T, b *v1alpha1.StorageBenchmark, status metav1.ConditionStatus, reason string, msg []string, tests []v1alpha1.RegressionVerdict) {
	t.Helper()
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionRegressed)
	if status == "" {
		if c != nil || b.Status.Regression != nil {
			t.Fatalf("condition %+v, status %+v; want none", c, b.Status.Regression)
		}
		return
	}
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("condition %+v, want %s %s", c, status, reason)
	}
	for _, m := range msg {
		if !strings.Contains(c.Message, m) {
			t.Errorf("message %q lacks %q", c.Message, m)
		}
	}
	var verdicts []v1alpha1.RegressionVerdict
	if b.Status.Regression != nil {
		for _, ts := range b.Status.Regression.Tests {
			verdicts = append(verdicts, ts.Verdict)
		}
	}
	if !slices.Equal(verdicts, tests) {
		t.Fatalf("verdicts %v, want %v", verdicts, tests)
	}
	if reason == ReasonRegressed {
		got := b.Status.Regression.Tests[1]
		if got.Step != 1 || got.Metric != "iops" || got.BaselineMedian != 2000 || got.CurrentMedian != 1500 ||
			got.ChangePercent != "-25.0" || got.PValue != "4e-06" {
			t.Errorf("regressed test in status: %+v", got)
		}
		if m := b.Status.Regression.RegressedMetrics(); len(m) != 1 || m[0] != "iops" {
			t.Errorf("regressed metrics %v, want [iops]", m)
		}
	}
}

// previousRun's baseline leaves regressed runs out while others are kept,
// and takes them once nothing else is: a regression that stays keeps being
// reported until the schedule's history holds only the new level.
func TestPickBaselineRuns(t *testing.T) {
	run := func(name string, regressed bool) *v1alpha1.StorageBenchmark {
		b := newBench(func(b *v1alpha1.StorageBenchmark) { b.Name = name })
		status := metav1.ConditionFalse
		if regressed {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionRegressed, Status: status, Reason: "x"})
		return b
	}
	old := newBench(func(b *v1alpha1.StorageBenchmark) { b.Name = "before-verdicts" }) // no Regressed condition
	all := func(*v1alpha1.StorageBenchmark) bool { return true }
	for _, c := range []struct {
		name       string
		done       []*v1alpha1.StorageBenchmark // newest first
		want       int
		comparable func(*v1alpha1.StorageBenchmark) bool
		picked     []string
	}{
		{"the newest, up to want", []*v1alpha1.StorageBenchmark{run("u5", false), run("u4", false), run("u3", false)}, 2, all, []string{"u5", "u4"}},
		{"a regressed run is skipped, an older one taken instead",
			[]*v1alpha1.StorageBenchmark{run("r2", true), run("r1", true), run("u3", false), run("u2", false), run("u1", false)}, 2, all, []string{"u3", "u2"}},
		{"fewer than want rather than a regressed run", []*v1alpha1.StorageBenchmark{run("r1", true), run("u1", false)}, 5, all, []string{"u1"}},
		{"only regressed runs kept: the new level", []*v1alpha1.StorageBenchmark{run("r3", true), run("r2", true), run("r1", true)}, 2, all, []string{"r3", "r2"}},
		{"a run without a verdict counts as not regressed", []*v1alpha1.StorageBenchmark{run("r1", true), old}, 5, all, []string{"before-verdicts"}},
		{"an incomparable run is never taken", []*v1alpha1.StorageBenchmark{run("u2", false), run("u1", false), run("r1", true)}, 5,
			func(b *v1alpha1.StorageBenchmark) bool { return b.Name != "u2" }, []string{"u1"}},
		{"regressed runs when the others are incomparable", []*v1alpha1.StorageBenchmark{run("r1", true), run("u1", false)}, 5,
			func(b *v1alpha1.StorageBenchmark) bool { return b.Name != "u1" }, []string{"r1"}},
		{"none", nil, 5, all, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, b := range pickBaselineRuns(c.done, c.want, c.comparable) {
				got = append(got, b.Name)
			}
			if strings.Join(got, ",") != strings.Join(c.picked, ",") {
				t.Errorf("picked %v, want %v", got, c.picked)
			}
		})
	}
}
