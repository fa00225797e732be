// Command runner drives fio for storagebench.
//
//	runner client --plan plan.json --exchange DIR --workdir DIR
//	    one client: lay out and precondition its files, then run every step
//	    it is ordered to, publishing each result as the step ends.
//	runner client --kube --workdir DIR
//	    the same inside a client pod, coordinated through the API server.
//	runner local [flags]
//	    a whole benchmark on this machine: N client processes in lockstep on
//	    one directory, then the aggregated curve and its analysis.
//	runner cleanup --subdir storagebench-<name>-<uid8> [--volume DIR] [--report FILE]
//	    after a run on an existing claim, in the operator's cleanup pod (same
//	    claim, same path, same user as the clients): remove the benchmark's
//	    directory and everything in it, if it is this user's own (a real
//	    directory, mode 0700), never following a link. One JSON line to
//	    stdout and to --report (default /dev/termination-log; "" or "-":
//	    stdout only):
//	    {"removedFiles":N,"removedDirs":N,"remaining":[...],"remainingCount":N,"error":"..."}
//	    Exit 0: nothing of the directory is left (or it was missing); 3:
//	    something is left, or it refused; 2: bad flags.
//
// Test hook: STORAGEBENCH_TEST_CLOCK_OFFSET=DURATION (e.g. 2s, -1.5s) shifts
// a client's own clock, simulating a node whose clock is off; with --kube
// the runner measures its offset to the API server and still starts every
// step at the ordered instant.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	runstep "github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/runner"
	"github.com/storagebench/storagebench/internal/workload"
)

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "cleanup": // its exit status says what is left (cleanup)
		return cleanup(os.Args[2:], os.Stdout, os.Stderr)
	case "client":
		err = client(ctx, os.Args[2:])
	case "local":
		err = local(ctx, os.Args[2:])
	case "verify-lost": // its exit status says what it found (verifyLost)
		return verifyLost(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case fio.WaitUntilCommand: // fio runs it before a step's I/O (runner.Runner.Waiter)
		err = fio.WaitUntil(ctx, os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		if errors.Is(err, runner.ErrInterrupted) {
			return 143
		}
		return 1
	}
	return 0
}

const clientEnvHelp = "environment (test hook): " + exchange.EnvTestClockOffset + "=DURATION (e.g. 2s, -1.5s) shifts the client's own clock"

func usage() {
	fmt.Fprintln(os.Stderr, "usage: runner client (--kube | --plan FILE --exchange DIR) --workdir DIR\n       runner local [flags] (runner local -h)\n       "+cleanupUsage+"\n       "+verifyLostUsage+"\n"+clientEnvHelp)
	os.Exit(2)
}

const cleanupUsage = "runner cleanup --subdir " + runner.BenchmarkDirPrefix + "<name>-<uid8> [--volume DIR] [--report FILE]"

// Exit statuses of runner cleanup.
const (
	cleanupExitLeft     = 3 // something of the directory is left, or it refused
	cleanupExitBadFlags = 2
)

// cleanup is `runner cleanup`, which the operator runs once a run on an
// existing claim has ended, in a pod with the same claim mounted at the
// same path and the same user as the clients: it removes the benchmark's
// directory, which a runner killed before its own removal left behind
// (runner.Cleanup), and reports what it removed and what is left as one
// JSON line, to stdout and to --report. It returns the exit status: 0 when
// nothing of the directory is left, cleanupExitLeft when something is or it
// refused, cleanupExitBadFlags for bad flags.
func cleanup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	volume := fs.String("volume", exchange.DataMountPath, "the volume's mount path")
	subdir := fs.String("subdir", "", "the benchmark's directory on the volume, one name starting with "+runner.BenchmarkDirPrefix+" (required)")
	report := fs.String("report", exchange.TerminationLog, `file that receives the report too; "" or "-": stdout only`)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: "+cleanupUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cleanupExitBadFlags
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "runner cleanup: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return cleanupExitBadFlags
	}
	rep := runner.CleanupReport{Remaining: []string{}, Error: "refused: --subdir is required"}
	if *subdir != "" {
		rep = runner.Cleanup(*volume, *subdir)
	}
	writeReport(rep.JSON(), *report, stdout, stderr)
	if !rep.OK() {
		return cleanupExitLeft
	}
	return 0
}

