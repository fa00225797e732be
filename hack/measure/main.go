// Command measure runs real benchmarks through the storagebench operator on
// a cluster and prints two figures, each a ratio measured in one run of this
// program:
//
// Fidelity: does a step run through the operator achieve what the very same
// fio job achieves run by plain fio on the host? For each of two steps, an
// offered rate well below saturation and a queue depth that saturates, it
// alternates rounds of (operator, plain): a one-client StorageBenchmark on a
// claim of the local-path class, then, on the PersistentVolume's directory
// on the host, the project's own runner code (internal/runner: layout,
// preconditioning, job rendering with internal/fio, the per-job load from
// internal/plan, parsing and merging with internal/results) driving
// /usr/bin/fio with the step order the operator gave its runner. It reports
// the ratio operator/plain of the achieved IOPS and of the p99 completion
// latency over all I/O, both computed as the operator computes them (fio's
// histogram bins, merged with internal/results), per round and as the mean
// of the rounds' ratios with its 95 % confidence interval. Goals: at the
// offered rate both means within [0.99, 1/0.99]; at saturation the IOPS
// mean within [0.95, 1/0.95], the p99 reported.
//
// Overhead: how much longer than its steps does a benchmark take? It runs
// -overhead-rounds benchmarks of rate steps, one after another (3 clients
// on one Shared ReadWriteMany volume, rates well below saturation), and
// divides each one's wall time from the create call to the moment the
// Complete condition is seen True by the sum of the step durations; the
// mean of the ratios, with its 95 % confidence interval, must stay at most
// 1.05 (1.02 once the steps add up to 10 minutes). It breaks the last
// run's wall time down from watches
// on the benchmark, its client pods and its exchange ConfigMaps: client
// pods Running, clients ready (files laid out and preconditioned), step 1's
// start (the order's start instant, and the first I/O: the earliest client
// launching fio for step 1, whose ramp is already I/O), the last step's end
// and Complete. From the same milestones it splits every run's wall time
// into who spent it: the storage (first claim seen → all bound), the
// kubelet (scheduled and bound → Running), the clients (Running → ready:
// layout and preconditioning), the steps and fio's overrun, and the
// operator's own part (create → first claim, bound → pods scheduled, ready
// → first I/O, the gaps between steps, last end → Complete); each as a
// mean over the rounds with its 95 % interval, the operator's judged
// against 1 s per run plus 10 ms per step.
//
// -overhead-class csi-local runs it on the test-bed CSI driver's class.
//
// Usage, from the repository root, as root on the cluster's node (plain fio
// writes into the volume's directory):
//
//	go run ./hack/measure                            # both, default settings
//	go run ./hack/measure -overhead -ramp 0          # 3 × (4 × 20 s), no ramp
//	go run ./hack/measure -overhead -ramp 0 -steps 10 -step-duration 60s -overhead-rounds 2
//	go run ./hack/measure -fidelity -step-duration 5s -rounds 2
//
// The kubeconfig is -kubeconfig, else $KUBECONFIG, else the one
// hack/cluster/install.sh prints (it brings the local cluster up if needed).
// Everything is created in -namespace (default sb-measure) and deleted at
// the end. The summary table and the JSON go to stdout, progress to stderr;
// the JSON is also written to <-out>/result.json.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
)

// Every object this program creates carries this label, so that it (and a
// previous, interrupted run's leftovers) can be deleted by label.
const (
	labelCreatedBy = "app.kubernetes.io/created-by"
	createdBy      = "storagebench-measure"
)

type config struct {
	kubeconfig, namespace, out, fio, profile string
	fidelity, overhead                       bool
	stepDuration, ramp, timeout              time.Duration
	workingSet, clientCPU                    string

	// fidelity
	rounds        int
	rate          int64
	queueDepth    int
	fidelityClass string

	// overhead
	overheadRounds int
	steps          int
	clients        int
	rateIncrement  int64
	overheadClass  string
}

