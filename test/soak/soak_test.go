package soak

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/test/harness"
	"github.com/storagebench/storagebench/test/soak/simclock"
)

// config is a soak's size and pace.
type config struct {
	// days is the simulated span.
	days int
	// factor is how many simulated seconds pass per real second while
	// nothing works (SOAK_FACTOR).
	factor float64
	// dir holds the logs, binaries and samples; result the figures.
	dir, result string
	// short asserts the correctness properties.
	short bool
}

// defaultFactor: 4,000 simulated seconds per real second while the
// system waits for time (a simulated day in 22 s of running clock).
const defaultFactor = 4000

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkSoak is `make soak`: SOAK_DAYS simulated days (default 30) of
// the whole workload (doc.go), the checks and the figures printed and
// written to _work/soak/result.json. It asserts nothing about time or
// memory; a failed check fails it.
//
//	go test -run '^$' -bench Soak -benchtime 1x -timeout 4h ./test/soak/
func BenchmarkSoak(b *testing.B) {
	logf.SetLogger(logr.Discard())
	cfg := config{days: envInt("SOAK_DAYS", 30), factor: float64(envInt("SOAK_FACTOR", defaultFactor))}
	abs, err := filepath.Abs("../../_work/soak")
	if err != nil {
		b.Fatal(err)
	}
	cfg.dir, cfg.result = filepath.Join(abs, "run"), filepath.Join(abs, "result.json")
	if err := os.RemoveAll(cfg.dir); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		res := run(b, cfg)
		b.ReportMetric(res.RealSeconds, "real-s")
		b.ReportMetric(float64(res.Days), "simulated-days")
		if f := res.failedChecks(); len(f) > 0 {
			b.Errorf("checks failed: %v (details above and in %s)", f, cfg.result)
		}
	}
}

// TestSoakShort is one simulated day of the same workload: the same
// schedules, two restarts (the second one the build switch, while a
// 100-step benchmark runs), a noisy period, the hostile tenant. It asserts
// the correctness properties only, and prints the figures.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a real control plane for a few minutes")
	}
	logf.SetLogger(logr.Discard())
	abs, err := filepath.Abs("../../_work/soak")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{days: 1, factor: float64(envInt("SOAK_FACTOR", defaultFactor)), short: true,
		dir: filepath.Join(abs, "short"), result: filepath.Join(abs, "short.json")}
	if err := os.RemoveAll(cfg.dir); err != nil {
		t.Fatal(err)
	}
	res := run(t, cfg)
	if f := res.failedChecks(); len(f) > 0 {
		t.Errorf("checks failed: %v (details above; the soak's and the manager's logs and samples are in %s)", f, cfg.dir)
	}
}

// restartInfo and switchInfo describe the restarts.
type restartInfo struct {
	Sim   time.Time     `json:"simulated"`
	Build string        `json:"build"`
	Took  time.Duration `json:"tookNs"`
}

