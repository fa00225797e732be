package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/results"
)

// StepOutcome is what a finished step achieved, summed over all clients.
type StepOutcome struct {
	// Index is the step's Index; outcomes are passed to Next in order, so
	// done[i].Index == i.
	Index int
	// AchievedIOPS is reads plus writes per second.
	AchievedIOPS float64
	// AchievedBytesPerSec is bytes read plus written per second.
	AchievedBytesPerSec float64
	// Read and Write are the latencies of each direction, as aggregated over
	// all clients; nil when the step measured no I/O in that direction.
	Read, Write *results.LatencySummary
	// Total is the latency over all I/O; nil when the step measured none.
	Total *results.LatencySummary
	// Sync is the latency of the sync calls; nil without any.
	Sync *results.LatencySummary
	// LongestStall is the longest time in which no client completed an
	// I/O (0: none, or no timeline).
	LongestStall time.Duration
	// Steady is the steady-state verdict on the step's timeline; nil when
	// it was not judged (too short a timeline, or no rule applied). Only a
	// load that extends unsteady steps (Load.ExtendUntilSteady) reads it.
	Steady *bool
}

// StopKind says why a load ended.
type StopKind string

const (
	// StopCompleted: every planned step ran.
	StopCompleted StopKind = "Completed"
	// StopLatencyLimit: a step's latency exceeded the latency stop rule.
	StopLatencyLimit StopKind = "LatencyLimit"
	// StopSaturated: a throttled step achieved less than SaturationPercent of
	// its offered rate.
	StopSaturated StopKind = "Saturated"
	// StopIOStall: no I/O completed for longer than MaxStallSeconds.
	StopIOStall StopKind = "IOStall"
)

// StopReason says why and after which step a load ended.
type StopReason struct {
	Kind StopKind
	// Step is the Index of the step that triggered the stop (the last step
	// for StopCompleted).
	Step int
	// Message is for people, e.g.
	// "step 4/10 (20000 IOPS offered): p99 read latency 2.31 ms exceeded the 2 ms limit";
	// steps are numbered from 1 in messages, as in "step i/N" displays.
	Message string
}

// Next decides what happens after the steps in done have finished: run *next,
// or stop for *stop. It is pure, so a restarted controller gets the same
// answer from the same outcomes.
//
// Rate and queue-depth loads run their steps in order (each level Repeat
// times in a row). A curve runs the unthrottled level first; every later
// step offers floor(max × percent / 100), at least 1, of the maximum its
// unthrottled runs achieved on average (IOPS, or bytes per second for MiBps
// curves). A curve whose unthrottled runs achieved nothing is an error.
//
// Stop rules are checked on every finished step (each run of a repeated
// level on its own), in order, and the first step that breaks one stops the
// load (so earlier outcomes are re-checked on every call): first the
// latency rule (stops when the statistic is strictly above the limit; not
// applied to a curve's unthrottled step, whose only purpose is to find the
// maximum and whose latency is the saturated latency by construction), then
// the saturation rule (throttled rate steps only: achieved <
// SaturationPercent % of offered), then the stall rule (a longest stall
// strictly above MaxStallSeconds; every step). A latency rule whose
// operation has no latencies in the outcome is an error, not a silent pass.
//
// l must have passed Validate: Next checks only the outcomes against it.
func Next(l Load, done []StepOutcome) (next *Step, stop *StopReason, err error) {
	planned := Steps(l)
	for i, o := range done {
		if o.Index != i {
			return nil, nil, fmt.Errorf("outcome %d has index %d; outcomes must be in step order from 0", i, o.Index)
		}
	}
	c := stepper{l: l, planned: planned, done: done, final: make([]int, len(planned))}
	// p is the planned step the next outcome is a run of, attempt which
	// run of it.
	p, attempt := 0, 1
	for i := range done {
		if p == len(planned) {
			return nil, nil, fmt.Errorf("%d step outcomes for a load of %d steps that ended after %d runs", len(done), len(planned), i)
		}
		s, err := c.step(p, i, attempt)
		if err != nil {
			return nil, nil, err
		}
		if stop, err := c.check(s, p, done[i]); stop != nil || err != nil {
			return nil, stop, err
		}
		if c.extends(done[i], attempt) {
			attempt++
			continue
		}
		c.final[p] = i
		p, attempt = p+1, 1
	}
	if p == len(planned) {
		return nil, &StopReason{
			Kind:    StopCompleted,
			Step:    len(done) - 1,
			Message: fmt.Sprintf("all %d steps completed", len(done)),
		}, nil
	}
	s, err := c.step(p, len(done), attempt)
	if err != nil {
		return nil, nil, err
	}
	return &s, nil, nil
}

