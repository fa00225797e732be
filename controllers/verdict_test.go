package controllers

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
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

// A record somebody else changed: only the rows' valid verdicts stand, a
// detail only where its row reads one, and a message no longer than a
// condition's.
func TestVerdictsOfAGarbledRecord(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	record := run.Verdicts{
		{Condition: v1alpha1.ConditionClientsSpread, Status: "Yes", Reason: "OnDistinctNodes", At: at},
		{Condition: v1alpha1.ConditionClientsEven, Status: run.True, Reason: "not a reason", At: at},
		{Condition: "SomethingElse", Status: run.True, Reason: "Fine", At: at},
		{Condition: v1alpha1.ConditionRegressed, Status: run.False, Reason: ReasonNotRegressed, Message: strings.Repeat("m", 3*MaxMessage), At: at,
			Detail: json.RawMessage(`{"version":1}`)},
	}
	plan := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationVerdicts: record.Encode(maxVerdicts)}}}
	vs := verdictsOf(plan, at)
	if len(vs) != 1 || vs[0].Condition != v1alpha1.ConditionRegressed || len(vs[0].Message) > MaxMessage || len(vs[0].Detail) == 0 {
		t.Fatalf("verdicts %+v: want the Regressed one alone, its message clipped, its detail kept", vs)
	}
	record[0].Status, record[0].Detail = run.True, json.RawMessage(`"`+strings.Repeat("d", 1000)+`"`)
	plan.Annotations[annotationVerdicts] = record.Encode(maxVerdicts)
	if v, ok := verdictsOf(plan, at).Find(v1alpha1.ConditionClientsSpread); !ok || v.Detail != nil {
		t.Fatalf("ClientsSpread %+v (%v): want it, without the detail its row never reads", v, ok)
	}
}

// The cache keeps 16 KiB of an annotation; a record of verdicts longer
// than that (a comparison of many steps) is read whole from the API
// server, so a status rebuilt from the cache keeps the comparison.
func TestPlanReadWholeWhenTheCacheCutItsVerdicts(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	b := newBench()
	b.UID = "bench-uid"
	detail, err := json.Marshal(regressionRecord{Version: regressionRecordVersion, Baseline: strings.Repeat("b", 40<<10)})
	if err != nil {
		t.Fatal(err)
	}
	record := run.Verdicts{{Condition: v1alpha1.ConditionRegressed, Status: run.False, Reason: ReasonNotRegressed, At: at, Detail: detail}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.PlanName(b.Name),
		Annotations:     map[string]string{annotationVerdicts: record.Encode(maxVerdicts)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "storagebench.io/v1alpha1", Kind: "StorageBenchmark", Name: b.Name, UID: b.UID, Controller: ptr.To(true)}}}}
	cut, err := stripForCache(cm.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	cached := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(cut.(*corev1.ConfigMap)).Build()
	live := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(cm).Build()
	r := &Reconciler{Client: cached, Cache: cached, APIReader: live}
	if cached, _ := r.plan(context.Background(), b); len(verdictsOf(cached, at)) != 0 {
		t.Fatal("the cache's cut record could be read: the test does not cut it, or plan reads past the cache")
	}
	plan, err := r.wholePlan(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := verdictsOf(plan, at).Find(v1alpha1.ConditionRegressed); !ok || len(v.Detail) != len(detail) {
		t.Fatalf("Regressed %+v (%v): want the whole record", v.Reason, ok)
	}
}

// Every condition reason the operator can write is one the API accepts
// (run.Verdict.Valid): reasons are constants, shown as they are, never
// clipped. The constants are read from the source of every package that
// declares them, so a new one is checked without being listed here.
func TestReasonsAreValid(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	for _, dir := range []string{".", "../internal/run", "../internal/protocol", "../api/v1alpha1"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(node ast.Node) bool {
				spec, ok := node.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, name := range spec.Names {
					if !strings.Contains(name.Name, "Reason") || i >= len(spec.Values) {
						continue
					}
					lit, ok := spec.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue // an alias of a constant checked where it is declared
					}
					reason, _ := strconv.Unquote(lit.Value)
					if !(run.Verdict{Status: run.True, Reason: reason}).Valid() {
						t.Errorf("%s: %s = %q is not a valid condition reason", fset.Position(name.Pos()), name.Name, reason)
					}
					n++
				}
				return true
			})
		}
	}
	if n < 40 {
		t.Fatalf("read %d reasons: the test does not find them", n)
	}
}
