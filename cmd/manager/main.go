// Command manager is the storagebench operator: it runs StorageBenchmarks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/manager"
	"github.com/storagebench/storagebench/internal/backend"
	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/volops"
)

func main() {
	var o manager.Options
	var runnerImage, pullPolicy, namespaces string
	var allowedImages, allowedTolerationKeys, allowedNodeSelectorKeys string
	var runKeySecret, runKeyNamespace, maxClientMemory string
	r := &o.Reconciler
	serveFlags(&o)
	flag.StringVar(&namespaces, "watch-namespaces", "", "comma-separated namespaces to watch; empty watches all")
	flag.StringVar(&runnerImage, "runner-image", controllers.DefaultRunnerImage, "default client image (runner and fio)")
	flag.StringVar(&pullPolicy, "runner-image-pull-policy", string(corev1.PullIfNotPresent), "pull policy of the client image")
	timingFlags(r)
	flag.StringVar(&allowedImages, "allowed-runner-images", "", "comma-separated image references a benchmark's spec.clients.image may name besides --runner-image; empty: only --runner-image")
	flag.StringVar(&allowedTolerationKeys, "allowed-toleration-keys", "", "comma-separated taint keys a benchmark's client pods may tolerate; * allows any, a toleration without key included; empty: none")
	flag.StringVar(&allowedNodeSelectorKeys, "allowed-node-selector-keys", "", "comma-separated node label keys a benchmark's client pods may select nodes by; * allows any; empty: none")
	flag.IntVar(&o.Workers, "max-concurrent-reconciles", controllers.DefaultWorkers, "benchmarks (and schedules) reconciled at once; waiting work is served namespace by namespace in turn")
	flag.StringVar(&r.TridentNamespace, "trident-namespace", controllers.DefaultTridentNamespace, "namespace of Trident's TridentVolume and TridentBackend resources (read only if Trident is installed)")
	flag.IntVar(&o.MaxRunningOperations, "max-running-operations-benchmarks", volops.DefaultMaxRunning, "VolumeOperationsBenchmarks run at once, one per StorageClass at most; the others wait (Queued), oldest first")
	flag.StringVar(&maxClientMemory, "max-client-memory", policy.DefaultMaxClientMemory.String(), "the most memory a client pod may ask for: its spec.clients.resources limit and request, and the limit derived from its workload")
	flag.StringVar(&runKeySecret, "run-key-secret", controllers.DefaultRunKeySecret, "Secret holding the key that signs the runs schedules create; made with a random key when missing")
	flag.StringVar(&runKeyNamespace, "run-key-namespace", os.Getenv("POD_NAMESPACE"), "namespace of --run-key-secret: the manager's own (default $POD_NAMESPACE)")
	backendSource := backendFlags()
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("setup")
	log.Info("garbage collection", "GOGC", manager.TuneGC())

	r.Jobs = controllers.JobOptions{Image: runnerImage, ImagePullPolicy: corev1.PullPolicy(pullPolicy)}
	o.Namespaces = policy.List(namespaces)
	pol, err := policy.FromFlags(allowedImages, allowedTolerationKeys, allowedNodeSelectorKeys, maxClientMemory)
	if err == nil {
		r.Policy = pol
		r.Backend, err = backendSource()
	}
	if err != nil {
		log.Error(err, "invalid flags")
		os.Exit(1)
	}
	cfg := ctrl.GetConfigOrDie()
	if o.RunKey, err = runKey(cfg, runKeyNamespace, runKeySecret); err != nil {
		log.Error(err, "reading the run key")
		os.Exit(1)
	}
	mgr, err := manager.New(cfg, o)
	if err != nil {
		log.Error(err, "creating the manager")
		os.Exit(1)
	}
	log.Info("starting the manager", "runnerImage", runnerImage, "allowedImages", pol.AllowedImages,
		"allowedTolerationKeys", pol.AllowedTolerationKeys, "allowedNodeSelectorKeys", pol.AllowedNodeSelectorKeys)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}

// serveFlags declares what the manager serves: metrics, probes, and the
// leader election.
func serveFlags(o *manager.Options) {
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "address of the metrics endpoint; 0 disables it")
	flag.BoolVar(&o.SecureMetrics, "metrics-secure", true, "serve metrics over HTTPS, authenticating and authorizing every request")
	flag.BoolVar(&o.HTTP2, "enable-http2", false, "allow HTTP/2 on the metrics server (off: HTTP/2 rapid-reset attacks)")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of the health and readiness probes")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader, so several replicas run one active manager")
}

// timingFlags declares the run's deadlines and leads.
func timingFlags(r *controllers.Reconciler) {
	flag.DurationVar(&r.ClaimBindTimeout, "claim-bind-timeout", 5*time.Minute, "fail a benchmark whose claims are not bound this long after creation")
	flag.DurationVar(&r.ReadyTimeout, "ready-timeout", 30*time.Minute, "fail a benchmark whose clients are not all ready this long after creation")
	flag.DurationVar(&r.StartLead, "step-start-lead", protocol.DefaultStartLead, "how far ahead the first step's common start instant is set")
	flag.DurationVar(&r.NextStepLead, "next-step-start-lead", protocol.DefaultNextStepLead, "how far ahead the common start instant of each later step is set (clients are idle and watching)")
}

// backendFlags declares the --backend-metrics-* flags; the function it
// returns, called once they are parsed, makes the source (nil without a
// URL).
func backendFlags() func() (*controllers.BackendMetrics, error) {
	url := flag.String("backend-metrics-url", "", "URL of a Prometheus holding what the storage reports (NetApp Harvest's volume series): ended runs' steps get the storage's own figures; empty: off")
	resolution := flag.Duration("backend-metrics-resolution", backend.DefaultResolution, "the interval of the source's samples (Harvest's performance poll; one minute by default)")
	timeout := flag.Duration("backend-metrics-timeout", 10*time.Second, "how long one query to --backend-metrics-url may take")
	classes := flag.String("backend-metrics-classes", "", "a file of PromQL queries, per storage class, that read the figures of volumes Harvest does not report (docs/backend-metrics.md)")
	return func() (*controllers.BackendMetrics, error) {
		if *url == "" {
			if *classes != "" {
				return nil, errors.New("--backend-metrics-classes needs --backend-metrics-url")
			}
			return nil, nil
		}
		m, err := controllers.NewBackendMetrics(*url, *resolution, *timeout)
		if err != nil || *classes == "" {
			return m, err
		}
		b, err := os.ReadFile(*classes)
		if err == nil {
			m.Classes, err = backend.ParseClasses(b)
		}
		if err != nil {
			return nil, fmt.Errorf("--backend-metrics-classes %s: %w", *classes, err)
		}
		return m, nil
	}
}

// runKey reads (or makes) the key that signs schedules' runs, from the API
// server before the manager starts: every replica, and every later
// version, must sign with the same key.
func runKey(cfg *rest.Config, namespace, name string) (*controllers.RunKey, error) {
	if namespace == "" {
		return nil, errors.New("--run-key-namespace is empty and $POD_NAMESPACE is unset: the manager keeps its run key in its own namespace")
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return controllers.LoadRunKey(ctx, c, namespace, name)
}
