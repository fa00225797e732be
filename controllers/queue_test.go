package controllers

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func TestFairQueueOrder(t *testing.T) {
	tests := []struct {
		name string
		push []reconcile.Request
		want []string // ns/name in the order popped
	}{
		{name: "one namespace is first in, first out",
			push: []reconcile.Request{req("a", "1"), req("a", "2"), req("a", "3")},
			want: []string{"a/1", "a/2", "a/3"}},
		{name: "a quiet namespace is served after one request of the busy one",
			push: []reconcile.Request{req("busy", "1"), req("busy", "2"), req("busy", "3"), req("quiet", "x")},
			want: []string{"busy/1", "quiet/x", "busy/2", "busy/3"}},
		{name: "namespaces take turns in the order they began waiting",
			push: []reconcile.Request{req("a", "1"), req("b", "1"), req("a", "2"), req("c", "1"), req("b", "2")},
			want: []string{"a/1", "b/1", "c/1", "a/2", "b/2"}},
		{name: "cluster-scoped requests (no namespace) are one more turn",
			push: []reconcile.Request{req("a", "1"), req("a", "2"), req("", "node")},
			want: []string{"a/1", "/node", "a/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newFairQueue()
			for _, r := range tt.push {
				q.Push(r)
			}
			var got []string
			for q.Len() > 0 {
				r := q.Pop()
				got = append(got, r.Namespace+"/"+r.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("popped %v, want %v", got, tt.want)
			}
			if len(q.waiting) != 0 || len(q.turns) != 0 {
				t.Fatalf("emptied queue keeps %d namespaces and %d turns", len(q.waiting), len(q.turns))
			}
		})
	}
}

// TestFairQueueInTheWorkQueue runs the controllers' real work queue (as
// controller-runtime gets it from NewQueue): a tenant with a thousand
// requests waiting does not hold back another tenant's one, and the work
// queue's guarantees still hold (a request waiting is not queued twice; one
// added while it is processed comes back after Done; a delayed one comes).
func TestFairQueueInTheWorkQueue(t *testing.T) {
	q := newFairRateLimitingQueue("test-fair", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	for i := range 1000 {
		q.Add(req("noisy", fmt.Sprint(i)))
	}
	q.Add(req("noisy", "0")) // already waiting: not queued again
	q.Add(req("quiet", "bench"))
	if n := q.Len(); n != 1001 {
		t.Fatalf("Len %d, want 1001", n)
	}
	first, _ := q.Get()
	second, _ := q.Get()
	if first != req("noisy", "0") || second != req("quiet", "bench") {
		t.Fatalf("served %v then %v, want noisy/0 then quiet/bench", first, second)
	}
	// Added again while being processed: held until Done, then queued.
	q.Add(second)
	q.Done(second)
	q.Done(first)
	served := map[string]int{}
	for q.Len() > 0 {
		r, _ := q.Get()
		served[r.Namespace]++
		q.Done(r)
	}
	if served["quiet"] != 1 || served["noisy"] != 999 {
		t.Fatalf("served %v, want 999 noisy and the quiet one once more", served)
	}
	q.AddAfter(req("quiet", "later"), 10*time.Millisecond)
	got := make(chan reconcile.Request, 1)
	go func() {
		r, _ := q.Get()
		got <- r
	}()
	select {
	case r := <-got:
		if r != req("quiet", "later") {
			t.Fatalf("got %v, want quiet/later", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a delayed request never came")
	}
}