type stepper struct {
	l       Load
	planned []Step
	done    []StepOutcome
	// final[p] is the index in done of planned step p's last run, once a
	// later step has been decided.
	final []int
}

// step returns run attempt of planned step p as step index, with its
// offered rate filled in.
func (c *stepper) step(p, index, attempt int) (Step, error) {
	s := c.planned[p]
	s.Index = index
	if c.l.runsUntilSteady() > 1 {
		s.Attempt = int32(attempt)
	}
	if c.l.Curve == nil || s.Unthrottled {
		return s, nil
	}
	unit := c.l.Curve.unit()
	maxRate, err := c.maximum(unit)
	if err != nil {
		return Step{}, err
	}
	offered := max(int64(math.Floor(maxRate*float64(s.PercentOfMax)/100)), 1)
	if unit == MiBps {
		s.OfferedBytesPerSec = offered
	} else {
		s.OfferedIOPS = offered
	}
	return s, nil
}

// extends reports whether the run attempt that had outcome o is run again:
// the load extends unsteady steps, o was judged not steady, and fewer
// than ExtendUntilSteady runs of its planned step have run.
func (c *stepper) extends(o StepOutcome, attempt int) bool {
	return attempt < c.l.runsUntilSteady() && o.Steady != nil && !*o.Steady
}

// maximum is the curve's maximum: what its unthrottled level achieved, the
// mean over its runs (IOPS, or bytes per second for MiBps curves), each
// planned run counted by its last attempt. The unthrottled runs come first,
// so every later step has them all done.
func (c *stepper) maximum(unit RateUnit) (float64, error) {
	what := "IOPS"
	if unit == MiBps {
		what = "bytes per second"
	}
	var sum float64
	n := 0
	for k, s := range c.planned {
		if !s.Unthrottled || s.ClientBoundCheck {
			break
		}
		o := c.done[c.final[k]]
		v := o.AchievedIOPS
		if unit == MiBps {
			v = o.AchievedBytesPerSec
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v > 1<<62 || v < 0 {
			name := "unthrottled step"
			if s.Repetition > 0 {
				name = fmt.Sprintf("unthrottled run %d/%d", s.Repetition, c.l.repeat())
			}
			return 0, fmt.Errorf("%s achieved an invalid %s (%v); cannot build the curve", name, what, v)
		}
		sum += v
		n++
	}
	if n == 0 || sum <= 0 {
		if n > 1 {
			return 0, fmt.Errorf("unthrottled runs achieved 0 %s on average; cannot build the curve", what)
		}
		return 0, fmt.Errorf("unthrottled step achieved 0 %s; cannot build the curve", what)
	}
	return sum / float64(n), nil
}

// check applies the stop rules to one finished step.
func (c *stepper) check(s Step, p int, o StepOutcome) (*StopReason, error) {
	if ls := c.l.Stop.Latency; ls != nil && !s.Unthrottled {
		dir, ns, err := latencyOf(ls, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.label(s, p), err)
		}
		limitNs := uint64(ls.LimitMicroseconds) * 1000
		if ns > limitNs {
			got, lim := numfmt.LatencyPair(ns, limitNs)
			return &StopReason{
				Kind: StopLatencyLimit,
				Step: s.Index,
				Message: fmt.Sprintf("%s: %s %s latency %s exceeded the %s limit",
					c.label(s, p), ls.Metric, dir, got, lim),
			}, nil
		}
	}
	if pct := c.l.Stop.SaturationPercent; pct > 0 && s.RateLimited() {
		achieved, offered := o.AchievedIOPS, float64(s.OfferedIOPS)
		if s.OfferedBytesPerSec > 0 {
			achieved, offered = o.AchievedBytesPerSec, float64(s.OfferedBytesPerSec)
		}
		if achieved*100 < float64(pct)*offered {
			return &StopReason{
				Kind: StopSaturated,
				Step: s.Index,
				Message: fmt.Sprintf("%s: achieved %s, below %d %% of the offered rate",
					c.label(s, p), formatRate(s, achieved, float64(pct)*offered/100), pct),
			}, nil
		}
	}
	if lim := time.Duration(c.l.Stop.MaxStallSeconds) * time.Second; lim > 0 && o.LongestStall > lim {
		got, limit := numfmt.LatencyPair(uint64(o.LongestStall), uint64(lim))
		return &StopReason{
			Kind: StopIOStall,
			Step: s.Index,
			Message: fmt.Sprintf("%s: no I/O completed for %s, longer than the %s limit",
				c.label(s, p), got, limit),
		}, nil
	}
	return nil, nil
}

