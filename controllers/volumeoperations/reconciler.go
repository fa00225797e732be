package volumeoperations

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/trident"
	"github.com/storagebench/storagebench/internal/volops"
)

// Options are the manager's settings for the pods operation attach makes.
type Options struct {
	// Image is the client image (its sleep keeps the pod running).
	Image           string
	ImagePullPolicy corev1.PullPolicy
	// MaxRunning is how many operations benchmarks may run at once in the
	// manager's scope, one per StorageClass at most (volops.Admit); 0 is
	// volops.DefaultMaxRunning.
	MaxRunning int
}

// Reconciler runs VolumeOperationsBenchmarks.
type Reconciler struct {
	client.Client
	// APIReader reads what the cache does not hold (VolumeSnapshots go
	// through Watchers.dynamic).
	APIReader client.Reader
	Watchers  Watchers
	Recorder  record.EventRecorder
	// Clock is the manager's time; nil is the real clock.
	Clock   clock.PassiveClock
	Options Options
	Workers int

	mu     sync.Mutex
	timers map[types.NamespacedName]*timer
	// admitMu makes a start's admission and its status write one step;
	// started holds the runs this manager started that the cache may not
	// show started yet.
	admitMu sync.Mutex
	started map[types.UID]volops.Run
	wake    chan event.TypedGenericEvent[*v1alpha1.VolumeOperationsBenchmark]
	// running is the manager's lifetime: the timers' watches end with it.
	running context.Context
}

// maxAttempts bounds the starts of one operation step: each restart of the
// manager while it timed loses the timings.
const maxAttempts = 3

// parallelRequests bounds the requests sent at once: a step's objects are
// requested together, each timed from its own request.
const parallelRequests = 16

// cacheLag is how long clearing waits, at least, before it takes "nothing
// left" in the cache for the truth.
const cacheLag = time.Second

// queueRetry is how often a queued benchmark asks again whether it may
// start.
const queueRetry = 5 * time.Second

// prepareRetry is how often a preparing or clearing step looks again when
// nothing it watches wakes it (snapshots and volumes are not cached).
const prepareRetry = time.Second

// +kubebuilder:rbac:groups=storagebench.io,resources=volumeoperationsbenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=storagebench.io,resources=volumeoperationsbenchmarks/status,verbs=update
// +kubebuilder:rbac:groups=storagebench.io,resources=volumeoperationsbenchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshotclasses,verbs=get

// SetupWithManager registers the reconciler: its benchmarks, their claims
// and pods (by label), and the timers' wake-ups.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.timers = map[types.NamespacedName]*timer{}
	r.started = map[types.UID]volops.Run{}
	r.wake = make(chan event.TypedGenericEvent[*v1alpha1.VolumeOperationsBenchmark], 64)
	running, stop := context.WithCancel(context.Background())
	r.running = running
	// The timers' watches run beside the reconciles; they end when the
	// manager stops, with everything else it runs.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		stop()
		return nil
	})); err != nil {
		stop()
		return err
	}
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[LabelBenchmark]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.VolumeOperationsBenchmark{}).
		Watches(&corev1.PersistentVolumeClaim{}, byLabel).
		Watches(&corev1.Pod{}, byLabel).
		WatchesRawSource(source.Channel(r.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.VolumeOperationsBenchmark]{})).
		Named("volumeoperationsbenchmark").
		WithOptions(controllers.ControllerOptions(r.Workers)).
		Complete(r)
}

func (r *Reconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

func (r *Reconciler) clock() clock.PassiveClock {
	if r.Clock != nil {
		return r.Clock
	}
	return clock.RealClock{}
}

// Reconcile moves a benchmark through its operation steps: start, then
// for each, Preparing → Timing → Clearing, then the verdicts.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1alpha1.VolumeOperationsBenchmark
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName, "")
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if b.DeletionTimestamp != nil || ended(&b) {
		// The garbage collector deletes what it made (owner references).
		r.forget(req.NamespacedName, "")
		return ctrl.Result{}, nil
	}
	r.forget(req.NamespacedName, b.UID) // a timer of an earlier benchmark of that name
	if b.Status.Current == nil {
		return r.start(ctx, &b)
	}
	ph, ok := phaseOf(&b, int(b.Status.Current.Index))
	if !ok {
		return r.fail(ctx, &b, "InvalidState", fmt.Sprintf("status.current.index %d is not an operation step of this benchmark", b.Status.Current.Index))
	}
	switch b.Status.Current.Stage {
	case v1alpha1.StagePreparing:
		return r.prepare(ctx, &b, ph)
	case v1alpha1.StageTiming:
		return r.timing(ctx, &b, ph)
	default:
		return r.clear(ctx, &b, ph)
	}
}

