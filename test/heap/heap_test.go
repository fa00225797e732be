package heap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/testenv"
)

const (
	// heapLimit is what each case's peak heap must stay under.
	heapLimit = 512 << 20
	// stepDuration is the API's minimum load.stepDuration.
	stepDuration = 5 * time.Second
	// foreignSize is the data of each foreign ConfigMap, just under the
	// API server's 1 MiB limit of a ConfigMap.
	foreignSize = 1000 * 1000

	namespace   = "heap"
	benchName   = "heap"
	class       = "heap"
	provisioner = "heap.storagebench.io"
	runnerImage = "storagebench-runner:heap"
)

// scenario is one case.
type scenario struct {
	clients, steps int
	// benchmarks share the clients equally (0: one); the first is named
	// benchName, the others benchName-<i>. A benchmark has at most 1,000
	// clients, so more take several.
	benchmarks int
	// foreign ConfigMaps of foreignSize bytes with the operator's labels
	// exist before the manager starts.
	foreign int
	// bound is how long the run may take, from the manager's start.
	bound time.Duration
	// perStep measures the manager's cost per step (BenchmarkManagerPerStep).
	perStep bool
}

// BenchmarkManagerHeap reports, per case, the manager's peak heap
// (peak-heap-MiB), its peak live heap after GC (peak-live-MiB) and how long
// the run took from the manager's start to Complete (run-s). Each
// iteration starts its own control plane; -benchtime 1x runs one.
func BenchmarkManagerHeap(b *testing.B) {
	logf.SetLogger(logr.Discard())
	b.Run("1000clients-20steps", func(b *testing.B) {
		for range b.N {
			_ = run(b, scenario{clients: 1000, steps: 20, bound: 20 * time.Minute})
		}
	})
	b.Run("1000foreignConfigMaps-3clients-3steps", func(b *testing.B) {
		for range b.N {
			_ = run(b, scenario{clients: 3, steps: 3, foreign: 1000, bound: 5 * time.Minute})
		}
	})
}