type switchInfo struct {
	Sim     time.Time `json:"simulated"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Running []string  `json:"running"`
}

// garbageSample is a count of orphans (soak.orphans) at a simulated time.
type garbageSample struct {
	at time.Time
	n  int
}

// soak is one soak's state.
type soak struct {
	tb  testing.TB
	cfg config
	ctx context.Context
	wg  sync.WaitGroup

	dir, clockPath, readyPath, samplesPath, kubeconfig, metricsAddr, runKey string
	binaries                                                                [2]string

	cluster       *harness.Cluster
	k8s           client.Client
	informers     cache.Cache
	runnerClients []kubernetes.Interface
	clock         *simclock.Clock
	gov           *governor
	obs           *observer
	results       *resultKit
	steps         *stepTimes
	mgr           *managerProc
	crashed       chan error
	start, end    time.Time

	mu          sync.Mutex
	runnersSeen map[types.UID]bool
	restarts    []restartInfo
	buildSwitch *switchInfo
	anomalies   []string
	garbage     []garbageSample
	logFile     *os.File
}

// logf prints a line with the simulated and real time to stdout and the
// soak's log.
func (s *soak) logf(format string, args ...any) {
	line := fmt.Sprintf("soak %s sim %s: %s\n", time.Now().Format("15:04:05.000"), s.simString(), fmt.Sprintf(format, args...))
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Print(line)
	if s.logFile != nil {
		_, _ = s.logFile.WriteString(line)
	}
}

func (s *soak) simString() string {
	if s.clock == nil {
		return "-"
	}
	d := s.clock.Now().Sub(s.start)
	return fmt.Sprintf("d%d+%s", int(d/(24*time.Hour)), (d % (24 * time.Hour)).Round(time.Second))
}

// anomaly records something that went wrong outside the manager's checks
// (a runner's error, the driver's own): the short test fails on any.
func (s *soak) anomaly(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.anomalies = append(s.anomalies, msg)
	s.mu.Unlock()
	s.logf("ANOMALY: %s", msg)
}

// run runs a soak and reports it.
func run(tb testing.TB, cfg config) *result {
	began := time.Now()
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &soak{tb: tb, cfg: cfg, ctx: ctx, dir: cfg.dir, runnersSeen: map[types.UID]bool{}, steps: newStepTimes(), crashed: make(chan error, 1),
		clockPath: filepath.Join(cfg.dir, "clock"), readyPath: filepath.Join(cfg.dir, "manager.ready"),
		samplesPath: filepath.Join(cfg.dir, "samples.jsonl")}
	var err error
	if s.logFile, err = os.Create(filepath.Join(cfg.dir, "soak.log")); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = s.logFile.Close() }()
	_ = os.Remove(s.samplesPath)
	s.logf("soak of %d simulated days at %gx, in %s", cfg.days, cfg.factor, cfg.dir)

	built := make(chan error, 1)
	go func() {
		var err error
		s.binaries, err = buildManagers(cfg.dir)
		built <- err
	}()
	if s.results, err = newResultKit(); err != nil {
		tb.Fatal(err)
	}
	s.cluster, err = harness.Start(harness.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Scheme:            controllers.Scheme(),
		NoKubelet:         true,
		Controllers:       harnessControllers(),
		WorkDir:           filepath.Join(cfg.dir, "cluster"),
	})
	if err != nil {
		tb.Fatalf("starting the control plane: %v", err)
	}
	defer func() {
		if err := s.cluster.Stop(); err != nil {
			tb.Logf("stopping the control plane: %v", err)
		}
	}()
	s.k8s = s.cluster.Client
	stopControllers, err := s.startWorkloadControllers()
	if err != nil {
		tb.Fatal(err)
	}
	defer stopControllers()
	if err := s.prepare(); err != nil {
		tb.Fatal(err)
	}
	if err := <-built; err != nil {
		tb.Fatal(err)
	}
	s.logf("control plane up, managers built (%s)", time.Since(began).Round(time.Second))

	// The clock, paused at the start until the manager runs.
	s.start = time.Now().UTC()
	s.end = s.start.Add(time.Duration(cfg.days) * 24 * time.Hour)
	if s.clock, err = simclock.Create(s.clockPath, s.start, cfg.factor); err != nil {
		tb.Fatal(err)
	}
	defer s.clock.Close()
	s.gov = newGovernor(s.clock, cfg.factor, 3*time.Minute, s.logf)
	defer s.gov.close()
	s.gov.working("setup", "starting")
	s.obs = newObserver(s)
	if err := s.obs.start(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := s.setUp(ctx); err != nil {
		tb.Fatal(err)
	}
	want := len(schedules())
	for s.obs.scheduleCount() < want {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.startManager(0); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = s.stopManager() }()
	s.gov.set("end", s.end, "the end")
	s.gov.remove("setup")
	clockBegan := time.Now()

	// The timetable, the history checks and the progress lines.
	timetableDone := make(chan error, 1)
	go func() {
		if err := s.runTimetable(ctx, s.timetable()); err != nil {
			timetableDone <- err
			return
		}
		timetableDone <- s.clock.WaitUntil(ctx, s.end)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watch(ctx)
	}()
	var failed error
	select {
	case err := <-timetableDone:
		failed = err
	case err := <-s.crashed:
		failed = err
	}
	// At the end the clock stands still: the runs due by now are created.
	s.gov.working("end", "the end")
	if failed == nil {
		deadline := time.Now().Add(2 * time.Minute)
		for !s.obs.allCreated(s.end) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	s.logf("the end: %s real (%s of it with the clock running)", time.Since(clockBegan).Round(time.Second), s.runningTime().Round(time.Second))
	if text, err := s.apiServerRequests(context.Background()); err == nil {
		s.logf("%s", text)
	}
	stopErr := s.stopManager()
	cancel()
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(time.Minute):
		s.anomaly("the soak's goroutines did not end within a minute")
	}
	if failed != nil {
		tb.Fatalf("the soak: %v", failed)
	}
	if stopErr != nil {
		s.anomaly("%v", stopErr)
	}
	res := s.report(time.Since(began))
	return res
}

// prepare makes the manager's kubeconfig, the run key, the metrics
// address and the runners' clients.
func (s *soak) prepare() error {
	user, err := s.cluster.Env.AddUser(envtest.User{Name: "storagebench-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	s.kubeconfig = filepath.Join(s.dir, "manager.kubeconfig")
	if err := os.WriteFile(s.kubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	s.runKey = hex.EncodeToString(key)
	if s.metricsAddr, err = freeLoopbackAddr(); err != nil {
		return err
	}
	// The runners' clients: no client-side rate limit, as each real
	// runner has its own; a few connections for their watches.
	cfg := rest.CopyConfig(s.cluster.Config)
	cfg.QPS = -1
	for range 4 {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		s.runnerClients = append(s.runnerClients, cs)
	}
	return nil
}

func (s *soak) runningTime() time.Duration {
	running, _, _ := s.gov.stats()
	return running
}

// watch checks the history limits every 5 seconds, and prints a progress
// line every simulated day (2 hours for a short soak).
func (s *soak) watch(ctx context.Context) {
	every := 24 * time.Hour
	if s.cfg.days < 3 {
		every = 2 * time.Hour
	}
	next := s.start.Add(every)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.obs.checkHistory()
		if i%6 == 5 {
			n, err := s.orphans(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.anomaly("counting orphans: %v", err)
				}
				continue
			}
			s.mu.Lock()
			s.garbage = append(s.garbage, garbageSample{s.clock.Now(), n})
			s.mu.Unlock()
		}
		if now := s.clock.Now(); !now.Before(next) {
			next = now.Truncate(time.Second).Add(every)
			running, stopped, stuck := s.gov.stats()
			s.obs.mu.Lock()
			created, existing := s.obs.created, len(s.obs.benches)
			s.obs.mu.Unlock()
			s.logf("runs created %d, benchmarks %d, clock running %s / stood %s real, stuck %d",
				created, existing, running.Round(time.Second), stopped.Round(time.Second), len(stuck))
		}
	}
}
