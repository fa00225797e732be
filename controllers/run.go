package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/runner"
)

// reconcile advances the run by at most one protocol step and records what
// it observed in b.Status. A run that ends here is only marked so: what
// follows from its end (the done order, suspending clients, cleanup) runs
// in finish once the API server holds the ended status, so a lost status
// write can never leave a done order behind a run that status says goes on.
func (r *Reconciler) reconcile(ctx context.Context, b *v1alpha1.StorageBenchmark) (ctrl.Result, error) {
	now := r.now()
	b.Status.ObservedGeneration = b.Generation
	if finished(b) {
		return r.finish(ctx, b, now)
	}
	d, err := desiredOf(b)
	if err != nil {
		return fail(b, now, ReasonInvalidSpec, err.Error())
	}
	b.Status.ClientsTotal = b.Spec.Clients.Count
	b.Status.StepsPlanned = int32(d.StepsPlanned)
	b.Status.Progress = progress(len(b.Status.Steps), d.StepsPlanned)
	w := d.Workload
	b.Status.Workload = &v1alpha1.ResolvedWorkload{BlockSizeBytes: w.BlockSizeBytes, ReadPercent: w.ReadPercent, Pattern: string(w.Pattern),
		IODepth: w.IODepth, IOEngine: string(w.IOEngine), Direct: w.Direct, WorkingSetBytesPerClient: w.WorkingSetBytesPerClient,
		CompressPercent: w.CompressPercent}

	sc, missing, err := r.storageClass(ctx, b)
	if err != nil {
		return endOn(b, now, err)
	}
	if missing != nil {
		return fail(b, now, missing.reason, missing.message)
	}
	if err := r.Policy.Check(&b.Spec, r.Jobs.Image); err != nil {
		return fail(b, now, ReasonForbiddenByPolicy, err.Error())
	}
	refusal, warnings := preflight(b, sc)
	if refusal != nil {
		return fail(b, now, ReasonUnsupportedStorage, refusal.Message)
	}
	setStorageWarning(b, warnings)
	if err := r.ensureChildren(ctx, b, &d); err != nil {
		return endOn(b, now, err)
	}
	obs, err := r.observe(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	storage := storageStatus(b, sc, obs)
	if err := r.describeStorage(ctx, b, sc, obs, storage); err != nil {
		return ctrl.Result{}, err
	}
	// The ready reports (mounts, clock offsets) are read once, when every
	// client is ready: a ready client's report does not change, and reading
	// them as clients become ready one by one would cost N²/2 reads.
	old, total := b.Status.Storage, int32(len(obs.clients))
	if readyCount(obs) == total && (old == nil || b.Status.ClientsReady < total) {
		if err := r.readReadyReports(ctx, b, obs, storage); err != nil {
			return endOn(b, now, err)
		}
	} else if old != nil {
		storage.Mounts = old.DeepCopy().Mounts
	}
	b.Status.Storage = storage
	if reason, msg, retry := r.failure(ctx, b, obs, now); reason != "" {
		return fail(b, now, reason, msg)
	} else if err := r.conduct(ctx, b, &d, obs, now); err != nil {
		return endOn(b, now, err)
	} else if finished(b) {
		return ctrl.Result{}, nil // finish follows the status write
	} else if err := analyze(b, &d, false); err != nil {
		return ctrl.Result{}, err
	} else {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
}

// fail marks the run failed with reason; finish follows the status write.
func fail(b *v1alpha1.StorageBenchmark, now time.Time, reason, msg string) (ctrl.Result, error) {
	setFailed(b, now, reason, msg)
	return ctrl.Result{}, nil
}

// endOn ends the run on an error that retrying cannot mend (a name held by
// somebody else's object, a refused create, invalid client data); other
// errors are returned for a retry with backoff.
func endOn(b *v1alpha1.StorageBenchmark, now time.Time, err error) (ctrl.Result, error) {
	var conflict *ConflictError
	var refused *RefusedError
	var lost *LostError
	var wait *WaitError
	switch {
	case errors.As(err, &wait):
		setProgressing(b, ReasonPreparing, err.Error())
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	case errors.As(err, &conflict):
		return fail(b, now, ReasonNameConflict, err.Error())
	case errors.As(err, &lost):
		return fail(b, now, ReasonExchangeLost, err.Error())
	case errors.As(err, &refused):
		return fail(b, now, ReasonCreateRefused, err.Error())
	case errors.Is(err, exchange.ErrInvalidClientData):
		return fail(b, now, ReasonInvalidResult, err.Error())
	}
	return ctrl.Result{}, err
}

func storageStatus(b *v1alpha1.StorageBenchmark, sc *storagev1.StorageClass, obs *observed) *v1alpha1.StorageStatus {
	s := &v1alpha1.StorageStatus{Claims: int32(len(obs.claims)), ClaimsBound: int32(obs.bound), Capacity: obs.capacity,
		VolumeMode: string(b.Spec.Storage.VolumeMode), AccessMode: string(accessModeOf(b))}
	if sc != nil {
		s.StorageClassName, s.Provisioner = sc.Name, sc.Provisioner
	}
	return s
}

// failure checks the children for a reason to end the run, and otherwise
// says when the next deadline falls (for a timed re-check).
func (r *Reconciler) failure(ctx context.Context, b *v1alpha1.StorageBenchmark, obs *observed, now time.Time) (reason, msg string, retry time.Duration) {
	created := b.CreationTimestamp.Time
	bindDeadline := created.Add(r.claimBindTimeout())
	for name, pvc := range obs.claims {
		if pvc != nil && pvc.Status.Phase == corev1.ClaimBound {
			continue
		}
		if now.After(bindDeadline) {
			return ReasonClaimNotBound, fmt.Sprintf("claim %s is not bound %s after the benchmark was created (StorageClass %s): check the provisioner and the claim's events",
				name, r.claimBindTimeout(), ptrOr(b.Spec.Storage.StorageClassName, "default")), 0
		}
		retry = bindDeadline.Sub(now)
	}
	for i, cm := range obs.clients {
		if cm != nil && exchange.ReadinessOf(cm) == exchange.ReadyError {
			return ReasonClientFailed, fmt.Sprintf("client %d could not prepare: %s", i, r.readyError(ctx, b, i)), 0
		}
	}
	if reason, msg := clockFailure(b, r.startLead()); reason != "" {
		return reason, msg, 0
	}
	order, ordered, _ := orderOf(obs)
	for i, job := range obs.jobs {
		if job == nil {
			continue
		}
		if jobCondition(job, batchv1.JobFailed) || jobCondition(job, batchv1.JobFailureTarget) {
			return clientGone(i, obs, "failed")
		}
		if jobCondition(job, batchv1.JobComplete) && (!ordered || !order.Done) {
			return clientGone(i, obs, "exited before the run ended")
		}
	}
	if int(readyCount(obs)) < len(obs.clients) {
		deadline := created.Add(r.readyTimeout())
		if now.After(deadline) {
			return ReasonClientsNotReady, fmt.Sprintf("%d of %d clients were not ready %s after the benchmark was created (scheduling, image pull, layout and preconditioning): check the client pods",
				len(obs.clients)-int(readyCount(obs)), len(obs.clients), r.readyTimeout()), 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	if ordered && !order.Done && order.Index == len(b.Status.Steps) {
		deadline := stepEnd(order).Add(r.resultGrace())
		if now.After(deadline) {
			return ReasonStepTimedOut, fmt.Sprintf("step %d: %d of %d clients did not report a result by %s", order.Index+1,
				len(obs.clients)-resultsFor(obs, order.Index), len(obs.clients), deadline.UTC().Format(time.RFC3339)), 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	return "", "", retry
}

// clientGone explains a client Job that ended: fio's or the runner's error
// when its pod failed on its own, otherwise the pod was deleted or lost.
func clientGone(i int, obs *observed, what string) (string, string, time.Duration) {
	for _, p := range obs.pods[i] {
		if p.DeletionTimestamp != nil {
			continue // deleted: its exit says nothing about the storage
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				msg := strings.TrimSpace(t.Message)
				if msg == "" {
					msg = t.Reason
				}
				return ReasonClientFailed, fmt.Sprintf("client %d (pod %s) failed with exit code %d: %s", i, p.Name, t.ExitCode, msg), 0
			}
		}
	}
	return ReasonClientLost, fmt.Sprintf("client %d's pod %s: it was deleted or lost before the run ended; the run is not resumed with a new client, whose fresh layout would change what the storage caches (see docs/operator.md)", i, what), 0
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func readyCount(obs *observed) int32 {
	var n int32
	for _, cm := range obs.clients {
		if cm != nil && exchange.ReadinessOf(cm) == exchange.Ready {
			n++
		}
	}
	return n
}

func resultsFor(obs *observed, step int) int {
	n := 0
	for _, cm := range obs.clients {
		if cm != nil && exchange.ResultStep(cm) == step {
			n++
		}
	}
	return n
}

// conduct is the lockstep protocol, one transition per reconcile:
// all ready → order step 0; step k's results all in → record step k;
// step k recorded → order step k+1 (or done).
func (r *Reconciler) conduct(ctx context.Context, b *v1alpha1.StorageBenchmark, d *desired, obs *observed, now time.Time) error {
	b.Status.ClientsReady = readyCount(obs)
	if int(b.Status.ClientsReady) < len(obs.clients) || obs.plan == nil {
		setProgressing(b, ReasonPreparing, fmt.Sprintf("%d/%d claims bound, %d/%d clients ready",
			obs.bound, len(obs.claims), b.Status.ClientsReady, len(obs.clients)))
		return nil
	}
	order, ordered, err := orderOf(obs)
	if err != nil {
		return err
	}
	n := len(b.Status.Steps)
	switch {
	case ordered && order.Done:
		setComplete(b, now, order.Reason)
		return analyze(b, d, true)
	case ordered && order.Index == n:
		return r.collect(ctx, b, obs, order)
	case !ordered && n == 0, ordered && order.Index == n-1:
		return r.orderNext(ctx, b, d, obs, now)
	default:
		return fmt.Errorf("order for step %d does not follow the %d recorded steps", order.Index, n)
	}
}

// collect records step order.Index once every client's result is in.
func (r *Reconciler) collect(ctx context.Context, b *v1alpha1.StorageBenchmark, obs *observed, order runner.StepOrder) error {
	k := order.Index
	b.Status.CurrentStep = ptrTo(int32(k))
	got := resultsFor(obs, k)
	// The message leaves out how many results are in: a status write per
	// client result would double the API writes of a step.
	setProgressing(b, ReasonRunning, fmt.Sprintf("step %d/%d running", k+1, b.Status.StepsPlanned))
	if got < len(obs.clients) {
		return nil
	}
	// One client's result at a time: decoded, validated, merged, dropped.
	merged := results.NewMerger(k)
	err := r.eachClientData(ctx, b, func(i int) bool { return obs.clients[i] != nil }, func(_ int, cm *corev1.ConfigMap) error {
		res, _, err := exchange.Result(cm)
		if err != nil {
			return err
		}
		if err := merged.Add(res); err != nil {
			return fmt.Errorf("%w: ConfigMap %s: %w", exchange.ErrInvalidClientData, cm.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	agg := merged.Result()
	name := exchange.StepName(b.Name, k)
	if err := r.writeStep(ctx, b, name, agg); err != nil {
		return err
	}
	b.Status.Steps = append(b.Status.Steps, stepStatus(order, agg, name))
	b.Status.Progress = progress(len(b.Status.Steps), int(b.Status.StepsPlanned))
	if len(agg.Errors) > 0 {
		setFailed(b, r.now(), ReasonClientFailed, fmt.Sprintf("step %d: %s", k+1, strings.Join(b.Status.Steps[k].Errors, "; ")))
	} else if agg.Interrupted {
		setFailed(b, r.now(), ReasonClientLost, fmt.Sprintf("step %d was interrupted: a client was stopped mid-step (its partial result is recorded)", k+1))
	}
	return nil
}

// writeStep stores a step's merged result, histograms included, in its own
// ConfigMap (rewritten if a previous attempt's status write failed).
func (r *Reconciler) writeStep(ctx context.Context, b *v1alpha1.StorageBenchmark, name string, agg results.StepAggregate) error {
	value, err := exchange.Encode(agg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta(b, name, exchange.RoleStep), Data: map[string]string{exchange.KeyAggregate: value}}
	if err := r.ensure(ctx, b, cm, true); err != nil {
		return err
	}
	var cur corev1.ConfigMap // a live read: the cache holds no data
	if err := r.Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !ownedBy(&cur, b) { // replaced since ensure saw it
		return conflict(&cur, "ConfigMap")
	}
	if cur.Data[exchange.KeyAggregate] != value {
		cur.Data = cm.Data
		return r.Update(ctx, &cur)
	}
	return nil
}

// orderNext decides the step after the recorded ones from their results
// and writes its order (or the final done order). The update carries the
// plan ConfigMap's resourceVersion: a stale cache cannot order twice.
func (r *Reconciler) orderNext(ctx context.Context, b *v1alpha1.StorageBenchmark, d *desired, obs *observed, now time.Time) error {
	n := len(b.Status.Steps)
	step, stop, err := plan.Next(d.Load, outcomes(b.Status.Steps))
	if err == nil && step != nil {
		_, err = plan.Divide(*step, d.Topology, d.Workload)
	}
	var order runner.StepOrder
	switch {
	case err != nil:
		setFailed(b, now, ReasonInvalidPlan, fmt.Sprintf("planning step %d: %s", n+1, err))
		return nil // finish writes the done order
	case step == nil:
		order = runner.StepOrder{Index: n, Done: true, Reason: stop.Message}
	default:
		lead := r.startLead()
		if n > 0 {
			lead = r.nextStepLead()
		}
		order = runner.StepOrder{Index: n, StartAt: now.Add(lead).Truncate(time.Millisecond), Step: *step,
			Duration: d.Load.StepDuration, Ramp: d.Load.RampTime}
	}
	if err := r.writeOrder(ctx, obs.plan, order); err != nil {
		return err
	}
	if order.Done {
		setComplete(b, now, order.Reason)
		return analyze(b, d, true)
	}
	if b.Status.StartTime == nil {
		b.Status.StartTime = &metav1.Time{Time: order.StartAt}
	}
	b.Status.CurrentStep = ptrTo(int32(n))
	setProgressing(b, ReasonRunning, fmt.Sprintf("step %d/%d starts at %s", n+1, d.StepsPlanned, order.StartAt.UTC().Format(time.RFC3339)))
	return nil
}

func ptrOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
