package controllers

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	var planCM corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.PlanName(b.Name)}, &planCM)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err == nil {
		if o, found, _ := exchange.Order(&planCM); !found || !o.Done {
			reason := b.Status.StopReason
			if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == "True" {
				reason = c.Message
			}
			if err := r.writeOrder(ctx, &planCM, runner.StepOrder{Index: len(b.Status.Steps), Done: true, Reason: reason}); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed) {
		if err := r.suspendJobs(ctx, b); err != nil {
			return ctrl.Result{}, err
		}
	}
	if b.Spec.Cleanup.Volumes != v1alpha1.VolumesRetain {
		// An ended pod still holds its claims (pvc-protection), so after a
		// complete run the client Jobs go first; after a failed one they
		// stay for their logs and the claims go with them.
		if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) {
			if err := r.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(b.Namespace), client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}); err != nil {
				return ctrl.Result{}, err
			}
		}
		for _, pvc := range buildClaims(b) {
			if err := r.Delete(ctx, pvc); client.IgnoreNotFound(err) != nil {
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
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, b, client.PropagationPolicy("Background")))
	}
	return ctrl.Result{}, nil
}

// suspendJobs stops the client pods of unfinished Jobs.
func (r *Reconciler) suspendJobs(ctx context.Context, b *v1alpha1.StorageBenchmark) error {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace),
		client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}); err != nil {
		return err
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if jobCondition(j, batchv1.JobComplete) || jobCondition(j, batchv1.JobFailed) || (j.Spec.Suspend != nil && *j.Spec.Suspend) {
			continue
		}
		patch := client.MergeFrom(j.DeepCopy())
		suspend := true
		j.Spec.Suspend = &suspend
		if err := r.Patch(ctx, j, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
