package controllers

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// One manager serves every namespace it watches, and a tenant who keeps it
// busy (a thousand clients, a flood of benchmarks) must not delay another
// tenant's steps. The controllers' work queue therefore hands out requests
// namespace by namespace in turn: a namespace with one request waiting is
// served after at most one request of every other namespace with work
// waiting, however many those have queued. Everything else is client-go's
// work queue as controller-runtime builds it (one request at a time per
// object, rate-limited retries, delays, metrics): only the order in which
// waiting requests leave it changes.

// fairQueue is the workqueue.Queue underneath the controllers' queue:
// first in, first out within a namespace, round robin across namespaces.
// Its methods are called under the work queue's lock.
type fairQueue struct {
	// waiting holds each namespace's requests in arrival order.
	waiting map[string][]reconcile.Request
	// turns lists the namespaces with requests waiting, in the order they
	// are served; the head is served next and goes to the back.
	turns []string
	n     int
}

func newFairQueue() *fairQueue {
	return &fairQueue{waiting: map[string][]reconcile.Request{}}
}

// Touch is called when a request that is already waiting is added again:
// it keeps its place.
func (q *fairQueue) Touch(reconcile.Request) {}

// Push adds a request that is not waiting.
func (q *fairQueue) Push(r reconcile.Request) {
	ns := r.Namespace
	if len(q.waiting[ns]) == 0 {
		q.turns = append(q.turns, ns)
	}
	q.waiting[ns] = append(q.waiting[ns], r)
	q.n++
}

// Len is the number of requests waiting.
func (q *fairQueue) Len() int { return q.n }

// Pop hands out the oldest request of the namespace whose turn it is; the
// work queue calls it only when Len is positive.
func (q *fairQueue) Pop() reconcile.Request {
	ns := q.turns[0]
	q.turns[0] = ""
	q.turns = q.turns[1:]
	reqs := q.waiting[ns]
	r := reqs[0]
	reqs[0] = reconcile.Request{}
	if reqs = reqs[1:]; len(reqs) == 0 {
		delete(q.waiting, ns)
	} else {
		q.waiting[ns] = reqs
		q.turns = append(q.turns, ns)
	}
	q.n--
	return r
}

// newFairRateLimitingQueue is controller-runtime's default work queue with
// the fair order underneath (controller.Options.NewQueue).
func newFairRateLimitingQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[reconcile.Request]{Name: name, Queue: newFairQueue()})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[reconcile.Request]{Name: name, Queue: q})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name, DelayingQueue: delaying})
}
