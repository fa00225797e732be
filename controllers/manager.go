package controllers

import (
	"crypto/tls"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/storagebench/storagebench/api/v1alpha1"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
)

// ManagerOptions configure NewManager (cmd/manager maps its flags here).
type ManagerOptions struct {
	// MetricsAddr is the metrics endpoint's address; "0" disables it.
	MetricsAddr string
	// SecureMetrics serves metrics over HTTPS, authenticating and
	// authorizing each request against the API server.
	SecureMetrics bool
	// HTTP2 allows HTTP/2 on the metrics server.
	HTTP2 bool
	// ProbeAddr serves /healthz and /readyz; "0" disables it.
	ProbeAddr string
	// LeaderElection lets several replicas run one active manager.
	LeaderElection bool
	// Namespaces limits the watch; empty means all namespaces.
	Namespaces []string
	// Reconciler carries the run settings; its clients are filled in.
	Reconciler Reconciler
	// ScheduleClock is the schedule controller's clock (tests inject a
	// fake one); nil is the real clock.
	ScheduleClock clock.PassiveClock
	// Restartable allows a new manager in the same process after the
	// previous one stopped (tests of a manager restart); controller names
	// are otherwise unique per process.
	Restartable bool
	// RunKey signs the runs schedules create (LoadRunKey reads it from its
	// Secret); nil: a key of this process alone, so a restarted manager
	// would not recognise the runs it created.
	RunKey *RunKey
	// Clock is the manager's time: what its reconcilers take for now, and
	// how long they wait; nil is the real clock. Test hook: the soak
	// (test/soak) runs the manager on a simulated clock that runs faster
	// than the real one.
	Clock Clock
	// Workers is how many benchmarks (and schedules) are reconciled at
	// once (default DefaultWorkers). Requests leave the work queue
	// namespace by namespace in turn (queue.go), so one busy tenant
	// cannot hold the workers from another's steps.
	Workers int
}

// Clock is a time source for the manager (ManagerOptions.Clock).
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Wait is how long to wait in real time for d to pass on this clock.
	Wait(d time.Duration) time.Duration
}

// passiveClock is a Clock as k8s.io/utils/clock's PassiveClock.
type passiveClock struct{ Clock }

func (c passiveClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// realWait is the real clock's Wait.
func realWait(d time.Duration) time.Duration { return d }

// DefaultWorkers is the default ManagerOptions.Workers: reconciles wait
// mostly on the API server, so a few run well on one core.
const DefaultWorkers = 4

// controllerOptions are both controllers' options: Workers at once, fed
// namespace by namespace.
func controllerOptions(workers int) controller.Options {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	return controller.Options{MaxConcurrentReconciles: workers, NewQueue: newFairRateLimitingQueue}
}

// Scheme returns the scheme the manager uses.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// NewManager builds the operator's manager with the reconciler registered.
// Only objects labelled as the operator's are cached, and of those only what
// the reconciler needs (cache.go).
func NewManager(cfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	metrics := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.SecureMetrics}
	if o.SecureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if !o.HTTP2 {
		metrics.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	cacheOpts := cacheOptions(o.Namespaces)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Metrics:                metrics,
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         o.LeaderElection,
		LeaderElectionID:       "storagebench.io",
		Cache:                  cacheOpts,
		// ConfigMaps are never read whole through the cache: the informer
		// holds their metadata only (cache.go), and data is read on
		// demand, so a tenant's large ConfigMaps never reach memory.
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}}}},
		Controller: config.Controller{SkipNameValidation: &o.Restartable},
	})
	if err != nil {
		return nil, err
	}
	r := o.Reconciler
	r.Client, r.APIReader, r.Cache = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache()
	wait := realWait
	if o.Clock != nil {
		r.Now, wait = o.Clock.Now, o.Clock.Wait
		if o.ScheduleClock == nil {
			o.ScheduleClock = passiveClock{o.Clock}
		}
	}
	r.wait = wait
	r.steps = &stepMemo{}
	r.orders = &orderExpectations{}
	r.since = r.now()
	if r.Dynamic == nil {
		if r.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, err
		}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("storagebench")
	}
	r.workers = o.Workers
	if o.RunKey == nil {
		o.RunKey = ephemeralRunKey()
	}
	r.RunKey = o.RunKey
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	sr := &ScheduleReconciler{Client: mgr.GetClient(), Recorder: r.Recorder, Clock: o.ScheduleClock, Key: o.RunKey, workers: o.Workers, wait: wait}
	if err := sr.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// metrics: the benchmarks' series, read from the cache at scrape time
	// (docs/metrics.md); replaces a previous manager's collector.
	if err := sbmetrics.Register(crmetrics.Registry, &sbmetrics.Collector{Reader: mgr.GetCache()}); err != nil {
		return nil, err
	}
	if o.ProbeAddr != "0" && o.ProbeAddr != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}
