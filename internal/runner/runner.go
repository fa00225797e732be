package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// Clock measures the runner's clock against the conductor's.
type Clock interface {
	// ClockOffset returns the runner's clock minus the conductor's and the
	// uncertainty of that figure.
	ClockOffset(ctx context.Context) (offset, uncertainty time.Duration, err error)
}

// Coordinator is the client's side of the lockstep protocol.
type Coordinator interface {
	// ReportReady tells the conductor the client is prepared (or failed).
	ReportReady(ctx context.Context, r protocol.Ready) error
	// WaitOrder blocks until the order for step index exists.
	WaitOrder(ctx context.Context, index int) (protocol.StepOrder, error)
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
	Plan        protocol.ClientPlan
	Coordinator Coordinator
	Publisher   Publisher
	// WorkDir holds job files and fio reports (not on the volume under test).
	WorkDir string
	// Now is the clock (tests may override).
	Now func() time.Time
	// Waiter, when set, is the absolute path of a program that waits for
	// an instant (`Waiter wait-until <Unix ns>`, fio.WaitUntil; the runner
	// binary is one). fio is then launched LaunchAhead before a step's
	// instant and holds its jobs' I/O until it (fio.Run.StartAt), so a
	// step begins on the instant whatever fio's start-up takes. Without
	// it, fio is launched at the instant, and its start-up is part of the
	// step's time.
	Waiter string
	// Clock, when set, measures Now's offset to the conductor's clock while
	// preparing: steps then start at the ordered instant of the conductor's
	// clock, and results carry instants of that clock. Nil when both share
	// a clock.
	Clock Clock

	offset  time.Duration // Now minus the conductor's clock
	created workspace     // what the runner created on the volume
	// written is what the run wrote, block by block, when it verifies.
	written *written
	// statfs reads the free space of a directory's file system: freeSpace
	// when nil. Tests of what does not depend on the host's free space
	// give one that reports a roomy file system.
	statfs func(dir string) (fsSpace, error)
	// cgroup is where the container's CPU bandwidth is read (cpu.go),
	// found when the run starts; cgroupOK says there is one.
	cgroup   cgroupCPU
	cgroupOK bool
}

// Run prepares the client's files, then runs every ordered step in lockstep,
// publishing each result as it ends. Cancelling ctx stops fio cleanly: the
// partial step is published (marked interrupted) and ErrInterrupted returned.
//
// With Volume.RemoveWhenDone the files the runner created are removed when it
// ends: after the done order, and also on failure or when stopped.
func (r *Runner) Run(ctx context.Context) (err error) {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Plan.Volume.RemoveWhenDone && !r.Plan.Volume.Block {
		defer func() {
			if r.Plan.Verify && err != nil {
				// A run that verifies and fails keeps what its finished
				// steps wrote for the operator's verifier; its cleanup pod
				// removes the directory after it.
				return
			}
			if rmErr := r.created.remove(); rmErr != nil {
				err = errors.Join(err, rmErr)
			}
		}()
	}
	exe := fio.Executor{Binary: r.Plan.Fio, WorkDir: r.WorkDir}
	r.cgroup, r.cgroupOK = ownCgroupCPU()
	ready := protocol.Ready{Client: r.Plan.Client}
	layout, err := r.prepare(ctx, exe, &ready)
	if err != nil {
		ready.Error = protocol.Truncate(err.Error(), protocol.MaxErrorBytes)
		// The conductor must learn why this client will never be ready.
		_ = r.Coordinator.ReportReady(context.WithoutCancel(ctx), ready)
		return err
	}
	ready.At = r.conductorNow()
	if err := r.Coordinator.ReportReady(ctx, ready); err != nil {
		return fmt.Errorf("reporting ready: %w", err)
	}
	var pending *launched // the next step, launched while this one ran
	for k := 0; ; k++ {
		cur := pending
		if cur == nil {
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
			if cur, err = r.launch(ctx, exe, layout, order); err != nil {
				return err
			}
		}
		next, done, aheadErr := r.ahead(ctx, exe, layout, cur)
		if err := r.finish(ctx, cur); err != nil {
			next.stop()
			return err
		}
		if next != nil && cur.cpuEndOK {
			// Launched ahead, next counts its CPU from cur's end: the
			// second they overlapped is cur's alone.
			next.cpu, next.cpuOK = cur.cpuEnd, true
		}
		switch {
		case aheadErr != nil:
			return aheadErr
		case done:
			return nil
		}
		pending = next
	}
}

