package volumeoperations

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/volops"
)

// timerKey names one attempt at one operation step of one benchmark.
type timerKey struct {
	uid     types.UID
	index   int32
	attempt int32
}

// timer times the n objects of one operation step. Its watch runs from
// before the first request to the step's end, and records, on the
// manager's clock, the instant each object is seen done (or failed). The
// reconciler records the instant before each request (requested); for
// attach, the timing starts when the watch sees the pod scheduled.
type timer struct {
	key     timerKey
	op      v1alpha1.VolumeOperation
	timeout time.Duration
	clock   clock.PassiveClock
	expand  resource.Quantity // expand's target
	done    func()            // called once, when every object is done or failed

	mu        sync.Mutex
	requested []time.Time // the instant before each request; zero: not sent
	start     []time.Time // the timing's start (requested, or attach's scheduling)
	end       []time.Time // seen done or failed
	reason    []string    // why failed; for one still waiting, the last error seen
	failed    []bool
	notified  bool

	cancel context.CancelFunc
}

func newTimer(key timerKey, op v1alpha1.VolumeOperation, n int, timeout time.Duration, clk clock.PassiveClock, done func()) *timer {
	return &timer{key: key, op: op, timeout: timeout, clock: clk, done: done,
		requested: make([]time.Time, n), start: make([]time.Time, n), end: make([]time.Time, n),
		reason: make([]string, n), failed: make([]bool, n), cancel: func() {}}
}

// within gives t a context of its own under parent, which stop cancels.
func (t *timer) within(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	t.cancel = cancel
	return ctx
}

// request records that object i's operation is about to be requested.
func (t *timer) request(i int) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requested[i] = now
	if t.op != v1alpha1.OperationAttach {
		t.start[i] = now
	}
}

// refuse records that object i's request was refused: it failed.
func (t *timer) refuse(i int, err error) {
	t.finish(i, true, fmt.Sprintf("request refused: %v", err))
}

// started records that object i's timing starts now (attach: the pod was
// seen scheduled), unless it started already.
func (t *timer) started(i int) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= 0 && i < len(t.start) && !t.requested[i].IsZero() && t.start[i].IsZero() {
		t.start[i] = now
	}
}

// failAll fails every object not done yet with reason (the step could
// not be timed), once.
func (t *timer) failAll(reason string) {
	now := t.clock.Now()
	t.mu.Lock()
	for i := range t.requested {
		if t.requested[i].IsZero() {
			t.requested[i] = now
		}
	}
	t.mu.Unlock()
	for i := range t.requested {
		t.finish(i, true, reason)
	}
}

// finish records object i done (failed: with reason) now, once.
func (t *timer) finish(i int, failed bool, reason string) {
	now := t.clock.Now()
	t.mu.Lock()
	// Not requested yet: what the watch lists before the request (a
	// prepared claim already as large as expand asks) is no transition;
	// the request's own change shows it again.
	if i < 0 || i >= len(t.end) || !t.end[i].IsZero() || t.requested[i].IsZero() {
		t.mu.Unlock()
		return
	}
	if t.start[i].IsZero() { // done before it was seen to start
		t.start[i] = now
	}
	t.end[i], t.failed[i] = now, failed
	if failed || reason != "" {
		t.reason[i] = clip(reason)
	}
	notify := !t.notified && t.allDone()
	t.notified = t.notified || notify
	t.mu.Unlock()
	if notify && t.done != nil {
		t.done()
	}
}

// note keeps the last error seen on object i while it is still waiting.
func (t *timer) note(i int, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= 0 && i < len(t.end) && t.end[i].IsZero() {
		t.reason[i] = clip(reason)
	}
}

func (t *timer) allDone() bool {
	for _, e := range t.end {
		if e.IsZero() {
			return false
		}
	}
	return true
}