// ended: the run is Complete or Failed.
func ended(b *v1alpha1.VolumeOperationsBenchmark) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && (c.Reason == ReasonComplete || c.Status == metav1.ConditionFalse && c.Reason != ReasonRunning && c.Reason != ReasonQueued)
}

// The Ready condition's reasons besides the failures'.
const (
	ReasonQueued   = "Queued"
	ReasonRunning  = "Running"
	ReasonComplete = "Complete"
)

// forget stops and drops the timer of key, unless it belongs to keep.
func (r *Reconciler) forget(key types.NamespacedName, keep types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timers[key]; t != nil && (keep == "" || t.key.uid != keep) {
		t.stop()
		delete(r.timers, key)
	}
}

// start checks what the run needs of the cluster and begins the first
// operation step. What cannot work ends the run at once, with a reason.
func (r *Reconciler) start(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark) (ctrl.Result, error) {
	reason, msg, err := r.check(ctx, b)
	if err != nil { // the API server did not answer: ask again
		return ctrl.Result{}, err
	}
	if reason != "" {
		return r.fail(ctx, b, reason, msg)
	}
	r.admitMu.Lock()
	defer r.admitMu.Unlock()
	ok, why, err := r.admit(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		msg := "waiting to start: " + why
		if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != ReasonQueued || c.Message != msg {
			setReady(b, metav1.ConditionFalse, ReasonQueued, msg)
			b.Status.Progress = msg
			if err := r.Status().Update(ctx, b); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: queueRetry}, nil
	}
	var sc storagev1.StorageClass
	if err := r.Get(ctx, client.ObjectKey{Name: b.Spec.Storage.StorageClassName}, &sc); err == nil {
		b.Status.Provisioner = sc.Provisioner
		b.Status.Notes = notesOf(&sc, b.Spec.Operations)
	}
	now := metav1.NewTime(r.now())
	b.Status.StartTime = &now
	b.Status.ObservedGeneration = b.Generation
	r.enter(b, 0, v1alpha1.StagePreparing, 1)
	setReady(b, metav1.ConditionFalse, ReasonRunning, "timing the storage's operations")
	if err := r.Status().Update(ctx, b); err != nil {
		return ctrl.Result{}, err
	}
	r.started[b.UID] = runOf(b, true)
	for _, n := range b.Status.Notes {
		r.Recorder.Event(b, corev1.EventTypeNormal, n.Reason, n.Message)
	}
	return ctrl.Result{}, nil
}

// notesOf are the facts of sc's driver a reader of the curves of ops must
// know (trident.OperationNotes).
func notesOf(sc *storagev1.StorageClass, ops []v1alpha1.VolumeOperation) []v1alpha1.OperationNote {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = string(op)
	}
	var out []v1alpha1.OperationNote
	for _, n := range trident.OperationNotes(sc.Provisioner, sc.Parameters, names) {
		note := v1alpha1.OperationNote{Reason: n.Reason, Message: n.Message}
		for _, op := range n.Operations {
			note.Operations = append(note.Operations, v1alpha1.VolumeOperation(op))
		}
		out = append(out, note)
	}
	return out
}

