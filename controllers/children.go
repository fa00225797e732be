package controllers

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// observed is everything a reconcile looks at, read fresh every time.
type observed struct {
	claims map[string]*corev1.PersistentVolumeClaim
	// capacity is the smallest bound volume's real capacity.
	capacity *resource.Quantity
	bound    int
	// clients, jobs: index → object (nil when missing).
	clients []*corev1.ConfigMap
	jobs    []*batchv1.Job
	pods    map[int][]corev1.Pod
	plan    *corev1.ConfigMap
}

// storageClass finds the class the claims use: the named one, the cluster
// default when none is named, or the existing claim's. A missing class is
// reported as (nil, message).
func (r *Reconciler) storageClass(ctx context.Context, b *v1alpha1.StorageBenchmark) (*storagev1.StorageClass, string, error) {
	name := b.Spec.Storage.StorageClassName
	if b.Spec.Storage.ExistingClaim != nil {
		var pvc corev1.PersistentVolumeClaim
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: *b.Spec.Storage.ExistingClaim}, &pvc)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("storage.existingClaim %q does not exist in namespace %s", *b.Spec.Storage.ExistingClaim, b.Namespace), nil
		}
		if err != nil {
			return nil, "", err
		}
		if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
			return nil, "", nil // a statically bound claim: no class to record
		}
		name = pvc.Spec.StorageClassName
	}
	if name == nil {
		var list storagev1.StorageClassList
		if err := r.List(ctx, &list); err != nil {
			return nil, "", err
		}
		for i := range list.Items {
			if list.Items[i].Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
				return &list.Items[i], "", nil
			}
		}
		return nil, "storage.storageClassName is not set and the cluster has no default StorageClass", nil
	}
	var sc storagev1.StorageClass
	err := r.Get(ctx, client.ObjectKey{Name: *name}, &sc)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("StorageClass %q not found: create it or set storage.storageClassName to an existing class", *name), nil
	}
	return &sc, "", err
}

// create makes obj unless it exists; owned objects get the benchmark as
// controlling owner, so deleting the benchmark deletes them.
func (r *Reconciler) create(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object, owned bool) error {
	err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	if owned {
		if err := controllerutil.SetControllerReference(b, obj, r.Scheme()); err != nil {
			return err
		}
	}
	if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	log.FromContext(ctx).Info("Created", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
	return nil
}

// ensureChildren creates whatever is missing, idempotently: runner RBAC,
// claims, the plan and client ConfigMaps, and the client Jobs.
func (r *Reconciler) ensureChildren(ctx context.Context, b *v1alpha1.StorageBenchmark, d *desired) error {
	sa, role, binding := buildRunnerRBAC(b)
	for _, o := range []client.Object{sa, role, binding} {
		if err := r.create(ctx, b, o, true); err != nil {
			return err
		}
	}
	owned := b.Spec.Cleanup.Volumes != v1alpha1.VolumesRetain
	for _, pvc := range buildClaims(b) {
		if err := r.create(ctx, b, pvc, owned); err != nil {
			return err
		}
	}
	planCM := &corev1.ConfigMap{ObjectMeta: objectMeta(b, exchange.PlanName(b.Name), exchange.RolePlan)}
	value, err := exchange.Encode(clientPlan(b, d))
	if err != nil {
		return err
	}
	planCM.Data = map[string]string{exchange.KeyPlan: value}
	if err := r.create(ctx, b, planCM, true); err != nil {
		return err
	}
	claims := claimNames(b)
	for i := range claims {
		if err := r.create(ctx, b, buildClientConfigMap(b, i), true); err != nil {
			return err
		}
	}
	for i, claim := range claims {
		if err := r.create(ctx, b, buildJob(b, i, claim, r.Jobs), true); err != nil {
			return err
		}
	}
	return nil
}

// observe reads the benchmark's children from the cache.
func (r *Reconciler) observe(ctx context.Context, b *v1alpha1.StorageBenchmark) (*observed, error) {
	n := int(b.Spec.Clients.Count)
	o := &observed{claims: map[string]*corev1.PersistentVolumeClaim{}, clients: make([]*corev1.ConfigMap, n),
		jobs: make([]*batchv1.Job, n), pods: map[int][]corev1.Pod{}}
	for _, name := range claimNames(b) {
		if _, seen := o.claims[name]; seen {
			continue
		}
		var pvc corev1.PersistentVolumeClaim
		reader := client.Reader(r.Client)
		if b.Spec.Storage.ExistingClaim != nil {
			reader = r.APIReader
		}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &pvc); err != nil {
			if apierrors.IsNotFound(err) {
				o.claims[name] = nil
				continue
			}
			return nil, err
		}
		o.claims[name] = &pvc
		if pvc.Status.Phase == corev1.ClaimBound {
			o.bound++
			if c, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && (o.capacity == nil || c.Cmp(*o.capacity) < 0) {
				o.capacity = &c
			}
		}
	}
	sel := client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}
	var cms corev1.ConfigMapList
	if err := r.List(ctx, &cms, client.InNamespace(b.Namespace), sel); err != nil {
		return nil, err
	}
	for i := range cms.Items {
		if k := clientIndex(&cms.Items[i], n); k >= 0 {
			o.clients[k] = &cms.Items[i]
		}
	}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace), sel); err != nil {
		return nil, err
	}
	for i := range jobs.Items {
		if k := clientIndex(&jobs.Items[i], n); k >= 0 {
			o.jobs[k] = &jobs.Items[i]
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(b.Namespace), sel); err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[i].CreationTimestamp.Before(&pods.Items[j].CreationTimestamp)
	})
	for _, p := range pods.Items {
		if k := clientIndex(&p, n); k >= 0 {
			o.pods[k] = append(o.pods[k], p)
		}
	}
	var planCM corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.PlanName(b.Name)}, &planCM)
	switch {
	case err == nil:
		o.plan = &planCM
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	return o, nil
}

// clientIndex reads the client label; -1 when absent or out of range.
func clientIndex(o client.Object, n int) int {
	k, err := strconv.Atoi(o.GetLabels()[exchange.LabelClient])
	if err != nil || k < 0 || k >= n {
		return -1
	}
	return k
}
