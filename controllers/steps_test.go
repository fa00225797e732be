package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
)

// The step memo holds what runs, never history: a record replaced under a
// step's name takes the old one's place (and is reported), a benchmark
// created again under the same name starts afresh, forget drops all.
func TestStepMemoHoldsOneRecordPerStep(t *testing.T) {
	var m stepMemo
	b := newBench(func(b *v1alpha1.StorageBenchmark) { b.UID = "bench-1" })
	cm := func(uid, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv}}
	}
	meta := func(c *corev1.ConfigMap) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: c.ObjectMeta}
	}
	rec := func(k int) run.Step { return run.Step{Order: protocol.StepOrder{Index: k}} }

	first := cm("step-0-a", "10")
	m.put(b, 0, first, rec(0))
	m.put(b, 1, cm("step-1-a", "11"), rec(1))
	if got, ok, replaced := m.get(b, 0, meta(first)); !ok || replaced || got.Order.Index != 0 {
		t.Fatalf("get(step 0) = %v, ok %v, replaced %v; want the record", got.Order.Index, ok, replaced)
	}
	if _, ok, replaced := m.get(b, 0, meta(cm("step-0-a", "12"))); ok || replaced {
		t.Fatalf("a changed object: ok %v, replaced %v; want a miss", ok, replaced)
	}
	// The same name, another object: a replacement, reported, never a
	// second record.
	forged := cm("step-0-b", "20")
	if _, ok, replaced := m.get(b, 0, meta(forged)); ok || !replaced {
		t.Fatalf("a replaced record: ok %v, replaced %v; want replaced", ok, replaced)
	}
	for range 200 {
		m.put(b, 0, forged, rec(0))
	}
	if n := m.records(); n != 2 {
		t.Fatalf("%d records after 200 replacements of one step, want 2", n)
	}
	// Another benchmark under the same name (deleted and applied again):
	// the old one's records do not count, and are dropped on the first put.
	again := b.DeepCopy()
	again.UID = "bench-2"
	if _, ok, replaced := m.get(again, 0, meta(forged)); ok || replaced {
		t.Fatalf("a new benchmark under the old name: ok %v, replaced %v; want a miss", ok, replaced)
	}
	m.put(again, 0, cm("step-0-c", "30"), rec(0))
	if n := m.records(); n != 1 {
		t.Fatalf("%d records after the benchmark was created again, want 1", n)
	}
	m.forget(client.ObjectKeyFromObject(again))
	if n := m.records(); n != 0 {
		t.Fatalf("%d records after forget, want 0", n)
	}
}
