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
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/storagebench/storagebench/controllers"
)

// envManager, set in the environment, makes the test binary run the
// manager instead of the benchmarks (see startManager); envMetrics is its
// metrics endpoint's address ("0": none).
const (
	envManager = "STORAGEBENCH_HEAP_MANAGER"
	envMetrics = "STORAGEBENCH_HEAP_METRICS"
	// envProfile, when set, is where the manager writes its heap profile
	// when it stops (go tool pprof).
	envProfile = "STORAGEBENCH_HEAP_PROFILE"
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
	last uint64 // the live heap when the manager stopped, after a collection
}

// managerMain is the manager subprocess: the operator's manager, as
// cmd/manager builds it, against $KUBECONFIG (no client-side rate limit,
// as ctrl.GetConfigOrDie gives it), until SIGTERM. It samples its heap
// every 50 ms and, when stopped, prints its peaks as the last stdout line.
func managerMain() int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := controllers.NewManager(cfg, controllers.ManagerOptions{
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
	err = mgr.Start(ctx)
	stop()
	p := <-sampled
	fmt.Printf("peak heap=%d live=%d last=%d\n", p.heap, p.live, p.last)
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
			// The live heap now, after a collection, and its profile
			// when asked for.
			runtime.GC()
			metrics.Read(s)
			p.last = s[1].Value.Uint64()
			if path := os.Getenv(envProfile); path != "" {
				if f, err := os.Create(path); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
			return p
		case <-tick.C:
		}
	}
}

// manager is the manager subprocess.
type manager struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	log    string
	done   chan struct{} // closed when the process exited
	err    error         // its exit, once done
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
	m := &manager{log: log, done: make(chan struct{})}
	m.cmd = exec.Command(os.Args[0], "-test.run=^$")
	m.cmd.Env = append(os.Environ(), envManager+"=1", envMetrics+"="+metricsAddr, "KUBECONFIG="+kubeconfig)
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
	if _, err := fmt.Sscanf(lines[len(lines)-1], "peak heap=%d live=%d last=%d", &p.heap, &p.live, &p.last); err != nil {
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