// run runs scenario s and returns, with s.perStep, the manager's cost per
// step from the moment every client was ready to Complete.
func run(b *testing.B, s scenario) managerCost {
	b.StopTimer()
	t := newBed(b)
	dir, kubeconfig, k8s, runnerCfg, result := t.dir, t.kubeconfig, t.k8s, t.runnerCfg, t.result
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if s.foreign > 0 {
		began := time.Now()
		if err := foreignConfigMaps(ctx, k8s, namespace, benchName, s.foreign, foreignSize, 4); err != nil {
			b.Fatal(err)
		}
		b.Logf("created %d foreign ConfigMaps of %d bytes in %s", s.foreign, foreignSize, time.Since(began).Round(time.Second))
	}

	b.StartTimer()
	began := time.Now()
	metricsAddr := "0"
	if s.perStep {
		metricsAddr = freeLoopbackAddr(b)
	}
	mgr := startManager(b, kubeconfig, filepath.Join(dir, "manager.log"), metricsAddr)
	benches := make([]*v1alpha1.StorageBenchmark, max(s.benchmarks, 1))
	errs := make(chan error, 1+len(benches))
	go func() { errs <- bindClaims(ctx, k8s, namespace) }()
	for i := range benches {
		bench := benchmark(s, result.Jobs)
		if i > 0 {
			bench.Name = fmt.Sprintf("%s-%d", benchName, i)
		}
		bench.Spec.Clients.Count = int32(s.clients / len(benches))
		if err := k8s.Create(ctx, bench); err != nil {
			b.Fatal(err)
		}
		benches[i] = bench
		go func() {
			errs <- runners(ctx, k8s, runnerCfg, namespace, bench.Name, int(bench.Spec.Clients.Count), result)
		}()
	}
	var ready time.Duration // until every client was ready
	// With perStep, the manager's counters when every benchmark has
	// recorded its first step and when the first one has recorded its last
	// but one: between, every benchmark is past its start and none at its
	// end (its final order, its clients' objects cleaned up), so the steps
	// between are the steady state. Steps counts the steps the benchmarks
	// recorded between, in all.
	var atFirst, atLastButOne managerCost
	var stepsAtFirst, steps int
	waitComplete(ctx, b, k8s, benches, s.bound, mgr, errs, func() {
		fewest, most, recorded, readyClients := s.steps, 0, 0, 0
		for _, bench := range benches {
			fewest, most = min(fewest, len(bench.Status.Steps)), max(most, len(bench.Status.Steps))
			recorded += len(bench.Status.Steps)
			readyClients += int(bench.Status.ClientsReady)
		}
		if ready == 0 && readyClients == s.clients {
			ready = time.Since(began)
		}
		if !s.perStep {
			return
		}
		var err error
		switch {
		case fewest >= 1 && atFirst == (managerCost{}):
			atFirst, err = scrape(metricsAddr)
			stepsAtFirst = recorded
			mgr.toggleCPUProfile(b)
		case most >= s.steps-1 && atFirst != (managerCost{}) && atLastButOne == (managerCost{}):
			atLastButOne, err = scrape(metricsAddr)
			steps = recorded - stepsAtFirst
			mgr.toggleCPUProfile(b)
		}
		if err != nil {
			b.Fatal(err)
		}
	})
	took := time.Since(began)
	var cost managerCost
	if s.perStep {
		if atFirst == (managerCost{}) || atLastButOne == (managerCost{}) || steps == 0 {
			b.Fatalf("no steady window: a benchmark recorded its last step but one before every one had recorded its first, or the status skipped past the window (polled every second)")
		}
		// A step of the whole: one step of each benchmark.
		cost = atLastButOne.perStep(atFirst, float64(steps)/float64(len(benches)))
		b.Logf("%d clients: per step %.1f reconciles, %.1f API writes, %.1f API reads, %.3f CPU s",
			s.clients, cost.reconciles, cost.writes, cost.reads, cost.cpu)
	}
	b.StopTimer()
	for _, bench := range benches {
		if len(bench.Status.Steps) != s.steps {
			b.Fatalf("benchmark %s completed with %d steps, want %d", bench.Name, len(bench.Status.Steps), s.steps)
		}
	}
	p := mgr.stop(b)
	b.ReportMetric(float64(p.heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(p.live)/(1<<20), "peak-live-MiB")
	b.ReportMetric(took.Seconds(), "run-s")
	b.Logf("%d clients × %d steps, %d foreign ConfigMaps: all ready after %s, complete after %s (%.1f s a step); the manager's peak heap %d MiB, peak live heap %d MiB",
		s.clients, s.steps, s.foreign, ready.Round(time.Second), took.Round(time.Second), (took-ready).Seconds()/float64(s.steps), p.heap>>20, p.live>>20)
	if p.heap >= heapLimit {
		b.Fatalf("the manager's peak heap %d MiB is not under %d MiB", p.heap>>20, heapLimit>>20)
	}
	return cost
}

// bed is a control plane for one case, with its namespace and class.
type bed struct {
	dir        string
	kubeconfig string // the manager's
	k8s        client.Client
	runnerCfg  *rest.Config       // the runners' (runnerClients)
	result     results.ClientStep // what the runners report
}

// newBed starts a control plane in a temporary directory and creates the
// namespace and the storage class.
func newBed(b *testing.B) *bed {
	b.Helper()
	t := &bed{dir: b.TempDir()}
	var cfg *rest.Config
	cfg, t.kubeconfig = startControlPlane(b, t.dir)
	var err error
	if t.k8s, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()}); err != nil {
		b.Fatal(err)
	}
	// The runners' clients: no client-side rate limit, as each real runner
	// has its own.
	t.runnerCfg = rest.CopyConfig(cfg)
	t.runnerCfg.QPS = -1
	if t.result, err = realResult(); err != nil {
		b.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: provisioner},
	} {
		if err := t.k8s.Create(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	return t
}

// startControlPlane starts etcd (with room for 1 GiB of ConfigMaps) and
// kube-apiserver with the CRDs installed, stopped when b ends, and returns
// an admin config and the path of a kubeconfig for the manager.
func startControlPlane(b *testing.B, dir string) (*rest.Config, string) {
	b.Helper()
	assets, err := testenv.AssetsDir()
	if err != nil {
		b.Fatal(err)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: time.Minute,
	}
	env.ControlPlane.Etcd = &envtest.Etcd{}
	env.ControlPlane.Etcd.Configure().Set("quota-backend-bytes", strconv.Itoa(8<<30))
	api := env.ControlPlane.GetAPIServer()
	etcdLog, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		b.Fatal(err)
	}
	apiLog, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		b.Fatal(err)
	}
	env.ControlPlane.Etcd.Out, env.ControlPlane.Etcd.Err = etcdLog, etcdLog
	api.Out, api.Err = apiLog, apiLog
	began := time.Now()
	cfg, err := env.Start()
	if err != nil {
		b.Fatalf("starting etcd and kube-apiserver: %v", err)
	}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Errorf("stopping the control plane: %v", err)
		}
		_, _ = etcdLog.Close(), apiLog.Close()
	})
	b.Logf("control plane up in %s", time.Since(began).Round(time.Millisecond))
	user, err := env.AddUser(envtest.User{Name: "storagebench-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "manager.kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		b.Fatal(err)
	}
	return cfg, path
}

// benchmark is the StorageBenchmark of s: PerClient volumes, the oltp
// profile with jobs fio jobs per client, and s.steps rate steps of the
// minimum duration without ramp.
func benchmark(s scenario, jobs int) *v1alpha1.StorageBenchmark {
	steps := make([]int64, s.steps)
	for k := range steps {
		// At least one read and one write IOPS for each of up to 2,000
		// jobs at 80 % reads.
		steps[k] = int64(k+1) * 20000
	}
	return &v1alpha1.StorageBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: benchName},
		Spec: v1alpha1.StorageBenchmarkSpec{
			Storage:  v1alpha1.StorageSpec{StorageClassName: ptr.To(class), Sharing: v1alpha1.SharingPerClient},
			Clients:  v1alpha1.ClientsSpec{Count: int32(s.clients), JobsPerClient: int32(jobs)},
			Workload: v1alpha1.WorkloadSpec{Profile: "oltp"},
			Load: v1alpha1.LoadSpec{
				Rate:         &v1alpha1.RateSteps{Unit: "IOPS", Steps: steps},
				StepDuration: metav1.Duration{Duration: stepDuration},
				RampTime:     &metav1.Duration{},
			},
		},
	}
}
