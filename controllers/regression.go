package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// regressionRecordVersion is the version of regressionRecord's JSON.
const regressionRecordVersion = 1

// regressionRecord is the comparison as the Regressed verdict's detail
// keeps it: once written, the verdict of the run for good, so its JSON is
// versioned and its options carry their defaults.
type regressionRecord struct {
	Version int `json:"version"`
	// Baseline names it: StorageBenchmark/<name> or ConfigMap/<name>.
	Baseline string `json:"baseline,omitempty"`
	// Reason and Message say why the run was not compared; empty when it
	// was.
	Reason  string                     `json:"reason,omitempty"`
	Message string                     `json:"message,omitempty"`
	Options analysis.RegressionOptions `json:"options"`
	Result  analysis.RegressionResult  `json:"result"`
}

// none records why the run was not compared; the message may quote a
// tenant's data (a decoding error), so it is cut.
func (rec *regressionRecord) none(reason, format string, args ...any) {
	rec.Reason, rec.Message = reason, clip(fmt.Sprintf(format, args...), 1024)
	rec.Result = analysis.RegressionResult{}
}

// maxRegressionRecord bounds the comparison's record: 100 steps' 200
// tests take a few tens of KiB, and all of a ConfigMap's annotations share
// 256 KiB.
const maxRegressionRecord = 128 << 10

// regressionVerdict is the comparison with spec.regression's baseline,
// made with the final order of a completed run: the baseline is read while
// the run has not yet completed, so a schedule cannot trim it away first,
// and the verdict never changes afterwards, whatever happens to the
// baseline.
var regressionVerdict = recordedVerdict{
	condition: v1alpha1.ConditionRegressed,
	wanted:    func(b *v1alpha1.StorageBenchmark) bool { return b.Spec.Regression != nil },
	due:       func(o protocol.StepOrder) bool { return o.Done && o.Failure == "" },
	judge: func(ctx context.Context, r *Reconciler, b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed, o protocol.StepOrder, _ time.Time) (run.Verdict, error) {
		// The steps' closed-loop flags as status shows them, the step this
		// pass recorded too: the pass projects status after ordering.
		v, err := run.ViewOf(d.Spec, d.Analysis, nil, obs.steps, nil)
		if err != nil {
			return run.Verdict{}, err
		}
		rec, err := r.regressionOf(ctx, b, d, v.ClosedLoop, len(obs.steps))
		return rec.verdict(o.EndedAt), err
	},
	completeOnly: true,
	missing:      &verdict{Reason: ReasonNotCompared, Message: "the run completed without a recorded comparison with its baseline"},
	project:      projectRegression,
	legacy:       legacyAnnotationRegression,
	fromLegacy: func(value string, ended time.Time) (run.Verdict, bool) {
		var rec regressionRecord
		if json.Unmarshal([]byte(value), &rec) != nil {
			return run.Verdict{}, false
		}
		return rec.verdict(ended), true
	},
}

// verdict is the comparison as the Regressed condition says it, with the
// record as its detail. A record that cannot be encoded or is too large is
// recorded as not compared, never retried: the run must end.
func (rec regressionRecord) verdict(at time.Time) run.Verdict {
	detail, err := json.Marshal(rec)
	if err != nil || len(detail) > maxRegressionRecord {
		why := fmt.Sprintf("%d bytes, more than %d", len(detail), maxRegressionRecord)
		if err != nil {
			why = err.Error()
		}
		rec.none(ReasonBaselineInvalid, "%s: the comparison could not be recorded: %s", rec.Baseline, why)
		detail, _ = json.Marshal(rec) // bounded, and plain text: cannot fail
	}
	v := run.Verdict{Condition: v1alpha1.ConditionRegressed, Status: run.Unknown, Reason: rec.Reason, Message: rec.Message, At: at, Detail: detail}
	if rec.Reason != "" {
		return v
	}
	outcome, msg := rec.Result.Verdict(rec.Baseline, rec.Options)
	v.Message = msg
	switch outcome {
	case analysis.OutcomeRegressed:
		v.Status, v.Reason = run.True, ReasonRegressed
	case analysis.OutcomeNotRegressed:
		v.Status, v.Reason = run.False, ReasonNotRegressed
	default:
		v.Reason = ReasonNotJudged
	}
	return v
}