// admit says whether b may start now beside the operations benchmarks of
// the manager's scope (volops.Admit), and if not, what it waits for.
func (r *Reconciler) admit(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark) (bool, string, error) {
	var all v1alpha1.VolumeOperationsBenchmarkList
	if err := r.List(ctx, &all); err != nil {
		return false, "", err
	}
	seen := map[types.UID]bool{}
	var others []volops.Run
	for i := range all.Items {
		o := &all.Items[i]
		seen[o.UID] = true
		if o.UID == b.UID || ended(o) {
			delete(r.started, o.UID)
			continue
		}
		run := runOf(o, o.Status.StartTime != nil)
		if _, ok := r.started[o.UID]; ok {
			if run.Running {
				delete(r.started, o.UID) // the cache has caught up
			}
			run.Running = true
		}
		others = append(others, run)
	}
	for uid := range r.started {
		if !seen[uid] { // deleted
			delete(r.started, uid)
		}
	}
	ok, why := volops.Admit(runOf(b, false), others, cmp.Or(r.Options.MaxRunning, volops.DefaultMaxRunning))
	return ok, why, nil
}

// runOf is b as the queue sees it.
func runOf(b *v1alpha1.VolumeOperationsBenchmark, running bool) volops.Run {
	return volops.Run{Namespace: b.Namespace, Name: b.Name, Class: b.Spec.Storage.StorageClassName, Created: b.CreationTimestamp.Time, Running: running}
}

// check is what start refuses: a plan the core rejects, a class that
// cannot serve the operations; err when the API server could not say.
func (r *Reconciler) check(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark) (reason, message string, err error) {
	if err := planOf(b).Validate(); err != nil {
		return "InvalidSpec", err.Error(), nil
	}
	if has := slices.Contains(b.Spec.Operations, v1alpha1.OperationExpand); has && (b.Spec.Storage.ExpandTo == nil || b.Spec.Storage.ExpandTo.Cmp(sizeOf(b)) <= 0) {
		return "InvalidSpec", "operation expand needs storage.expandTo larger than storage.size", nil
	}
	for _, o := range objectivesOf(b) {
		if err := volops.ValidateObjective(o); err != nil {
			return "InvalidSpec", err.Error(), nil
		}
	}
	var sc storagev1.StorageClass
	if err := r.Get(ctx, client.ObjectKey{Name: b.Spec.Storage.StorageClassName}, &sc); err != nil {
		if apierrors.IsNotFound(err) {
			return "StorageClassNotFound", fmt.Sprintf("StorageClass %s does not exist", b.Spec.Storage.StorageClassName), nil
		}
		return "", "", err
	}
	has := func(op v1alpha1.VolumeOperation) bool {
		for _, o := range b.Spec.Operations {
			if o == op {
				return true
			}
		}
		return false
	}
	if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		for _, op := range b.Spec.Operations {
			if op != v1alpha1.OperationAttach {
				return "WaitForFirstConsumer", fmt.Sprintf("StorageClass %s binds a claim only when a pod uses it (volumeBindingMode WaitForFirstConsumer), so operation %s cannot be timed on its own: use a class that binds Immediately, or time attach alone", sc.Name, op), nil
			}
		}
	}
	if sc.ReclaimPolicy != nil && *sc.ReclaimPolicy == corev1.PersistentVolumeReclaimRetain {
		return "ReclaimPolicyRetain", fmt.Sprintf("StorageClass %s retains volumes (reclaimPolicy Retain): every claim the run deletes would leave its volume behind", sc.Name), nil
	}
	if has(v1alpha1.OperationExpand) && !ptr.Deref(sc.AllowVolumeExpansion, false) {
		return "ExpansionNotAllowed", fmt.Sprintf("StorageClass %s does not allow volume expansion (allowVolumeExpansion)", sc.Name), nil
	}
	if has(v1alpha1.OperationSnapshot) || has(v1alpha1.OperationCloneFromSnapshot) {
		name := ptr.Deref(b.Spec.Storage.VolumeSnapshotClassName, "")
		vsc, err := r.Watchers.dynamic.Resource(snapshotClassGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return "VolumeSnapshotClassNotFound", fmt.Sprintf("VolumeSnapshotClass %s does not exist (or the cluster has no snapshot CRDs)", name), nil
		case err != nil:
			return "", "", err
		}
		if driver, _, _ := unstructured.NestedString(vsc.Object, "driver"); driver != sc.Provisioner {
			return "VolumeSnapshotClassMismatch", fmt.Sprintf("VolumeSnapshotClass %s is for driver %q, StorageClass %s's provisioner is %q", name, driver, sc.Name, sc.Provisioner), nil
		}
		if policy, _, _ := unstructured.NestedString(vsc.Object, "deletionPolicy"); policy == "Retain" {
			return "SnapshotDeletionPolicyRetain", fmt.Sprintf("VolumeSnapshotClass %s retains snapshots (deletionPolicy Retain): every snapshot the run deletes would leave its content behind", name), nil
		}
	}
	return "", "", nil
}