func (r *Runner) prepare(ctx context.Context, exe fio.Executor, ready *protocol.Ready) (fio.Layout, error) {
	// The clock offset is measured while the files are laid out: it waits
	// for the API server's second to change (up to 2.5 s), the layout for
	// the volume.
	var clock <-chan measuredOffset
	if r.Clock != nil {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		c := make(chan measuredOffset, 1)
		go func() {
			var m measuredOffset
			m.offset, m.uncertainty, m.err = r.Clock.ClockOffset(cctx)
			c <- m
		}()
		clock = c
	}
	v, err := exe.Version(ctx)
	if err != nil {
		return fio.Layout{}, err
	}
	ready.FioVersion = protocol.Truncate(v, protocol.MaxErrorBytes)
	layout, err := r.layout()
	if err != nil {
		return fio.Layout{}, err
	}
	if !r.Plan.Volume.Block {
		ready.Mount = volumeMount(r.Plan.Volume.Path)
	}
	if r.Plan.Verify {
		r.written = newWritten(layout, int(r.Plan.Topology.JobsPerClient), r.Plan.Workload.BlockSizeBytes)
	}
	if r.Plan.Precond {
		start := r.Now()
		pre := fio.Precondition("precondition", string(r.Plan.Workload.IOEngine), r.Plan.Workload.Direct,
			int(r.Plan.Topology.JobsPerClient), r.Plan.Seed, layout.BytesPerJob)
		pre.CompressPercent, pre.DedupePercent = r.Plan.Workload.CompressPercent, r.Plan.Workload.DedupePercent
		if err := setUp(ctx, exe, pre, layout, "preconditioning"); err != nil {
			return layout, err
		}
		ready.Precondition = r.Now().Sub(start)
	} else if !r.Plan.Volume.Block {
		// Lay the files out now, as the first step's fio would before its
		// I/O: that step begins on its instant, not after the layout.
		run := r.workloadRun("layout")
		run.CreateOnly = true
		for range r.Plan.Topology.JobsPerClient {
			run.Jobs = append(run.Jobs, fio.Job{IODepth: 1})
		}
		if err := setUp(ctx, exe, run, layout, "laying out the files"); err != nil {
			return layout, err
		}
	}
	if r.Waiter != "" {
		// After the layout, whose I/O would slow it (0.7 s beside a
		// preconditioning, 0.3 s alone), and while the clock offset is
		// measured, as a rule: that waits for the API server's second to
		// change, twice.
		if ready.FioStartup = r.fioStartup(ctx, exe); ctx.Err() != nil {
			return layout, ErrInterrupted
		}
	}
	if clock != nil {
		m := <-clock
		switch off := m.offset; {
		case m.err != nil:
			ready.ClockOffsetError = protocol.Truncate(m.err.Error(), protocol.MaxErrorBytes)
		case off < -protocol.MaxClockOffset || off > protocol.MaxClockOffset:
			return layout, fmt.Errorf("this node's clock is %s off the API server's (more than %s)", off, protocol.MaxClockOffset)
		default:
			r.offset, ready.ClockOffset, ready.ClockOffsetUncertainty = off, off, m.uncertainty
		}
	}
	return layout, nil
}

