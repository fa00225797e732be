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
	"github.com/storagebench/storagebench/internal/protocol"
)

// ending is what follows from a run's end, decided from its status alone.
type ending struct {
	// final is the final order, written to the plan ConfigMap unless it
	// already holds one: it tells runners still waiting to stop, and
	// records the end, from which status is rebuilt (project).
	final protocol.StepOrder
	// suspendJobs stops the client pods of a failed run (their Jobs are
	// kept for their logs).
	suspendJobs bool
	// deleteJobs releases the claims after a complete run.
	deleteJobs bool
	// deleteClaims follows cleanup.volumes.
	deleteClaims bool
	// deleteAt is when the benchmark goes (ttlSecondsAfterFinished); zero
	// when it stays.
	deleteAt time.Time
}

// endingOf decides what follows from b's end.
func endingOf(b *v1alpha1.StorageBenchmark) ending {
	e := ending{final: protocol.StepOrder{Index: len(b.Status.Steps), Done: true, Reason: b.Status.StopReason}}
	if t := b.Status.CompletionTime; t != nil {
		e.final.EndedAt = t.Time
	}
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed)
	failed := c != nil && c.Status == metav1.ConditionTrue
	if failed {
		e.final.Reason, e.final.Failure = c.Message, c.Reason
		e.suspendJobs = true
	}
	if b.Spec.Cleanup.Volumes != v1alpha1.VolumesRetain {
		// An ended pod still holds its claims (pvc-protection), so after a
		// complete run the client Jobs go first; after a failed one they
		// stay for their logs and the claims go with them.
		// On an existing claim nothing is released, and the runners remove
		// their files before they exit: their Jobs stay until then.
		e.deleteJobs = !failed && b.Spec.Storage.ExistingClaim == nil
		e.deleteClaims = true
	}
	if ttl := b.Spec.Cleanup.TTLSecondsAfterFinished; ttl != nil && b.Status.CompletionTime != nil {
		e.deleteAt = b.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	}
	return e
}

// finish carries out what follows from the run's end (endingOf),
// idempotently on every reconcile once the ended status is persisted.
func (r *Reconciler) finish(ctx context.Context, b *v1alpha1.StorageBenchmark, now time.Time) (ctrl.Result, error) {
	e := endingOf(b)
	plan, err := r.plan(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	// What status timed of the storage and the record lacks (an attach
	// over the pods that got that far before the end, or a summary the
	// manager stopped before recording) is recorded now, and the record
	// marks the end even when nothing was timed; a stale plan records
	// nothing, and its event brings the pass that does. A record that
	// cannot be written holds nothing else up: the run's end goes on.
	if _, err := r.recordStorageTimes(ctx, plan, storageTimesOf(plan), timesOf(b.Status.Storage), true); client.IgnoreNotFound(err) != nil {
		log.FromContext(ctx).Info("Could not record the storage's control-plane times on the plan ConfigMap", "error", err.Error())
	}
	if o, ordered, _ := orderOf(plan); plan != nil && (!ordered || !o.Done) {
		if err := r.writeOrder(ctx, plan, e.final, nil, nil); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	jobs, err := r.ownedJobs(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	if e.suspendJobs {
		if err := r.suspendJobs(ctx, jobs); err != nil {
			return ctrl.Result{}, err
		}
	}
	// What lost clients' finished steps wrote is read back before
	// anything removes their files or claims.
	if wait, again, err := r.finishLostVerify(ctx, b, plan); wait {
		return ctrl.Result{RequeueAfter: again}, err
	}
	if needsCleanup(b) {
		// The run's files on the application's claim go first; then
		// nothing of the benchmark holds the claim: the cleanup Job goes,
		// and after a complete run the clients' too.
		rec, again, err := r.cleanUp(ctx, b, plan)
		if err != nil || rec == nil {
			return ctrl.Result{RequeueAfter: again}, err
		}
		var job batchv1.Job
		err = r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: CleanupName(b.Name)}, &job)
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		if err == nil {
			if err := r.deleteOwned(ctx, b, &job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				return ctrl.Result{}, err
			}
		}
		e.deleteJobs = !e.suspendJobs
	}
	if e.deleteJobs {
		for _, j := range jobs {
			if err := r.deleteOwned(ctx, b, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if e.deleteClaims {
		if err := r.deleteClaims(ctx, b); err != nil {
			return ctrl.Result{}, err
		}
	}
	if e.deleteAt.IsZero() {
		return ctrl.Result{}, nil
	}
	if now.Before(e.deleteAt) {
		return ctrl.Result{RequeueAfter: e.deleteAt.Sub(now)}, nil
	}
	log.FromContext(ctx).Info("Deleting finished benchmark after its TTL", "ttlSeconds", *b.Spec.Cleanup.TTLSecondsAfterFinished)
	uid := b.UID
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, b, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid}))
}

// deleteClaims deletes the claims b created, and only those: the cache
// holds labelled claims, and deleteOwned checks the UID.
func (r *Reconciler) deleteClaims(ctx context.Context, b *v1alpha1.StorageBenchmark) error {
	for _, pvc := range buildClaims(b) {
		var cur corev1.PersistentVolumeClaim
		if err := r.Get(ctx, client.ObjectKeyFromObject(pvc), &cur); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if err := r.deleteOwned(ctx, b, &cur); err != nil {
			return err
		}
	}
	return nil
}

// ownedJobs lists b's client Jobs: labelled, and controlled by b.
func (r *Reconciler) ownedJobs(ctx context.Context, b *v1alpha1.StorageBenchmark) ([]*batchv1.Job, error) {
	var list batchv1.JobList
	if err := r.List(ctx, &list, client.InNamespace(b.Namespace),
		clientLabels(b)); err != nil {
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
