// Package controllers holds the StorageBenchmark reconciler (and the
// StorageBenchmarkSchedule reconciler, schedule.go). It observes the
// benchmark's children, decides with the pure core (internal/plan,
// internal/results, internal/analysis) and applies; docs/operator.md
// describes the objects and the lockstep protocol.
package controllers

import (
	"context"
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/protocol"
)

// Reconciler runs StorageBenchmarks.
type Reconciler struct {
	client.Client
	// APIReader reads objects the cache does not hold (an existing claim,
	// ConfigMaps' data).
	APIReader client.Reader
	// Cache reads the cache directly. The client reads ConfigMaps live
	// (the cache holds none whole), and that setting applies to their
	// metadata too, so ConfigMaps' metadata is read through Cache.
	Cache    client.Reader
	Recorder record.EventRecorder
	Jobs     JobOptions
	// ClaimBindTimeout bounds how long a claim may stay unbound (default
	// 5 min).
	ClaimBindTimeout time.Duration
	// ReadyTimeout bounds how long after creation every client must be
	// prepared: scheduling, image pulls, layout and preconditioning
	// (default 30 min).
	ReadyTimeout time.Duration
	// StartLead is how far ahead the first step's start instant is set, so
	// every client sees the order in time (default 3 s).
	StartLead time.Duration
	// NextStepLead is the same for the steps after the first, when every
	// client is idle and already watching the plan (default 1 s): it is
	// paid once per step, so it bounds the run's overhead.
	NextStepLead time.Duration
	// ResultGrace is how long after a step's end its results may take to
	// arrive (default 2 min).
	ResultGrace time.Duration
	// Dynamic reads Trident's custom resources, which may not exist.
	Dynamic dynamic.Interface
	// TridentNamespace is where Trident's custom resources live (default
	// "trident").
	TridentNamespace string
	// Policy bounds what a benchmark's pod-shaped fields may ask for
	// (image, tolerations, node selector): creating a benchmark creates
	// pods, so the cluster admin decides what they may be.
	Policy policy.Policy
	// RunKey tells the runs schedules created from benchmarks made to look
	// like them (provenance.go); nil: an ephemeral key.
	RunKey *RunKey
	// Backend is the metrics source ended runs' steps are joined with
	// what the storage reported (backend.go); nil: none.
	Backend *BackendMetrics
	// Now is the clock (tests may override).
	Now func() time.Time
	// steps remembers decoded step ConfigMaps (steps.go); without it
	// (tests without a manager) every reconcile decodes them.
	steps *stepMemo
	// orders remembers the orders written until the cache shows them
	// (expect.go); nil: no waiting for the cache.
	orders *orderExpectations
	// results holds back the passes a step's results would queue while
	// others are still out (resultgate.go); nil: every result queues one.
	results *resultGate
	// workers is ManagerOptions.Workers.
	workers int
	// wait turns a duration on the clock (Now) into a real one
	// (ManagerOptions.Clock); nil: the same.
	wait func(time.Duration) time.Duration
	// since is when this manager started: transitions a status rebuilt
	// from the children dates before it were reported by an earlier one
	// (events.go). Zero without a manager: every transition is new.
	since time.Time
}

// The manager's permissions are exactly what this package calls, and
// docs/security.md says why each is needed. Children are deleted by the
// garbage collector or one by one with a UID precondition: no
// deletecollection, and nothing the operator does not create.
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarks,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarks/status,verbs=update
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=list;watch

