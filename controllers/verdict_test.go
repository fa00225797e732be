package controllers

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
)

func TestClientsEven(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	step := func(index int, cv float64, superseded bool) run.Step {
		s := run.Step{Order: protocol.StepOrder{Index: index}, Superseded: superseded}
		s.Aggregate.ClientIOPS = results.ClientSpread{MinIOPS: 900, MaxIOPS: 900 * (1 + cv/50), CVPercent: cv}
		return s
	}
	for _, tc := range []struct {
		name   string
		steps  []run.Step
		status string
		reason string
		msg    string
	}{
		{"even", []run.Step{step(0, 2, false), step(1, 10.4, false)}, run.True, ReasonEvenShare, "in each of 2 steps"},
		{"uneven, named", []run.Step{step(0, 2, false), step(1, 10.5, false), step(2, 30, false)}, run.False, ReasonUnevenShare,
			"2 of 3 steps shared unevenly (the clients' IOPS varied by a CV above 10 %): step 2 (CV 11 %: 900 to 1,089 IOPS), step 3 (CV 30 %"},
		{"a superseded step does not stand", []run.Step{step(0, 40, true), step(1, 3, false)}, run.True, ReasonEvenShare, "in each of 1 steps"},
		{"no step with the clients' IOPS", []run.Step{{}}, run.Unknown, ReasonNotMeasurable, "no step that stands"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := clientsEven(tc.steps, at)
			if v.Condition != v1alpha1.ConditionClientsEven || v.Status != tc.status || v.Reason != tc.reason || !strings.HasPrefix(v.Message, tc.msg) || !v.At.Equal(at) {
				t.Fatalf("%+v, want %s %s %q…", v, tc.status, tc.reason, tc.msg)
			}
		})
	}
}

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
	vs := run.Verdicts{clientsEven([]run.Step{{Aggregate: results.StepAggregate{ClientIOPS: results.ClientSpread{MinIOPS: 1, MaxIOPS: 9, CVPercent: 80}}}}, at)}
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
