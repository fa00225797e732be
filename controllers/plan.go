package controllers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/internal/trident"
)

// DefaultRunnerImage is the manager's default client image (its
// --runner-image), which a dry run assumes unless told otherwise.
const DefaultRunnerImage = "localhost/storagebench-runner:dev"

// DryRun is what this reconciler would do with a new benchmark, worked out
// without creating anything (`kubectl storagebench plan`): whether its
// admission lets the run start, the children it would create and the
// run's deadlines.
type DryRun struct {
	// Refusal is why admission refuses the run, as the Failed condition
	// would say it (reason and message); nil: admitted.
	Refusal *run.Ending
	// StorageClass is the class the claims use (nil: none found, or a
	// statically bound existing claim); Driver is its Trident driver, if
	// any.
	StorageClass *storagev1.StorageClass
	Driver       string
	// AccessMode and VolumeMode are the claims'.
	AccessMode corev1.PersistentVolumeAccessMode
	VolumeMode corev1.PersistentVolumeMode
	// Warning is the StorageWarning condition's message: results that
	// are hard to compare ("" without).
	Warning string
	// Objects are the children in the order the reconciler creates them:
	// each client's ServiceAccount, Role and RoleBinding, the claims, the
	// plan ConfigMap, the client ConfigMaps and the client Jobs. Owner
	// references are set only on creation. Nil when refused.
	Objects []client.Object
	// Jobs are the client Jobs' settings: image, pull policy, memory
	// limit and activeDeadlineSeconds (the longest the run may take).
	Jobs JobOptions
	// The run's allowances, with the reconciler's defaults.
	ClaimBind, Ready, StartLead, NextStepLead, ResultGrace time.Duration
	// Deadline is the longest the run may take when every phase uses its
	// whole allowance (the Jobs' activeDeadlineSeconds).
	Deadline time.Duration
}

// DryRun admits b (d is spec.Of(b)) as a reconcile would, with admit's
// own checks, against what r's client reads, and builds the children it
// would create. Nothing is written: admit only reads, and the builders are
// pure. r needs no manager: a client (Client, and APIReader, which the
// client serves when nil) and the manager's settings (Jobs, Policy, the
// timeouts) are enough. An error is one reading the cluster.
func (r *Reconciler) DryRun(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run) (*DryRun, error) {
	if r.APIReader == nil {
		r.APIReader = r.Client
	}
	b = b.DeepCopy() // admit records warnings in status
	t := r.timeouts()
	out := &DryRun{AccessMode: accessModeOf(b), VolumeMode: b.Spec.Storage.VolumeMode, Jobs: r.jobOptions(b, d),
		ClaimBind: t.ClaimBind, Ready: t.Ready, StartLead: t.StartLead, NextStepLead: t.NextStepLead, ResultGrace: t.ResultGrace,
		Deadline: r.runDeadline(d)}
	sc, err := r.admit(ctx, b, d)
	var v *verdictError
	switch {
	case errors.As(err, &v):
		refusal := v.verdict
		out.Refusal = &refusal
		// The class is described even when the run is refused on it.
		sc, _, _ = r.storageClass(ctx, b, 0)
	case err != nil:
		return nil, err
	}
	out.StorageClass = sc
	if sc != nil {
		if driver, ok := trident.DriverOf(sc.Provisioner, sc.Parameters); ok {
			out.Driver = string(driver)
		}
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionStorageWarning); c != nil {
		out.Warning = c.Message
	}
	if out.Refusal != nil {
		return out, nil
	}
	out.Objects, err = children(b, d, out.Jobs)
	return out, err
}

// children are the objects ensureChildren creates for b, in its order.
func children(b *v1alpha1.StorageBenchmark, d *spec.Run, opts JobOptions) ([]client.Object, error) {
	var objs []client.Object
	for i := range int(b.Spec.Clients.Count) {
		sa, role, binding := buildClientRBAC(b, i)
		objs = append(objs, sa, role, binding)
	}
	for _, pvc := range buildClaims(b) {
		objs = append(objs, pvc)
	}
	plan, err := buildPlanConfigMap(b, d)
	if err != nil {
		return nil, err
	}
	objs = append(objs, plan)
	claims := claimNames(b)
	for i := range claims {
		objs = append(objs, buildClientConfigMap(b, i))
	}
	for i, claim := range claims {
		objs = append(objs, buildJob(b, i, claim, opts))
	}
	return objs, nil
}
