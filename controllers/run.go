package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// reconcile runs one pass over a benchmark: observe its children, decide
// with the core's rules, apply. The run is over once its status or its
// plan ConfigMap's final order says so (runState); an ended run only
// has its record kept current and what follows from its end carried out
// (finish). A running one is admitted, its children created and observed,
// and moved on (advance). Every phase that ends the run goes through fail
// (or endOn), the single failure exit, which only marks the status: finish
// follows once the API server holds it.
func (r *Reconciler) reconcile(ctx context.Context, b *v1alpha1.StorageBenchmark) (ctrl.Result, error) {
	now := r.now()
	b.Status.ObservedGeneration = b.Generation
	d, specErr := spec.Of(b)
	st, err := r.runState(ctx, b)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case specErr != nil && st.finished, st.finished && !st.ended:
		r.orders.forget(client.ObjectKeyFromObject(b))
		r.results.forget(client.ObjectKeyFromObject(b))
		return r.finish(ctx, b, now) // the end is in status alone: write it out
	case specErr != nil:
		return fail(b, now, ReasonInvalidSpec, specErr.Error())
	case st.ended:
		return r.reconcileEnded(ctx, b, &d, st, now)
	case st.garbled != nil:
		return fail(b, now, ReasonExchangeLost, st.garbled.Error())
	case r.orders.behind(b, st.ordered, st.order.Index, st.order.Done, now):
		// The cache has not seen this manager's last order: the plan
		// ConfigMap's event wakes the pass that acts on it.
		return ctrl.Result{RequeueAfter: expectationTimeout}, nil
	}
	return r.reconcileRunning(ctx, b, &d, now)
}

// runState is whether, and where, the run is over: status says so once a
// phase ended it (finished), the plan ConfigMap's final order once finish
// wrote it out (ended). An order that cannot be read (garbled) ends a run
// that status does not already call over.
type runState struct {
	plan *metav1.PartialObjectMetadata
	// order is the plan ConfigMap's order, if ordered; the final one when
	// ended.
	order    protocol.StepOrder
	ordered  bool
	finished bool
	ended    bool
	garbled  *garbledOrderError
}

func (r *Reconciler) runState(ctx context.Context, b *v1alpha1.StorageBenchmark) (runState, error) {
	st := runState{finished: finished(b)}
	var err error
	if st.plan, err = r.plan(ctx, b); err != nil || st.plan == nil {
		return st, err
	}
	// An order annotation that cannot be read is invalid data (it ends
	// the run), never a reason to retry for ever.
	if st.order, st.ordered, err = orderOf(st.plan); err != nil {
		st.garbled = &garbledOrderError{name: st.plan.Name, err: err}
		return st, nil
	}
	st.ended = st.ordered && st.order.Done
	return st, nil
}

// reconcileEnded keeps an ended run's record: its status, once it says how
// the run ended, is not rebuilt, and its step records are neither read nor
// remembered (a manager with a long history costs what its running
// benchmarks cost); a status that was wiped, or written before the run
// ended, is rebuilt from the children. What follows from the end runs in
// finish.
func (r *Reconciler) reconcileEnded(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, st runState, now time.Time) (ctrl.Result, error) {
	r.steps.forget(client.ObjectKeyFromObject(b))
	r.orders.forget(client.ObjectKeyFromObject(b))
	r.results.forget(client.ObjectKeyFromObject(b))
	current, err := r.endedStatusCurrent(ctx, b, st.plan, st.order, d.StepsPlanned)
	if err != nil {
		return ctrl.Result{}, err
	}
	if current {
		return soonest(r.joinBackend(ctx, b, now))(r.finish(ctx, b, now))
	}
	kids, err := r.readChildren(ctx, b)
	var obs *observed
	if err == nil {
		obs, err = r.observe(ctx, b, kids, d.StepsPlanned, nil)
	}
	if err == nil {
		err = project(b, d, obs)
	}
	if err == nil && b.Status.Storage == nil { // rebuilt: describe what is left
		sc, _, _ := r.storageClass(ctx, b, 0)
		err = r.observeStorage(ctx, b, sc, obs, 0, true)
	}
	if err != nil { // the record of an ended run stays as it is
		return ctrl.Result{}, err
	}
	return soonest(r.joinBackend(ctx, b, now))(r.finish(ctx, b, now))
}

