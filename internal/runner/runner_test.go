package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/workload"
	"github.com/storagebench/storagebench/test/asroot"
)

// TestMain makes the test binary a Runner.Waiter too, as the runner
// binary is: run with fio.WaitUntilCommand, it waits and exits.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fio.WaitUntilCommand {
		if err := fio.WaitUntil(context.Background(), os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// waiter is the test binary, as a Runner.Waiter.
func waiter(t *testing.T) string {
	t.Helper()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func requireFio(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
}

func spec(t *testing.T, profile string, o workload.Overrides) workload.Spec {
	t.Helper()
	s, err := workload.Resolve(profile, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// TestLocalLockstepThreeClients runs three clients (three concurrent fio
// processes) through two rate steps on one shared directory.
func TestLocalLockstepThreeClients(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "lockstep", Dir: t.TempDir(), Precondition: true, Waiter: waiter(t),
		Workload: spec(t, "oltp", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(8 << 20))}),
		Topology: plan.Topology{Clients: 3, JobsPerClient: 2},
		Load:     plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Steps: []int64{300, 600}}, StepDuration: 5 * time.Second, RampTime: time.Second}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 || out.Stop == nil || out.Stop.Kind != plan.StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
	x := l.exchange()
	// Rate steps without stop rules do not depend on results: the second
	// is ordered ahead, to start the instant the first ends.
	if first, second := out.Steps[0], out.Steps[1]; !second.Order.StartAt.Equal(first.Order.StartAt.Add(l.Load.RampTime + l.Load.StepDuration)) {
		t.Errorf("step 2 starts at %s, not as step 1 ends", second.Order.StartAt.Sub(first.Order.StartAt))
	}
	for _, s := range out.Steps {
		a := s.Aggregate
		if a.Clients != 3 || a.Jobs != 6 {
			t.Fatalf("step %d merged %d clients, %d jobs", a.Step, a.Clients, a.Jobs)
		}
		offered := float64(s.Order.Step.OfferedIOPS)
		if math.Abs(a.Total.IOPS-offered)/offered > 0.05 {
			t.Errorf("step %d: achieved %.1f IOPS, offered %.0f", a.Step, a.Total.IOPS, offered)
		}
		// Every client waited for the common start instant.
		var samples []uint64
		for c := range 3 {
			r, ok, err := x.ReadResult(a.Step, c)
			if err != nil || !ok {
				t.Fatalf("result of client %d step %d: %v %v", c, a.Step, ok, err)
			}
			// fio holds its I/O until the instant, and its timestamps
			// are whole milliseconds.
			if d := r.ActualStart.Sub(r.PlannedStart); d < -time.Millisecond || d > 100*time.Millisecond {
				t.Errorf("client %d started step %d %s after the planned %s", c, a.Step, d, r.PlannedStart)
			}
			for _, b := range r.Read.Latency.Hist.Bins {
				for range b.Count {
					samples = append(samples, fio.BinValue(b.Index))
				}
			}
		}
		slices.Sort(samples)
		want := fio.ReferencePercentiles(samples, results.SummaryPercentiles)
		got := []uint64{a.Read.Latency.P50Ns, a.Read.Latency.P90Ns, a.Read.Latency.P95Ns, a.Read.Latency.P99Ns, a.Read.Latency.P999Ns, a.Read.Latency.P9999Ns}
		if !slices.Equal(got, want) {
			t.Errorf("step %d read percentiles %v, reference %v", a.Step, got, want)
		}
	}
	// Preconditioning laid out every job's file at full size, per client.
	for c := range 3 {
		for j := range 2 {
			fi, err := os.Stat(filepath.Join(l.VolumePath(), clientDir(c), jobFile(j)))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != 4<<20 {
				t.Errorf("client %d job %d file is %d bytes, want %d", c, j, fi.Size(), 4<<20)
			}
		}
	}
}

func clientDir(c int) string { return fmt.Sprintf("client-%03d", c) }
func jobFile(j int) string   { return fmt.Sprintf("job%d.dat", j) }

func TestMissingVolumeIsReportedNotCreated(t *testing.T) {
	requireFio(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "not-mounted")
	x := FileExchange{Dir: filepath.Join(dir, "x"), Poll: 10 * time.Millisecond}
	r := &Runner{Plan: protocol.ClientPlan{Client: 0, Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(1 << 20))}),
		Volume:   protocol.Volume{Path: missing, Shared: true}}, Coordinator: x, Publisher: x, WorkDir: filepath.Join(dir, "w")}
	err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Fatalf("want a missing-volume error, got %v", err)
	}
	if _, statErr := os.Stat(missing); !os.IsNotExist(statErr) {
		t.Fatal("the runner created the missing mount point")
	}
	ready, ok, _ := x.ReadReady(0)
	if !ok || !strings.Contains(ready.Error, missing) {
		t.Fatalf("conductor was not told why: %+v", ready)
	}
	c := Conductor{Files: x, Spec: run.Spec{Topology: plan.Topology{Clients: 1, JobsPerClient: 1}, Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{10}}, StepDuration: 5 * time.Second}}}
	out, err := c.Run(context.Background())
	if err == nil || !strings.Contains(out.Failure, "client 0 could not prepare") {
		t.Fatalf("conductor outcome %+v, %v", out, err)
	}
	if o, err := x.WaitOrder(context.Background(), 0); err != nil || !o.Done {
		t.Fatalf("clients were not told to finish: %+v %v", o, err)
	}
}

