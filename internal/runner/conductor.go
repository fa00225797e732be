package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
)

// Conductor runs the lockstep protocol over an Exchange: it waits until
// every client is ready, then for each step chooses one start instant for all
// clients, waits for all their results, aggregates them exactly, and decides
// the next step (stop rules, curve mode) from the results so far.
type Conductor struct {
	Exchange Exchange
	Load     plan.Load
	Clients  int
	// StartLead is how far ahead of "now" a step's start instant is set, so
	// every client sees the order before it is due (default 2 s).
	StartLead time.Duration
	// ReadyTimeout bounds layout and preconditioning (default 30 min).
	ReadyTimeout time.Duration
	// Progress, when set, is told about each finished step.
	Progress func(StepRecord)
}

// StepRecord is one finished step: what was offered and what was measured.
type StepRecord struct {
	Step      plan.Step             `json:"step"`
	StartAt   time.Time             `json:"startAt"`
	Aggregate results.StepAggregate `json:"aggregate"`
}

// Outcome is how a conducted run ended.
type Outcome struct {
	Steps []StepRecord     `json:"steps"`
	Stop  *plan.StopReason `json:"stop,omitempty"`
	// Failure is set when a client failed; the steps before it are kept.
	Failure string  `json:"failure,omitempty"`
	Ready   []Ready `json:"ready"`
}

// Run conducts the benchmark to its end. It always tells the clients to
// finish (a Done order) before returning, also on failure and cancellation,
// so no client is left waiting.
func (c *Conductor) Run(ctx context.Context) (*Outcome, error) {
	out := &Outcome{}
	lead := c.StartLead
	if lead == 0 {
		lead = 2 * time.Second
	}
	next := 0
	finish := func(reason string) {
		_ = c.Exchange.WriteOrder(StepOrder{Index: next, Done: true, Reason: reason})
	}
	ready, err := c.waitReady(ctx)
	out.Ready = ready
	if err != nil {
		out.Failure = err.Error()
		finish(err.Error())
		return out, err
	}
	var done []plan.StepOutcome
	for {
		step, stop, err := plan.Next(c.Load, done)
		if err != nil {
			out.Failure = err.Error()
			finish(err.Error())
			return out, err
		}
		if step == nil {
			out.Stop = stop
			finish(stop.Message)
			return out, nil
		}
		order := StepOrder{Index: next, StartAt: time.Now().Add(lead).Truncate(time.Millisecond), Step: *step,
			Duration: c.Load.StepDuration, Ramp: c.Load.RampTime}
		if err := c.Exchange.WriteOrder(order); err != nil {
			return out, err
		}
		next++
		clients, err := c.waitResults(ctx, order)
		agg := results.Aggregate(order.Index, clients)
		rec := StepRecord{Step: *step, StartAt: order.StartAt, Aggregate: agg}
		if len(clients) > 0 {
			out.Steps = append(out.Steps, rec)
			if c.Progress != nil {
				c.Progress(rec)
			}
		}
		if err == nil && len(agg.Errors) > 0 {
			err = fmt.Errorf("step %d failed: %s", order.Index, strings.Join(agg.Errors, "; "))
		}
		if err == nil && agg.Interrupted {
			err = fmt.Errorf("step %d was interrupted", order.Index)
		}
		if err != nil {
			out.Failure = err.Error()
			finish(err.Error())
			return out, err
		}
		done = append(done, OutcomeOf(order.Index, agg))
	}
}

func (c *Conductor) waitReady(ctx context.Context) ([]Ready, error) {
	timeout := c.ReadyTimeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	ready := make([]Ready, c.Clients)
	have := make([]bool, c.Clients)
	for n := 0; n < c.Clients; {
		for i := range c.Clients {
			if have[i] {
				continue
			}
			r, ok, err := c.Exchange.ReadReady(i)
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
		if n == c.Clients {
			break
		}
		if time.Now().After(deadline) {
			return ready, fmt.Errorf("only %d of %d clients were ready after %s", n, c.Clients, timeout)
		}
		if err := Pause(ctx, c.Exchange.pollInterval()); err != nil {
			return ready, err
		}
	}
	return ready, nil
}

// waitResults collects every client's result for the step. A client that
// has not reported well after the step should have ended is a failure. When
// ctx is cancelled the clients are being stopped too: they publish what they
// measured, so the conductor keeps collecting for a short grace period.
func (c *Conductor) waitResults(ctx context.Context, o StepOrder) ([]results.ClientStep, error) {
	deadline := o.StartAt.Add(o.Ramp + o.Duration + time.Minute)
	got := make([]results.ClientStep, 0, c.Clients)
	have := make([]bool, c.Clients)
	stopping := false
	for {
		for i := range c.Clients {
			if have[i] {
				continue
			}
			r, ok, err := c.Exchange.ReadResult(o.Index, i)
			if err != nil {
				return got, err
			}
			if ok {
				got = append(got, r)
				have[i] = true
			}
		}
		if len(got) == c.Clients {
			if stopping {
				return got, errors.New("interrupted")
			}
			return got, nil
		}
		if time.Now().After(deadline) {
			if stopping {
				return got, fmt.Errorf("interrupted; %d of %d clients published their partial step", len(got), c.Clients)
			}
			return got, fmt.Errorf("step %d: only %d of %d clients reported by %s", o.Index, len(got), c.Clients, deadline.Format(time.RFC3339))
		}
		if !stopping && ctx.Err() != nil {
			stopping = true
			deadline = time.Now().Add(15 * time.Second)
		}
		if err := Pause(context.WithoutCancel(ctx), c.Exchange.pollInterval()); err != nil {
			return got, err
		}
	}
}

// Pause waits d, or until ctx ends (then it returns ctx's error).
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// OutcomeOf turns a step's aggregate into what the plan's conductor logic
// (stop rules, curve mode) needs.
func OutcomeOf(index int, a results.StepAggregate) plan.StepOutcome {
	lat := func(s results.LatencySummary) *results.LatencySummary {
		if s.Count == 0 {
			return nil
		}
		return &s
	}
	return plan.StepOutcome{Index: index, AchievedIOPS: a.Total.IOPS, AchievedBytesPerSec: a.Total.BytesPerSec,
		Read: lat(a.Read.Latency), Write: lat(a.Write.Latency), Total: lat(a.Total.Latency)}
}