func (c *config) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG, else the one hack/cluster/install.sh prints)")
	fs.StringVar(&c.namespace, "namespace", "sb-measure", "namespace for the benchmarks (created if missing)")
	fs.StringVar(&c.out, "out", "_work/measure", "directory for result.json and the plain fio runs' job files and reports")
	fs.StringVar(&c.fio, "fio", "/usr/bin/fio", "fio binary for the plain runs")
	fs.StringVar(&c.profile, "profile", "oltp", "workload profile of every benchmark")
	fs.BoolVar(&c.fidelity, "fidelity", false, "measure fidelity (with neither -fidelity nor -overhead, both run)")
	fs.BoolVar(&c.overhead, "overhead", false, "measure overhead")
	fs.DurationVar(&c.stepDuration, "step-duration", 20*time.Second, "measured duration of every step (at least 5s)")
	fs.DurationVar(&c.ramp, "ramp", 2*time.Second, "ramp time before every step (I/O not measured)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "longest wait for one benchmark to complete, beyond its steps' durations and ramps")
	fs.StringVar(&c.workingSet, "working-set", "256Mi", "working set per client")
	fs.StringVar(&c.clientCPU, "client-cpu", "", "CPU request of every runner container, e.g. 1 (default: the operator's, a small request; the request sets the pod cgroup's CPU weight)")
	fs.IntVar(&c.rounds, "rounds", 4, "fidelity: (operator, plain) pairs per step (2 or more give a confidence interval)")
	fs.Int64Var(&c.rate, "rate", 2000, "fidelity: offered IOPS of the step below saturation")
	fs.IntVar(&c.queueDepth, "queue-depth", 16, "fidelity: outstanding I/Os of the saturating step")
	fs.StringVar(&c.fidelityClass, "fidelity-class", "local-path", "fidelity: StorageClass (its volumes must be directories on this host)")
	fs.IntVar(&c.overheadRounds, "overhead-rounds", 3, "overhead: benchmarks run one after another (2 or more give a confidence interval)")
	fs.IntVar(&c.steps, "steps", 4, "overhead: number of rate steps")
	fs.IntVar(&c.clients, "clients", 3, "overhead: client pods on the one shared volume")
	fs.Int64Var(&c.rateIncrement, "rate-increment", 500, "overhead: step k offers k × this many IOPS in total")
	fs.StringVar(&c.overheadClass, "overhead-class", "local-shared", "overhead: StorageClass (ReadWriteMany)")
}

func (c *config) validate() error {
	switch {
	case c.stepDuration < 5*time.Second:
		return errors.New("-step-duration must be at least 5s (the API's minimum)")
	case c.ramp < 0 || c.ramp >= c.stepDuration:
		return errors.New("-ramp must be at least 0 and shorter than -step-duration")
	case c.rounds < 1 || c.rate < 1 || c.queueDepth < 1:
		return errors.New("-rounds, -rate and -queue-depth must be positive")
	case c.steps < 1 || c.clients < 1 || c.rateIncrement < 1 || c.overheadRounds < 1:
		return errors.New("-steps, -clients, -rate-increment and -overhead-rounds must be positive")
	case c.rounds > analysis.MaxRuns || c.overheadRounds > analysis.MaxRuns:
		return fmt.Errorf("-rounds and -overhead-rounds must be at most %d (the reach of the confidence intervals' t table)", analysis.MaxRuns)
	}
	if _, err := resource.ParseQuantity(c.workingSet); err != nil {
		return fmt.Errorf("-working-set: %w", err)
	}
	if c.clientCPU != "" {
		if _, err := resource.ParseQuantity(c.clientCPU); err != nil {
			return fmt.Errorf("-client-cpu: %w", err)
		}
	}
	return nil
}

func main() { os.Exit(run()) }

func run() int {
	// A FlagSet of its own: controller-runtime registers a -kubeconfig of
	// its own on the global one.
	var c config
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	c.register(fs)
	_ = fs.Parse(os.Args[1:])
	if !c.fidelity && !c.overhead {
		c.fidelity, c.overhead = true, true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, &c); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 1
	}
	return 0
}

// measurer holds what every measurement needs.
type measurer struct {
	cfg *config
	k   client.WithWatch
}

func measure(ctx context.Context, c *config) (err error) {
	if err := c.validate(); err != nil {
		return err
	}
	path, err := kubeconfigPath(ctx, c.kubeconfig)
	if err != nil {
		return err
	}
	rc, err := restConfig(path)
	if err != nil {
		return err
	}
	k, err := client.NewWithWatch(rc, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		return err
	}
	m := &measurer{cfg: c, k: k}
	env, err := m.environment(ctx, rc)
	if err != nil {
		return err
	}
	if err := m.prepareNamespace(ctx); err != nil {
		return err
	}
	defer func() {
		// Clean up even when interrupted, with a context of its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		err = errors.Join(err, m.deleteOwn(cctx))
	}()

	res := result{Started: time.Now().UTC(), Environment: env, Settings: c.settings()}
	if c.fidelity {
		if res.Fidelity, err = m.measureFidelity(ctx); err != nil {
			return fmt.Errorf("fidelity: %w", err)
		}
	}
	if c.overhead {
		if res.Overhead, err = m.measureOverhead(ctx); err != nil {
			return fmt.Errorf("overhead: %w", err)
		}
	}
	res.Finished = time.Now().UTC()
	res.Environment.LoadAverageAtEnd = loadAverage()
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	out := filepath.Join(c.out, "result.json")
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	printSummary(os.Stdout, &res)
	fmt.Printf("\n%s\n\nwritten to %s\n", data, out)
	return nil
}

