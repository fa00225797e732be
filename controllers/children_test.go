package controllers

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/test/build"
)

// TestEnsureChildrenTakesWhatExists: a pass after the first creates
// nothing (what the benchmark owns is taken from one list per kind); a
// child deleted since is created again, and a stranger under a child's
// name is still judged a conflict.
func TestEnsureChildrenTakesWhatExists(t *testing.T) {
	ctx := context.Background()
	b := newBench(build.Clients(2))
	// Children of a kind are created together: the counters are shared.
	var creates, gets atomic.Int64
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(b.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates.Add(1)
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	d, err := spec.Of(b)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: c, APIReader: c, Jobs: JobOptions{Image: "runner:1"}}
	if err := ensureOnce(ctx, r, b, &d); err != nil {
		t.Fatal(err)
	}
	first := int(creates.Load())
	if first != countChildren(ctx, t, c) || first == 0 {
		t.Fatalf("the first pass created %d objects, %d exist", first, countChildren(ctx, t, c))
	}
	gets.Store(0)
	if err := ensureOnce(ctx, r, b, &d); err != nil || int(creates.Load()) != first || gets.Load() != 0 {
		t.Fatalf("a second pass created %d more objects and read %d by name (%v); want none: each kind of child is taken from its list", int(creates.Load())-first, gets.Load(), err)
	}

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, 1)}}
	if err := c.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := ensureOnce(ctx, r, b, &d); err != nil || int(creates.Load()) != first+1 {
		t.Fatalf("after a Role was deleted, a pass created %d objects (%v), want 1", int(creates.Load())-first, err)
	}

	// A Job under client 1's name that b does not own.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, 1)}}
	if err := c.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	stranger := job.DeepCopy()
	stranger.ResourceVersion = ""
	stranger.Labels = map[string]string{exchange.LabelManagedBy: exchange.ManagedBy, exchange.LabelBenchmark: b.Name}
	if err := c.Create(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	var conflict *ConflictError
	if err := ensureOnce(ctx, r, b, &d); !errors.As(err, &conflict) {
		t.Fatalf("a stranger's Job under a child's name: %v, want a *ConflictError", err)
	}
}

// ensureOnce is one pass's ensureChildren over what the pass read.
func ensureOnce(ctx context.Context, r *Reconciler, b *v1alpha1.StorageBenchmark, d *spec.Run) error {
	kids, err := r.readChildren(ctx, b)
	if err != nil {
		return err
	}
	return r.ensureChildren(ctx, b, d, kids)
}

// TestClientOf: a client's ConfigMap or Job is b's, under the client's
// name, with the labels of b's clients; anything else is no client.
func TestClientOf(t *testing.T) {
	b := newBench(build.Clients(3))
	b.UID = "u-1"
	ref := []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: b.Name, UID: b.UID, Controller: ptr.To(true)}}
	obj := func(name string, labels map[string]string, refs []metav1.OwnerReference) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: refs}}
	}
	labels := func(k string, drop string, over map[string]string) map[string]string {
		l := map[string]string{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient, exchange.LabelClient: k}
		delete(l, drop)
		for key, v := range over {
			l[key] = v
		}
		return l
	}
	name := exchange.ClientName(b.Name, 1)
	tests := []struct {
		name string
		o    *metav1.PartialObjectMetadata
		want int
	}{
		{"b's client 1", obj(name, labels("1", "", nil), ref), 1},
		{"without the role label", obj(name, labels("1", exchange.LabelRole, nil), ref), -1},
		{"another role", obj(name, labels("1", "", map[string]string{exchange.LabelRole: "data"}), ref), -1},
		{"another benchmark's label", obj(name, labels("1", "", map[string]string{exchange.LabelBenchmark: "other"}), ref), -1},
		{"a stranger's", obj(name, labels("1", "", nil), nil), -1},
		{"another benchmark of the same name", obj(name, labels("1", "", nil), []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: b.Name, UID: "u-2", Controller: ptr.To(true)}}), -1},
		{"a name not the client's", obj(exchange.ClientName(b.Name, 2), labels("1", "", nil), ref), -1},
		{"an index out of range", obj(exchange.ClientName(b.Name, 3), labels("3", "", nil), ref), -1},
		{"no index", obj(name, labels("x", "", nil), ref), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clientOf(tt.o, b, 3); got != tt.want {
				t.Errorf("clientOf = %d, want %d", got, tt.want)
			}
		})
	}
}
