package controllers

import (
	"context"
	"fmt"
	"slices"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/test/build"
)

// TestDryRun: the dry run lists exactly the children ensureChildren
// creates, in its order and with its Jobs' settings, and refuses what
// admit refuses, with admit's reason.
func TestDryRun(t *testing.T) {
	ctx := context.Background()
	fast := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "csi.trident.netapp.io",
		Parameters: map[string]string{"backendType": "ontap-nas"}}
	b := newBench(build.Clients(2))
	// The benchmark exists: ensureChildren makes it its children's owner.
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(fast, b.DeepCopy()).Build()
	d, err := spec.Of(b)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: c, Jobs: JobOptions{Image: "runner:1"}}
	dry, err := r.DryRun(ctx, b, &d)
	if err != nil || dry.Refusal != nil {
		t.Fatalf("DryRun: %v, refusal %+v", err, dry.Refusal)
	}
	if dry.StorageClass == nil || dry.StorageClass.Name != "fast" || dry.Driver != "ontap-nas" {
		t.Errorf("class %v, driver %q", dry.StorageClass, dry.Driver)
	}
	// Nothing was created by the dry run.
	if n := countChildren(ctx, t, c); n != 0 {
		t.Fatalf("the dry run created %d objects", n)
	}
	if err := ensureOnce(ctx, r, b, &d); err != nil {
		t.Fatal(err)
	}
	if n := countChildren(ctx, t, c); n != len(dry.Objects) {
		t.Errorf("ensureChildren created %d objects, the dry run lists %d", n, len(dry.Objects))
	}
	for _, o := range dry.Objects {
		got := o.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%T %s: %v", o, o.GetName(), err)
		}
	}
	job := dry.Objects[len(dry.Objects)-1]
	want := buildJob(b, 1, claimNames(b)[1], r.jobOptions(b, &d))
	if job.GetName() != want.Name || *dry.Jobs.ActiveDeadlineSeconds != int64(dry.Deadline.Seconds()) || dry.Jobs.MemoryLimit == nil {
		t.Errorf("last object %s, jobs %+v, deadline %s", job.GetName(), dry.Jobs, dry.Deadline)
	}

	for _, tc := range []struct {
		name, reason string
		r            *Reconciler
		image        string
	}{
		{"a missing class", ReasonStorageClassNotFound, &Reconciler{Client: fake.NewClientBuilder().WithScheme(Scheme()).Build()}, ""},
		{"an image the policy does not allow", ReasonForbiddenByPolicy, &Reconciler{Client: c, Jobs: JobOptions{Image: "runner:1"}}, "mine:1"},
		{"an image the policy allows", "", &Reconciler{Client: c, Jobs: JobOptions{Image: "runner:1"},
			Policy: policy.Policy{AllowedImages: []string{"mine:1"}}}, "mine:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(build.Clients(2))
			b.Spec.Clients.Image = tc.image
			dry, err := tc.r.DryRun(ctx, b, &d)
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.reason == "" && dry.Refusal != nil:
				t.Errorf("refused: %+v", dry.Refusal)
			case tc.reason != "" && (dry.Refusal == nil || dry.Refusal.Reason != tc.reason || dry.Objects != nil):
				t.Errorf("refusal %+v, %d objects; want %s", dry.Refusal, len(dry.Objects), tc.reason)
			}
		})
	}
}

// countChildren counts the objects of every kind the operator creates.
func countChildren(ctx context.Context, t *testing.T, c client.Client) int {
	t.Helper()
	n := 0
	for _, kind := range []string{"ServiceAccountList", "RoleList", "RoleBindingList", "PersistentVolumeClaimList", "ConfigMapList", "JobList"} {
		l := &metav1.PartialObjectMetadataList{}
		gv := "v1"
		switch {
		case slices.Contains([]string{"RoleList", "RoleBindingList"}, kind):
			gv = "rbac.authorization.k8s.io/v1"
		case kind == "JobList":
			gv = "batch/v1"
		}
		l.APIVersion, l.Kind = gv, kind
		if err := c.List(ctx, l); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", kind, err))
		}
		n += len(l.Items)
	}
	return n
}