// fioStartup measures how long fio takes on this client to have every
// job of a run held until an instant ready to begin its I/O (what a step
// launched on its order needs before its instant): a run of the
// workload's engine and this client's jobs, held until an instant already
// past, reading one block per job for a millisecond from a scratch file in
// the work directory (never the volume, whose data is the benchmark's). A
// probe that fails measures nothing (zero: the conductor then
// uses its longest lead); the steps will say what fails.
func (r *Runner) fioStartup(ctx context.Context, exe fio.Executor) time.Duration {
	const name = "startup"
	dir, err := filepath.Abs(filepath.Join(r.WorkDir, name))
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return 0
	}
	defer func() { _ = os.RemoveAll(dir) }()
	run := r.workloadRun(name)
	// Buffered: the scratch file's file system (the container's) may not
	// take direct I/O; starting fio is the same either way.
	run.ReadPercent, run.Sync, run.SyncEvery, run.Direct = 100, "", 0, false
	run.Runtime = time.Millisecond
	for range r.Plan.Topology.JobsPerClient {
		run.Jobs = append(run.Jobs, fio.Job{IODepth: 1, ReadIOPS: 1})
	}
	layout := fio.Layout{Directory: dir, BytesPerJob: max(r.Plan.Workload.BlockSizeBytes, 4096)}
	for j := range run.Jobs {
		// Sparse: reading it costs no I/O, and the work directory's
		// small quota nothing.
		f, err := os.OpenFile(filepath.Join(dir, fio.JobFile(j)), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return 0
		}
		err = f.Truncate(layout.BytesPerJob)
		if cerr := f.Close(); err != nil || cerr != nil {
			return 0
		}
	}
	// The waiter keeps the node's clock, which r.Now may shift.
	launched := time.Now()
	run.StartAt, run.Waiter = launched, r.Waiter
	job, err := fio.Render(run, layout)
	if err != nil {
		return 0
	}
	res, err := exe.Run(ctx, run.Name, job)
	if err != nil || res.Interrupted || res.LastReleased.Before(launched) {
		return 0
	}
	if d := res.LastReleased.Sub(launched); d <= protocol.MaxFioStartup {
		return d
	}
	return 0 // beyond what the conductor accepts: not measured
}

// setUp runs a fio run that prepares the files before any step: its
// failure is reported as what failed, its interruption as ErrInterrupted.
func setUp(ctx context.Context, exe fio.Executor, run fio.Run, layout fio.Layout, what string) error {
	job, err := fio.Render(run, layout)
	if err != nil {
		return err
	}
	res, err := exe.Run(ctx, run.Name, job)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.Interrupted {
		return ErrInterrupted
	}
	return nil
}

// measuredOffset is what Clock.ClockOffset returned.
type measuredOffset struct {
	offset, uncertainty time.Duration
	err                 error
}

// layout checks the volume and decides where each job's I/O goes. A missing
// mount point is an error, never silently created: fio would create it on
// the node's root file system and measure the wrong storage.
func (r *Runner) layout() (fio.Layout, error) {
	p := r.Plan
	// The plan passed plan.ValidateFor: at least one block per job.
	planned := PlannedLayout(p)
	perJob := planned.BytesPerJob
	fi, err := os.Stat(p.Volume.Path)
	if err != nil {
		return fio.Layout{}, fmt.Errorf("volume %s: %w", p.Volume.Path, err)
	}
	if p.Volume.Block {
		if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			return fio.Layout{}, fmt.Errorf("volume %s is not a block device (mode %s)", p.Volume.Path, fi.Mode())
		}
		// The jobs' ranges must end within the device (space.go).
		if err := r.checkDevice(perJob); err != nil {
			return fio.Layout{}, err
		}
		return planned, nil
	}
	if !fi.IsDir() {
		return fio.Layout{}, fmt.Errorf("volume %s is not a directory", p.Volume.Path)
	}
	dir, err := r.directory()
	if err != nil {
		return fio.Layout{}, err
	}
	r.created.files = nil
	var names []string
	for j := range int(p.Topology.JobsPerClient) {
		// fio.Render names job j's file so; fio creates the missing ones.
		names = append(names, fio.JobFile(j))
	}
	if p.Verify {
		names = append(names, WrittenState) // verify.go's
	}
	for _, name := range names {
		f := filepath.Join(dir, name)
		_, err := os.Lstat(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.created.files = append(r.created.files, f)
		case p.Volume.Subdir != "":
			// On somebody else's volume fio writes only files the runner
			// creates: an existing one (or a link) is not the runner's.
			return fio.Layout{}, fmt.Errorf("%s already exists on the volume: the runner writes only files it creates", f)
		}
	}
	// Nothing is laid out or preconditioned unless it fits (space.go).
	if err := r.checkSpace(dir, perJob); err != nil {
		return fio.Layout{}, err
	}
	return fio.Layout{Directory: dir, BytesPerJob: perJob}, nil
}

