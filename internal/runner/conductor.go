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

// Run conducts the benchmark to its end, by the operator's rules: each
// poll of the exchange directory is reduced to a run.Observation and
// run.Decide says whether the run ends and why, or what it does next
// (wait, record the step whose results are all in, order the next). It
// always tells the clients to finish (a Done order) before returning, also
// on failure and cancellation, so no client is left waiting. A cancelled
// run keeps collecting the ordered step's partial results for a short
// grace (the clients, stopped too, publish what they measured) and records
// them.
func (c *Conductor) Run(ctx context.Context) (*Outcome, error) {
	leads := c.Leads
	if leads == (protocol.Leads{}) {
		leads = protocol.DefaultLeads
	}
	t := run.Timeouts{Ready: c.ReadyTimeout, StartLead: leads.First, NextStepLead: leads.Next, ResultGrace: protocol.DefaultResultGrace}
	if t.Ready == 0 {
		t.Ready = protocol.DefaultReadyTimeout
	}
	cd := conducting{Conductor: c, out: &Outcome{Ready: make([]protocol.Ready, c.clients())}, written: -1,
		obs:         run.Observation{Began: time.Now(), Plan: true, Clients: make([]run.Client, c.clients()), Where: "the clients' output"},
		readyErrors: make([]string, c.clients())}
	for i := range cd.obs.Clients {
		cd.obs.Clients[i].Result = -1
	}
	if c.clients() < 1 {
		return cd.fail(fmt.Errorf("a run needs at least one client, not %d", c.clients()))
	}
	for {
		running := cd.obs.Order != nil && !cd.obs.Order.Done
		if err := cd.observe(); err != nil {
			if running {
				cd.record() // what the clients that reported measured
			}
			return cd.fail(err)
		}
		now := time.Now()
		d := run.Decide(cd.obs, t, now, func(i int) string { return cd.readyErrors[i] })
		if ctx.Err() != nil && !running {
			return cd.fail(ctx.Err())
		}
		if err := cd.stopping(ctx.Err() != nil, &d, now); err != nil {
			return cd.fail(err)
		}
		if d.End != nil {
			if running {
				cd.record() // what the clients that reported measured
			}
			return cd.fail(errors.New(d.End.Message))
		}
		switch d.Act {
		case run.ActCollect:
			if end := run.StepFailure(cd.record()); end != nil {
				return cd.fail(errors.New(end.Message))
			}
			fallthrough
		case run.ActOrder:
			done, err := cd.order(leads)
			if done || err != nil {
				return cd.out, err
			}
		default:
			if err := protocol.Pause(context.WithoutCancel(ctx), c.Files.pollInterval()); err != nil {
				return cd.fail(err)
			}
		}
	}
}

// conducting is one run's state between polls.
type conducting struct {
	*Conductor
	out *Outcome
	obs run.Observation
	// readyErrors are the clients' reasons they could not prepare.
	readyErrors []string
	// results are the ordered step's results in so far, by client.
	results map[int]results.ClientStep
	// next is the first step index no order was written for; written the
	// last index an order was written for (one written ahead included).
	next, written int
	// stopBy is when a cancelled run stops collecting the ordered step's
	// results (zero: not cancelled while a step ran).
	stopBy time.Time
}

// stopping applies a cancellation (cancelled) to decision d, while a step
// runs: once it is seen while the step's results are still out, the
// clients, stopped too, publish what they measured, and the conductor
// collects it for a short grace in place of the step's deadline, then
// records what arrived and ends the run (the error returned).
func (cd *conducting) stopping(cancelled bool, d *run.Decision, now time.Time) error {
	if cancelled && cd.stopBy.IsZero() && d.Act == run.ActWait {
		cd.stopBy = now.Add(15 * time.Second)
	}
	if cd.stopBy.IsZero() {
		return nil
	}
	if d.End != nil && d.End.Reason == run.ReasonStepTimedOut {
		d.End, d.Act = nil, run.ActWait
	}
	if d.End != nil || (d.Act != run.ActCollect && !now.After(cd.stopBy)) {
		return nil
	}
	n := len(cd.results)
	cd.record()
	if n < cd.clients() {
		return fmt.Errorf("interrupted; %d of %d clients published their partial step", n, cd.clients())
	}
	return errors.New("interrupted")
}

// observe reads what the clients reported since the last poll: the
// readiness of those not yet ready, and the ordered step's results.
func (cd *conducting) observe() error {
	for i := range cd.obs.Clients {
		cl := &cd.obs.Clients[i]
		if cl.Readiness == run.Preparing {
			r, ok, err := cd.Files.ReadReady(i)
			switch {
			case err != nil:
				return err
			case ok && r.Error != "":
				cl.Readiness, cd.readyErrors[i] = run.NotPrepared, r.Error
			case ok:
				cl.Readiness, cd.out.Ready[i] = run.Prepared, r
			}
		}
		if o := cd.obs.Order; o != nil && !o.Done && cl.Result != o.Index {
			r, ok, err := cd.Files.ReadResult(o.Index, i)
			if err != nil {
				return err
			}
			if ok {
				cd.results[i], cl.Result = r, o.Index
			}
		}
	}
	return nil
}

// record aggregates the ordered step's results in so far (every client's,
// or a partial step's), keeps the step in the outcome and among the
// recorded steps, and returns those.
func (cd *conducting) record() []run.Step {
	if len(cd.results) == 0 {
		return cd.obs.Steps
	}
	clients := make([]results.ClientStep, 0, len(cd.results))
	for i := range cd.clients() {
		if r, ok := cd.results[i]; ok {
			clients = append(clients, r)
		}
	}
	order := *cd.obs.Order
	step := run.Measured(order, results.Aggregate(order.Index, clients), "", cd.Steady)
	cd.out.Steps = append(cd.out.Steps, step)
	if cd.Progress != nil {
		cd.Progress(step)
	}
	cd.obs.Steps = append(cd.obs.Steps, step.Kept())
	cd.results = nil
	return cd.obs.Steps
}

// order writes the orders after the recorded steps (run.Next): the next
// step, with the one after it written ahead when it can be, or the final
// order (done).
func (cd *conducting) order(leads protocol.Leads) (done bool, err error) {
	orders, err := run.Next(cd.Spec, cd.obs.Steps, cd.obs.Order, time.Now(), leads)
	if err != nil {
		_, err = cd.fail(err)
		return true, err
	}
	order := orders.Order
	if order.Done {
		cd.out.Stop = orders.Stop
		_ = cd.Files.WriteOrder(order)
		return true, nil
	}
	if err := cd.Files.WriteOrder(order); err != nil {
		return true, err
	}
	cd.next++
	// When the step after it does not depend on its results, it is
	// ordered now, to start the instant this one ends.
	if a := orders.Ahead; a != nil {
		if err := cd.Files.WriteOrder(*a); err != nil {
			return true, err
		}
		cd.written = a.Index
	}
	cd.obs.Order, cd.results = &order, map[int]results.ClientStep{}
	return false, nil
}

// fail ends the run on err: every order not yet final (the next step's,
// and one written ahead) becomes the final order, so no client waits.
func (cd *conducting) fail(err error) (*Outcome, error) {
	cd.out.Failure = err.Error()
	for k := cd.next; k <= max(cd.next, cd.written+1); k++ {
		_ = cd.Files.WriteOrder(protocol.StepOrder{Index: k, Done: true, Reason: err.Error(), EndedAt: time.Now().Truncate(time.Second)})
	}
	return cd.out, err
}

func (c *Conductor) clients() int { return int(c.Topology.Clients) }
