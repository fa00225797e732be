package controllers

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/runner"
)

// finish tidies up after the run ended, idempotently on every reconcile:
// runners still waiting are told the run is done, client pods of a failed
// run are stopped (their Jobs suspended, kept for their logs), volumes
// follow cleanup.volumes (after a complete run the client Jobs are deleted
// to release them), and the benchmark is deleted after its TTL.
func (r *Reconciler) finish(ctx context.Context, b *v1alpha1.StorageBenchmark, now time.Time) (ctrl.Result, error) {
	plan := metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	err := r.metadata().Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.PlanName(b.Name)}, plan)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err == nil && ownedBy(plan, b) {
		if o, found, _ := orderOf(&observed{plan: plan}); !found || !o.Done {
			reason := b.Status.StopReason
			if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
				reason = c.Message
			}
			err := r.writeOrder(ctx, plan, runner.StepOrder{Index: len(b.Status.Steps), Done: true, Reason: clip(reason, 1024)})
			if client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
	}
	jobs, err := r.ownedJobs(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	failed := meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed)
	if failed {
		if err := r.suspendJobs(ctx, jobs); err != nil {
			return ctrl.Result{}, err
		}
	}
	if b.Spec.Cleanup.Volumes != v1alpha1.VolumesRetain {
		// An ended pod still holds its claims (pvc-protection), so after a
		// complete run the client Jobs go first; after a failed one they
		// stay for their logs and the claims go with them.
		// On an existing claim nothing is released, and the runners remove
		// their files before they exit: their Jobs stay until then.
		if !failed && b.Spec.Storage.ExistingClaim == nil {
			for _, j := range jobs {
				if err := r.deleteOwned(ctx, b, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
					return ctrl.Result{}, err
				}
			}
		}
		for _, pvc := range buildClaims(b) {
			// Only a claim this benchmark created: the cache holds
			// labelled claims, and ownedBy checks the UID.
			var cur corev1.PersistentVolumeClaim
			if err := r.Get(ctx, client.ObjectKeyFromObject(pvc), &cur); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return ctrl.Result{}, err
			}
			if err := r.deleteOwned(ctx, b, &cur); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if ttl := b.Spec.Cleanup.TTLSecondsAfterFinished; ttl != nil && b.Status.CompletionTime != nil {
		expiry := b.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
		if now.Before(expiry) {
			return ctrl.Result{RequeueAfter: expiry.Sub(now)}, nil
		}
		log.FromContext(ctx).Info("Deleting finished benchmark after its TTL", "ttlSeconds", *ttl)
		uid := b.UID
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, b, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid}))
	}
	return ctrl.Result{}, nil
}

// ownedJobs lists b's client Jobs: labelled, and controlled by b.
func (r *Reconciler) ownedJobs(ctx context.Context, b *v1alpha1.StorageBenchmark) ([]*batchv1.Job, error) {
	var list batchv1.JobList
	if err := r.List(ctx, &list, client.InNamespace(b.Namespace),
		client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}); err != nil {
		return nil, err
	}
	var out []*batchv1.Job
	for i := range list.Items {
		if ownedBy(&list.Items[i], b) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// suspendJobs stops the client pods of unfinished Jobs.
func (r *Reconciler) suspendJobs(ctx context.Context, jobs []*batchv1.Job) error {
	for _, j := range jobs {
		if jobCondition(j, batchv1.JobComplete) || jobCondition(j, batchv1.JobFailed) || ptr.Deref(j.Spec.Suspend, false) {
			continue
		}
		patch := client.MergeFromWithOptions(j.DeepCopy(), client.MergeFromWithOptimisticLock{})
		j.Spec.Suspend = ptr.To(true)
		if err := r.Patch(ctx, j, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
