package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// orderExpectations remember the order this manager last wrote for each
// running benchmark until its cache shows it (the expectations of
// kube-controller-manager's ReplicaSet controller). Recording a step and
// ordering the next take one pass, and the step ConfigMap's creation wakes
// the next pass at once: its cache may hold the new step record but not
// yet the order written after it. Acting on that would order the step
// again (a refused write) or read every client's result again. A pass
// whose cache is behind the manager's own write waits for the plan
// ConfigMap's event instead; after expectationTimeout it acts anyway (the
// write may have been undone by somebody else).
//
// An entry lives from the write until the cache shows it, or the
// benchmark ends or goes: at most one per running benchmark.
type orderExpectations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]expectedOrder
}

type expectedOrder struct {
	uid   types.UID
	index int
	done  bool
	at    time.Time
}

// expectationTimeout bounds how long a pass waits for the cache to show
// the manager's own write: far longer than a watch event takes, far
// shorter than any grace of the run.
const expectationTimeout = 10 * time.Second

// wrote records that b's plan ConfigMap now holds the order with index
// and done, written at now.
func (e *orderExpectations) wrote(b *v1alpha1.StorageBenchmark, index int, done bool, now time.Time) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[types.NamespacedName]expectedOrder{}
	}
	e.m[client.ObjectKeyFromObject(b)] = expectedOrder{uid: b.UID, index: index, done: done, at: now}
}

// behind reports whether the observed order (index, done; ordered false:
// none) is older than the one this manager wrote for b, within
// expectationTimeout of the write. An order the cache shows, or an
// expectation timed out or of another benchmark under the name, is
// dropped.
func (e *orderExpectations) behind(b *v1alpha1.StorageBenchmark, ordered bool, index int, done bool, now time.Time) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := client.ObjectKeyFromObject(b)
	x, found := e.m[key]
	if !found {
		return false
	}
	older := !ordered || index < x.index || (index == x.index && x.done && !done)
	if x.uid == b.UID && older && now.Sub(x.at) < expectationTimeout {
		return true
	}
	delete(e.m, key)
	return false
}

// forget drops b's expectation: its run ended or it was deleted.
func (e *orderExpectations) forget(key types.NamespacedName) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// pending counts the expectations held, for tests.
func (e *orderExpectations) pending() int {
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}