// launched is a step whose fio was started.
type launched struct {
	order protocol.StepOrder
	name  string // the fio run's
	jobs  int
	// at is when fio was launched, on the runner's clock.
	at     time.Time
	cancel context.CancelFunc
	// exited is closed when fio has ended, and ran then holds the result.
	exited chan struct{}
	ran    ranFio
	// follow reads the step's I/O logs when the run verifies.
	follow *follower
	// cpu is the container's cpu.stat the step counts from: when fio was
	// launched, or the step before's end when it was launched ahead; limit
	// is its CPU limit at launch (thousandths; 0: none). cpuEnd is the
	// reading when the step ended (cpuEndOK: there was one).
	cpu             cpuStat
	limit           uint64
	cpuEnd          cpuStat
	cpuOK, cpuEndOK bool
	// idle: the client runs no I/O in the step (a scale-out step leaves
	// it out); nothing was launched, and exited closes at the step's end.
	idle bool
}

// idle is a step the client sits out: no fio, only the wait until the
// step's end, when its idle result is published like any other, so the
// conductor hears from every client and the steps stay in lockstep.
func (r *Runner) idle(ctx context.Context, s step, begin time.Time) *launched {
	ictx, cancel := context.WithCancel(ctx)
	l := &launched{order: s.order, name: s.run.Name, at: r.Now(), cancel: cancel, exited: make(chan struct{}), idle: true}
	end := begin.Add(s.order.Ramp + s.order.Duration)
	go func() {
		defer close(l.exited)
		if err := sleepUntil(ictx, r.Now, end); err != nil && ctx.Err() != nil {
			l.ran = ranFio{err: ErrInterrupted}
		}
	}()
	return l
}

type ranFio struct {
	res *fio.Result
	err error
}

// stop ends a launched step's fio (SIGTERM) and waits for it; nil does
// nothing.
func (l *launched) stop() {
	if l != nil {
		l.cancel()
		<-l.exited
	}
}

// step is an ordered step's fio run, ready to launch.
type step struct {
	order protocol.StepOrder
	run   fio.Run
	// at is the step's instant on the runner's clock.
	at time.Time
}

// stepOf renders nothing yet: it divides the ordered step's load and
// fills in this client's fio run.
func (r *Runner) stepOf(order protocol.StepOrder) (step, error) {
	p := r.Plan
	loads, err := plan.Divide(order.Step, p.Topology, p.Workload)
	if err != nil {
		return step{}, fmt.Errorf("step %d: %w", order.Index, err)
	}
	mine := loads[p.Client]
	run := r.workloadRun(fmt.Sprintf("step%d", order.Index))
	run.Runtime, run.Ramp = order.Duration, order.Ramp
	run.Poisson = p.Arrivals == plan.Poisson
	run.Verify = r.verifyWrites(order.Index, run.Name)
	// A new seed per step and per client: clients never replay each
	// other's offsets, and steps do not replay earlier ones.
	run.Seed = p.Seed + uint64(order.Index)*uint64(len(mine))
	for _, l := range mine {
		run.Jobs = append(run.Jobs, fio.Job{IODepth: l.IODepth, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS,
			ReadBytesPerSec: l.ReadBytesPerSec, WriteBytesPerSec: l.WriteBytesPerSec})
	}
	// StartAt is an instant of the conductor's clock.
	return step{order: order, run: run, at: order.StartAt.Add(r.offset)}, nil
}

// workloadRun is a fio run of the plan's workload, without jobs or timing.
func (r *Runner) workloadRun(name string) fio.Run {
	w := r.Plan.Workload
	return fio.Run{Name: name, Engine: string(w.IOEngine), Direct: w.Direct, BlockSizeBytes: w.BlockSizeBytes,
		ReadPercent: w.ReadPercent, Random: w.Pattern == workload.Random, CompressPercent: w.CompressPercent,
		DedupePercent: w.DedupePercent, Sync: string(w.Sync), SyncEvery: w.SyncEvery}
}