// enter puts b in operation step p's stage.
func (r *Reconciler) enter(b *v1alpha1.VolumeOperationsBenchmark, p int, stage v1alpha1.OperationStage, attempt int32) {
	ph, _ := phaseOf(b, p)
	var volumes []string
	if cur := b.Status.Current; cur != nil && cur.Index == int32(p) {
		volumes = cur.Volumes // the step's volumes stay noted until it is cleared
	}
	b.Status.Current = &v1alpha1.OperationsCurrent{Index: int32(p), Operation: ph.op, Concurrency: int32(ph.concurrency),
		Stage: stage, Since: metav1.NewTime(r.now()), Attempt: attempt, Volumes: volumes}
	b.Status.Progress = fmt.Sprintf("step %d of %d (%d at once): %s", ph.step+1, len(b.Spec.Concurrency), ph.concurrency, ph.op)
}

// timeout is one operation's bound.
func timeout(b *v1alpha1.VolumeOperationsBenchmark) time.Duration {
	if b.Spec.OperationTimeout != nil {
		return b.Spec.OperationTimeout.Duration
	}
	return 5 * time.Minute
}

// fail ends the run with reason.
func (r *Reconciler) fail(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, reason, message string) (ctrl.Result, error) {
	r.forget(client.ObjectKeyFromObject(b), "")
	if cur := b.Status.Current; cur != nil {
		// What the step made goes now, best effort; the garbage collector
		// takes the rest with the benchmark.
		if ph, ok := phaseOf(b, int(cur.Index)); ok {
			_, _ = r.deleteAll(ctx, b, ph)
		}
	}
	now := metav1.NewTime(r.now())
	b.Status.CompletionTime = &now
	b.Status.Progress = ""
	setReady(b, metav1.ConditionFalse, reason, message)
	if r.Recorder != nil {
		r.Recorder.Event(b, corev1.EventTypeWarning, reason, message)
	}
	return ctrl.Result{}, r.Status().Update(ctx, b)
}

func setReady(b *v1alpha1.VolumeOperationsBenchmark, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: status,
		Reason: reason, Message: clip(message), ObservedGeneration: b.Generation})
}

// errNotReady says a preparation is still under way.
var errNotReady = errors.New("not ready")

// prepare makes what ph's operation starts from and waits for it; when
// it is there, it starts the timing.
func (r *Reconciler) prepare(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) (ctrl.Result, error) {
	pvs, err := r.prepared(ctx, b, ph)
	if err != nil {
		var conflict *conflictError
		switch {
		case errors.As(err, &conflict):
			return r.fail(ctx, b, "NameConflict", err.Error())
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || errors.As(err, new(*refusedError)):
			// Refused for good (quota, admission, the class's rules): the
			// step's operations fail, the run goes on.
			return r.record(ctx, b, ph, failedAll(ph, b.Status.Current.Since.Time, r.now(), "preparing: "+err.Error()))
		case r.now().Sub(b.Status.Current.Since.Time) > timeout(b):
			return r.record(ctx, b, ph, failedAll(ph, b.Status.Current.Since.Time, r.now(), fmt.Sprintf("not prepared after %s: %v", timeout(b), err)))
		}
		if !errors.Is(err, errNotReady) {
			log.FromContext(ctx).Error(err, "preparing an operation step")
		}
		// Not ready yet, or a transient error: again soon, so that the
		// step's deadline is kept.
		return ctrl.Result{RequeueAfter: prepareRetry}, nil
	}
	// Timing from here: said in status first, so that a manager that
	// restarts finds the step's timings lost rather than never started.
	attempt := b.Status.Current.Attempt
	r.enter(b, int(b.Status.Current.Index), v1alpha1.StageTiming, attempt)
	if ph.op == v1alpha1.OperationDelete {
		// Their claims are deleted now: clearing waits for these.
		b.Status.Current.Volumes = slices.DeleteFunc(slices.Clone(pvs), func(pv string) bool { return pv == "" })
	}
	if err := r.Status().Update(ctx, b); err != nil {
		return ctrl.Result{}, err
	}
	key := client.ObjectKeyFromObject(b)
	bc := b.DeepCopy()
	t := newTimer(timerKey{uid: b.UID, index: b.Status.Current.Index, attempt: attempt}, ph.op, ph.concurrency, timeout(b), r.clock(),
		func() {
			select { // a stopped manager reads no more wake-ups
			case r.wake <- event.TypedGenericEvent[*v1alpha1.VolumeOperationsBenchmark]{Object: bc.DeepCopy()}:
			case <-r.running.Done():
			}
		})
	if b.Spec.Storage.ExpandTo != nil {
		t.expand = *b.Spec.Storage.ExpandTo
	}
	tctx := t.within(r.running) // before the timer is shared: forget may stop it at once
	r.mu.Lock()
	r.timers[key] = t
	r.mu.Unlock()
	// The watch's start and the requests run beside the reconciles: a slow
	// API server holds up this step alone, not a worker.
	go func() {
		if err := t.run(tctx, r.Watchers, bc, ph, pvs); err != nil {
			t.failAll(err.Error())
			return
		}
		r.requestAll(tctx, bc, ph, t)
	}()
	return ctrl.Result{RequeueAfter: timeout(b) + watchSync}, nil
}