func TestBlockVolumeMustBeABlockDevice(t *testing.T) {
	f := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(1 << 20))}), Volume: protocol.Volume{Path: f, Block: true}}}
	if _, err := r.layout(); err == nil || !strings.Contains(err.Error(), "not a block device") {
		t.Fatalf("got %v", err)
	}
}

func TestFioErrorReachesTheConductor(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "enospc", Dir: t.TempDir(), Precondition: true,
		Workload: spec(t, "rand-write", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20))}),
		Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
		Load:     plan.Load{Rate: &plan.RateSteps{Steps: []int64{100}}, StepDuration: 5 * time.Second}}
	vol := l.VolumePath()
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	// Room for the blocks (the runner checks the free space before it
	// writes) but no inode for the job file: fio itself runs out of space.
	if asroot.Rerun(t) {
		return
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m,nr_inodes=2", "tmpfs", vol).CombinedOutput(); err != nil {
		t.Fatalf("mounting an 8 MiB tmpfs with no free inode as the volume (tests run as root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", vol).Run() })
	// tmpfs has no O_DIRECT.
	l.Workload.Direct = false
	l.Workload.IOEngine = workload.PSync
	l.Workload.IODepth = 1
	out, err := l.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "No space left on device") {
		t.Fatalf("want fio's ENOSPC text, got %v", err)
	}
	if out == nil || len(out.Steps) != 0 || !strings.Contains(out.Failure, "preconditioning") {
		t.Fatalf("outcome %+v", out)
	}
}

func TestInterruptPublishesPartialStep(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "sigterm", Dir: t.TempDir(),
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20))}),
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1},
		Load:     plan.Load{Rate: &plan.RateSteps{Steps: []int64{200, 400}}, StepDuration: 60 * time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	l.Progress = func(run.Step) {}
	go func() {
		// Cancel once the first step has been running for a while.
		x := l.exchange()
		for {
			if o, err := x.WaitOrder(ctx, 0); err == nil {
				time.Sleep(time.Until(o.StartAt) + 3*time.Second)
				cancel()
				return
			}
		}
	}()
	start := time.Now()
	out, err := l.Run(ctx)
	if err == nil {
		t.Fatal("an interrupted run reported success")
	}
	if time.Since(start) > 50*time.Second {
		t.Fatal("the run did not stop on cancellation")
	}
	if len(out.Steps) != 1 || !out.Steps[0].Aggregate.Interrupted || out.Steps[0].Aggregate.Clients != 2 {
		t.Fatalf("partial step not kept: %+v", out.Steps)
	}
	if out.Steps[0].Aggregate.Read.IOs == 0 {
		t.Fatal("partial step has no I/O")
	}
}

func TestSaturationStopRuleEndsTheRun(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "saturate", Dir: t.TempDir(),
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20)),
			IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
		// One synchronous job cannot do 5 million IOPS.
		Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{5_000_000, 10_000_000}}, StepDuration: 5 * time.Second,
			Stop: plan.StopRules{SaturationPercent: 90}}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 1 || out.Stop == nil || out.Stop.Kind != plan.StopSaturated {
		t.Fatalf("outcome %+v stop %+v", out.Steps, out.Stop)
	}
}

func TestCurveModeOffersPercentOfMeasuredMax(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "curve", Dir: t.TempDir(),
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20)),
			IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1},
		Load:     plan.Load{Curve: &plan.CurveSpec{Percents: []int32{10, 50}}, StepDuration: 5 * time.Second}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 3 || !out.Steps[0].Order.Step.Unthrottled {
		t.Fatalf("steps %+v", out.Steps)
	}
	max := out.Steps[0].Aggregate.Total.IOPS
	for i, pct := range []float64{10, 50} {
		s := out.Steps[i+1]
		if want := int64(max * pct / 100); s.Order.Step.OfferedIOPS != want {
			t.Errorf("curve step %d offered %d, want %d (%.0f %% of %.1f)", i+1, s.Order.Step.OfferedIOPS, want, pct, max)
		}
		if math.Abs(s.Aggregate.Total.IOPS-float64(s.Order.Step.OfferedIOPS))/float64(s.Order.Step.OfferedIOPS) > 0.05 {
			t.Errorf("curve step %d achieved %.1f of %d", i+1, s.Aggregate.Total.IOPS, s.Order.Step.OfferedIOPS)
		}
	}
}
