package harness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// schedule binds a pending pod to the node once it fits, like the scheduler.
func (k *Kubelet) schedule(ctx context.Context, pod *corev1.Pod) (reconcile.Result, error) {
	if pod.DeletionTimestamp != nil || pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
		return reconcile.Result{}, nil
	}
	reason, err := k.unschedulable(ctx, pod)
	if err != nil {
		return reconcile.Result{}, err
	}
	if reason != "" {
		err := k.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
			setCondition(st, corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable,
				"0/1 nodes are available: "+reason)
		})
		return reconcile.Result{RequeueAfter: 2 * time.Second}, err
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.opts.NodeName},
	}
	err = k.client.SubResource("binding").Create(ctx, pod, binding)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil // bound meanwhile, or gone
	}
	if err == nil {
		k.log.V(1).Info("scheduled", "pod", client.ObjectKeyFromObject(pod))
	}
	return reconcile.Result{}, err
}

// unschedulable says why the pod cannot be bound to the node yet ("" if it
// can). For a WaitForFirstConsumer claim it selects the node, which starts
// provisioning.
func (k *Kubelet) unschedulable(ctx context.Context, pod *corev1.Pod) (string, error) {
	node := &corev1.Node{}
	if err := k.reader.Get(ctx, types.NamespacedName{Name: k.opts.NodeName}, node); err != nil {
		return "", err
	}
	for key, v := range pod.Spec.NodeSelector {
		if node.Labels[key] != v {
			return "1 node(s) didn't match Pod's node selector.", nil
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		claim := &corev1.PersistentVolumeClaim{}
		if err := k.reader.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: name}, claim); apierrors.IsNotFound(err) {
			return fmt.Sprintf("persistentvolumeclaim %q not found.", name), nil
		} else if err != nil {
			return "", err
		}
		if claim.DeletionTimestamp != nil {
			return fmt.Sprintf("persistentvolumeclaim %q is being deleted.", name), nil
		}
		if claim.Status.Phase == corev1.ClaimBound {
			continue
		}
		if err := k.selectNode(ctx, claim); err != nil {
			return "", err
		}
		return fmt.Sprintf("pod has unbound PersistentVolumeClaims (%q is %s).", name, claim.Status.Phase), nil
	}
	return "", nil
}

// selectNode sets volume.kubernetes.io/selected-node on an unbound claim of
// a WaitForFirstConsumer class.
func (k *Kubelet) selectNode(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.StorageClassName == nil || claim.Annotations[annSelectedNode] != "" {
		return nil
	}
	class := &storagev1.StorageClass{}
	if err := k.reader.Get(ctx, types.NamespacedName{Name: *claim.Spec.StorageClassName}, class); err != nil {
		return client.IgnoreNotFound(err)
	}
	if class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return nil
	}
	patch := client.MergeFrom(claim.DeepCopy())
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annSelectedNode, k.opts.NodeName)
	return k.client.Patch(ctx, claim, patch)
}

// podsOfClaim maps a claim to the pods of this node, or not scheduled yet,
// that mount it, so they move on as soon as it binds.
func (k *Kubelet) podsOfClaim(ctx context.Context, obj client.Object) []reconcile.Request {
	pods := &corev1.PodList{}
	if err := k.client.List(ctx, pods, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != "" && pod.Spec.NodeName != k.opts.NodeName {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == obj.GetName() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)})
				break
			}
		}
	}
	return reqs
}
