package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// aheadClient is one client whose steps are ordered ahead, over a file
// exchange the test writes the orders into.
type aheadClient struct {
	t    *testing.T
	x    FileExchange
	r    *Runner
	errc chan error
}

// delayedPublisher publishes each result a pause after its step ended: a
// runner that launched the next step only after publishing would begin it
// that much late.
type delayedPublisher struct {
	Publisher
	delay time.Duration
}

func (p delayedPublisher) Publish(ctx context.Context, r results.ClientStep) error {
	time.Sleep(p.delay)
	return p.Publisher.Publish(ctx, r)
}

// startAheadClient starts a client, fio being fioBinary ("" for PATH's)
// and each publish delayed by delay, and waits until it is ready.
func startAheadClient(t *testing.T, fioBinary string, delay time.Duration) *aheadClient {
	t.Helper()
	requireFio(t)
	dir := t.TempDir()
	x := FileExchange{Dir: filepath.Join(dir, "exchange"), Poll: 5 * time.Millisecond}
	r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 1}, OrdersAhead: true, Fio: fioBinary,
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(8 << 20)),
			IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Volume: protocol.Volume{Path: filepath.Join(dir, "volume")}}, Coordinator: x, Publisher: delayedPublisher{x, delay},
		WorkDir: filepath.Join(dir, "work"), Waiter: waiter(t)}
	if err := os.Mkdir(r.Plan.Volume.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &aheadClient{t: t, x: x, r: r, errc: make(chan error, 1)}
	go func() { c.errc <- r.Run(context.Background()) }()
	awaitRunner(t, func() (bool, error) {
		ready, ok, err := x.ReadReady(0)
		if ok && ready.Error != "" {
			t.Fatalf("not ready: %s", ready.Error)
		}
		return ok, err
	})
	return c
}

// awaitRunner polls read, which reads what a runner wrote to its exchange,
// until it says so, for at most 30 s.
func awaitRunner(t *testing.T, read func() (bool, error)) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ok, err := read()
		if err != nil {
			t.Fatalf("waiting for the runner: %v", err)
		}
		if ok {
			return
		}
	}
	t.Fatal("the runner did not get there within 30 s")
}

func (c *aheadClient) order(o protocol.StepOrder) {
	c.t.Helper()
	if err := c.x.WriteOrder(o); err != nil {
		c.t.Fatal(err)
	}
}

func (c *aheadClient) result(step int) results.ClientStep {
	c.t.Helper()
	var res results.ClientStep
	awaitRunner(c.t, func() (ok bool, err error) { res, ok, err = c.x.ReadResult(step, 0); return ok, err })
	return res
}

// TestReadyMeasuresFioStartup: a runner with a waiter says in its ready
// report how long fio took to have its jobs ready, and when it wrote the
// report, so the conductor can derive the first step's lead.
func TestReadyMeasuresFioStartup(t *testing.T) {
	before := time.Now()
	c := startAheadClient(t, "", 0)
	ready, ok, err := c.x.ReadReady(0)
	if err != nil || !ok {
		t.Fatalf("no ready report: %v", err)
	}
	t.Logf("fio start-up %s", ready.FioStartup)
	if ready.FioStartup <= 0 || ready.FioStartup > 10*time.Second {
		t.Errorf("fio start-up %s, want a measured time under 10 s", ready.FioStartup)
	}
	if ready.At.Before(before) || ready.At.After(time.Now()) {
		t.Errorf("report written at %s, want between the start %s and now", ready.At, before)
	}
	c.order(protocol.StepOrder{Done: true})
	if err := <-c.errc; err != nil {
		t.Fatal(err)
	}
}