// latencyOf returns the operation and value the latency rule looks at.
func latencyOf(ls *LatencyStop, o StepOutcome) (LatencyOperation, uint64, error) {
	get := func(l *results.LatencySummary) uint64 { v, _ := l.Metric(string(ls.Metric)); return v }
	switch ls.Operation {
	case Total:
		if o.Total == nil {
			return "", 0, fmt.Errorf("no latencies reported; the latency stop rule needs them")
		}
		return Total, get(o.Total), nil
	case Sync:
		if o.Sync == nil {
			// A step may legitimately end before a job's syncEvery-th
			// write: no call took long, so the rule does not fire.
			return Sync, 0, nil
		}
		return Sync, get(o.Sync), nil
	case Read, Write:
		l := o.Read
		if ls.Operation == Write {
			l = o.Write
		}
		if l == nil {
			return "", 0, fmt.Errorf("no %s latencies reported; the latency stop rule needs them", ls.Operation)
		}
		return ls.Operation, get(l), nil
	default: // Worst: the worse of the two
		switch {
		case o.Read == nil && o.Write == nil:
			return "", 0, fmt.Errorf("no latencies reported; the latency stop rule needs them")
		case o.Write == nil:
			return Read, get(o.Read), nil
		case o.Read == nil:
			return Write, get(o.Write), nil
		}
		r, w := get(o.Read), get(o.Write)
		if w > r {
			return Write, w, nil
		}
		return Read, r, nil
	}
}

// label names a step for messages: "step 4/10 (20000 IOPS offered)", N
// counting the reruns of unsteady steps decided so far.
func (c *stepper) label(s Step, p int) string {
	what := s.Load()
	if s.Repetition > 0 {
		what += fmt.Sprintf(", run %d/%d", s.Repetition, c.l.repeat())
	}
	if s.Attempt > 1 {
		what += fmt.Sprintf(", attempt %d/%d until steady", s.Attempt, c.l.runsUntilSteady())
	}
	return fmt.Sprintf("step %d/%d (%s)", s.Index+1, s.Index+len(c.planned)-p, what)
}

// Load says what a step offers, for messages: "20000 IOPS offered",
// "512 MiB/s offered", "queue depth 32 per client", "unthrottled", "50 %
// of max, 5000 IOPS offered".
func (s Step) Load() string {
	var what string
	switch {
	case s.ClientBoundCheck:
		what = "unthrottled, twice the outstanding I/O"
	case s.Unthrottled:
		what = "unthrottled"
	case s.OfferedIOPS > 0:
		what = fmt.Sprintf("%d IOPS offered", s.OfferedIOPS)
	case s.OfferedBytesPerSec > 0:
		what = fmt.Sprintf("%s MiB/s offered", numfmt.Plain(float64(s.OfferedBytesPerSec)/bytesPerMiB, 1))
	case s.QueueDepthPerClient > 0:
		what = fmt.Sprintf("queue depth %d per client", s.QueueDepthPerClient)
	}
	if s.PercentOfMax > 0 {
		what = fmt.Sprintf("%d %% of max, %s", s.PercentOfMax, what)
	}
	switch {
	case s.ActiveClients == 1:
		what = "1 client, " + what
	case s.ActiveClients > 1:
		what = fmt.Sprintf("%d clients, %s", s.ActiveClients, what)
	}
	return what
}

// formatRate prints an achieved rate as the reports do ("61,837 IOPS",
// "1,041.5 MiB/s"), with more decimals where rounding would make it look at
// or above the threshold it fell below.
func formatRate(s Step, achieved, threshold float64) string {
	if s.OfferedBytesPerSec > 0 {
		v, _ := numfmt.Pair(achieved/bytesPerMiB, threshold/bytesPerMiB, 1)
		return v + " MiB/s"
	}
	v, _ := numfmt.Pair(achieved, threshold, 0)
	return v + " IOPS"
}
