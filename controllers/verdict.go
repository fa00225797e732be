package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// recordedVerdict is a judgement of the run that depends on more than its
// own steps, so it is made once, written with the order that makes it due
// (in the same patch, on the plan ConfigMap's annotationVerdicts), and
// projected from that record on every pass. Adding one is a row in
// recordedVerdicts, its condition type in the API and its reasons in
// names.go: the record, its encoding, the condition, its place among the
// conditions and the rebuilt status follow from the row.
type recordedVerdict struct {
	// condition is the condition type the verdict sets.
	condition string
	// wanted says whether the spec asks for the verdict.
	wanted func(b *v1alpha1.StorageBenchmark) bool
	// due says whether it is recorded with order o.
	due func(o protocol.StepOrder) bool
	// judge makes it; an error is the API server's, to retry.
	judge func(ctx context.Context, r *Reconciler, b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed, o protocol.StepOrder, now time.Time) (run.Verdict, error)
	// completeOnly: the condition is shown once the run completed, and
	// missing (if set) stands for a verdict that was never recorded.
	completeOnly bool
	missing      *verdict
	// project fills the status fields beside the condition (nil: the run
	// has no verdict, the fields are cleared). Optional.
	project func(b *v1alpha1.StorageBenchmark, v *run.Verdict)
	// legacy is the annotation the verdict was kept in before verdicts
	// were one record, read for the runs recorded then (fromLegacy, given
	// the final order's end); empty: none.
	legacy     string
	fromLegacy func(value string, ended time.Time) (run.Verdict, bool)
}

// recordedVerdicts are every recorded verdict, in the order their
// conditions are listed.
var recordedVerdicts = []recordedVerdict{regressionVerdict, spreadVerdict, clientsEvenVerdict}

// clientsEvenVerdict is how evenly the clients shared the storage in the
// steps that stand, judged with the final order of a completed run of two
// or more clients (run.ClientsEvenVerdict).
var clientsEvenVerdict = recordedVerdict{
	condition: v1alpha1.ConditionClientsEven,
	wanted:    func(b *v1alpha1.StorageBenchmark) bool { return b.Spec.Clients.Count >= 2 },
	due:       func(o protocol.StepOrder) bool { return o.Done && o.Failure == "" },
	judge: func(_ context.Context, _ *Reconciler, _ *v1alpha1.StorageBenchmark, _ *spec.Run, obs *observed, o protocol.StepOrder, _ time.Time) (run.Verdict, error) {
		return run.ClientsEvenVerdict(obs.steps, o.EndedAt), nil
	},
	completeOnly: true,
}

// maxVerdicts bounds annotationVerdicts: a comparison's detail is bounded
// on its own (maxRegressionRecord), and all of a ConfigMap's annotations
// share 256 KiB.
const maxVerdicts = maxRegressionRecord + 16<<10

// verdictConditions are the recorded verdicts' condition types.
func verdictConditions() []string {
	out := make([]string, len(recordedVerdicts))
	for i, k := range recordedVerdicts {
		out[i] = k.condition
	}
	return out
}

// verdictsOf reads the plan ConfigMap's recorded verdicts, with those a
// manager before them kept in annotations of their own. Only the rows'
// verdicts that can stand as a condition are kept (run.Verdict.Valid),
// each with a message of at most MaxMessage and a detail only where its
// row reads one: the record is the operator's, but whoever may edit
// ConfigMaps in the namespace can change it, and a verdict it does not
// hold, or cannot read, counts as none (the condition says so, where the
// run must have it: missing).
func verdictsOf(plan *metav1.PartialObjectMetadata, ended time.Time) run.Verdicts {
	if plan == nil {
		return nil
	}
	recorded, err := run.DecodeVerdicts(plan.Annotations[annotationVerdicts])
	if err != nil {
		recorded = nil
	}
	var vs run.Verdicts
	for _, k := range recordedVerdicts {
		v, found := recorded.Find(k.condition)
		if value, ok := plan.Annotations[k.legacy]; !found && k.legacy != "" && ok {
			v, found = k.fromLegacy(value, ended)
		}
		if !found || !v.Valid() {
			continue
		}
		v.Condition, v.Message = k.condition, clip(v.Message, MaxMessage)
		if k.project == nil {
			v.Detail = nil
		}
		vs = append(vs, v)
	}
	return vs
}

// verdictsDue judges the verdicts order o makes due. The annotation to
// write with it is nil when none is.
func (r *Reconciler) verdictsDue(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed, o protocol.StepOrder, now time.Time) (map[string]string, error) {
	var judged run.Verdicts
	for _, k := range recordedVerdicts {
		if !k.wanted(b) || !k.due(o) {
			continue
		}
		v, err := k.judge(ctx, r, b, d, obs, o, now)
		if err != nil {
			return nil, err
		}
		v.Condition, v.Message = k.condition, clip(v.Message, MaxMessage)
		judged = append(judged, v)
	}
	if len(judged) == 0 {
		return nil, nil
	}
	vs := verdictsOf(obs.plan, o.EndedAt)
	for _, v := range judged {
		vs = vs.With(v)
	}
	return map[string]string{annotationVerdicts: vs.Encode(maxVerdicts)}, nil
}

// setVerdicts projects the recorded verdicts into their conditions (and
// the fields beside them); complete says the run completed, at its end.
func setVerdicts(b *v1alpha1.StorageBenchmark, vs run.Verdicts, complete bool, ended time.Time) {
	for _, k := range recordedVerdicts {
		v, recorded := vs.Find(k.condition)
		var shown *run.Verdict
		switch {
		case !k.wanted(b) || k.completeOnly && !complete:
		case recorded:
			shown = &v
		case k.missing != nil && complete:
			shown = &run.Verdict{Status: run.Unknown, Reason: k.missing.Reason, Message: k.missing.Message, At: ended}
		}
		if k.project != nil {
			k.project(b, shown)
		}
		showVerdict(b, k.condition, shown)
	}
}

// showVerdict sets condition from the verdict, or removes it (nil): the
// one way a verdict, recorded or judged from the steps, reaches status.
func showVerdict(b *v1alpha1.StorageBenchmark, condition string, v *run.Verdict) {
	if v == nil {
		meta.RemoveStatusCondition(&b.Status.Conditions, condition)
		return
	}
	setConditionStatus(b, condition, metav1.ConditionStatus(v.Status), v.Reason, v.At, v.Message)
}

// verdictMissing says whether an ended run's status lacks a verdict it
// must show, so it is rebuilt.
func verdictMissing(b *v1alpha1.StorageBenchmark, final protocol.StepOrder) bool {
	for _, k := range recordedVerdicts {
		if k.completeOnly && k.missing != nil && k.wanted(b) && final.Failure == "" &&
			meta.FindStatusCondition(b.Status.Conditions, k.condition) == nil {
			return true
		}
	}
	return false
}
