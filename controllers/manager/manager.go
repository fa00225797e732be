// Package manager builds the operator's controller-runtime manager: the
// cache, the metrics and health endpoints, and the two reconcilers, the
// benchmarks' (package controllers) and the schedules'
// (controllers/benchmarkschedule), sharing one run key, clock and worker
// count. cmd/manager and the test harnesses build it here.
package manager

import (
	"crypto/tls"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/benchmarkschedule"
	"github.com/storagebench/storagebench/controllers/volumeoperations"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
)

// Options configure New (cmd/manager maps its flags here).
type Options struct {
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
	Reconciler controllers.Reconciler
	// ScheduleClock is the schedule controller's clock (tests inject a
	// fake one); nil is the real clock.
	ScheduleClock clock.PassiveClock
	// Restartable allows a new manager in the same process after the
	// previous one stopped (tests of a manager restart); controller names
	// are otherwise unique per process.
	Restartable bool
	// RunKey signs the runs schedules create (controllers.LoadRunKey reads it from its
	// Secret); nil: a key of this process alone, so a restarted manager
	// would not recognise the runs it created.
	RunKey *controllers.RunKey
	// Clock is the manager's time: what its reconcilers take for now, and
	// how long they wait; nil is the real clock. Test hook: the soak
	// (test/soak) runs the manager on a simulated clock that runs faster
	// than the real one.
	Clock controllers.Clock
	// Workers is how many benchmarks (and schedules) are reconciled at
	// once (default controllers.DefaultWorkers). Requests leave the work queue
	// namespace by namespace in turn (controllers/queue.go), so one busy tenant
	// cannot hold the workers from another's steps.
	Workers int
	// MaxRunningOperations is how many VolumeOperationsBenchmarks may run
	// at once (0: volops.DefaultMaxRunning).
	MaxRunningOperations int
}

// passiveClock is a Clock as k8s.io/utils/clock's PassiveClock.
type passiveClock struct{ controllers.Clock }

func (c passiveClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// realWait is the real clock's Wait.
func realWait(d time.Duration) time.Duration { return d }

// New builds the operator's manager with both reconcilers registered: the
// benchmarks' (controllers) and the schedules' (benchmarkschedule). Only
// objects labelled as the operator's are cached, and of those only what
// the reconcilers need (controllers/cache.go).
func New(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	metrics := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.SecureMetrics}
	if o.SecureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if !o.HTTP2 {
		metrics.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Metrics:                metrics,
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         o.LeaderElection,
		LeaderElectionID:       "storagebench.io",
		Cache:                  controllers.CacheOptions(o.Namespaces),
		// ConfigMaps are never read whole through the cache: the informer
		// holds their metadata only (controllers/cache.go), and data is
		// read on demand, so a tenant's large ConfigMaps never reach
		// memory.
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}}}},
		Controller: config.Controller{SkipNameValidation: &o.Restartable},
	})
	if err != nil {
		return nil, err
	}
	wait := realWait
	if o.Clock != nil {
		wait = o.Clock.Wait
		if o.ScheduleClock == nil {
			o.ScheduleClock = passiveClock{o.Clock}
		}
	}
	if o.RunKey == nil {
		o.RunKey = controllers.EphemeralRunKey()
	}
	r := o.Reconciler
	r.RunKey = o.RunKey
	br, err := controllers.Setup(mgr, cfg, r, o.Clock, o.Workers)
	if err != nil {
		return nil, err
	}
	sr := &benchmarkschedule.Reconciler{Client: mgr.GetClient(), Recorder: br.Recorder, Clock: o.ScheduleClock, Key: o.RunKey, Workers: o.Workers, Wait: wait}
	if err := sr.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	w, err := volumeoperations.NewWatchers(cfg)
	if err != nil {
		return nil, err
	}
	// The operations are timed on the manager's clock (not the schedules',
	// which tests move by hand).
	var opsClock clock.PassiveClock
	if o.Clock != nil {
		opsClock = passiveClock{o.Clock}
	}
	vr := &volumeoperations.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Watchers: w,
		Recorder: br.Recorder, Clock: opsClock, Workers: o.Workers,
		Options: volumeoperations.Options{Image: r.Jobs.Image, ImagePullPolicy: r.Jobs.ImagePullPolicy, MaxRunning: o.MaxRunningOperations}}
	if err := vr.SetupWithManager(mgr); err != nil {
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
