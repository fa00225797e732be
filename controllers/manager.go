package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Clock is a time source for the manager (ManagerOptions.Clock).
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Wait is how long to wait in real time for d to pass on this clock.
	Wait(d time.Duration) time.Duration
}

// DefaultWorkers is the default ManagerOptions.Workers: reconciles wait
// mostly on the API server, so a few run well on one core.
const DefaultWorkers = 4

// ControllerOptions are both controllers' options: Workers at once, fed
// namespace by namespace.
func ControllerOptions(workers int) controller.Options {
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

// Setup registers the benchmark reconciler r with mgr: its clients are
// mgr's (and a dynamic client for cfg, unless r has one), its step memo,
// order expectations and result gate new, its time clk's (nil: the real
// clock), and workers benchmarks are reconciled at once. A nil r.RunKey
// becomes a key of this process alone (EphemeralRunKey).
func Setup(mgr ctrl.Manager, cfg *rest.Config, r Reconciler, clk Clock, workers int) (*Reconciler, error) {
	r.Client, r.APIReader, r.Cache = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache()
	if clk != nil {
		r.Now, r.wait = clk.Now, clk.Wait
	}
	r.steps = &stepMemo{}
	r.orders = &orderExpectations{}
	r.results = &resultGate{}
	r.since = r.now()
	if r.Dynamic == nil {
		var err error
		if r.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, err
		}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("storagebench")
	}
	r.workers = workers
	if r.RunKey == nil {
		r.RunKey = EphemeralRunKey()
	}
	return &r, r.SetupWithManager(mgr)
}