// closedLoopIn says which of steps were closed-loop as a finished run's
// status.steps shows them (apireport.ClosedLoopOf).
func closedLoopIn(status []v1alpha1.StepStatus, steps []run.Step) func(i int) bool {
	return func(i int) bool { return apireport.ClosedLoopOf(status, steps[i].Order.Index, steps[i].Order.Step) }
}

// regressionOf compares the run's recorded steps (the first recorded of
// them) with its baseline runs. The steps' samples are read again from
// their ConfigMaps on the API server, once: the memo keeps none, and the
// cache may not yet hold the step this pass recorded. An error is one to
// retry (the API server's); a baseline that cannot be used is a record
// with a reason.
func (r *Reconciler) regressionOf(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, closedLoop func(i int) bool, recorded int) (regressionRecord, error) {
	rec := regressionRecord{Version: regressionRecordVersion, Options: d.Regression.WithDefaults()}
	base, err := r.baselineOf(ctx, b, b.Spec.RegressionFingerprint(), &rec)
	if err != nil || rec.Reason != "" {
		return rec, err
	}
	steps := make([]run.Step, recorded)
	for k := range steps {
		if steps[k], err = r.readStep(ctx, b, k); err != nil {
			return rec, err
		}
	}
	rec.Result = analysis.CompareWithRuns(base, run.Samples(steps, closedLoop), *d.Regression)
	return rec, nil
}

// baselineOf reads the baseline runs spec.regression names.
func (r *Reconciler) baselineOf(ctx context.Context, b *v1alpha1.StorageBenchmark, fp string, rec *regressionRecord) ([][]analysis.StepSamples, error) {
	bl := b.Spec.Regression.Baseline
	switch {
	case bl.ConfigMap != nil:
		return r.pinnedBaseline(ctx, b, *bl.ConfigMap, fp, rec)
	case bl.Benchmark != nil || len(bl.Benchmarks) > 0:
		names := bl.Benchmarks
		if bl.Benchmark != nil {
			names = []string{*bl.Benchmark}
		}
		rec.Baseline = apireport.BaselineName(names)
		var runs [][]analysis.StepSamples
		for _, name := range names {
			what := "StorageBenchmark/" + name
			if name == b.Name {
				rec.none(ReasonBaselineInvalid, "a run cannot be its own baseline")
				return nil, nil
			}
			var base v1alpha1.StorageBenchmark
			err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &base)
			if apierrors.IsNotFound(err) {
				rec.none(ReasonBaselineNotFound, "%s does not exist in namespace %s", what, b.Namespace)
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			if why := notComparable(&base, fp, what); why != nil {
				rec.none(why.Reason, "%s", why.Message)
				return nil, nil
			}
			run, err := r.benchmarkBaseline(ctx, &base, what, rec)
			if err != nil || run == nil {
				return nil, err
			}
			runs = append(runs, run)
		}
		return runs, nil
	default:
		return r.previousRuns(ctx, b, fp, rec)
	}
}

// notComparable says why base cannot be a baseline of a run with
// fingerprint fp: not Complete, or another workload, clients or load.
func notComparable(base *v1alpha1.StorageBenchmark, fp, what string) *verdict {
	if st := v1alpha1.RunStateOf(base); st != v1alpha1.RunComplete {
		return &verdict{Reason: ReasonBaselineNotComplete, Message: fmt.Sprintf("%s is %s, not Complete", what, st)}
	}
	if theirs := base.Spec.RegressionFingerprint(); theirs != fp {
		return &verdict{Reason: ReasonBaselineNotComparable, Message: fmt.Sprintf("%s measured another %s: compare runs of the same workload, clients and load",
			what, v1alpha1.FingerprintDiff(theirs, fp))}
	}
	return nil
}

