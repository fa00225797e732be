package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// ClientPlan is everything one client needs to know for the whole benchmark.
// The per-step load is not in it: every step order names the step, and each
// client derives its own jobs' share with plan.Divide, which is deterministic,
// so all clients agree without the order listing every job.
type ClientPlan struct {
	Benchmark string          `json:"benchmark"`
	Client    int             `json:"client"`
	Topology  plan.Topology   `json:"topology"`
	Workload  workload.Spec   `json:"workload"`
	Volume    Volume          `json:"volume"`
	Seed      uint64          `json:"seed"`
	Precond   bool            `json:"precondition"`
	Fio       string          `json:"fio,omitempty"`
	Options   ExecutorOptions `json:"-"`
}

// ExecutorOptions tune how fio is run (tests shorten the grace period).
type ExecutorOptions struct {
	GracePeriod time.Duration
}

// Volume says where the client's I/O goes.
type Volume struct {
	// Path is the volume's mount point (Filesystem) or device (Block).
	Path string `json:"path"`
	// Block is set for raw block volumes: jobs use disjoint regions.
	Block bool `json:"block,omitempty"`
	// Shared is set when several clients mount the same volume: each client
	// then works in its own directory, client-NNN.
	Shared bool `json:"shared,omitempty"`
}

// StepOrder tells the clients to run one step, or that there is none left.
type StepOrder struct {
	Index int `json:"index"`
	// Done says there are no more steps; the other fields are unset.
	Done bool `json:"done,omitempty"`
	// Reason says why the run ended (with Done).
	Reason string `json:"reason,omitempty"`
	// StartAt is the wall-clock instant every client starts this step.
	StartAt  time.Time     `json:"startAt"`
	Step     plan.Step     `json:"step"`
	Duration time.Duration `json:"duration"`
	Ramp     time.Duration `json:"ramp"`
}

// Ready is what a client reports once its files are laid out and
// preconditioned.
type Ready struct {
	Client     int    `json:"client"`
	FioVersion string `json:"fioVersion"`
	// Mount is the volume's file system as the client sees it (nil for a
	// raw block device, or when /proc/self/mounts cannot be read).
	Mount        *Mount        `json:"mount,omitempty"`
	Precondition time.Duration `json:"precondition"`
	Error        string        `json:"error,omitempty"`
}

// Coordinator is the client's side of the lockstep protocol.
type Coordinator interface {
	// ReportReady tells the conductor the client is prepared (or failed).
	ReportReady(ctx context.Context, r Ready) error
	// WaitOrder blocks until the order for step index exists.
	WaitOrder(ctx context.Context, index int) (StepOrder, error)
}

// Publisher receives each step's result as soon as the step ends.
type Publisher interface {
	Publish(ctx context.Context, r results.ClientStep) error
}

// ErrInterrupted is returned when the runner was stopped (SIGTERM) during a
// step; what was measured until then has been published.
var ErrInterrupted = errors.New("runner interrupted; the partial step was published")

// Runner drives fio for one client.
type Runner struct {
	Plan        ClientPlan
	Coordinator Coordinator
	Publisher   Publisher
	// WorkDir holds job files and fio reports (not on the volume under test).
	WorkDir string
	// Now is the clock (tests may override).
	Now func() time.Time
}

// Run prepares the client's files, then runs every ordered step in lockstep,
// publishing each result as it ends. Cancelling ctx stops fio cleanly: the
// partial step is published (marked interrupted) and ErrInterrupted returned.
func (r *Runner) Run(ctx context.Context) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	exe := fio.Executor{Binary: r.Plan.Fio, WorkDir: r.WorkDir, GracePeriod: r.Plan.Options.GracePeriod}
	ready := Ready{Client: r.Plan.Client}
	layout, err := r.prepare(ctx, exe, &ready)
	if err != nil {
		ready.Error = err.Error()
		// The conductor must learn why this client will never be ready.
		_ = r.Coordinator.ReportReady(context.WithoutCancel(ctx), ready)
		return err
	}
	if err := r.Coordinator.ReportReady(ctx, ready); err != nil {
		return fmt.Errorf("reporting ready: %w", err)
	}
	for k := 0; ; k++ {
		order, err := r.Coordinator.WaitOrder(ctx, k)
		if err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return fmt.Errorf("waiting for step %d: %w", k, err)
		}
		if order.Done {
			return nil
		}
		if err := r.step(ctx, exe, layout, order); err != nil {
			return err
		}
	}
}