// kubeconfigPath is the flag's path, else $KUBECONFIG, else the path
// hack/cluster/install.sh prints after bringing the local cluster up.
func kubeconfigPath(ctx context.Context, flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env, nil
	}
	fmt.Fprintln(os.Stderr, "measure: no -kubeconfig or $KUBECONFIG: running hack/cluster/install.sh")
	cmd := exec.CommandContext(ctx, "hack/cluster/install.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/cluster/install.sh (run from the repository root): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// restConfig loads a kubeconfig path, or a $KUBECONFIG-style list of them.
func restConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.Precedence = filepath.SplitList(path)
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.UserAgent = "storagebench-measure"
	return cfg, nil
}

func (m *measurer) environment(ctx context.Context, rc *rest.Config) (environment, error) {
	env := environment{CPUs: runtime.NumCPU(), LoadAverageAtStart: loadAverage()}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return env, err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return env, fmt.Errorf("reaching the API server: %w", err)
	}
	env.Kubernetes = v.GitVersion
	if m.cfg.fidelity {
		if env.HostFio, err = (fio.Executor{Binary: m.cfg.fio}).Version(ctx); err != nil {
			return env, err
		}
	}
	return env, nil
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// prepareNamespace creates the namespace if needed and removes what an
// interrupted earlier run left in it.
func (m *measurer) prepareNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.cfg.namespace}}
	if err := m.k.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", m.cfg.namespace, err)
	}
	return m.deleteOwn(ctx)
}

// deleteOwn deletes this program's benchmarks (their children go with
// them) and claims in the namespace, and waits until they are gone.
func (m *measurer) deleteOwn(ctx context.Context) error {
	opts := []client.DeleteAllOfOption{client.InNamespace(m.cfg.namespace), client.MatchingLabels{labelCreatedBy: createdBy},
		client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if err := m.k.DeleteAllOf(ctx, &v1alpha1.StorageBenchmark{}, opts...); err != nil {
		return fmt.Errorf("deleting benchmarks: %w", err)
	}
	if err := m.k.DeleteAllOf(ctx, &corev1.PersistentVolumeClaim{}, opts...); err != nil {
		return fmt.Errorf("deleting claims: %w", err)
	}
	for {
		var bs v1alpha1.StorageBenchmarkList
		var pvcs corev1.PersistentVolumeClaimList
		sel := []client.ListOption{client.InNamespace(m.cfg.namespace), client.MatchingLabels{labelCreatedBy: createdBy}}
		if err := m.k.List(ctx, &bs, sel...); err != nil {
			return err
		}
		if err := m.k.List(ctx, &pvcs, sel...); err != nil {
			return err
		}
		if len(bs.Items)+len(pvcs.Items) == 0 {
			return nil
		}
		if err := protocol.Pause(ctx, time.Second); err != nil {
			return fmt.Errorf("waiting for %d benchmarks and %d claims to be deleted: %w", len(bs.Items), len(pvcs.Items), err)
		}
	}
}

// benchmark is a StorageBenchmark of this program: the profile and working
// set of the flags, one fio job per client, the given storage and load.
func (m *measurer) benchmark(name string, storage v1alpha1.StorageSpec, clients int32, load v1alpha1.LoadSpec) *v1alpha1.StorageBenchmark {
	ws := resource.MustParse(m.cfg.workingSet)
	load.StepDuration = metav1.Duration{Duration: m.cfg.stepDuration}
	load.RampTime = &metav1.Duration{Duration: m.cfg.ramp}
	var res *corev1.ResourceRequirements
	if m.cfg.clientCPU != "" {
		res = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(m.cfg.clientCPU)}}
	}
	return &v1alpha1.StorageBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.cfg.namespace, Labels: map[string]string{labelCreatedBy: createdBy}},
		Spec: v1alpha1.StorageBenchmarkSpec{
			Storage:  storage,
			Clients:  v1alpha1.ClientsSpec{Count: clients, JobsPerClient: 1, Resources: res},
			Workload: v1alpha1.WorkloadSpec{Profile: m.cfg.profile, WorkingSetPerClient: &ws},
			Load:     load,
		},
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "measure %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