// TestLayoutBeforeReady: without preconditioning the runner still lays
// its files out before it says it is ready, so the first step's fio does
// not, after its instant.
func TestLayoutBeforeReady(t *testing.T) {
	c := startAheadClient(t, "", 0)
	fi, err := os.Stat(filepath.Join(c.r.Plan.Volume.Path, "job0.dat"))
	if err != nil {
		t.Fatalf("no file laid out when ready: %v", err)
	}
	if fi.Size() != 8<<20 {
		t.Errorf("laid out %d bytes, want %d", fi.Size(), 8<<20)
	}
	c.order(protocol.StepOrder{Done: true})
	if err := <-c.errc; err != nil {
		t.Fatal(err)
	}
}

// TestALateClientReturnsToTheGrid orders four steps ahead, the first
// after its instant: the client begins each step as the one before ends
// (never a second step's I/O over the first's, beyond LateTolerance),
// without waiting for the last result to be published, and its lateness
// shrinks from step to step rather than grow.
func TestALateClientReturnsToTheGrid(t *testing.T) {
	const d, publishDelay = 2 * time.Second, time.Second
	c := startAheadClient(t, "", publishDelay)
	// Late by more than a step's duration less LaunchAhead: the first step
	// has not begun when the second is due to be launched.
	start := time.Now().Add(-1500 * time.Millisecond).Truncate(time.Millisecond)
	const steps = 4
	var orders []protocol.StepOrder
	for k := range steps {
		o := protocol.StepOrder{Index: k, StartAt: start.Add(time.Duration(k) * d), Step: plan.Step{OfferedIOPS: int64(100 * (k + 1))}, Duration: d}
		orders = append(orders, o)
		c.order(o)
	}
	c.order(protocol.StepOrder{Index: steps, Done: true})
	var res []results.ClientStep
	for k := range steps {
		r := c.result(k)
		if r.Error != "" {
			t.Fatalf("step %d: %s", k, r.Error)
		}
		res = append(res, r)
	}
	if err := <-c.errc; err != nil {
		t.Fatal(err)
	}
	late := func(k int) time.Duration { return res[k].ActualStart.Sub(orders[k].StartAt) }
	if late(0) < time.Second {
		t.Fatalf("the first step began %s after its instant: the test needs it late", late(0))
	}
	for k := 1; k < steps; k++ {
		gap := res[k].ActualStart.Sub(res[k-1].ActualStart.Add(d))
		t.Logf("step %d began %s late, %s after step %d's I/O ended", k, late(k), gap, k-1)
		// fio's clock for a job starts milliseconds after its release
		// (more on a busy node), and its timestamps are whole milliseconds.
		if gap < -3*LateTolerance {
			t.Errorf("step %d began %s before step %d's I/O ended", k, -gap, k-1)
		}
		if gap > publishDelay/2 {
			t.Errorf("step %d began %s after step %d ended: it waited for the publish", k, gap, k-1)
		}
	}
	if late(steps-1) >= late(0)+LateTolerance {
		t.Errorf("lateness grew from %s to %s over %d steps", late(0), late(steps-1), steps)
	}
}

// TestAFailedStepIsReportedAtOnce: when a step's fio fails while the
// client waits for the next order, the failure is published then, not at
// the step's planned end.
func TestAFailedStepIsReportedAtOnce(t *testing.T) {
	requireFio(t)
	// A fio that fails the first step's run and is the real one otherwise
	// (the layout, the version).
	wrapper := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\ncase \"$*\" in *step0.fio*) echo 'fio: injected failure' >&2; exit 1;; esac\nexec fio \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := startAheadClient(t, wrapper, 0)
	const d = time.Minute
	first := protocol.StepOrder{Index: 0, StartAt: time.Now().Add(time.Second).Truncate(time.Millisecond),
		Step: plan.Step{OfferedIOPS: 100}, Duration: d}
	c.order(first)
	// No order for the next step: the client waits for it while step 0 runs.
	r0 := c.result(0)
	err := <-c.errc
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("want the step's failure, got %v", err)
	}
	if !strings.Contains(r0.Error, "injected failure") {
		t.Errorf("published error %q", r0.Error)
	}
	if left := first.End().Sub(r0.End); left < d/2 {
		t.Errorf("the failure was published %s before the step's planned end of %s", left, d)
	}
}