// previousRuns finds the newest successful runs of b's schedule scheduled
// before b (regression.baseline.previousRun.runs of them): benchmarks the
// same schedule created (signed), of the same workload, clients and load,
// not judged Regressed unless no other is kept. None, with a reason in
// rec, when there is none.
func (r *Reconciler) previousRuns(ctx context.Context, b *v1alpha1.StorageBenchmark, fp string, rec *regressionRecord) ([][]analysis.StepSamples, error) {
	ref := metav1.GetControllerOfNoCopy(b)
	if ref == nil || !isScheduleRef(ref) || r.runKey().ProvenanceOf(b, ref.UID) != Signed {
		rec.none(ReasonNotScheduled, "regression.baseline.previousRun needs a run of a StorageBenchmarkSchedule, and no schedule created this benchmark")
		return nil, nil
	}
	var list v1alpha1.StorageBenchmarkList
	if err := r.List(ctx, &list, client.InNamespace(b.Namespace), client.MatchingLabels{LabelSchedule: ref.Name}); err != nil {
		return nil, err
	}
	mine := ScheduledTimeOf(b)
	var done []*v1alpha1.StorageBenchmark
	for i := range list.Items {
		x := &list.Items[i]
		// Only a run the schedule created (signed): a benchmark made to
		// look like one is never a baseline.
		if x.UID == b.UID || r.runKey().ProvenanceOf(x, ref.UID) != Signed || v1alpha1.RunStateOf(x) != v1alpha1.RunComplete ||
			!ScheduledTimeOf(x).Before(mine) {
			continue
		}
		done = append(done, x)
	}
	slices.SortFunc(done, func(x, y *v1alpha1.StorageBenchmark) int { return ScheduledTimeOf(y).Compare(ScheduledTimeOf(x)) })
	want := int(b.Spec.Regression.Baseline.PreviousRun.Runs)
	if want <= 0 {
		want = 5 // the API's default
	}
	var incomparable *verdict
	picked := pickBaselineRuns(done, want, func(x *v1alpha1.StorageBenchmark) bool {
		why := notComparable(x, fp, "StorageBenchmark/"+x.Name)
		if why != nil && incomparable == nil {
			incomparable = why // a run of an earlier template: not part of this baseline
		}
		return why == nil
	})
	var runs [][]analysis.StepSamples
	var names []string
	for _, x := range picked {
		run, err := r.benchmarkBaseline(ctx, x, "StorageBenchmark/"+x.Name, rec)
		if err != nil {
			return nil, err
		}
		if run == nil {
			return nil, nil
		}
		runs = append(runs, run)
		names = append(names, x.Name)
	}
	switch {
	case len(runs) > 0:
		rec.Baseline = fmt.Sprintf("StorageBenchmarkSchedule/%s (%s)", clip(ref.Name, 253), apireport.BaselineName(names))
	case incomparable != nil:
		rec.none(incomparable.Reason, "%s", incomparable.Message)
	default:
		rec.none(ReasonNoBaseline, "StorageBenchmarkSchedule/%s keeps no successful run scheduled before this one", ref.Name)
	}
	return runs, nil
}

// pickBaselineRuns takes up to want of a schedule's earlier complete runs
// (newest first) that comparable accepts, as previousRun's baseline. Runs
// judged Regressed are left out while any other is kept: a regression that
// stays is reported run after run, not absorbed into the baseline by its
// own first run. Once every kept one is a regressed run
// (successfulRunsHistoryLimit runs later), the new level is the baseline.
func pickBaselineRuns(done []*v1alpha1.StorageBenchmark, want int, comparable func(*v1alpha1.StorageBenchmark) bool) []*v1alpha1.StorageBenchmark {
	var picked []*v1alpha1.StorageBenchmark
	for _, regressed := range []bool{false, true} {
		for _, x := range done {
			if len(picked) == want {
				break
			}
			if meta.IsStatusConditionTrue(x.Status.Conditions, v1alpha1.ConditionRegressed) == regressed && comparable(x) {
				picked = append(picked, x)
			}
		}
		if len(picked) > 0 {
			break
		}
	}
	return picked
}