// Reconcile observes one benchmark's children, advances its run and writes
// its status once, only when it changed. Events follow a successful status
// write, so a conflict never repeats them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1alpha1.StorageBenchmark
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			r.steps.forget(req.NamespacedName)
			r.orders.forget(req.NamespacedName)
			r.results.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		// Children are owned: the garbage collector removes them, once
		// the files on an existing claim are removed (cleanup.go).
		if controllerutil.ContainsFinalizer(&b, FinalizerCleanup) {
			again, err := r.finalize(ctx, &b)
			return ctrl.Result{RequeueAfter: again}, err
		}
		return ctrl.Result{}, nil
	}
	if err := r.addCleanupFinalizer(ctx, &b); err != nil {
		return ctrl.Result{}, err
	}
	old := b.DeepCopy()
	res, err := r.reconcile(ctx, &b)
	if !equality.Semantic.DeepEqual(old.Status, b.Status) {
		if uerr := r.Status().Update(ctx, &b); uerr != nil {
			return ctrl.Result{}, errors.Join(err, uerr)
		}
		r.emitEvents(old, &b)
		countRuns(old, &b, r.since) // metrics
	}
	// An error returned here is counted by controller-runtime's
	// controller_runtime_reconcile_errors_total{controller="storagebenchmark"}.
	return RealRequeue(res, r.wait), err
}

// RealRequeue turns a requeue on the manager's clock into a real one.
func RealRequeue(res ctrl.Result, wait func(time.Duration) time.Duration) ctrl.Result {
	if wait != nil && res.RequeueAfter > 0 {
		res.RequeueAfter = max(wait(res.RequeueAfter), time.Millisecond)
	}
	return res
}

// metadata is where ConfigMaps' metadata is read: the cache (Cache), or in
// tests without a manager the client.
func (r *Reconciler) metadata() client.Reader {
	if r.Cache != nil {
		return r.Cache
	}
	return r.Client
}

func (r *Reconciler) runKey() *RunKey {
	if r.RunKey == nil {
		r.RunKey = EphemeralRunKey()
	}
	return r.RunKey
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// timeouts are the run settings with their defaults, in one place.
func (r *Reconciler) timeouts() timeouts {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	return timeouts{
		ClaimBind:    or(r.ClaimBindTimeout, 5*time.Minute),
		Ready:        or(r.ReadyTimeout, protocol.DefaultReadyTimeout),
		StartLead:    or(r.StartLead, protocol.DefaultStartLead),
		NextStepLead: or(r.NextStepLead, protocol.DefaultNextStepLead),
		ResultGrace:  or(r.ResultGrace, protocol.DefaultResultGrace),
		Since:        r.since,
	}
}

// SetupWithManager registers the reconciler: it owns its children, and
// watches claims by label (retained claims have no owner).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[exchange.LabelBenchmark]
		if name == "" || o.GetLabels()[exchange.LabelManagedBy] != exchange.ManagedBy {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	})
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeField, podNode); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.StorageBenchmark{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.ConfigMap{}, gatedConfigMaps{gate: r.results, EventHandler: handler.EnqueueRequestForOwner(
			mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.StorageBenchmark{}, handler.OnlyControllerOwner())},
			builder.OnlyMetadata).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&corev1.PersistentVolumeClaim{}, byLabel).
		Watches(&corev1.Pod{}, byLabel).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.benchmarksOnNode), builder.WithPredicates(nodeReadyChanged())).
		Named("storagebenchmark").
		WithOptions(ControllerOptions(r.workers)).
		Complete(r)
}

// podNodeField indexes the cached client pods by their node (podNode).
const podNodeField = "spec.nodeName"

func podNode(o client.Object) []string {
	if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
		return []string{n}
	}
	return nil
}

// benchmarksOnNode maps a Node to the benchmarks with a client pod on it.
func (r *Reconciler) benchmarksOnNode(ctx context.Context, o client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{podNodeField: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	seen := map[client.ObjectKey]bool{}
	var reqs []reconcile.Request
	for _, p := range pods.Items {
		key := client.ObjectKey{Namespace: p.Namespace, Name: p.Labels[exchange.LabelBenchmark]}
		if key.Name == "" || p.Labels[exchange.LabelRole] != exchange.RoleClient || seen[key] {
			continue
		}
		seen[key] = true
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}

// nodeReadyChanged passes a Node's creation, deletion and the updates that
// change whether it is Ready or takes pods; nothing else of a Node matters.
func nodeReadyChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		return !ok1 || !ok2 || nodeReady(o) != nodeReady(n) || o.Spec.Unschedulable != n.Spec.Unschedulable
	}}
}