// failedAll is a step in which no operation could be started.
func failedAll(ph phase, start, end time.Time, reason string) []volops.Sample {
	out := make([]volops.Sample, ph.concurrency)
	for i := range out {
		out[i] = volops.Sample{Operation: volops.Operation(ph.op), Concurrency: ph.concurrency, Index: i,
			Start: start, End: end, Outcome: volops.Failed, Reason: clip(reason)}
	}
	return out
}

// timing waits for the step's timer; with every object done or past its
// deadline, it records the step.
func (r *Reconciler) timing(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) (ctrl.Result, error) {
	cur := b.Status.Current
	r.mu.Lock()
	t := r.timers[client.ObjectKeyFromObject(b)]
	r.mu.Unlock()
	if t == nil || t.key != (timerKey{uid: b.UID, index: cur.Index, attempt: cur.Attempt}) {
		// The manager restarted while timing: the timings are gone. Clear
		// the step and run it again.
		if cur.Attempt >= maxAttempts {
			return r.fail(ctx, b, "TimingsLost", fmt.Sprintf("the %s step at %d was started %d times and its timings were lost each time (the manager restarted while it ran)", ph.op, ph.concurrency, cur.Attempt))
		}
		r.enter(b, int(cur.Index), v1alpha1.StageClearing, cur.Attempt)
		return ctrl.Result{}, r.Status().Update(ctx, b)
	}
	samples, wait := t.samples(ph.concurrency)
	if samples == nil {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return r.record(ctx, b, ph, samples)
}

// record adds ph's samples to status and clears the step.
func (r *Reconciler) record(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, samples []volops.Sample) (ctrl.Result, error) {
	if err := recordStep(b, ph, samples); err != nil {
		return r.fail(ctx, b, "InvalidTimings", err.Error())
	}
	cur := b.Status.Current
	r.enter(b, int(cur.Index), v1alpha1.StageClearing, cur.Attempt)
	b.Status.Current.Recorded = true
	if err := r.Status().Update(ctx, b); err != nil {
		return ctrl.Result{}, err // the timer keeps its samples for the next pass
	}
	r.forget(client.ObjectKeyFromObject(b), "")
	return ctrl.Result{}, nil
}

// clear deletes what ph made and waits until it is gone, volumes
// included; then the next step (or the same again, when its timings were
// lost), or the end.
func (r *Reconciler) clear(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) (ctrl.Result, error) {
	cur := b.Status.Current
	left, err := r.deleteAll(ctx, b, ph)
	if err != nil && !errors.Is(err, errVolumesNoted) {
		left = err.Error()
	}
	if left != "" && r.now().Sub(cur.Since.Time) > 2*timeout(b) {
		return r.fail(ctx, b, "ClearingTimedOut", fmt.Sprintf("the %s step's objects were not gone %s after their deletion: %s", ph.op, 2*timeout(b), left))
	}
	switch {
	case errors.Is(err, errVolumesNoted):
		return ctrl.Result{}, r.Status().Update(ctx, b)
	case err != nil:
		log.FromContext(ctx).Error(err, "clearing an operation step")
		return ctrl.Result{RequeueAfter: prepareRetry}, nil
	case left != "":
		return ctrl.Result{RequeueAfter: prepareRetry}, nil
	case r.now().Sub(cur.Since.Time) < cacheLag:
		// A claim created just before (a preparation cut short) may not be
		// in the cache yet: look again once it would be.
		return ctrl.Result{RequeueAfter: cacheLag - r.now().Sub(cur.Since.Time)}, nil
	}
	switch {
	case !cur.Recorded:
		r.enter(b, int(cur.Index), v1alpha1.StagePreparing, cur.Attempt+1)
	case int(cur.Index)+1 < phases(b):
		r.enter(b, int(cur.Index)+1, v1alpha1.StagePreparing, 1)
	default:
		r.complete(b)
	}
	return ctrl.Result{}, r.Status().Update(ctx, b)
}

// complete ends the run with its verdicts.
func (r *Reconciler) complete(b *v1alpha1.VolumeOperationsBenchmark) {
	now := metav1.NewTime(r.now())
	b.Status.Current, b.Status.Progress, b.Status.CompletionTime = nil, "", &now
	judge(b)
	setReady(b, metav1.ConditionTrue, ReasonComplete, fmt.Sprintf("%d operation steps timed", phases(b)))
	if r.Recorder != nil {
		r.Recorder.Event(b, corev1.EventTypeNormal, ReasonComplete, "every operation step timed")
	}
}

// requestAll sends ph's n requests, parallelRequests at a time, each
// timed from the instant before it is sent.
func (r *Reconciler) requestAll(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, t *timer) {
	var g errgroup.Group
	g.SetLimit(parallelRequests)
	for i := range ph.concurrency {
		g.Go(func() error {
			t.request(i)
			if err := r.request(ctx, b, ph, i); err != nil {
				t.refuse(i, err)
			}
			return nil
		})
	}
	_ = g.Wait() // every error is recorded on its object
}

// request is object i's timed operation.
func (r *Reconciler) request(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, i int) error {
	name := timedName(b, ph, i)
	switch ph.op {
	case v1alpha1.OperationProvision:
		return r.Create(ctx, claimOf(b, ph, name, i, nil))
	case v1alpha1.OperationCloneFromVolume:
		return r.Create(ctx, claimOf(b, ph, name, i, &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: sourceName(b, ph)}))
	case v1alpha1.OperationCloneFromSnapshot:
		return r.Create(ctx, claimOf(b, ph, name, i, &corev1.TypedLocalObjectReference{APIGroup: ptr.To(snapshotGVR.Group), Kind: "VolumeSnapshot", Name: sourceName(b, ph)}))
	case v1alpha1.OperationSnapshot:
		_, err := r.Watchers.dynamic.Resource(snapshotGVR).Namespace(b.Namespace).Create(ctx, snapshotOf(b, ph, name, i, name), metav1.CreateOptions{})
		return err
	case v1alpha1.OperationAttach:
		return r.Create(ctx, podOf(b, ph, name, i, name, r.Options))
	case v1alpha1.OperationExpand, v1alpha1.OperationDelete:
		var c corev1.PersistentVolumeClaim
		if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &c); err != nil {
			return err
		}
		if !metav1.IsControlledBy(&c, b) {
			return &conflictError{kind: "PersistentVolumeClaim", name: name}
		}
		if ph.op == v1alpha1.OperationDelete {
			return r.Delete(ctx, &c, client.Preconditions{UID: &c.UID})
		}
		// A JSON patch that tests the UID: never another claim of that name.
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"replace","path":"/spec/resources/requests/storage","value":%q}]`,
			c.UID, b.Spec.Storage.ExpandTo.String())
		return r.Patch(ctx, &c, client.RawPatch(types.JSONPatchType, []byte(patch)))
	}
	return fmt.Errorf("unknown operation %q", ph.op)
}
