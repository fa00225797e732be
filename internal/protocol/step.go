package protocol

import (
	"fmt"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
	"github.com/storagebench/storagebench/internal/workload"
)

// The step decisions both conductors make, the operator from its step
// ConfigMaps and `runner local` from its files: what to order after the
// recorded steps, and whether a recorded step ends the run.

// Leads and timeouts both conductors use unless told otherwise.
const (
	// DefaultStartLead is how far ahead the first step's start instant is
	// set, so every client sees the order before it is due. Clients are
	// ready and watching for it, as they are for every later step.
	DefaultStartLead = time.Second
	// DefaultNextStepLead is the same for every later step, when every
	// client is idle and already waiting for the order.
	DefaultNextStepLead = time.Second
	// DefaultResultGrace is how long after a step's end its results may
	// take to arrive.
	DefaultResultGrace = 2 * time.Minute
	// DefaultReadyTimeout bounds layout and preconditioning.
	DefaultReadyTimeout = 30 * time.Minute
)

// Leads are the start leads of the first step and of the later ones.
type Leads struct{ First, Next time.Duration }

// DefaultLeads are the leads both conductors use by default.
var DefaultLeads = Leads{First: DefaultStartLead, Next: DefaultNextStepLead}

// Next decides the order that follows the recorded steps (in step order
// from 0): the next step, divided over the topology to check every job gets
// a share, starting a lead after now; or, when the plan has no step left
// (every step ran, or a stop rule holds), the final order, with the stop
// rule's message and the end instant to the second. An error says the plan
// cannot go on (an invalid load, a step too small to divide). With the
// final order comes the stop reason. Each recorded step's timeline is
// judged by the steady rule for loads that extend unsteady steps.
func Next(l plan.Load, t plan.Topology, w workload.Spec, steady analysis.SteadyOptions, recorded []results.StepAggregate, now time.Time, leads Leads) (StepOrder, *plan.StopReason, error) {
	verdicts := make([]analysis.SteadyState, len(recorded))
	if l.ExtendUntilSteady > 1 {
		for i, a := range recorded {
			verdicts[i] = analysis.Steady(a.Timeline, steady)
		}
	}
	return NextJudged(l, t, w, recorded, verdicts, now, leads)
}

// NextJudged is Next with each recorded step's steady-state verdict judged
// already (steady[i], analysis.Steady of step i's timeline by the load's
// options): the operator keeps the verdicts of a running benchmark's
// steps, not their timelines.
func NextJudged(l plan.Load, t plan.Topology, w workload.Spec, recorded []results.StepAggregate, steady []analysis.SteadyState, now time.Time, leads Leads) (StepOrder, *plan.StopReason, error) {
	n := len(recorded)
	done := make([]plan.StepOutcome, n)
	for i, a := range recorded {
		done[i] = OutcomeOf(i, a)
		if l.ExtendUntilSteady > 1 && i < len(steady) && steady[i].Judged {
			done[i].Steady = &steady[i].Steady
		}
	}
	step, stop, err := plan.Next(l, done)
	if err == nil && step != nil {
		_, err = plan.Divide(*step, t, w)
	}
	switch {
	case err != nil:
		return StepOrder{}, nil, fmt.Errorf("planning step %d: %w", n+1, err)
	case step == nil:
		return StepOrder{Index: n, Done: true, Reason: stop.Message, EndedAt: now.Truncate(time.Second)}, stop, nil
	}
	o := StepOrder{Index: n, Step: *step, Duration: l.StepDuration, Ramp: l.RampTime}
	lead := leads.Next
	if n == 0 {
		lead, o.Lead = leads.First, leads.First
	}
	o.StartAt = now.Add(lead).Truncate(time.Millisecond)
	return o, nil, nil
}

// Ahead is the order that follows o when the load's steps do not depend on
// the results (plan.Load.Fixed): the next step, starting the instant o's
// measurement ends. A conductor writes it as o's step runs, so clients
// start it without waiting for o's results to be recorded; ok is false
// when no step follows o or the load is not fixed. The order is a pure
// function of o, so a conductor that restarts writes the same one.
func Ahead(l plan.Load, t plan.Topology, w workload.Spec, o StepOrder) (StepOrder, bool) {
	if o.Done || !l.Fixed() {
		return StepOrder{}, false
	}
	steps := plan.Steps(l)
	k := o.Index + 1
	if k >= len(steps) {
		return StepOrder{}, false
	}
	s := steps[k]
	s.Index = k
	if _, err := plan.Divide(s, t, w); err != nil {
		return StepOrder{}, false // Next reports it when the step is due
	}
	return StepOrder{Index: k, StartAt: o.End(), Step: s, Duration: l.StepDuration, Ramp: l.RampTime}, true
}

