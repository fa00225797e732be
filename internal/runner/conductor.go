package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
)

// Conductor runs the lockstep protocol over a FileExchange: it waits until
// every client is ready, then for each step chooses one start instant for all
// clients, waits for all their results, aggregates them exactly, and decides
// the next step (stop rules, curve mode) from the results so far.
type Conductor struct {
	Files FileExchange
	// Spec is the load, topology and workload (c.Load, c.Topology, ...).
	run.Spec
	// Steady is the rule a step's timeline is judged steady by, for loads
	// that run unsteady steps again (plan.Load.ExtendUntilSteady); zero
	// fields take the defaults.
	Steady analysis.SteadyOptions
	// Leads are how far ahead of "now" a step's start instant is set, so
	// every client sees the order before it is due (default
	// protocol.DefaultLeads, as the operator's).
	Leads protocol.Leads
	// ReadyTimeout bounds layout and preconditioning (default
	// protocol.DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// Progress, when set, is told about each finished step.
	Progress func(run.Step)
}

// Outcome is how a conducted run ended.
type Outcome struct {
	// Steps are the steps conducted, each with its aggregate whole
	// (run.Measured: merged histograms included).
	Steps []run.Step       `json:"steps"`
	Stop  *plan.StopReason `json:"stop,omitempty"`
	// Failure is set when a client failed; the steps before it are kept.
	Failure string           `json:"failure,omitempty"`
	Ready   []protocol.Ready `json:"ready"`
}

// Run conducts the benchmark to its end. It always tells the clients to
// finish (a Done order) before returning, also on failure and cancellation,
// so no client is left waiting.
func (c *Conductor) Run(ctx context.Context) (*Outcome, error) {
	out := &Outcome{}
	leads := c.Leads
	if leads == (protocol.Leads{}) {
		leads = protocol.DefaultLeads
	}
	// next is the first step index no order was written for; every index
	// from it to written (an order written ahead) gets the final order.
	next, written := 0, -1
	finish := func(reason string) {
		for k := next; k <= max(next, written+1); k++ {
			_ = c.Files.WriteOrder(protocol.StepOrder{Index: k, Done: true, Reason: reason, EndedAt: time.Now().Truncate(time.Second)})
		}
	}
	ready, err := c.waitReady(ctx)
	out.Ready = ready
	if err != nil {
		out.Failure = err.Error()
		finish(err.Error())
		return out, err
	}
	var recorded []run.Step
	var prev *protocol.StepOrder
	for {
		orders, err := run.Next(c.Spec, recorded, prev, time.Now(), leads)
		if err != nil {
			out.Failure = err.Error()
			finish(err.Error())
			return out, err
		}
		order := orders.Order
		if order.Done {
			out.Stop = orders.Stop
			_ = c.Files.WriteOrder(order)
			return out, nil
		}
		if err := c.Files.WriteOrder(order); err != nil {
			return out, err
		}
		next++
		// When the step after it does not depend on its results, it is
		// ordered now, to start the instant this one ends.
		if a := orders.Ahead; a != nil {
			if err := c.Files.WriteOrder(*a); err != nil {
				return out, err
			}
			written = a.Index
		}
		prev = &order
		clients, err := c.waitResults(ctx, order)
		agg := results.Aggregate(order.Index, clients)
		step := run.Measured(order, agg, "", c.Steady)
		if len(clients) > 0 {
			out.Steps = append(out.Steps, step)
			if c.Progress != nil {
				c.Progress(step)
			}
		}
		if _, why := protocol.StepFailure(agg); err == nil && why != "" {
			err = errors.New(why)
		}
		if err != nil {
			out.Failure = err.Error()
			finish(err.Error())
			return out, err
		}
		recorded = append(recorded, step.Kept())
	}
}

func (c *Conductor) waitReady(ctx context.Context) ([]protocol.Ready, error) {
	timeout := c.ReadyTimeout
	if timeout == 0 {
		timeout = protocol.DefaultReadyTimeout
	}
	deadline := time.Now().Add(timeout)
	ready := make([]protocol.Ready, c.clients())
	have := make([]bool, c.clients())
	for n := 0; n < c.clients(); {
		for i := range c.clients() {
			if have[i] {
				continue
			}
			r, ok, err := c.Files.ReadReady(i)
			if err != nil {
				return ready, err
			}
			if !ok {
				continue
			}
			if r.Error != "" {
				return ready, fmt.Errorf("client %d could not prepare: %s", i, r.Error)
			}
			ready[i], have[i] = r, true
			n++
		}
		if n == c.clients() {
			break
		}
		if time.Now().After(deadline) {
			return ready, fmt.Errorf("only %d of %d clients were ready after %s", n, c.clients(), timeout)
		}
		if err := protocol.Pause(ctx, c.Files.pollInterval()); err != nil {
			return ready, err
		}
	}
	return ready, nil
}

// waitResults collects every client's result for the step. A client that
// has not reported well after the step should have ended is a failure. When
// ctx is cancelled the clients are being stopped too: they publish what they
// measured, so the conductor keeps collecting for a short grace period.
func (c *Conductor) waitResults(ctx context.Context, o protocol.StepOrder) ([]results.ClientStep, error) {
	deadline := o.End().Add(protocol.DefaultResultGrace)
	n := int(c.Topology.Clients)
	got := make([]results.ClientStep, 0, n)
	have := make([]bool, n)
	stopping := false
	for {
		for i := range c.clients() {
			if have[i] {
				continue
			}
			r, ok, err := c.Files.ReadResult(o.Index, i)
			if err != nil {
				return got, err
			}
			if ok {
				got = append(got, r)
				have[i] = true
			}
		}
		if len(got) == c.clients() {
			if stopping {
				return got, errors.New("interrupted")
			}
			return got, nil
		}
		if time.Now().After(deadline) {
			if stopping {
				return got, fmt.Errorf("interrupted; %d of %d clients published their partial step", len(got), c.clients())
			}
			return got, fmt.Errorf("step %d: only %d of %d clients reported by %s", o.Index, len(got), c.clients(), deadline.Format(time.RFC3339))
		}
		if !stopping && ctx.Err() != nil {
			stopping = true
			deadline = time.Now().Add(15 * time.Second)
		}
		if err := protocol.Pause(context.WithoutCancel(ctx), c.Files.pollInterval()); err != nil {
			return got, err
		}
	}
}

func (c *Conductor) clients() int { return int(c.Topology.Clients) }