// launch starts fio for the ordered step: with a Waiter LaunchAhead before
// its instant, holding its I/O until the instant; without, at the instant.
// The step before it has ended.
func (r *Runner) launch(ctx context.Context, exe fio.Executor, layout fio.Layout, order protocol.StepOrder) (*launched, error) {
	s, err := r.stepOf(order)
	if err != nil {
		return nil, err
	}
	at := s.at
	if r.Waiter != "" {
		at = at.Add(-LaunchAhead)
	}
	if err := sleepUntil(ctx, r.Now, at); err != nil {
		return nil, ErrInterrupted
	}
	return r.start(ctx, exe, layout, s, s.at)
}

// start launches fio for s; with a Waiter its I/O is held until the
// instant begin of the runner's clock.
func (r *Runner) start(ctx context.Context, exe fio.Executor, layout fio.Layout, s step, begin time.Time) (*launched, error) {
	if len(s.run.Jobs) == 0 {
		return r.idle(ctx, s, begin), nil
	}
	run := s.run
	if r.Waiter != "" {
		// The waiter keeps the node's clock, which r.Now may shift.
		run.StartAt, run.Waiter = begin.Add(time.Since(r.Now())), r.Waiter
	}
	job, err := fio.Render(run, layout)
	if err != nil {
		return nil, fmt.Errorf("step %d: %w", s.order.Index, err)
	}
	var follow *follower
	if v := run.Verify; v != nil {
		if follow, err = r.written.follow(v.IOLogPrefix, uint16(s.order.Index+1)); err != nil {
			return nil, fmt.Errorf("step %d: %w", s.order.Index, err)
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	l := &launched{order: s.order, name: run.Name, jobs: len(run.Jobs), at: r.Now(), cancel: cancel, exited: make(chan struct{}), follow: follow}
	if r.cgroupOK {
		l.cpu, l.cpuOK = r.cgroup.stat()
		l.limit = r.cgroup.limitMilli()
	}
	exe.Timeline, exe.LatLogWindow = true, fio.LatLogWindow(run.Runtime)
	go func() {
		defer close(l.exited)
		res, err := exe.Run(fctx, run.Name, job)
		l.ran = ranFio{res, err}
	}()
	return l, nil
}

// ahead learns, while cur runs, the order after it when the conductor
// writes orders ahead (protocol.ClientPlan.OrdersAhead, protocol.Ahead),
// and launches it LaunchAhead before it begins, its I/O held until then.
// It begins on its instant, or, when cur began more than LateTolerance
// late, LateTolerance before cur's I/O ends: a client's steps overlap by
// at most that, and a late client returns to the grid by as much per step.
// It gives up as soon as cur's fio ends (cur ran its course before the
// order came, failed, or was stopped): the next order is then waited for
// once cur is published. done says the run ended.
func (r *Runner) ahead(ctx context.Context, exe fio.Executor, layout fio.Layout, cur *launched) (*launched, bool, error) {
	if !r.Plan.OrdersAhead || r.Waiter == "" {
		return nil, false, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-cur.exited:
			cancel()
		case <-wctx.Done():
		}
	}()
	gaveUp := func() (*launched, bool, error) {
		if ctx.Err() != nil {
			return nil, false, ErrInterrupted
		}
		return nil, false, nil
	}
	order, err := r.Coordinator.WaitOrder(wctx, cur.order.Index+1)
	switch {
	case err != nil && wctx.Err() != nil:
		return gaveUp()
	case err != nil:
		return nil, false, fmt.Errorf("waiting for step %d: %w", cur.order.Index+1, err)
	case order.Done:
		return nil, true, nil
	}
	next, err := r.stepOf(order)
	if err != nil {
		return nil, false, err
	}
	if err := sleepUntil(wctx, r.Now, next.at.Add(-LaunchAhead)); err != nil {
		return gaveUp()
	}
	// cur's I/O ends its ramp and duration after its last job's waiter
	// released it: on time, at next's instant.
	// An idle step "begins" on its instant, on the node's clock as fio's
	// release is.
	released := cur.order.StartAt.Add(r.offset).Add(-time.Until(r.Now()))
	for ok := cur.idle; !ok; {
		if released, ok = fio.Released(r.WorkDir, cur.name, cur.jobs); !ok && protocol.Pause(wctx, releasePoll) != nil {
			return gaveUp()
		}
	}
	begin := next.at
	if curEnd := released.Add(time.Until(r.Now())).Add(cur.order.Ramp + cur.order.Duration); curEnd.Sub(begin) > LateTolerance {
		begin = curEnd.Add(-LateTolerance)
		if err := sleepUntil(wctx, r.Now, begin.Add(-LaunchAhead)); err != nil {
			return gaveUp()
		}
	}
	l, err := r.start(ctx, exe, layout, next, begin)
	return l, false, err
}

// LateTolerance is how much a client's consecutive steps ordered ahead may
// overlap. A waiter releases its job a fraction of a millisecond after the
// instant (more on a busy node), and the I/Os still in flight at a step's
// end complete after it: steps on time overlap that much anyway. A step
// that began later than this delays the next one by all but this much.
const LateTolerance = 10 * time.Millisecond

// releasePoll is how often a runner looks whether a step's jobs were
// released, when the step began late.
const releasePoll = 5 * time.Millisecond

// finish waits for a launched step's fio and publishes its result (also
// when fio failed or was stopped: what was measured must not be lost).
func (r *Runner) finish(ctx context.Context, l *launched) error {
	<-l.exited
	l.cancel()
	if r.cgroupOK {
		l.cpuEnd, l.cpuEndOK = r.cgroup.stat()
	}
	order, res, runErr := l.order, l.ran.res, l.ran.err
	var written uint64
	var logErr error
	if l.follow != nil {
		written, logErr = l.follow.wait()
	}
	cs := results.ClientStep{Client: r.Plan.Client, Step: order.Index, Jobs: l.jobs, PlannedStart: order.StartAt,
		ActualStart: l.at.Add(-r.offset), End: r.conductorNow()}
	switch {
	case l.idle: // no fio, no figures: its I/O never began
		cs.ActualStart, cs.Idle, cs.Interrupted = time.Time{}, true, errors.Is(runErr, ErrInterrupted)
	case runErr != nil:
		cs.Error = protocol.Truncate(runErr.Error(), protocol.MaxErrorBytes)
	default:
		cs.Read, cs.Write, cs.Sync = results.FromFio(res.Output)
		cs.CPU = r.cpuOf(l, res.Output)
		tl := results.TimelineOf(res.Intervals)
		if len(tl.Windows) > 0 {
			tl.Idle = results.StallsOf(res.LatLogs, tl.Idle)
		}
		cs.Timeline = tl.Fit(results.ClientTimelineBytes)
		cs.Interrupted = res.Interrupted
		if began, ok := r.began(l, res); ok {
			cs.ActualStart = began.Add(-r.offset)
		}
		if l.follow != nil && !res.Interrupted {
			// After End: the pass is not part of the step's time.
			cs.Verification = r.verifyStep(ctx, order, written, logErr)
		}
	}
	if len(cs.Timeline.Windows) > 0 {
		// The timeline is best-effort, the step's result is not: a
		// timeline the conductor would refuse (fio's counters did not add
		// up, say) is left out rather than failing the step.
		if cs.Validate() != nil {
			cs.Timeline = results.Timeline{}
		}
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

// LaunchAhead is how long before a step's instant fio is launched when it
// holds its I/O until the instant (Runner.Waiter): more than fio 3.33
// takes to start its jobs (about 0.3 s on a busy 2-core node).
const LaunchAhead = time.Second

// began is when the launched step's I/O began, on the runner's clock (its
// ramp included): from fio's own timestamps, or else when its waiter
// released it; ok is false when neither says.
func (r *Runner) began(l *launched, res *fio.Result) (time.Time, bool) {
	t := res.Released
	if !res.Began.IsZero() {
		t = res.Began.Add(-l.order.Ramp)
	}
	if t.IsZero() {
		return time.Time{}, false
	}
	// fio's timestamps are of the node's clock, which r.Now may shift.
	began := t.Add(time.Until(r.Now()))
	if began.Before(l.at) {
		return time.Time{}, false // not of this run
	}
	return began, true
}

// conductorNow is the time on the conductor's clock.
func (r *Runner) conductorNow() time.Time { return r.Now().Add(-r.offset) }

func sleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	if d := t.Sub(now()); d > 0 {
		return protocol.Pause(ctx, d)
	}
	return ctx.Err()
}