// waiter is this binary, as the runner's Waiter (its wait-until command);
// "" when its path cannot be found or a shell would not read it as one
// word, and fio then starts at the instants.
func waiter() string {
	path, err := os.Executable()
	if err != nil || !fio.UsableWaiter(path) {
		return ""
	}
	return path
}

// clientClock is the client's clock: the system's, shifted by the test hook
// $STORAGEBENCH_TEST_CLOCK_OFFSET when it is set.
func clientClock() (func() time.Time, error) {
	v := os.Getenv(exchange.EnvTestClockOffset)
	if v == "" {
		return time.Now, nil
	}
	shift, err := time.ParseDuration(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q (a test hook) is not a duration: %w", exchange.EnvTestClockOffset, v, err)
	}
	return func() time.Time { return time.Now().Add(shift) }, nil
}

func client(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	kube := fs.Bool("kube", false, "coordinate through the API server (inside a client pod; the plan comes from there)")
	planPath := fs.String("plan", "", "client plan (JSON), with --exchange")
	exchangeDir := fs.String("exchange", "", "exchange directory shared with the conductor")
	workdir := fs.String("workdir", "", "directory for fio job files and reports")
	termLog := fs.String("termination-log", "", "file that receives the error when the runner fails (in a pod: "+exchange.TerminationLog+")")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: runner client (--kube | --plan FILE --exchange DIR) --workdir DIR")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), clientEnvHelp)
	}
	_ = fs.Parse(args)
	if *workdir == "" {
		return errors.New("--workdir is required")
	}
	now, err := clientClock()
	switch {
	case err != nil:
	case *kube:
		err = kubeClient(ctx, *workdir, now)
	default:
		err = fileClient(ctx, *planPath, *exchangeDir, *workdir, now)
	}
	if err != nil && *termLog != "" {
		// Best effort: the message surfaces in the pod's status, where the
		// operator reads it; without the file Kubernetes falls back to logs.
		_ = os.WriteFile(*termLog, []byte(protocol.Truncate(err.Error(), protocol.MaxErrorBytes)), 0o644)
	}
	return err
}

func fileClient(ctx context.Context, planPath, exchangeDir, workdir string, now func() time.Time) error {
	if planPath == "" || exchangeDir == "" {
		return errors.New("--plan and --exchange are required without --kube")
	}
	data, err := os.ReadFile(planPath)
	if err != nil {
		return err
	}
	var p protocol.ClientPlan
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%s: %w", planPath, err)
	}
	x := runner.FileExchange{Dir: exchangeDir}
	r := &runner.Runner{Plan: p, Coordinator: x, Publisher: x, WorkDir: workdir, Now: now, Waiter: waiter()}
	return r.Run(ctx)
}

// kubeClient runs one client pod's part: the benchmark and the client index
// come from the pod's environment, the API server from the in-cluster
// configuration (or $KUBECONFIG outside a pod). The runner measures its
// clock's offset to the API server while preparing and starts every step at
// the ordered instant of the API server's clock.
func kubeClient(ctx context.Context, workdir string, now func() time.Time) error {
	ns, bench, idx := os.Getenv(exchange.EnvNamespace), os.Getenv(exchange.EnvBenchmark), os.Getenv(exchange.EnvClient)
	if ns == "" || bench == "" || idx == "" {
		return fmt.Errorf("--kube needs %s, %s and %s in the environment", exchange.EnvNamespace, exchange.EnvBenchmark, exchange.EnvClient)
	}
	index, err := strconv.Atoi(idx)
	if err != nil || index < 0 {
		return fmt.Errorf("%s=%q is not a client index", exchange.EnvClient, idx)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("API server configuration: %w", err)
	}
	cfg.UserAgent = "storagebench-runner"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	x := &exchange.Client{Clientset: cs, Namespace: ns, Benchmark: bench, Index: index, Now: now}
	p, err := x.LoadPlan(ctx)
	if err != nil {
		return err
	}
	r := &runner.Runner{Plan: p, Coordinator: x, Publisher: x, Clock: x, WorkDir: workdir, Now: now, Waiter: waiter()}
	return r.Run(ctx)
}

