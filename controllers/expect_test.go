package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// TestOrderExpectations: a pass waits while its cache shows an order
// older than the one this manager wrote, and only then; the expectation
// goes once the cache shows the order, once it times out, and when another
// benchmark takes the name.
func TestOrderExpectations(t *testing.T) {
	bench := func(uid types.UID) *v1alpha1.StorageBenchmark {
		return newBench(func(b *v1alpha1.StorageBenchmark) { b.UID = uid })
	}
	type seen struct {
		ordered     bool
		index       int
		done        bool
		uid         types.UID
		after       time.Duration
		behind      bool
		leftPending int
	}
	tests := []struct {
		name  string
		index int
		done  bool
		seen  []seen
	}{
		{"the cache shows no order yet, then the written one", 0, false, []seen{
			{ordered: false, uid: "a", behind: true, leftPending: 1},
			{ordered: true, index: 0, uid: "a", behind: false, leftPending: 0},
			{ordered: true, index: 0, uid: "a", behind: false, leftPending: 0},
		}},
		{"the step before, then the written one", 3, false, []seen{
			{ordered: true, index: 2, uid: "a", behind: true, leftPending: 1},
			{ordered: true, index: 3, uid: "a", behind: false, leftPending: 0},
		}},
		{"the last step's order before the final one", 3, true, []seen{
			{ordered: true, index: 3, uid: "a", behind: true, leftPending: 1},
			{ordered: true, index: 3, done: true, uid: "a", behind: false, leftPending: 0},
		}},
		{"an order ahead of the written one (another writer): acted on", 3, false, []seen{
			{ordered: true, index: 5, uid: "a", behind: false, leftPending: 0},
		}},
		{"the write undone for longer than the timeout: acted on", 3, false, []seen{
			{ordered: true, index: 2, uid: "a", after: expectationTimeout / 2, behind: true, leftPending: 1},
			{ordered: true, index: 2, uid: "a", after: expectationTimeout, behind: false, leftPending: 0},
		}},
		{"another benchmark under the name", 3, false, []seen{
			{ordered: false, uid: "b", behind: false, leftPending: 0},
		}},
	}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e orderExpectations
			e.wrote(bench("a"), tt.index, tt.done, t0)
			for i, s := range tt.seen {
				if got := e.behind(bench(s.uid), s.ordered, s.index, s.done, t0.Add(s.after)); got != s.behind {
					t.Errorf("observation %d: behind %v, want %v", i, got, s.behind)
				}
				if n := e.pending(); n != s.leftPending {
					t.Errorf("observation %d: %d expectations held, want %d", i, n, s.leftPending)
				}
			}
		})
	}
	var none *orderExpectations // a reconciler without a manager
	none.wrote(bench("a"), 1, false, t0)
	if none.behind(bench("a"), false, 0, false, t0) || none.pending() != 0 {
		t.Error("a nil expectation set waited")
	}
}