// soonest makes a pass's result come back by after at the latest (0:
// whenever the result says).
func soonest(after time.Duration) func(ctrl.Result, error) (ctrl.Result, error) {
	return func(res ctrl.Result, err error) (ctrl.Result, error) {
		if after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
			res.RequeueAfter = after
		}
		return res, err
	}
}

// reconcileRunning admits a running benchmark and creates what it needs,
// observes its children into status, and moves the run on.
func (r *Reconciler) reconcileRunning(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, now time.Time) (ctrl.Result, error) {
	sc, err := r.admit(ctx, b, d)
	var kids *childLists
	if err == nil {
		kids, err = r.readChildren(ctx, b)
	}
	if err == nil {
		err = r.ensureChildren(ctx, b, d, kids)
	}
	var obs *observed
	if err == nil { // what ensureChildren created shows in a later pass
		obs, err = r.observe(ctx, b, kids, d.StepsPlanned, r.steps)
	}
	if err != nil {
		return endOn(b, now, err)
	}
	wasReady := b.Status.ClientsReady
	if err := project(b, d, obs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observeStorage(ctx, b, sc, obs, wasReady, false); err != nil {
		return endOn(b, now, err)
	}
	res, err := r.advance(ctx, b, d, obs, now)
	if s := b.Status.Storage; s != nil && s.Attach == nil && finished(b) {
		// The run ended before every client's pod was ready to start:
		// attach is over those that were, recorded by finish.
		s.Attach = attachTiming(obs.pods, len(obs.clients), true)
	}
	return res, err
}

// advance carries out the run's decision (decide): a step whose results
// are all in is recorded and the next one ordered in the same pass, one
// pass per step boundary.
func (r *Reconciler) advance(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed, now time.Time) (ctrl.Result, error) {
	t := r.timeouts()
	dec := decide(b, obs, t, now, func(i int) string { return r.readyError(ctx, b, i) })
	switch {
	case dec.End != nil:
		return fail(b, now, dec.End.Reason, dec.End.Message)
	case dec.Act == run.ActEnded: // the final order came after the run's state was read
		return ctrl.Result{}, nil // project marked it: finish follows the status write
	case dec.Progress != "":
		setProgressing(b, dec.Reason, dec.Progress)
		if dec.Act == run.ActWait && r.awaitResults(b, obs, obs.order.Index) {
			// The last result came while this pass ran, and the gate held
			// it: the pass that records the step follows now.
			return ctrl.Result{RequeueAfter: time.Millisecond}, nil
		}
		return ctrl.Result{RequeueAfter: dec.Retry}, nil
	}
	if dec.Act == run.ActCollect {
		if err := r.collect(ctx, b, obs); err != nil {
			return endOn(b, now, err)
		}
		if v := run.StepFailure(obs.steps); v != nil { // recorded, never ordered on from
			if err := project(b, d, obs); err != nil { // status shows the step recorded
				return ctrl.Result{}, err
			}
			return fail(b, now, v.Reason, v.Message)
		}
		now = r.now() // collecting took time: the next start counts from here
	}
	next, orderErr := r.orderNext(ctx, b, d, obs, t, now)
	// Status shows the step recorded, and the order written, before
	// anything can end the run: one projection per pass that orders.
	if err := project(b, d, obs); err != nil {
		return ctrl.Result{}, err
	}
	if orderErr != nil {
		return endOn(b, now, orderErr)
	}
	if finished(b) {
		return ctrl.Result{}, nil // finish follows the status write
	}
	// What the passes that wait for the step's results say too: they write
	// no status of their own.
	setProgressing(b, ReasonRunning, run.RunningMessage(next.Index, b.Status.StepsPlanned))
	return ctrl.Result{RequeueAfter: dec.Retry}, nil
}

// garbledOrderError says the plan ConfigMap's order annotation, which only
// the operator writes, cannot be read: somebody else changed it. The run
// ends on it (finish then writes a final order over it).
type garbledOrderError struct {
	name string
	err  error
}

func (e *garbledOrderError) Error() string {
	return fmt.Sprintf("the order on ConfigMap %s cannot be read, so somebody else changed it, and the run cannot go on: %s", e.name, clip(e.err.Error(), 512))
}

func (e *garbledOrderError) Unwrap() error { return e.err }

// endedStatusCurrent reports whether b's status already says what its
// children say of the ended run: how and when it ended, and every recorded
// step (counted from the step ConfigMaps' metadata, no data read). Such a
// status is final: it is not rebuilt. A status that was wiped, or written
// before the run ended, is.
func (r *Reconciler) endedStatusCurrent(ctx context.Context, b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata, final protocol.StepOrder, planned int) (bool, error) {
	st := &b.Status
	reason := ReasonCompleted
	if final.Failure != "" {
		reason = final.Failure
	}
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionComplete)
	switch {
	case st.CompletionTime == nil, !st.CompletionTime.Equal(Stamp(final.EndedAt)),
		c == nil, c.Reason != reason, int(st.StepsPlanned) != planned, st.Storage == nil, verdictMissing(b, final):
		return false, nil
	}
	if needsCleanup(b) { // its outcome comes after the end
		want := b.DeepCopy()
		setCleanup(want, plan, true)
		if !equality.Semantic.DeepEqual(want.Status.Cleanup, st.Cleanup) {
			return false, nil
		}
	}
	n, err := r.recordedSteps(ctx, b, planned)
	return err == nil && n == len(st.Steps), err
}