// localWorkload is `runner local`'s workload: the profile with the flags'
// overrides (readPct < 0, iodepth 0 and engine "" keep the profile's),
// checked for verification when it verifies.
func localWorkload(profile, workingSet string, readPct, iodepth int, engine string, verifies bool) (workload.Spec, error) {
	ws, err := parseSize("--working-set", workingSet)
	if err != nil {
		return workload.Spec{}, err
	}
	o := workload.Overrides{WorkingSetBytesPerClient: &ws}
	if readPct >= 0 {
		v := int32(readPct)
		o.ReadPercent = &v
	}
	if iodepth > 0 {
		v := int32(iodepth)
		o.IODepth = &v
	}
	if engine != "" {
		v := workload.IOEngine(engine)
		o.IOEngine = &v
	}
	spec, err := workload.Resolve(profile, o)
	if err == nil && verifies {
		if err := spec.Verifiable(); err != nil {
			return spec, fmt.Errorf("--verify: %w", err)
		}
	}
	return spec, err
}

func local(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("local", flag.ExitOnError)
	name := fs.String("name", "local", "benchmark name")
	dir := fs.String("dir", "_work/local", "work directory: the volume stand-in, exchange and reports")
	clients := fs.Int("clients", 3, "number of client processes")
	jobs := fs.Int("jobs", 2, "fio jobs per client")
	profile := fs.String("profile", "oltp", "workload profile: "+strings.Join(workload.ProfileNames(), ", "))
	workingSet := fs.String("working-set", "64Mi", "working set per client in bytes, a Kubernetes quantity (64Mi, 1Gi, 500M)")
	readPct := fs.Int("read-percent", -1, "override the profile's read percentage")
	iodepth := fs.Int("iodepth", 0, "override the profile's I/O depth per job")
	engine := fs.String("engine", "", "override the I/O engine")
	rates := fs.String("rates", "", "offered total rates per step, e.g. 300,600,1200")
	unit := fs.String("unit", "IOPS", "unit of --rates and --curve: IOPS or MiBps")
	qds := fs.String("queue-depths", "", "outstanding I/O per client per step, e.g. 2,4,8,16")
	curve := fs.String("curve", "", "curve mode: percents of the measured maximum, e.g. 10,50,90,100")
	stepDur := fs.Duration("step-duration", 10*time.Second, "measured time per step")
	ramp := fs.Duration("ramp", 2*time.Second, "ramp time per step, excluded from the results")
	stopLat := fs.String("stop-latency", "", "stop when a step exceeds METRIC:DIRECTION:LIMIT, e.g. p99:read:5ms")
	stopSat := fs.Int("stop-saturation", 0, "stop when achieved < N % of offered")
	target := fs.Duration("target", time.Millisecond, "latency target for performance-at-target")
	precond := fs.Bool("precondition", true, "fill the working set before measuring")
	arrivals := fs.String("arrivals", string(plan.Uniform), "how rated jobs space their I/Os: Uniform or Poisson")
	verifyWrites := fs.Bool("verify", false, "verify what the steps write, as spec.verify: after each step every client reads back every block the run wrote")
	_ = fs.Parse(args)

	spec, err := localWorkload(*profile, *workingSet, *readPct, *iodepth, *engine, *verifyWrites)
	if err != nil {
		return err
	}
	load := plan.Load{StepDuration: *stepDur, RampTime: *ramp, Stop: plan.StopRules{SaturationPercent: int32(*stopSat)},
		Arrivals: plan.Arrivals(*arrivals)}
	switch {
	case *rates != "":
		steps, err := parseInts(*rates)
		if err != nil {
			return fmt.Errorf("--rates: %w", err)
		}
		load.Rate = &plan.RateSteps{Unit: plan.RateUnit(*unit), Steps: steps}
	case *qds != "":
		steps, err := parseInts(*qds)
		if err != nil {
			return fmt.Errorf("--queue-depths: %w", err)
		}
		qd := &plan.QueueDepthSteps{}
		for _, s := range steps {
			qd.Steps = append(qd.Steps, int32(s))
		}
		load.QueueDepth = qd
	case *curve != "":
		steps, err := parseInts(*curve)
		if err != nil {
			return fmt.Errorf("--curve: %w", err)
		}
		c := &plan.CurveSpec{Unit: plan.RateUnit(*unit)}
		for _, s := range steps {
			c.Percents = append(c.Percents, int32(s))
		}
		load.Curve = c
	default:
		return errors.New("one of --rates, --queue-depths or --curve is required")
	}
	if *stopLat != "" {
		parts := strings.Split(*stopLat, ":")
		if len(parts) != 3 {
			return errors.New("--stop-latency: want METRIC:DIRECTION:LIMIT, e.g. p99:read:5ms")
		}
		limit, err := time.ParseDuration(parts[2])
		if err != nil {
			return fmt.Errorf("--stop-latency: %w", err)
		}
		load.Stop.Latency = &plan.LatencyStop{Metric: plan.LatencyMetric(parts[0]), Operation: plan.LatencyOperation(parts[1]),
			LimitMicroseconds: limit.Microseconds()}
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	l := &runner.Local{Name: *name, Dir: abs, Profile: *profile, Workload: spec, Load: load,
		Topology:     plan.Topology{Clients: int32(*clients), JobsPerClient: int32(*jobs)},
		Precondition: *precond, Launch: launchProcesses(abs), Verify: *verifyWrites}
	total := plan.TotalSteps(load)
	fmt.Printf("storagebench local: %d clients × %d jobs, profile %s (%s, %s read, %s, iodepth %d), %d steps of %s\n",
		*clients, *jobs, *profile, numfmt.Size(spec.BlockSizeBytes), numfmt.Percent(float64(spec.ReadPercent), 0), spec.Pattern, spec.IODepth, total, *stepDur)
	if *precond {
		fmt.Printf("preconditioning %s per client…\n", *workingSet)
	}
	l.Progress = func(r runstep.Step) {
		a := r.Aggregate
		line := fmt.Sprintf("step %d/%d done: %s IOPS, skew %s", r.Aggregate.Step+1, total, numfmt.Count(a.Total.IOPS), a.StartSkew.Round(100*time.Microsecond))
		if v := a.Verification; v != nil {
			line += fmt.Sprintf("; read back %s blocks in %s, %s bad", numfmt.Count(float64(v.BlocksVerified)), v.Duration.Round(time.Millisecond),
				numfmt.Count(float64(v.BadBlockCount)))
		}
		fmt.Println(line)
	}
	started := time.Now()
	out, runErr := l.Run(ctx)
	if out == nil {
		return runErr
	}
	opts := analysis.Options{LatencyTarget: *target}
	v, err := l.View(out, runErr, opts, nil)
	if err != nil {
		return err
	}
	fmt.Println()
	if err := l.WriteReport(os.Stdout, out, runErr, opts, v, started, time.Now()); err != nil {
		return err
	}
	report := struct {
		Outcome  *runner.Outcome `json:"outcome"`
		Analysis analysis.Result `json:"analysis"`
	}{out, v.Analysis}
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(abs, "report.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fmt.Println("report:", path)
	return runErr
}

// launchProcesses starts every client as its own runner process, as the
// operator starts one pod per client.
func launchProcesses(dir string) func(context.Context, []protocol.ClientPlan, runner.FileExchange) (func() error, error) {
	return func(ctx context.Context, plans []protocol.ClientPlan, x runner.FileExchange) (func() error, error) {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		var cmds []*exec.Cmd
		for _, p := range plans {
			cdir := filepath.Join(dir, "clients", fmt.Sprintf("client-%03d", p.Client))
			if err := os.MkdirAll(cdir, 0o755); err != nil {
				return nil, err
			}
			data, err := json.Marshal(p)
			if err != nil {
				return nil, err
			}
			planPath := filepath.Join(cdir, "plan.json")
			if err := os.WriteFile(planPath, data, 0o644); err != nil {
				return nil, err
			}
			logf, err := os.Create(filepath.Join(cdir, "runner.log"))
			if err != nil {
				return nil, err
			}
			cmd := exec.CommandContext(ctx, self, "client", "--plan", planPath, "--exchange", x.Dir, "--workdir", filepath.Join(cdir, "work"))
			cmd.Stdout, cmd.Stderr = logf, logf
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.WaitDelay = 30 * time.Second
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			cmds = append(cmds, cmd)
		}
		return func() error {
			var errs []error
			for i, c := range cmds {
				if err := c.Wait(); err != nil {
					errs = append(errs, fmt.Errorf("client %d: %w (log: %s)", i, err, filepath.Join(dir, "clients", fmt.Sprintf("client-%03d", i), "runner.log")))
				}
			}
			return errors.Join(errs...)
		}, nil
	}
}

func parseInts(s string) ([]int64, error) {
	var out []int64
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseSize reads a flag's size in bytes as a Kubernetes quantity (64Mi,
// 1Gi, 500M, 1048576): a positive whole number of bytes below the largest
// int64.
func parseSize(flag, s string) (int64, error) {
	bad := func(why string) error {
		return fmt.Errorf("%s %q: %s; want a positive size in bytes like 64Mi or 1Gi", flag, s, why)
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, bad("not a quantity")
	}
	if q.Sign() <= 0 {
		return 0, bad("not positive")
	}
	// ParseQuantity clamps what overflows with a binary suffix (8Ei, 9Ei)
	// to the largest int64: that value counts as overflowed too.
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0 {
		return 0, bad("too large")
	}
	// Value rounds a fraction of a byte up: it must not have to.
	v := q.Value()
	if q.Cmp(*resource.NewQuantity(v, resource.BinarySI)) != 0 {
		return 0, bad("not a whole number of bytes")
	}
	return v, nil
}

// writeReport writes a pod's report line to stdout and to the file
// report ("" or "-": stdout only), where the operator reads it as the
// pod's termination message; the exit status says the same.
func writeReport(line []byte, report string, stdout, stderr io.Writer) {
	_, _ = stdout.Write(line)
	if report != "" && report != "-" {
		if err := os.WriteFile(report, line, 0o644); err != nil {
			fmt.Fprintln(stderr, "runner: writing the report:", err)
		}
	}
}

const verifyLostUsage = "runner verify-lost --clients N [--volume DIR] [--subdir DIR] [--within DURATION] [--report FILE]"

// Exit statuses of runner verify-lost.
const (
	verifyExitBad        = 3 // a block is not as written
	verifyExitUnverified = 4 // blocks or a client's state were not read
)

// verifyLost is `runner verify-lost`, which the operator runs after a
// client of a run that verifies was lost mid-step, in a pod with the
// Shared Filesystem volume mounted at the clients' path: it checks, for
// every client's directory (client-NNN, under --subdir on an existing
// claim), that each block the client's finished steps wrote reads back
// as written (runner.VerifyLost), and reports the merged verification as
// one JSON line (protocol.LostReport), to stdout and to --report. It
// returns the exit status: 0 when every block read is intact,
// verifyExitBad, verifyExitUnverified, 2 for bad flags.
func verifyLost(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-lost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	volume := fs.String("volume", exchange.DataMountPath, "the volume's mount path")
	subdir := fs.String("subdir", "", "the benchmark's directory on an existing claim, one name starting with "+runner.BenchmarkDirPrefix)
	clients := fs.Int("clients", 0, "how many clients the run had (required)")
	within := fs.Duration("within", time.Hour, "the longest the read-back may take; blocks not read by then are counted unverified")
	report := fs.String("report", exchange.TerminationLog, `file that receives the report too; "" or "-": stdout only`)
	err := fs.Parse(args)
	switch {
	case err != nil, fs.NArg() > 0, *clients < 1, *clients > results.MaxClients, *within <= 0,
		*subdir != "" && runner.CheckBenchmarkDir(*subdir) != nil:
		fmt.Fprintln(stderr, "usage: "+verifyLostUsage)
		return 2
	}
	vctx, cancel := context.WithTimeout(ctx, *within)
	defer cancel()
	var rep protocol.LostReport
	for i := range *clients {
		dir := filepath.Join(*volume, *subdir, fmt.Sprintf("client-%03d", i))
		v, err := runner.VerifyLost(vctx, dir, i)
		switch {
		case errors.Is(err, os.ErrNotExist):
			rep.Missing = append(rep.Missing, i)
			continue
		case err != nil:
			if rep.Error == "" {
				rep.Error = fmt.Sprintf("client %d: %v", i, err)
			}
			continue
		}
		rep.Clients++
		rep.Verification.Add(&v)
	}
	writeReport(rep.JSON(), *report, stdout, stderr)
	switch v := &rep.Verification; {
	case v.BadBlockCount > 0:
		return verifyExitBad
	case v.Unverified > 0 || rep.Error != "":
		return verifyExitUnverified
	}
	return 0
}
