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

func startAheadClient(t *testing.T, fioBinary string) *aheadClient {
	t.Helper()
	requireFio(t)
	dir := t.TempDir()
	x := FileExchange{Dir: filepath.Join(dir, "exchange"), Poll: 5 * time.Millisecond}
	r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 1}, OrdersAhead: true, Fio: fioBinary,
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(8 << 20)),
			IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Volume: protocol.Volume{Path: filepath.Join(dir, "volume")}}, Coordinator: x, Publisher: x,
		WorkDir: filepath.Join(dir, "work"), Waiter: waiter(t)}
	if err := os.Mkdir(r.Plan.Volume.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &aheadClient{t: t, x: x, r: r, errc: make(chan error, 1)}
	go func() { c.errc <- r.Run(context.Background()) }()
	c.await(func() (bool, error) {
		ready, ok, err := x.ReadReady(0)
		if ok && ready.Error != "" {
			t.Fatalf("not ready: %s", ready.Error)
		}
		return ok, err
	})
	return c
}

// await polls read until it says so, for at most a minute.
func (c *aheadClient) await(read func() (bool, error)) {
	c.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ok, err := read()
		if err != nil {
			c.t.Fatal(err)
		}
		if ok {
			return
		}
	}
	c.t.Fatal("the runner did not get there within a minute")
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
	c.await(func() (ok bool, err error) { res, ok, err = c.x.ReadResult(step, 0); return ok, err })
	return res
}

// TestLayoutBeforeReady: without preconditioning the runner still lays
// its files out before it says it is ready, so the first step's fio does
// not, after its instant.
func TestLayoutBeforeReady(t *testing.T) {
	c := startAheadClient(t, "")
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

// TestALateStepDelaysTheNextOne orders a step after its instant, and the
// next one ahead, from the instant the first should have ended: the client
// begins the second step only when its first has run its full duration.
func TestALateStepDelaysTheNextOne(t *testing.T) {
	c := startAheadClient(t, "")
	const d = 3 * time.Second
	first := protocol.StepOrder{Index: 0, StartAt: time.Now().Add(-1500 * time.Millisecond).Truncate(time.Millisecond),
		Step: plan.Step{OfferedIOPS: 100}, Duration: d}
	second := protocol.StepOrder{Index: 1, StartAt: first.End(), Step: plan.Step{OfferedIOPS: 200}, Duration: d}
	c.order(first)
	c.order(second)
	r0 := c.result(0)
	r1 := c.result(1)
	c.order(protocol.StepOrder{Index: 2, Done: true})
	if err := <-c.errc; err != nil {
		t.Fatal(err)
	}
	if r0.Error != "" || r1.Error != "" {
		t.Fatalf("step errors: %q, %q", r0.Error, r1.Error)
	}
	late := r0.ActualStart.Sub(first.StartAt)
	if late < time.Second {
		t.Fatalf("the first step began %s after its instant: the test needs it late", late)
	}
	// fio's clock for a job starts milliseconds after its release, and
	// its timestamps are whole milliseconds.
	if gap := r1.ActualStart.Sub(r0.ActualStart.Add(d)); gap < -LateTolerance {
		t.Errorf("step 2 began %s before step 1's I/O ended (step 1 began %s late)", -gap, late)
	}
	t.Logf("step 1 began %s late; step 2 began %s after step 1 ended, %s after its own instant",
		late, r1.ActualStart.Sub(r0.ActualStart.Add(d)), r1.ActualStart.Sub(second.StartAt))
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
	c := startAheadClient(t, wrapper)
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
