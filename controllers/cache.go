package controllers

import (
	"slices"
	"strings"

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
// any watched namespace can put the operator's label on them, and an owner
// reference naming their own benchmark. So:
//   - only labelled objects are listed and watched;
//   - ConfigMaps are watched as metadata only (the API server never sends
//     their data), because a tenant can label hundreds of 1 MiB ConfigMaps;
//     the reconciler reads the data of its own ConfigMaps on demand, by
//     name (exchange.go);
//   - every cached object, ours or not, is cut down to the fields the
//     reconciler reads, each bounded: the operator's labels and
//     annotations, the controller reference, and per kind the few status
//     fields it decides on. A labelled object costs the same few hundred
//     bytes whatever its size.

// CacheOptions restricts the cache to labelled objects in the watched
// namespaces (all when none are given).
func CacheOptions(namespaces []string) cache.Options {
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
			// Every Node, cut to its Ready condition (stripForCache).
			&corev1.Node{}: {},
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

// maxCachedValue bounds an annotation value or a message kept in the
// cache: the operator's own annotations are shorter (the order is under
// 1 KiB, the final order of a failed run carries a message of at most
// maxMessage bytes, under 13 KiB however JSON escapes it), and messages
// are clipped again before they reach status.
const maxCachedValue = 16 << 10

// stripForCache is the cache's transform: what the reconciler reads, and
// nothing else, for every object.
func stripForCache(in any) (any, error) {
	obj, ok := in.(client.Object)
	if !ok {
		return in, nil
	}
	if _, isBenchmark := obj.(*v1alpha1.StorageBenchmark); isBenchmark {
		obj.SetManagedFields(nil)
		return obj, nil
	}
	m := metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(), CreationTimestamp: obj.GetCreationTimestamp(),
		DeletionTimestamp: obj.GetDeletionTimestamp(), Labels: ours(obj.GetLabels(), 63), Annotations: ours(obj.GetAnnotations(), maxCachedValue)}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		m.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *corev1.PersistentVolumeClaim:
		// Spec and status are bounded by the API: class, access modes,
		// volume mode, size, volume name, phase, capacity.
		c := &corev1.PersistentVolumeClaim{TypeMeta: o.TypeMeta, ObjectMeta: m, Spec: o.Spec,
			Status: corev1.PersistentVolumeClaimStatus{Phase: o.Status.Phase, Capacity: o.Status.Capacity, AccessModes: o.Status.AccessModes}}
		c.Spec.Selector, c.Spec.DataSource, c.Spec.DataSourceRef = nil, nil, nil
		return c, nil
	case *batchv1.Job:
		j := &batchv1.Job{TypeMeta: o.TypeMeta, ObjectMeta: m, Spec: batchv1.JobSpec{Suspend: o.Spec.Suspend}}
		for _, c := range o.Status.Conditions {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c.Type, Status: c.Status, Reason: clip(c.Reason, 256)})
		}
		return j, nil
	case *corev1.Pod:
		return stripPod(o, m), nil
	case *corev1.Node:
		// A node's name, whether it takes pods and its Ready condition:
		// what tells a client's node lost (heartbeat times are dropped, so
		// a heartbeat changes nothing cached).
		n := &corev1.Node{TypeMeta: o.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion},
			Spec: corev1.NodeSpec{Unschedulable: o.Spec.Unschedulable}}
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady {
				n.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status, Reason: clip(c.Reason, 256),
					Message: clip(c.Message, 1024), LastTransitionTime: c.LastTransitionTime}}
			}
		}
		return n, nil
	case *corev1.ServiceAccount:
		return &corev1.ServiceAccount{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *rbacv1.Role:
		return &rbacv1.Role{TypeMeta: o.TypeMeta, ObjectMeta: m}, nil
	case *rbacv1.RoleBinding:
		return &rbacv1.RoleBinding{TypeMeta: o.TypeMeta, ObjectMeta: m, RoleRef: o.RoleRef}, nil
	}
	obj.SetManagedFields(nil)
	return obj, nil
}

// stripPod is what the reconciler reads of a pod: its node, phase, the
// conditions it reads and its containers' terminations, each bounded.
func stripPod(o *corev1.Pod, m metav1.ObjectMeta) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: o.TypeMeta, ObjectMeta: m, Spec: corev1.PodSpec{NodeName: o.Spec.NodeName}, Status: corev1.PodStatus{Phase: o.Status.Phase}}
	// At most one of each condition read: DisruptionTarget (why a pod was
	// evicted), and PodScheduled and PodReadyToStartContainers
	// (status.storage.attach), those two with their status and transition
	// time only.
	for _, c := range o.Status.Conditions {
		if slices.ContainsFunc(p.Status.Conditions, func(k corev1.PodCondition) bool { return k.Type == c.Type }) {
			continue
		}
		switch c.Type {
		case corev1.DisruptionTarget:
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: clip(c.Reason, 256), Message: clip(c.Message, 1024)})
		case corev1.PodScheduled, corev1.PodReadyToStartContainers:
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime})
		}
	}
	for _, cs := range o.Status.ContainerStatuses {
		kept := corev1.ContainerStatus{Name: clip(cs.Name, 63)}
		if t := cs.State.Terminated; t != nil {
			kept.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: clip(t.Reason, 256), Message: clip(t.Message, maxCachedValue)}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, kept)
	}
	return p
}

// ours keeps the operator's own keys (storagebench.io/…, and the
// managed-by label), values cut to n bytes.
func ours(in map[string]string, n int) map[string]string {
	var out map[string]string
	for k, v := range in {
		if k != exchange.LabelManagedBy && !strings.HasPrefix(k, "storagebench.io/") {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = clip(v, n)
	}
	return out
}
