package controllers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// The cache is the manager's memory, and anyone who may create objects in
// any watched namespace can put the operator's label on them. So:
//   - only labelled objects are listed and watched;
//   - ConfigMaps are watched as metadata only (the API server never sends
//     their data), because a tenant can label hundreds of 1 MiB ConfigMaps;
//     the reconciler reads the data of its own ConfigMaps on demand, a page
//     at a time (exchange.go);
//   - every cached object loses its managedFields, and an object that is not
//     controlled by a StorageBenchmark (or, for pods, by a Job) keeps only
//     the metadata that tells it apart: a labelled foreign object costs a
//     few hundred bytes, whatever its size.

// cacheOptions restricts the cache to labelled objects in the watched
// namespaces (all when none are given).
func cacheOptions(namespaces []string) cache.Options {
	ours := cache.ByObject{Label: k8slabels.SelectorFromSet(k8slabels.Set{exchange.LabelManagedBy: exchange.ManagedBy})}
	o := cache.Options{
		DefaultTransform: stripForCache,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}:             ours,
			&batchv1.Job{}:                  ours,
			&corev1.Pod{}:                   ours,
			&corev1.PersistentVolumeClaim{}: ours,
			&corev1.ServiceAccount{}:        ours,
			&rbacv1.Role{}:                  ours,
			&rbacv1.RoleBinding{}:           ours,
		},
	}
	if len(namespaces) > 0 {
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// stripForCache is the cache's transform: no managedFields anywhere, and
// only identifying metadata for labelled objects nobody of ours controls.
func stripForCache(in any) (any, error) {
	obj, ok := in.(client.Object)
	if !ok {
		return in, nil
	}
	obj.SetManagedFields(nil)
	if _, isBenchmark := obj.(*v1alpha1.StorageBenchmark); isBenchmark || controlledByKind(obj) {
		return obj, nil
	}
	m := metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(), Labels: obj.GetLabels(), OwnerReferences: obj.GetOwnerReferences()}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *corev1.Pod:
		return &corev1.Pod{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *batchv1.Job:
		return &batchv1.Job{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *corev1.PersistentVolumeClaim:
		// A retained claim has no controller: it keeps its annotations,
		// which say which benchmark created it (ownership.go).
		m.Annotations = o.Annotations
		return &corev1.PersistentVolumeClaim{TypeMeta: o.TypeMeta, ObjectMeta: m, Spec: o.Spec, Status: o.Status}, nil
	case *corev1.ServiceAccount:
		return &corev1.ServiceAccount{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *rbacv1.Role:
		return &rbacv1.Role{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *rbacv1.RoleBinding:
		return &rbacv1.RoleBinding{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *metav1.PartialObjectMetadata:
		o.Annotations = nil
		return o, nil
	}
	return obj, nil
}

// controlledByKind: a benchmark's child (controlled by a StorageBenchmark),
// or a pod of a Job (the Job's own controller is checked when it is read).
func controlledByKind(obj client.Object) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	if ref.Kind == "StorageBenchmark" && ref.APIVersion == v1alpha1.GroupVersion.String() {
		return true
	}
	_, isPod := obj.(*corev1.Pod)
	return isPod && ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String()
}
