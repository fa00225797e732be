package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/internal/exchange"
)

// A Node's change reaches the benchmarks with a client pod on it, once
// each, and only when its readiness or schedulability changed.
func TestNodeWatch(t *testing.T) {
	pod := func(ns, name, bench, role, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{exchange.LabelBenchmark: bench, exchange.LabelRole: role}}, Spec: corev1.PodSpec{NodeName: node}}
	}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithIndex(&corev1.Pod{}, podNodeField, podNode).WithObjects(
		pod("a", "p0", "bench", exchange.RoleClient, "node-1"),
		pod("a", "p1", "bench", exchange.RoleClient, "node-1"),
		pod("b", "p0", "other", exchange.RoleClient, "node-1"),
		pod("b", "p1", "elsewhere", exchange.RoleClient, "node-2"),
		pod("b", "p2", "helper", "helper", "node-1"),
		pod("b", "p3", "", exchange.RoleClient, "node-1"),
	).Build()
	r := &Reconciler{Client: c}
	got := r.benchmarksOnNode(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	want := map[reconcile.Request]bool{
		{NamespacedName: client.ObjectKey{Namespace: "a", Name: "bench"}}: true,
		{NamespacedName: client.ObjectKey{Namespace: "b", Name: "other"}}: true,
	}
	if len(got) != len(want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	for _, req := range got {
		if !want[req] {
			t.Fatalf("requests %v, want %v", got, want)
		}
	}

	node := func(ready corev1.ConditionStatus, unschedulable bool, rv string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: rv}, Spec: corev1.NodeSpec{Unschedulable: unschedulable},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	p := nodeReadyChanged()
	for _, tt := range []struct {
		name     string
		old, new *corev1.Node
		pass     bool
	}{
		{"nothing that matters", node(corev1.ConditionTrue, false, "1"), node(corev1.ConditionTrue, false, "2"), false},
		{"Ready to Unknown", node(corev1.ConditionTrue, false, "1"), node(corev1.ConditionUnknown, false, "2"), true},
		{"cordoned", node(corev1.ConditionTrue, false, "1"), node(corev1.ConditionTrue, true, "2"), true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.pass {
			t.Errorf("%s: passed %v, want %v", tt.name, got, tt.pass)
		}
	}
	if !p.Delete(event.DeleteEvent{Object: node(corev1.ConditionTrue, false, "1")}) || !p.Create(event.CreateEvent{Object: node(corev1.ConditionTrue, false, "1")}) {
		t.Error("a Node's creation and deletion must pass")
	}
}