// admit finds the storage class and checks that the run may start: the
// class or claim exists (and consented), the pod-shaped fields are within
// the cluster's policy, and the storage is supported.
func (r *Reconciler) admit(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run) (*storagev1.StorageClass, error) {
	sc, missing, err := r.storageClass(ctx, b, d.Workload.WorkingSetBytesPerClient)
	if err != nil {
		return nil, err
	}
	if missing != nil {
		return nil, &verdictError{verdict{Reason: missing.reason, Message: missing.message}}
	}
	if err := r.Policy.Check(&b.Spec, r.Jobs.Image); err != nil {
		return nil, &verdictError{verdict{Reason: ReasonForbiddenByPolicy, Message: err.Error()}}
	}
	if !hasMemoryLimit(b) { // the limit derived from the workload is bounded too
		derived := ptr.Deref(r.jobOptions(b, d).MemoryLimit, resource.Quantity{})
		if err := r.Policy.CheckMemory("the client memory limit the workload needs", derived); err != nil {
			return nil, &verdictError{verdict{Reason: ReasonForbiddenByPolicy, Message: err.Error() + " (or ask for less: workload.ioDepth, blockSize, clients.jobsPerClient)"}}
		}
	}
	refusal, warnings := preflight(b, sc)
	if refusal == nil {
		refusal = r.preflightBackends(ctx, b, sc)
	}
	if refusal != nil {
		return nil, &verdictError{verdict{Reason: ReasonUnsupportedStorage, Message: refusal.Message}}
	}
	setStorageWarning(b, warnings)
	return sc, nil
}

// verdictError carries a verdict through an error return to endOn.
type verdictError struct{ verdict }

func (e *verdictError) Error() string { return e.Message }

// observeStorage records the storage the run uses: the class, the claims
// and, once, the bound volumes and the storage's control-plane times
// (keepStorageTimes; ended: the run is over, so the attach times of the
// pods that got that far); when every client is ready (and was not at the
// last status), the mounts and clock offsets they reported.
func (r *Reconciler) observeStorage(ctx context.Context, b *v1alpha1.StorageBenchmark, sc *storagev1.StorageClass, obs *observed, wasReady int32, ended bool) error {
	storage := storageStatus(b, sc, obs)
	if err := r.describeStorage(ctx, b, sc, obs, storage); err != nil {
		return err
	}
	// The ready reports (mounts, clock offsets) are read once, when every
	// client is ready: a ready client's report does not change, and reading
	// them as clients become ready one by one would cost N²/2 reads.
	old, total := b.Status.Storage, int32(len(obs.clients))
	if total > 0 && readyCount(obs) == total && (old == nil || wasReady < total) {
		if err := r.readReadyReports(ctx, b, obs, storage, r.clocksJudged(obs)); err != nil {
			return err
		}
	} else if old != nil {
		storage.Mounts = old.DeepCopy().Mounts
	}
	r.keepStorageTimes(ctx, old, storage, obs, ended)
	b.Status.Storage = storage
	return nil
}