// benchmarkBaseline reads a completed, comparable benchmark's steps as
// one baseline run (nil, with a reason in rec, when they cannot be read).
func (r *Reconciler) benchmarkBaseline(ctx context.Context, base *v1alpha1.StorageBenchmark, what string, rec *regressionRecord) ([]analysis.StepSamples, error) {
	// Read, not remembered: the memo is for the benchmarks this manager
	// runs.
	steps, err := r.readSteps(ctx, base, int(base.Status.StepsPlanned), nil)
	if errors.Is(err, exchange.ErrInvalidClientData) {
		rec.none(ReasonBaselineInvalid, "%s: %v", what, err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		rec.none(ReasonBaselineInvalid, "%s has no step records left", what)
		return nil, nil
	}
	return run.Samples(steps, closedLoopIn(base.Status.Steps, steps)), nil
}

// pinnedBaseline reads a pinned baseline, one run or several, from a
// labelled ConfigMap.
func (r *Reconciler) pinnedBaseline(ctx context.Context, b *v1alpha1.StorageBenchmark, name, fp string, rec *regressionRecord) ([][]analysis.StepSamples, error) {
	rec.Baseline = "ConfigMap/" + name
	var cm corev1.ConfigMap
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &cm)
	if apierrors.IsNotFound(err) {
		rec.none(ReasonBaselineNotFound, "%s does not exist in namespace %s", rec.Baseline, b.Namespace)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cm.Labels[exchange.LabelBaseline] != "true" {
		rec.none(ReasonBaselineInvalid, "%s is not labelled %s=true, so it is not read", rec.Baseline, exchange.LabelBaseline)
		return nil, nil
	}
	data, ok := cm.Data[exchange.KeyBaseline]
	if !ok {
		rec.none(ReasonBaselineInvalid, "%s has no key %s", rec.Baseline, exchange.KeyBaseline)
		return nil, nil
	}
	pinned, err := analysis.DecodeBaseline([]byte(data))
	if err != nil {
		rec.none(ReasonBaselineInvalid, "%s: %v", rec.Baseline, err)
		return nil, nil
	}
	if pinned.Fingerprint != fp {
		rec.none(ReasonBaselineNotComparable, "%s (from %s) measured another %s: compare runs of the same workload, clients and load",
			rec.Baseline, clip(pinned.Source, 128), v1alpha1.FingerprintDiff(pinned.Fingerprint, fp))
		return nil, nil
	}
	var runs [][]analysis.StepSamples
	for _, run := range pinned.PinnedRuns() {
		runs = append(runs, run.Steps)
	}
	return runs, nil
}

// projectRegression fills status.regression from the comparison's
// record: the baseline, and the tests, when it was compared.
func projectRegression(b *v1alpha1.StorageBenchmark, v *run.Verdict) {
	b.Status.Regression = nil
	var rec regressionRecord
	if v == nil || json.Unmarshal(v.Detail, &rec) != nil {
		return
	}
	if rec.Baseline != "" {
		b.Status.Regression = &v1alpha1.RegressionStatus{Baseline: clip(rec.Baseline, 1024), BaselineRuns: int32(rec.Result.BaselineRuns)}
	}
	if rec.Reason != "" {
		return
	}
	if b.Status.Regression == nil {
		b.Status.Regression = &v1alpha1.RegressionStatus{}
	}
	for _, t := range rec.Result.Tests {
		if len(b.Status.Regression.Tests) == 200 {
			break
		}
		b.Status.Regression.Tests = append(b.Status.Regression.Tests, testStatus(t))
	}
}

// testStatus is one test as status shows it.
func testStatus(t analysis.RegressionTest) v1alpha1.RegressionTestStatus {
	s := v1alpha1.RegressionTestStatus{Step: int32(t.Index), Metric: string(t.Metric), Verdict: v1alpha1.RegressionNotJudged,
		Message: clip(t.String(), 256)}
	if !t.Judged {
		return s
	}
	s.Verdict = v1alpha1.RegressionNotRegressed
	if t.Regressed {
		s.Verdict = v1alpha1.RegressionRegressed
	}
	// Clamped: a baseline benchmark's step records are a tenant's too.
	whole := func(v float64) int64 { return int64(math.Round(min(max(v, 0), 1e18))) }
	s.BaselineMedian, s.CurrentMedian = whole(t.BaselineMedian), whole(t.CurrentMedian)
	s.ChangePercent = strconv.FormatFloat(t.Change*100, 'f', 1, 64)
	s.PValue = strconv.FormatFloat(t.PAdjusted, 'g', 2, 64)
	return s
}
