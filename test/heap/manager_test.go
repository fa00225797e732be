package heap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/storagebench/storagebench/controllers"
	sbmanager "github.com/storagebench/storagebench/controllers/manager"
)

// envManager, set in the environment, makes the test binary run the
// manager instead of the benchmarks (see startManager); envMetrics is its
// metrics endpoint's address ("0": none).
const (
	envManager = "STORAGEBENCH_HEAP_MANAGER"
	envMetrics = "STORAGEBENCH_HEAP_METRICS"
	// envProfile, when set, is where the manager writes its heap profile
	// with each settled reading (go tool pprof).
	envProfile = "STORAGEBENCH_HEAP_PROFILE"
	// envSettled is where the manager writes its live heap after a
	// collection, in bytes, each time it gets SIGUSR1 (manager.settled).
	envSettled = "STORAGEBENCH_HEAP_SETTLED"
	// envCPUProfile, when set, is where the manager of
	// BenchmarkManagerPerStep writes a CPU profile of the measured steps
	// (go tool pprof): SIGUSR2 starts it, the next one stops it.
	envCPUProfile = "STORAGEBENCH_CPU_PROFILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(envManager) != "" {
		os.Exit(managerMain())
	}
	os.Exit(m.Run())
}

// peaks are the manager's heap peaks, in bytes.
type peaks struct {
	heap uint64 // /memory/classes/heap/objects:bytes: live and unswept objects
	live uint64 // /gc/heap/live:bytes: live objects at the last GC
}

// managerMain is the manager subprocess: the operator's manager, as
// cmd/manager builds it, against $KUBECONFIG (no client-side rate limit,
// as ctrl.GetConfigOrDie gives it), until SIGTERM. It samples its heap
// every 50 ms and, when stopped, prints its peaks as the last stdout line.
func managerMain() int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	sbmanager.TuneGC() // as cmd/manager does
	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := sbmanager.New(cfg, sbmanager.Options{
		MetricsAddr: os.Getenv(envMetrics),
		ProbeAddr:   "0",
		Reconciler:  controllers.Reconciler{Jobs: controllers.JobOptions{Image: runnerImage}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	sampled := make(chan peaks)
	go func() { sampled <- sample(ctx) }()
	go reportSettled(ctx, os.Getenv(envSettled))
	go profileCPU(ctx, os.Getenv(envCPUProfile))
	err = mgr.Start(ctx)
	stop()
	p := <-sampled
	fmt.Printf("peak heap=%d live=%d\n", p.heap, p.live)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sample reads the heap every 50 ms until ctx ends and returns the peaks
// (logged to stderr every 10 s).
func sample(ctx context.Context) peaks {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var p peaks
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	logged := time.Now()
	for {
		metrics.Read(s)
		p.heap = max(p.heap, s[0].Value.Uint64())
		p.live = max(p.live, s[1].Value.Uint64())
		if time.Since(logged) >= 10*time.Second {
			logged = time.Now()
			fmt.Fprintf(os.Stderr, "heap: now %d MiB (live %d MiB), peak %d MiB (live %d MiB)\n",
				s[0].Value.Uint64()>>20, s[1].Value.Uint64()>>20, p.heap>>20, p.live>>20)
		}
		select {
		case <-ctx.Done():
			return p
		case <-tick.C:
		}
	}
}

// reportSettled writes the live heap after a collection to path (and the
// heap profile to $STORAGEBENCH_HEAP_PROFILE, when set) at each SIGUSR1,
// while the manager runs, until ctx ends.
func reportSettled(ctx context.Context, path string) {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-usr1:
			runtime.GC()
			metrics.Read(s)
			if profile := os.Getenv(envProfile); profile != "" {
				if f, err := os.Create(profile); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
			tmp := path + ".tmp"
			if err := os.WriteFile(tmp, []byte(strconv.FormatUint(s[0].Value.Uint64(), 10)), 0o600); err == nil {
				_ = os.Rename(tmp, path)
			}
		}
	}
}

// profileCPU profiles the process's CPU into path from one SIGUSR2 to the
// next, until ctx ends; nothing when path is empty.
func profileCPU(ctx context.Context, path string) {
	if path == "" {
		return
	}
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	defer signal.Stop(usr2)
	var f *os.File
	for {
		select {
		case <-ctx.Done():
			if f != nil {
				pprof.StopCPUProfile()
				_ = f.Close()
			}
			return
		case <-usr2:
			if f != nil {
				pprof.StopCPUProfile()
				_ = f.Close()
				f = nil
				continue
			}
			var err error
			if f, err = os.Create(path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				continue
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
}

// toggleCPUProfile starts or stops the manager's CPU profile, when
// $STORAGEBENCH_CPU_PROFILE asks for one.
func (m *manager) toggleCPUProfile(b *testing.B) {
	if os.Getenv(envCPUProfile) == "" {
		return
	}
	if err := m.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		b.Fatal(err)
	}
}

// manager is the manager subprocess.
type manager struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	log    string
	done   chan struct{} // closed when the process exited
	err    error         // its exit, once done
	// settledPath is where it writes its live heap on SIGUSR1.
	settledPath string
}

// settled asks the running manager for its live heap after a collection
// and returns it, in bytes.
func (m *manager) settled(b *testing.B) uint64 {
	b.Helper()
	_ = os.Remove(m.settledPath)
	if err := m.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if data, err := os.ReadFile(m.settledPath); err == nil {
			v, err := strconv.ParseUint(string(data), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return v
		}
	}
	b.Fatalf("the manager did not report its live heap within a minute of SIGUSR1; its log:\n%s", m.tail())
	return 0
}

// startManager re-executes the test binary as the manager, with kubeconfig,
// its log (stderr) in log and its metrics endpoint on metricsAddr ("0":
// none; plain HTTP otherwise).
func startManager(b *testing.B, kubeconfig, log, metricsAddr string) *manager {
	b.Helper()
	logFile, err := os.Create(log)
	if err != nil {
		b.Fatal(err)
	}
	m := &manager{log: log, done: make(chan struct{}), settledPath: log + ".settled"}
	m.cmd = exec.Command(os.Args[0], "-test.run=^$")
	m.cmd.Env = append(os.Environ(), envManager+"=1", envMetrics+"="+metricsAddr, envSettled+"="+m.settledPath, "KUBECONFIG="+kubeconfig)
	m.cmd.Stdout, m.cmd.Stderr = &m.stdout, logFile
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() {
		m.err = m.cmd.Wait()
		_ = logFile.Close()
		close(m.done)
	}()
	b.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		<-m.done
	})
	return m
}

// stop stops the manager and returns its heap peaks.
func (m *manager) stop(b *testing.B) peaks {
	b.Helper()
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(time.Minute):
		b.Fatalf("the manager did not stop within a minute of SIGTERM; its log:\n%s", m.tail())
	}
	if m.err != nil {
		b.Fatalf("the manager: %v; its log:\n%s", m.err, m.tail())
	}
	lines := strings.Split(strings.TrimSpace(m.stdout.String()), "\n")
	var p peaks
	if _, err := fmt.Sscanf(lines[len(lines)-1], "peak heap=%d live=%d", &p.heap, &p.live); err != nil {
		b.Fatalf("the manager's peaks: %v in %q", err, m.stdout.String())
	}
	return p
}

// tail is the end of the manager's log.
func (m *manager) tail() string {
	data, err := os.ReadFile(m.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
