package controllers

import (
	"context"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
	creates := 0
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(b.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			return c.Create(ctx, obj, opts...)
		}}).Build()
	d, err := spec.Of(b)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: c, APIReader: c, Jobs: JobOptions{Image: "runner:1"}}
	if err := r.ensureChildren(ctx, b, &d); err != nil {
		t.Fatal(err)
	}
	first := creates
	if first != countChildren(ctx, t, c) || first == 0 {
		t.Fatalf("the first pass created %d objects, %d exist", first, countChildren(ctx, t, c))
	}
	if err := r.ensureChildren(ctx, b, &d); err != nil || creates != first {
		t.Fatalf("a second pass created %d more objects (%v)", creates-first, err)
	}

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, 1)}}
	if err := c.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureChildren(ctx, b, &d); err != nil || creates != first+1 {
		t.Fatalf("after a Role was deleted, a pass created %d objects (%v), want 1", creates-first, err)
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
	if err := r.ensureChildren(ctx, b, &d); !errors.As(err, &conflict) {
		t.Fatalf("a stranger's Job under a child's name: %v, want a *ConflictError", err)
	}
}
