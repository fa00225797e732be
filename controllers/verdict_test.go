package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
)

// Every recorded verdict is complete, has a condition of its own, and is
// listed among the conditions; one recorded with the final order shows
// only once the run completed.
func TestRecordedVerdicts(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range recordedVerdicts {
		if k.condition == "" || k.wanted == nil || k.due == nil || k.judge == nil || (k.legacy == "") != (k.fromLegacy == nil) {
			t.Errorf("verdict %q: a part is missing", k.condition)
		}
		if seen[k.condition] {
			t.Errorf("two verdicts set %s", k.condition)
		}
		seen[k.condition] = true
		if rank(k.condition) == len(conditionOrder) {
			t.Errorf("%s is not in conditionOrder", k.condition)
		}
		if final := (protocol.StepOrder{Done: true}); k.due(final) != k.completeOnly {
			t.Errorf("%s: due with the final order %v, shown only once complete %v", k.condition, k.due(final), k.completeOnly)
		}
	}
	// Projected from the record alone, and shown once complete.
	b := newBench()
	b.Spec.Clients.Count = 2
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	v := run.ClientsEvenVerdict([]run.Step{{Aggregate: results.StepAggregate{ClientIOPS: results.ClientSpread{MinIOPS: 1, MaxIOPS: 9, CVPercent: 80}}}}, at)
	v.Condition = v1alpha1.ConditionClientsEven // as verdictsDue names it
	vs := run.Verdicts{v}
	plan := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationVerdicts: vs.Encode(maxVerdicts)}}}
	setVerdicts(b, verdictsOf(plan, at), false, at)
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsEven); c != nil {
		t.Fatalf("shown before the run completed: %+v", c)
	}
	setVerdicts(b, verdictsOf(plan, at), true, at)
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsEven); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonUnevenShare {
		t.Fatalf("condition %+v, want False %s", c, ReasonUnevenShare)
	}
}