// clocksJudged is when the clients' clocks were judged: as every client
// became ready, which is the first step's start less its lead, as its
// order records it (or the configured one, for an order from before the
// record); now, before the first step is ordered.
func (r *Reconciler) clocksJudged(obs *observed) time.Time {
	judged := func(o protocol.StepOrder) time.Time {
		return o.StartAt.Add(-cmp.Or(o.Lead, r.timeouts().StartLead)).Truncate(time.Second)
	}
	switch {
	case len(obs.steps) > 0:
		return judged(obs.steps[0].Order)
	case obs.ordered && !obs.order.Done && obs.order.Index == 0:
		return judged(obs.order)
	}
	return r.now().Truncate(time.Second)
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
	var v *verdictError
	var replaced *ReplacedError
	switch {
	case errors.As(err, &v):
		return fail(b, now, v.Reason, v.Message)
	case errors.As(err, &replaced):
		return fail(b, now, ReasonExchangeLost, err.Error())
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

// collect records the ordered step once every client's result is in.
func (r *Reconciler) collect(ctx context.Context, b *v1alpha1.StorageBenchmark, obs *observed) error {
	order := obs.order
	// One client's result at a time: decoded, validated, merged, dropped,
	// into the same storage.
	merged := results.NewMerger(order.Index)
	merged.Running(int(order.Step.ActiveClients)) // a scale-out step's others idle
	var reader exchange.ResultReader
	err := r.eachClientData(ctx, b, func(i int) bool { return obs.clients[i] != nil }, func(_ int, cm *corev1.ConfigMap) error {
		res, found, err := reader.Read(cm)
		if err != nil {
			return err
		}
		if !found { // never merged as a result of zeros
			return fmt.Errorf("%w: ConfigMap %s is marked as holding step %d's result (%s) but holds none", exchange.ErrInvalidClientData,
				cm.Name, order.Index+1, exchange.AnnotationResultStep)
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
	if err := r.writeStep(ctx, b, order, agg); err != nil {
		return err
	}
	obs.steps = append(obs.steps, run.Record(order, agg, exchange.StepName(b.Name, order.Index), spec.SteadyOptionsOf(&b.Spec)).Kept())
	return nil
}

// orderNext writes the orders run.Next decides after the recorded steps
// (the next step, and the one after it ahead), or the final order when the
// plan has no step left, with the verdicts the order makes due
// (verdictsDue) in the same patch. The patch carries the plan ConfigMap's
// resourceVersion: a stale cache cannot order twice. A step the plan
// cannot make fails the run (InvalidPlan).
func (r *Reconciler) orderNext(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed, t timeouts, now time.Time) (protocol.StepOrder, error) {
	var prev *protocol.StepOrder
	if obs.ordered {
		prev = &obs.order
	}
	leads := protocol.Leads{First: t.StartLead, Next: t.NextStepLead}
	if obs.firstLead > 0 {
		// Reading the clients' reports took time: the derived lead counts
		// from the order's write, not from the pass's start.
		leads.First, now = obs.firstLead, r.now()
	}
	next, err := run.Next(d.Spec, obs.steps, prev, now, leads)
	if err != nil {
		return protocol.StepOrder{}, &verdictError{verdict{Reason: ReasonInvalidPlan, Message: err.Error()}}
	}
	order, ahead := next.Order, next.Ahead
	order.Reason = clip(order.Reason, MaxMessage)
	annotations, err := r.verdictsDue(ctx, b, d, obs, order, now)
	if err != nil {
		return protocol.StepOrder{}, err
	}
	if err := r.writeOrder(ctx, obs.plan, order, ahead, annotations); err != nil {
		return protocol.StepOrder{}, err
	}
	r.orders.wrote(b, order.Index, order.Done, now)
	obs.order, obs.ordered = order, true
	return order, nil
}

// spread judges where the clients went, every one of them ready and so
// scheduled. The cluster's nodes are counted only when clients share one.
func (r *Reconciler) spread(ctx context.Context, obs *observed, now time.Time) (run.Verdict, error) {
	schedulable := -1
	if used, placed := clientNodes(obs); len(used) < placed {
		n, err := r.schedulableNodes(ctx)
		if err != nil {
			return run.Verdict{}, err
		}
		schedulable = n
	}
	return spreadOf(obs, schedulable, now.Truncate(time.Second)), nil
}
