package controllers

import (
	"context"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// While a step's results arrive, each client's result is an update of its
// ConfigMap, and each update would queue a pass that finds the step still
// waiting: with a thousand clients, most of a step's passes did nothing
// but look. So a pass that waits for step k's results (run.ActWait) tells
// the gate which clients' results are in; a later result of step k, on a
// ConfigMap the pass saw as client i's (same UID), is counted, and queues a
// pass at once only when it is the last one out. The others queue one
// resultHold later at the latest (the queue keeps the earliest time), so a
// miscount costs at most that, never a step.
//
// Everything else still queues a pass at once, as Owns would: a result of
// another step, any other change of a client's ConfigMap, its deletion,
// and every event of the Jobs, pods, claims and nodes, so a client that
// fails ends the run as soon as before. The pass's own RequeueAfter (the
// step's result deadline) stands as well.

// resultHold bounds how long a counted result may wait for its pass.
const resultHold = 2 * time.Second

// resultGate is the steps the benchmarks' passes wait for, by benchmark;
// a nil gate holds nothing.
type resultGate struct {
	mu    sync.Mutex
	waits map[types.NamespacedName]*awaited
}

// awaited is one benchmark's step whose results are out.
type awaited struct {
	uid  types.UID // the benchmark's
	step int
	// clients are the UIDs of the client ConfigMaps the pass saw, by
	// client; in says whose result is in, and left how many are not.
	clients []types.UID
	in      []bool
	left    int
}

// await records that b's pass waits for step's results, in says whose are
// in, of the client ConfigMaps with the UIDs clients. Results counted since
// the pass read the cache stay counted (a gate for the same benchmark and
// step is merged), so none is lost between the pass's read and this call.
// When they make the step's results complete, the last of them was held:
// await says so (all), and the pass must queue the next one itself.
func (g *resultGate) await(key types.NamespacedName, uid types.UID, step int, clients []types.UID, in []bool) (all bool) {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waits == nil {
		g.waits = map[types.NamespacedName]*awaited{}
	}
	w := &awaited{uid: uid, step: step, clients: clients, in: in}
	if old := g.waits[key]; old != nil && old.uid == uid && old.step == step && len(old.in) == len(in) {
		for i, ok := range old.in {
			in[i] = in[i] || (ok && old.clients[i] == clients[i])
		}
	}
	for _, ok := range in {
		if !ok {
			w.left++
		}
	}
	if w.left == 0 {
		delete(g.waits, key)
		return true
	}
	g.waits[key] = w
	return false
}

// hold counts client's result of step, on the ConfigMap with UID cm, for
// the benchmark key (UID uid), and says whether results of the step are
// still out, so the pass it would queue can wait. Anything the gate does
// not await exactly is not held.
func (g *resultGate) hold(key types.NamespacedName, uid types.UID, step, client int, cm types.UID) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.waits[key]
	if w == nil || w.uid != uid || w.step != step || client < 0 || client >= len(w.in) || w.clients[client] != cm || cm == "" {
		return false
	}
	if !w.in[client] {
		w.in[client] = true
		w.left--
	}
	if w.left == 0 {
		delete(g.waits, key)
		return false
	}
	return true
}

// forget drops what the gate holds for a benchmark that is gone.
func (g *resultGate) forget(key types.NamespacedName) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.waits, key)
}

// awaitResults tells the gate that b's pass waits for step's results, as
// obs holds them; true when results counted since obs was read make them
// complete (await).
func (r *Reconciler) awaitResults(b *v1alpha1.StorageBenchmark, obs *observed, step int) bool {
	uids := make([]types.UID, len(obs.clients))
	in := make([]bool, len(obs.clients))
	for i, cm := range obs.clients {
		if cm != nil {
			uids[i] = cm.UID
			in[i] = exchange.ResultStep(cm) == step
		}
	}
	return r.results.await(client.ObjectKeyFromObject(b), b.UID, step, uids, in)
}

// gatedConfigMaps queues a benchmark for its ConfigMaps' events as its
// EventHandler does (the benchmark that controls them), except the results
// the gate holds (above): only Update differs.
type gatedConfigMaps struct {
	handler.EventHandler
	gate *resultGate
}

func (h gatedConfigMaps) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if req, ok := h.held(e.ObjectOld, e.ObjectNew); ok {
		q.AddAfter(req, resultHold)
		return
	}
	h.EventHandler.Update(ctx, e, q)
}

// held says whether an update of a ConfigMap is a result the gate holds,
// and the benchmark's request to queue later.
func (h gatedConfigMaps) held(old, cm client.Object) (reconcile.Request, bool) {
	if old == nil || cm == nil {
		return reconcile.Request{}, false
	}
	step := exchange.ResultStep(cm)
	if step < 0 || step == exchange.ResultStep(old) {
		return reconcile.Request{}, false
	}
	ref := metav1.GetControllerOfNoCopy(cm)
	if ref == nil || ref.Kind != "StorageBenchmark" || ref.APIVersion != v1alpha1.GroupVersion.String() {
		return reconcile.Request{}, false
	}
	k, err := strconv.Atoi(cm.GetLabels()[exchange.LabelClient])
	if err != nil {
		return reconcile.Request{}, false
	}
	key := types.NamespacedName{Namespace: cm.GetNamespace(), Name: ref.Name}
	return reconcile.Request{NamespacedName: key}, h.gate.hold(key, ref.UID, step, k, cm.GetUID())
}