// Promote is the order to write after the recorded steps: next, as Next
// decided it, unless it is the step written ahead of it as prev ran
// (Ahead of prev), whose clients may already have started: then that
// order, start instant and all.
func Promote(l plan.Load, t plan.Topology, w workload.Spec, prev, next StepOrder) StepOrder {
	if a, ok := Ahead(l, t, w, prev); ok && !next.Done && a.Index == next.Index && a.Step == next.Step {
		return a
	}
	return next
}

// OutcomeOf turns a step's aggregate into what the planner (stop rules,
// curve mode) needs.
func OutcomeOf(index int, a results.StepAggregate) plan.StepOutcome {
	lat := func(s results.LatencySummary) *results.LatencySummary {
		if s.Count == 0 {
			return nil
		}
		return &s
	}
	return plan.StepOutcome{Index: index, AchievedIOPS: a.Total.IOPS, AchievedBytesPerSec: a.Total.BytesPerSec,
		Read: lat(a.Read.Latency), Write: lat(a.Write.Latency), Total: lat(a.Total.Latency), Sync: lat(a.Sync.Latency),
		LongestStall: analysis.LongestStall(a.Timeline).Duration}
}

// Why a recorded step ends the run.
const (
	// ClientFailed: a client reported an error in the step.
	ClientFailed = "ClientFailed"
	// ClientLost: a client was stopped mid-step (its partial result is
	// recorded).
	ClientLost = "ClientLost"
	// DataCorrupted: the verification pass after the step read back a
	// block that is not what was written there.
	DataCorrupted = "DataCorrupted"
)

// MaxStepErrors bounds the errors listed for a step, and MaxErrorLine each
// one, so a step's record in status stays small.
const (
	MaxStepErrors = 5
	MaxErrorLine  = 512
)

// ErrorLines are a step's client errors as they are shown: the first
// MaxStepErrors-1 (all when they fit), each cut to MaxErrorLine bytes, then
// how many more clients failed.
func ErrorLines(a results.StepAggregate) []string {
	var out []string
	for _, e := range a.Errors[:min(len(a.Errors), MaxStepErrors)] {
		out = append(out, Truncate(e, MaxErrorLine))
	}
	// The merger lists only the first errors: the count is of clients.
	if failed := max(a.FailedClients, len(a.Errors)); failed > MaxStepErrors {
		out = append(out[:MaxStepErrors-1:MaxStepErrors-1], fmt.Sprintf("… and %d more errors", failed-MaxStepErrors+1))
	}
	return out
}

// StepFailure says why recorded step a ends the run: DataCorrupted when
// its verification found a bad block, ClientFailed when a client reported
// an error, ClientLost when the step was interrupted, and "" when it does
// not.
func StepFailure(a results.StepAggregate) (kind, message string) {
	switch {
	case a.Verification.Bad():
		return DataCorrupted, fmt.Sprintf("step %d: %s", a.Step+1, VerificationMessage(a.Verification))
	case len(a.Errors) > 0:
		return ClientFailed, fmt.Sprintf("step %d: %s", a.Step+1, strings.Join(ErrorLines(a), "; "))
	case a.Interrupted:
		return ClientLost, fmt.Sprintf("step %d was interrupted: a client was stopped mid-step (its partial result is recorded)", a.Step+1)
	}
	return "", ""
}

// VerificationMessage says what a verification pass found: its bad
// blocks (the first, plainly), or that every block read back intact.
func VerificationMessage(v *results.Verification) string {
	if !v.Bad() {
		msg := fmt.Sprintf("%d blocks read back intact", v.BlocksVerified)
		if v.Unverified > 0 {
			msg += fmt.Sprintf("; %d not verified (%s)", v.Unverified, v.Error)
		}
		return msg
	}
	b := v.BadBlocks[0]
	where := fmt.Sprintf("client %d job %d offset %d", b.Client, b.Job, b.Offset)
	if b.File != "" {
		where = fmt.Sprintf("client %d %s offset %d", b.Client, b.File, b.Offset)
	}
	what := fmt.Sprintf("%s (generation %d expected; from byte %d read %s, expected %s)", b.Kind, b.Generation, b.FirstDiff, b.Received, b.Expected)
	switch b.Kind {
	case verify.Misdirected:
		what = fmt.Sprintf("Misdirected: it holds the block written for offset %d (generation %d)", b.FoundOffset, b.FoundGeneration)
	case verify.Stale:
		what = fmt.Sprintf("Stale: it holds generation %d, not the %d written last", b.FoundGeneration, b.Generation)
	}
	return fmt.Sprintf("%d of %d blocks read back wrong; the first, %s, is %s", v.BadBlockCount, v.BlocksVerified, where, what)
}