// samples are the step's samples when every object is done, failed or past
// its deadline (the timeout from its request); otherwise nil and how long
// until the next deadline.
func (t *timer) samples(concurrency int) ([]volops.Sample, time.Duration) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]volops.Sample, len(t.end))
	var wait time.Duration
	for i := range t.end {
		s := volops.Sample{Operation: volops.Operation(t.op), Concurrency: concurrency, Index: i, Start: t.start[i], End: t.end[i]}
		switch {
		case !t.end[i].IsZero() && t.failed[i]:
			s.Outcome, s.Reason = volops.Failed, t.reason[i]
		case !t.end[i].IsZero():
			s.Outcome = volops.Succeeded
		case t.requested[i].IsZero(): // its request is still to be sent
			wait = max(wait, notYetRequested)
			continue
		default:
			deadline := t.requested[i].Add(t.timeout)
			if now.Before(deadline) {
				if w := deadline.Sub(now); wait == 0 || w < wait {
					wait = w
				}
				continue
			}
			if s.Start.IsZero() {
				s.Start = t.requested[i]
			}
			s.End, s.Outcome = now, volops.TimedOut
			s.Reason = fmt.Sprintf("not done after %s", t.timeout)
			if t.reason[i] != "" {
				s.Reason += ": " + t.reason[i]
			}
		}
		out[i] = s
	}
	if wait > 0 {
		return nil, max(wait, time.Millisecond)
	}
	return out, 0
}

func (t *timer) stop() { t.cancel() }

// notYetRequested is how soon samples asks again about an object whose
// request is still to be sent.
const notYetRequested = time.Second

// maxReason bounds a reason kept (and shown in status).
const maxReason = 512

func clip(s string) string {
	if len(s) > maxReason {
		return s[:maxReason]
	}
	return s
}

// watchSync bounds the wait for a timer's watch to list what exists.
const watchSync = 30 * time.Second

// Watchers are the clients the timers watch with, and VolumeSnapshots
// are read and written with (they are not in the manager's cache).
type Watchers struct {
	kube    kubernetes.Interface
	dynamic dynamic.Interface
}

// NewWatchers makes the Watchers of cfg.
func NewWatchers(cfg *rest.Config) (Watchers, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Watchers{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Watchers{}, err
	}
	return Watchers{kube: kube, dynamic: dyn}, nil
}

// run starts t's watch of b's objects in ph and waits until it has listed
// them, so that no transition after a request can be missed. pvs are the
// volumes whose deletion operation delete times (by index).
//
// ctx is the timer's own (newTimer): stop ends its watch whenever it is
// called, before run or during it.
func (t *timer) run(ctx context.Context, w Watchers, b *v1alpha1.VolumeOperationsBenchmark, ph phase, pvs []string) error {
	cancel := t.cancel
	selector := labels.SelectorFromSet(labels.Set{LabelBenchmark: b.Name, LabelPhase: ph.label(), LabelTimed: "true"}).String()
	var informers []toolscache.SharedIndexInformer
	switch ph.op {
	case v1alpha1.OperationDelete:
		for i, pv := range pvs {
			lw := toolscache.NewFilteredListWatchFromClient(w.kube.CoreV1().RESTClient(), "persistentvolumes", metav1.NamespaceAll,
				func(o *metav1.ListOptions) {
					o.FieldSelector = fields.OneTermEqualSelector("metadata.name", pv).String()
				})
			inf := toolscache.NewSharedIndexInformer(lw, &corev1.PersistentVolume{}, 0, toolscache.Indexers{})
			if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				DeleteFunc: func(any) { t.finish(i, false, "") },
			}); err != nil {
				cancel()
				return err
			}
			informers = append(informers, inf)
		}
	case v1alpha1.OperationAttach:
		lw := toolscache.NewFilteredListWatchFromClient(w.kube.CoreV1().RESTClient(), "pods", b.Namespace,
			func(o *metav1.ListOptions) { o.LabelSelector = selector })
		informers = append(informers, t.informer(b, ph, lw, &corev1.Pod{}, t.pod))
	case v1alpha1.OperationSnapshot:
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = selector
				return w.dynamic.Resource(snapshotGVR).Namespace(b.Namespace).List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				return w.dynamic.Resource(snapshotGVR).Namespace(b.Namespace).Watch(ctx, o)
			},
		}
		informers = append(informers, t.informer(b, ph, lw, &unstructured.Unstructured{}, t.snapshot))
	default: // the claims: provision, clones, expand
		lw := toolscache.NewFilteredListWatchFromClient(w.kube.CoreV1().RESTClient(), "persistentvolumeclaims", b.Namespace,
			func(o *metav1.ListOptions) { o.LabelSelector = selector })
		informers = append(informers, t.informer(b, ph, lw, &corev1.PersistentVolumeClaim{}, t.claim))
	}
	synced := make([]toolscache.InformerSynced, len(informers))
	for i, inf := range informers {
		go inf.RunWithContext(ctx)
		synced[i] = inf.HasSynced
	}
	syncCtx, done := context.WithTimeout(ctx, watchSync)
	defer done()
	if !toolscache.WaitForCacheSync(syncCtx.Done(), synced...) {
		cancel()
		return fmt.Errorf("the watch of the %s step's objects did not start within %s", ph.op, watchSync)
	}
	return nil
}

