package controllers

import (
	"context"
	"strconv"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

func TestResultGateHold(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "bench"}
	cms := []types.UID{"cm-0", "cm-1", "cm-2"}
	type result struct {
		uid    types.UID // the benchmark's
		step   int
		client int
		cm     types.UID
		held   bool
	}
	tests := []struct {
		name    string
		await   bool
		in      []bool
		results []result
	}{
		{name: "nothing awaited: nothing held", results: []result{{"b-1", 0, 0, "cm-0", false}}},
		{name: "the results before the last wait, the last queues at once", await: true, in: []bool{false, false, false},
			results: []result{{"b-1", 2, 0, "cm-0", true}, {"b-1", 2, 2, "cm-2", true}, {"b-1", 2, 1, "cm-1", false}}},
		{name: "what the pass saw counts", await: true, in: []bool{true, false, true},
			results: []result{{"b-1", 2, 1, "cm-1", false}}},
		{name: "a result counted twice is not the last", await: true, in: []bool{false, false, true},
			results: []result{{"b-1", 2, 0, "cm-0", true}, {"b-1", 2, 0, "cm-0", true}, {"b-1", 2, 1, "cm-1", false}}},
		{name: "another step's result is not held", await: true, in: []bool{false, false, false},
			results: []result{{"b-1", 3, 0, "cm-0", false}, {"b-1", 1, 1, "cm-1", false}}},
		{name: "another benchmark of the same name is not held", await: true, in: []bool{false, false, false},
			results: []result{{"b-2", 2, 0, "cm-0", false}}},
		{name: "a ConfigMap the pass did not see as the client's is not held, nor counted", await: true, in: []bool{false, false, true},
			results: []result{{"b-1", 2, 0, "forged", false}, {"b-1", 2, 0, "cm-0", true}, {"b-1", 2, 1, "cm-1", false}}},
		{name: "a client out of range is not held", await: true, in: []bool{false, false, false},
			results: []result{{"b-1", 2, 3, "cm-0", false}, {"b-1", 2, -1, "cm-0", false}}},
		{name: "once all are in, the gate is gone", await: true, in: []bool{false, true, true},
			results: []result{{"b-1", 2, 0, "cm-0", false}, {"b-1", 2, 0, "cm-0", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &resultGate{}
			if tt.await {
				g.await(key, "b-1", 2, cms, tt.in)
			}
			for i, r := range tt.results {
				if got := g.hold(key, r.uid, r.step, r.client, r.cm); got != r.held {
					t.Errorf("result %d (%+v): held %v, want %v", i, r, got, r.held)
				}
			}
		})
	}
}

// A pass that waits again for the same step keeps what was counted since
// it read the cache: nothing counted is lost between its read and its
// await.
func TestResultGateAwaitMerges(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "bench"}
	cms := []types.UID{"cm-0", "cm-1", "cm-2"}
	g := &resultGate{}
	g.await(key, "b-1", 0, cms, []bool{false, false, false})
	if !g.hold(key, "b-1", 0, 1, "cm-1") {
		t.Fatal("client 1's result, with two out, was not held")
	}
	g.await(key, "b-1", 0, cms, []bool{true, false, false}) // read before client 1's result
	if g.hold(key, "b-1", 0, 2, "cm-2") {
		t.Fatal("client 2's result, the last, was held: client 1's count was lost")
	}
	// A ConfigMap replaced since (another UID) does not keep its count.
	g.await(key, "b-1", 1, cms, []bool{false, false, false})
	if !g.hold(key, "b-1", 1, 1, "cm-1") {
		t.Fatal("client 1's result of step 1, with two out, was not held")
	}
	g.await(key, "b-1", 1, []types.UID{"cm-0", "new", "cm-2"}, []bool{true, false, false})
	if !g.hold(key, "b-1", 1, 2, "cm-2") {
		t.Fatal("the merge kept the count of a ConfigMap replaced since")
	}
	if g.hold(key, "b-1", 1, 1, "new") {
		t.Fatal("the replaced client's result, the last, was held")
	}
	// Another step starts afresh, and forget drops the gate.
	g.await(key, "b-1", 2, cms, []bool{false, false, false})
	g.forget(key)
	if g.hold(key, "b-1", 2, 0, "cm-0") {
		t.Fatal("a forgotten benchmark's result was held")
	}
	var none *resultGate
	none.await(key, "b-1", 0, cms, []bool{false, false, false})
	if none.hold(key, "b-1", 0, 0, "cm-0") {
		t.Fatal("a nil gate held a result")
	}
}

// The ConfigMaps' handler queues the benchmark as Owns does, except a
// held result, which waits; the last result is queued at once.
func TestGatedConfigMapsQueue(t *testing.T) {
	gv := v1alpha1.GroupVersion
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	mapper.Add(gv.WithKind("StorageBenchmark"), apimeta.RESTScopeNamespace)
	gate := &resultGate{}
	h := gatedConfigMaps{gate: gate, EventHandler: handler.EnqueueRequestForOwner(Scheme(), mapper, &v1alpha1.StorageBenchmark{}, handler.OnlyControllerOwner())}
	key := types.NamespacedName{Namespace: "ns", Name: "bench"}
	cm := func(client, step int) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: exchange.ClientName("bench", client),
			UID:             types.UID("cm-" + strconv.Itoa(client)),
			Labels:          map[string]string{exchange.LabelClient: strconv.Itoa(client)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: gv.String(), Kind: "StorageBenchmark", Name: "bench", UID: "b-1", Controller: ptr.To(true)}}}}
		if step >= 0 {
			m.Annotations = map[string]string{exchange.AnnotationResultStep: strconv.Itoa(step)}
		}
		return m
	}
	gate.await(key, "b-1", 0, []types.UID{"cm-0", "cm-1"}, []bool{false, false})
	tests := []struct {
		name     string
		old, new *metav1.PartialObjectMetadata
		queued   bool
	}{
		{"another change of a client's ConfigMap is queued", cm(0, -1), cm(0, -1), true},
		{"a result with one still out waits", cm(0, -1), cm(0, 0), false},
		{"the last result is queued at once", cm(1, -1), cm(1, 0), true},
		{"after it, nothing is held", cm(0, 0), cm(0, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}, q)
			if got := q.Len() == 1; got != tt.queued {
				t.Fatalf("queued at once: %v, want %v (queue length %d)", got, tt.queued, q.Len())
			}
		})
	}
}

// The merge can complete a step's results: the last one was held, as the
// gate still had a result out when it came, so await says so and the pass
// queues the next one itself.
func TestResultGateAwaitCompletes(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "bench"}
	cms := []types.UID{"cm-0", "cm-1", "cm-2"}
	g := &resultGate{}
	// A pass read nothing in, then client 2's result came before its await.
	if g.await(key, "b-1", 0, cms, []bool{false, false, false}) {
		t.Fatal("await with every result out said they were all in")
	}
	// The next pass read client 2's; clients 0 and 1 came before its await.
	if !g.hold(key, "b-1", 0, 0, "cm-0") || !g.hold(key, "b-1", 0, 1, "cm-1") {
		t.Fatal("with client 2's result uncounted, clients 0 and 1 were not held")
	}
	if !g.await(key, "b-1", 0, cms, []bool{false, false, true}) {
		t.Fatal("the merge made the results complete, and await did not say so: the last one waits for its hold")
	}
	if g.hold(key, "b-1", 0, 2, "cm-2") {
		t.Fatal("after the results were complete, the gate still held one")
	}
}
