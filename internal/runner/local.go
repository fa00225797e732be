package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/workload"
)

// Local runs a whole benchmark on this machine: N clients (goroutines or
// processes, each driving its own fio) on one directory standing in for a
// shared volume, conducted in lockstep through an FileExchange directory. It is
// the operator's execution model without Kubernetes, used by `make demo-local` and
// by the tests.
type Local struct {
	Name string
	Dir  string
	// Profile names the workload profile Workload was resolved from, for
	// the report ("" prints as custom).
	Profile      string
	Workload     workload.Spec
	Load         plan.Load
	Topology     plan.Topology
	Precondition bool
	// Fio is the fio binary (from PATH when empty).
	Fio string
	// Waiter is the in-process clients' Runner.Waiter.
	Waiter string
	// Launch starts the clients; nil runs them as goroutines in this
	// process. It returns a function that waits for all of them.
	Launch func(ctx context.Context, plans []protocol.ClientPlan, x FileExchange) (wait func() error, err error)
	// Progress is told about each finished step.
	Progress func(run.Step)
	// Verify makes the clients verify what they write (ClientPlan.Verify).
	Verify bool
}

// spec is the run's load, topology and workload.
func (l *Local) spec() run.Spec {
	return run.Spec{Load: l.Load, Topology: l.Topology, Workload: l.Workload, Verify: l.Verify}
}

// Paths inside a local run's directory.
func (l *Local) exchange() FileExchange { return FileExchange{Dir: filepath.Join(l.Dir, "exchange")} }

// VolumePath is the directory standing in for the shared volume.
func (l *Local) VolumePath() string { return filepath.Join(l.Dir, "volume") }

// Plans returns every client's plan.
func (l *Local) Plans() []protocol.ClientPlan {
	plans := make([]protocol.ClientPlan, l.Topology.Clients)
	for i := range plans {
		plans[i] = protocol.ClientPlan{Benchmark: l.Name, Client: i, Topology: l.Topology, Workload: l.Workload,
			Volume:  protocol.Volume{Path: l.VolumePath(), Shared: true},
			Seed:    protocol.ClientSeed(l.Name, i),
			Precond: l.Precondition, Fio: l.Fio, Arrivals: l.Load.Arrivals, OrdersAhead: l.Load.Fixed() && !l.Verify, Verify: l.Verify}
	}
	return plans
}

// Run validates the plan, starts the clients, conducts the steps and waits
// for every client to exit.
func (l *Local) Run(ctx context.Context) (*Outcome, error) {
	if err := plan.Validate(l.Load, l.Topology, l.Workload); err != nil {
		return nil, err
	}
	if l.Verify {
		if err := l.Workload.Verifiable(); err != nil {
			return nil, err
		}
	}
	x := l.exchange()
	// A previous run's orders or results must never be mistaken for ours.
	if err := os.RemoveAll(x.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(l.VolumePath(), 0o755); err != nil {
		return nil, err
	}
	launch := l.Launch
	if launch == nil {
		launch = l.launchInProcess
	}
	wait, err := launch(ctx, l.Plans(), x)
	if err != nil {
		return nil, err
	}
	c := Conductor{Files: x, Spec: l.spec(), Progress: l.Progress}
	out, runErr := c.Run(ctx)
	waitErr := wait()
	if runErr != nil {
		return out, runErr
	}
	if waitErr != nil {
		return out, fmt.Errorf("a client failed after the run: %w", waitErr)
	}
	return out, nil
}

func (l *Local) launchInProcess(ctx context.Context, plans []protocol.ClientPlan, x FileExchange) (func() error, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(plans))
	for i, p := range plans {
		r := &Runner{Plan: p, Coordinator: x, Publisher: x, WorkDir: filepath.Join(l.Dir, "clients", fmt.Sprintf("client-%03d", i)), Waiter: l.Waiter}
		wg.Go(func() { errs[i] = r.Run(ctx) })
	}
	return func() error {
		wg.Wait()
		return errors.Join(errs...)
	}, nil
}