func (r *Runner) prepare(ctx context.Context, exe fio.Executor, ready *Ready) (fio.Layout, error) {
	v, err := exe.Version(ctx)
	if err != nil {
		return fio.Layout{}, err
	}
	ready.FioVersion = v
	layout, err := r.layout()
	if err != nil {
		return fio.Layout{}, err
	}
	if !r.Plan.Volume.Block {
		ready.Mount = volumeMount(r.Plan.Volume.Path)
	}
	if r.Plan.Precond {
		start := r.Now()
		pre := fio.Precondition("precondition", string(r.Plan.Workload.IOEngine), r.Plan.Workload.Direct,
			int(r.Plan.Topology.JobsPerClient), r.Plan.Seed, layout.BytesPerJob)
		pre.CompressPercent = r.Plan.Workload.CompressPercent
		job, err := fio.Render(pre, layout)
		if err != nil {
			return layout, err
		}
		res, err := exe.Run(ctx, "precondition", job)
		if err != nil {
			return layout, fmt.Errorf("preconditioning: %w", err)
		}
		if res.Interrupted {
			return layout, ErrInterrupted
		}
		ready.Precondition = r.Now().Sub(start)
	}
	return layout, nil
}

// layout checks the volume and decides where each job's I/O goes. A missing
// mount point is an error, never silently created: fio would create it on
// the node's root file system and measure the wrong storage.
func (r *Runner) layout() (fio.Layout, error) {
	p := r.Plan
	jobs := int64(p.Topology.JobsPerClient)
	if jobs < 1 {
		return fio.Layout{}, fmt.Errorf("plan has %d jobs per client", jobs)
	}
	bs := p.Workload.BlockSizeBytes
	perJob := p.Workload.WorkingSetBytesPerClient / jobs / bs * bs
	if perJob < bs {
		return fio.Layout{}, fmt.Errorf("working set %d bytes over %d jobs leaves less than one %d-byte block per job",
			p.Workload.WorkingSetBytesPerClient, jobs, bs)
	}
	fi, err := os.Stat(p.Volume.Path)
	if err != nil {
		return fio.Layout{}, fmt.Errorf("volume %s: %w", p.Volume.Path, err)
	}
	if p.Volume.Block {
		if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			return fio.Layout{}, fmt.Errorf("volume %s is not a block device (mode %s)", p.Volume.Path, fi.Mode())
		}
		l := fio.Layout{Device: p.Volume.Path, BytesPerJob: perJob}
		if p.Volume.Shared {
			// Clients sharing the device get consecutive, disjoint ranges.
			l.BaseOffset = int64(p.Client) * jobs * perJob
		}
		return l, nil
	}
	if !fi.IsDir() {
		return fio.Layout{}, fmt.Errorf("volume %s is not a directory", p.Volume.Path)
	}
	dir := p.Volume.Path
	if p.Volume.Shared {
		dir = filepath.Join(dir, fmt.Sprintf("client-%03d", p.Client))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fio.Layout{}, fmt.Errorf("creating the client's directory on the shared volume: %w", err)
		}
	}
	return fio.Layout{Directory: dir, BytesPerJob: perJob}, nil
}

func (r *Runner) step(ctx context.Context, exe fio.Executor, layout fio.Layout, order StepOrder) error {
	p := r.Plan
	loads, err := plan.Divide(order.Step, p.Topology, p.Workload)
	if err != nil {
		return fmt.Errorf("step %d: %w", order.Index, err)
	}
	mine := loads[p.Client]
	run := fio.Run{
		Name:            fmt.Sprintf("step%d", order.Index),
		Engine:          string(p.Workload.IOEngine),
		Direct:          p.Workload.Direct,
		BlockSizeBytes:  p.Workload.BlockSizeBytes,
		ReadPercent:     p.Workload.ReadPercent,
		Random:          p.Workload.Pattern == workload.Random,
		CompressPercent: p.Workload.CompressPercent,
		Runtime:         order.Duration,
		Ramp:            order.Ramp,
		// A new seed per step and per client: clients never replay each
		// other's offsets, and steps do not replay earlier ones.
		Seed: p.Seed + uint64(order.Index)*uint64(len(mine)),
	}
	for _, l := range mine {
		run.Jobs = append(run.Jobs, fio.Job{IODepth: l.IODepth, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS,
			ReadBytesPerSec: l.ReadBytesPerSec, WriteBytesPerSec: l.WriteBytesPerSec})
	}
	job, err := fio.Render(run, layout)
	if err != nil {
		return fmt.Errorf("step %d: %w", order.Index, err)
	}
	if err := sleepUntil(ctx, r.Now, order.StartAt); err != nil {
		return ErrInterrupted
	}
	cs := results.ClientStep{Client: p.Client, Step: order.Index, Jobs: len(mine), PlannedStart: order.StartAt, ActualStart: r.Now()}
	res, runErr := exe.Run(ctx, run.Name, job)
	cs.End = r.Now()
	if runErr != nil {
		cs.Error = runErr.Error()
	} else {
		cs.Read, cs.Write = results.FromFio(res.Output)
		cs.Interrupted = res.Interrupted
	}
	// Publish even when stopping: what was measured must not be lost.
	if err := r.Publisher.Publish(context.WithoutCancel(ctx), cs); err != nil {
		return fmt.Errorf("publishing step %d: %w", order.Index, err)
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fmt.Errorf("step %d: %w", order.Index, runErr)
	}
	if cs.Interrupted {
		return ErrInterrupted
	}
	return nil
}

func sleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	d := t.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