// informer is a watch of one kind whose adds and updates go to seen.
//
// Anyone may label their objects as ours: only an object b controls, under
// the name of the index it claims, counts, and the informer keeps of the
// others their name alone.
func (t *timer) informer(b *v1alpha1.VolumeOperationsBenchmark, ph phase, lw toolscache.ListerWatcher, obj runtime.Object, seen func(int, runtime.Object)) toolscache.SharedIndexInformer {
	inf := toolscache.NewSharedIndexInformer(lw, obj, 0, toolscache.Indexers{})
	ours := func(m metav1.Object) (int, bool) {
		i, err := strconv.Atoi(m.GetLabels()[LabelIndex])
		if err != nil || i < 0 || i >= ph.concurrency || m.GetName() != timedName(b, ph, i) || !metav1.IsControlledBy(m, b) {
			return 0, false
		}
		return i, true
	}
	// The handler's and the transform's registration cannot fail on an
	// informer not yet run.
	_ = inf.SetTransform(func(o any) (any, error) {
		m, ok := o.(metav1.Object)
		if !ok {
			return o, nil
		}
		m.SetManagedFields(nil)
		m.SetAnnotations(nil)
		if _, mine := ours(m); !mine {
			return stub(o), nil
		}
		return o, nil
	})
	on := func(o any) {
		m, ok := o.(metav1.Object)
		if !ok {
			return
		}
		if i, mine := ours(m); mine {
			seen(i, o.(runtime.Object))
		}
	}
	// The handler's registration cannot fail on an informer not yet run.
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    on,
		UpdateFunc: func(_, o any) { on(o) },
	})
	return inf
}

// stub is o's kind with o's identity alone: what an informer keeps of an
// object that is not the benchmark's.
func stub(o any) any {
	m := o.(metav1.Object)
	meta := metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()}
	switch o := o.(type) {
	case *corev1.Pod:
		return &corev1.Pod{ObjectMeta: meta}
	case *corev1.PersistentVolumeClaim:
		return &corev1.PersistentVolumeClaim{ObjectMeta: meta}
	case *unstructured.Unstructured:
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(o.GetAPIVersion())
		u.SetKind(o.GetKind())
		u.SetName(meta.Name)
		u.SetNamespace(meta.Namespace)
		u.SetUID(meta.UID)
		u.SetResourceVersion(meta.ResourceVersion)
		return u
	}
	return o
}

// claim: bound (provision, clones), or grown to the target (expand).
func (t *timer) claim(i int, o runtime.Object) {
	c, ok := o.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	if c.Status.Phase == corev1.ClaimLost {
		t.finish(i, true, "the claim lost its volume")
		return
	}
	if t.op != v1alpha1.OperationExpand {
		if c.Status.Phase == corev1.ClaimBound {
			t.finish(i, false, "")
		}
		return
	}
	if capacity, ok := c.Status.Capacity[corev1.ResourceStorage]; ok && capacity.Cmp(t.expand) >= 0 {
		t.finish(i, false, "")
		return
	}
	for _, cond := range c.Status.Conditions {
		// The storage grew the volume; the file system grows when a pod
		// next mounts it, which expand does not time.
		if cond.Type == corev1.PersistentVolumeClaimFileSystemResizePending && cond.Status == corev1.ConditionTrue {
			t.finish(i, false, "")
			return
		}
	}
	if st, ok := c.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; ok &&
		(st == corev1.PersistentVolumeClaimControllerResizeInfeasible || st == corev1.PersistentVolumeClaimNodeResizeInfeasible) {
		t.finish(i, true, "resize infeasible: "+string(st))
	}
}

// pod: scheduled starts the timing, ready to start containers ends it.
func (t *timer) pod(i int, o runtime.Object) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			t.started(i)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue {
			t.finish(i, false, "")
			return
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		t.finish(i, true, "the pod failed: "+p.Status.Reason+" "+p.Status.Message)
	}
}

// snapshot: ready to use; an error is kept (the snapshotter retries).
func (t *timer) snapshot(i int, o runtime.Object) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if ready, _, _ := unstructured.NestedBool(u.Object, "status", "readyToUse"); ready {
		t.finish(i, false, "")
		return
	}
	if msg, found, _ := unstructured.NestedString(u.Object, "status", "error", "message"); found && msg != "" {
		t.note(i, msg)
	}
}
