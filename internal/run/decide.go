package run

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/storagebench/storagebench/internal/protocol"
)

// The run's decision per pass over a running benchmark: end it, with a
// reason, or take the lockstep protocol's next move. It reads an
// Observation, the run's children reduced to what the rules need, and the
// clock: the operator builds the Observation from the API objects it
// read; the rules, their order and their deadlines live here alone.

// Reasons a run ends with, or waits with, as its conditions say them.
const (
	ReasonPreparing           = "Preparing"
	ReasonRunning             = "Running"
	ReasonClaimNotBound       = "ClaimNotBound"
	ReasonClientsNotReady     = "ClientsNotReady"
	ReasonClientFailed        = protocol.ClientFailed
	ReasonClientLost          = protocol.ClientLost
	ReasonStepTimedOut        = "StepTimedOut"
	ReasonExchangeLost        = "ExchangeObjectLost"
	ReasonClockOffsetTooLarge = "ClockOffsetTooLarge"
	// ReasonManagerUnavailable: the clients' deadline passed while no
	// manager conducted the run.
	ReasonManagerUnavailable = "ManagerUnavailable"
)

// Ending is a reason to end the run: a condition reason and its message.
type Ending struct{ Reason, Message string }

// Timeouts are the run's deadlines and leads.
type Timeouts struct {
	// ClaimBind bounds how long a claim may stay unbound.
	ClaimBind time.Duration
	// Ready bounds how long after the run began every client must be
	// prepared.
	Ready time.Duration
	// StartLead is how far ahead the first step's start instant is set.
	StartLead time.Duration
	// NextStepLead is the same for every later step.
	NextStepLead time.Duration
	// ResultGrace is how long after a step's end its results may arrive.
	ResultGrace time.Duration
	// Since is when the manager started: a step's results are awaited a
	// ResultGrace after its end or after Since, whichever is later, so a
	// manager that was away (restarted, upgraded, failed over) never blames
	// the clients for its own absence. Zero: no allowance.
	Since time.Time
}

// Readiness is how far a client has prepared (layout, preconditioning).
type Readiness int

const (
	// Preparing: not yet ready (or its record is missing).
	Preparing Readiness = iota
	// Prepared: ready for the first step.
	Prepared
	// NotPrepared: it could not prepare; Observation's readyError says why.
	NotPrepared
)

// JobState is how a client's Job stands.
type JobState int

const (
	// JobNotEnded: running, or not there to judge.
	JobNotEnded JobState = iota
	// JobDeadlineExceeded: it reached its deadline, the longest the run may
	// take with every allowance used.
	JobDeadlineExceeded
	// JobFailed: it failed (or is about to: its failure is the target).
	JobFailed
	// JobComplete: its client exited.
	JobComplete
)

// Client is one client as the rules read it.
type Client struct {
	Readiness Readiness
	// Result is the step of its latest result; -1: none yet.
	Result int
	Job    JobState
	// Exit is what its pod says of how it ended (evicted, or an exit
	// code), when its Job ended; nil: the pod says nothing (deleted, or
	// lost with its node).
	Exit *Ending
	// NodeLost says why its running pod's node is gone; empty while it is
	// there.
	NodeLost string
}

// Observation is a running benchmark's children as the rules read them.
type Observation struct {
	// Began is when the run began: the claims' and the clients'
	// deadlines count from it.
	Began time.Time
	// Claims maps each claim's name to whether it is bound; StorageClass
	// names their class for the message.
	Claims       map[string]bool
	StorageClass string
	Clients      []Client
	// Plan says the plan exists (the clients' orders are written on it).
	Plan bool
	// Steps are the recorded steps; Order is the order written, nil when
	// none is yet; Planned how many steps the run plans.
	Steps   []Step
	Order   *protocol.StepOrder
	Planned int32
	// ClockOffset is the largest offset measured between a client's clock
	// and the API server's.
	ClockOffset time.Duration
	// Where names what a reader checks when clients do not prepare in
	// time; empty: "the client pods" (the operator's).
	Where string
}

// Action is the lockstep protocol's next move.
type Action int

const (
	// ActPrepare: not every client is ready (or the plan is missing).
	ActPrepare Action = iota
	// ActWait: a step is ordered and some of its results are still out.
	ActWait
	// ActCollect: every result of the ordered step is in: record it.
	ActCollect
	// ActOrder: the recorded steps are all there are so far: order the
	// next step (or the end).
	ActOrder
	// ActEnded: the final order was written; the run has ended.
	ActEnded
)

// Decision is what one pass does with a running run: end it (End), or
// take the protocol's next move (Act), saying so when it is a wait
// (Reason, Progress), and look again after Retry at the latest.
type Decision struct {
	End      *Ending
	Act      Action
	Reason   string
	Progress string
	Retry    time.Duration
}

// Decide is the run's one decision per pass: a reason to end it
// (Failure, or an order the records do not lead to), else the lockstep
// protocol's next move (NextAction). readyError(i) says why client i could
// not prepare, read only when one could not.
func Decide(o Observation, t Timeouts, now time.Time, readyError func(int) string) Decision {
	end, retry := Failure(o, t, now, readyError)
	if end != nil {
		return Decision{End: end}
	}
	act, err := NextAction(o)
	if err != nil {
		return Decision{End: &Ending{ReasonExchangeLost, err.Error()}}
	}
	d := Decision{Act: act, Retry: retry}
	switch act {
	case ActPrepare:
		d.Reason, d.Progress = ReasonPreparing, fmt.Sprintf("%d/%d claims bound, %d/%d clients ready",
			o.bound(), len(o.Claims), o.Ready(), len(o.Clients))
	case ActWait:
		d.Reason, d.Progress = ReasonRunning, RunningMessage(o.Order.Index, o.Planned)
	}
	return d
}

// RunningMessage says which step runs.
func RunningMessage(index int, planned int32) string {
	return fmt.Sprintf("step %d/%d running", index+1, planned)
}

// Failure checks what was observed for a reason to end the run, in the
// order the rules are listed; otherwise it says when the next deadline
// falls (for a timed re-check).
func Failure(o Observation, t Timeouts, now time.Time, readyError func(int) string) (*Ending, time.Duration) {
	end, retry := o.claimFailure(t, now)
	if end != nil {
		return end, 0
	}
	for i, c := range o.Clients {
		if c.Readiness == NotPrepared {
			return &Ending{ReasonClientFailed, fmt.Sprintf("client %d could not prepare: %s", i, readyError(i))}, 0
		}
	}
	// A clock further off than the first step's start lead: that node's
	// timestamps cannot be lined up with the others', whatever the
	// correction.
	if o.ClockOffset > t.StartLead {
		return &Ending{ReasonClockOffsetTooLarge, fmt.Sprintf("a client's clock is %s from the API server's, more than the step start lead (%s): synchronise the nodes' clocks",
			o.ClockOffset, t.StartLead)}, 0
	}
	for _, check := range []func() *Ending{o.stepFailure, o.jobFailure, o.nodeLost} {
		if end := check(); end != nil {
			return end, 0
		}
	}
	if ready := o.Ready(); ready < len(o.Clients) {
		deadline := o.Began.Add(t.Ready)
		if now.After(deadline) {
			where := o.Where
			if where == "" {
				where = "the client pods"
			}
			return &Ending{ReasonClientsNotReady, fmt.Sprintf("%d of %d clients were not ready %s after the benchmark was created (scheduling, image pull, layout and preconditioning): check %s",
				len(o.Clients)-ready, len(o.Clients), t.Ready, where)}, 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	// Results that are all in are collected however late the manager is;
	// only missing ones are judged, and only a ResultGrace after both the
	// step's end and the manager's start.
	if ord := o.Order; ord != nil && !ord.Done && ord.Index == len(o.Steps) && o.ResultsFor(ord.Index) < len(o.Clients) {
		deadline := later(ord.End(), t.Since).Add(t.ResultGrace + ord.VerifyWithin)
		if now.After(deadline) {
			return &Ending{ReasonStepTimedOut, fmt.Sprintf("step %d: %d of %d clients did not report a result by %s", ord.Index+1,
				len(o.Clients)-o.ResultsFor(ord.Index), len(o.Clients), deadline.UTC().Format(time.RFC3339))}, 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	return nil, retry
}

// claimFailure ends the run on a claim still unbound ClaimBind after the
// run began; before that, it says how long until the deadline.
func (o Observation) claimFailure(t Timeouts, now time.Time) (*Ending, time.Duration) {
	deadline := o.Began.Add(t.ClaimBind)
	var retry time.Duration
	for _, name := range slices.Sorted(maps.Keys(o.Claims)) {
		if o.Claims[name] {
			continue
		}
		if now.After(deadline) {
			return &Ending{ReasonClaimNotBound, fmt.Sprintf("claim %s is not bound %s after the benchmark was created (StorageClass %s): check the provisioner and the claim's events",
				name, t.ClaimBind, o.StorageClass)}, 0
		}
		retry = deadline.Sub(now)
	}
	return nil, retry
}

// StepFailure is a recorded step that a client failed or that was
// interrupted (protocol.StepFailure): its result stays recorded, and the
// run is never ordered on from it.
func StepFailure(steps []Step) *Ending {
	for _, s := range steps {
		if kind, msg := protocol.StepFailure(s.Aggregate); kind != "" {
			return &Ending{kind, msg}
		}
	}
	return nil
}

func (o Observation) stepFailure() *Ending { return StepFailure(o.Steps) }

// jobFailure ends the run on a client Job that ended: at its deadline
// (the manager was away), failed, or complete before the run ended.
func (o Observation) jobFailure() *Ending {
	for i, c := range o.Clients {
		switch {
		case c.Job == JobDeadlineExceeded:
			return o.managerAbsent(i)
		case c.Job == JobFailed:
			return c.gone(i, "failed")
		case c.Job == JobComplete && (o.Order == nil || !o.Order.Done):
			return c.gone(i, "exited before the run ended")
		}
	}
	return nil
}

// gone explains a client whose Job ended: what its pod says, else that
// the pod was deleted or lost.
func (c Client) gone(i int, what string) *Ending {
	if c.Exit != nil {
		return c.Exit
	}
	return &Ending{ReasonClientLost, fmt.Sprintf("client %d's pod %s: it was deleted or lost before the run ended; the run is not resumed with a new client, whose fresh layout would change what the storage caches (see docs/operator.md)", i, what)}
}

// nodeLost ends the run when a running client's node is gone: the client
// on it can then neither report nor be stopped.
func (o Observation) nodeLost() *Ending {
	for _, c := range o.Clients {
		if c.NodeLost != "" {
			return &Ending{ReasonClientLost, c.NodeLost}
		}
	}
	return nil
}

// managerAbsent explains a client Job that reached its deadline. The
// deadline is the longest the run may take with every allowance used: a
// manager conducting the run would have ended it before, with the reason
// of whatever held it up. So the clients waited for a manager that did not
// come back in time, and the run cannot go on.
func (o Observation) managerAbsent(i int) *Ending {
	where := "before the first step was ordered"
	if o.Order != nil && !o.Order.Done {
		where = fmt.Sprintf("while step %d was ordered (%d steps recorded)", o.Order.Index+1, len(o.Steps))
	}
	return &Ending{ReasonManagerUnavailable, fmt.Sprintf("client %d's Job reached its deadline %s: the clients wait at most the longest the run may take with every allowance used, and the manager did not conduct the run within it (it was stopped, being upgraded or failing over, or could not reach the API server); the clients stopped and the run cannot go on without them", i, where)}
}

// NextAction is the protocol's transition for what was observed: all
// ready → order step 0; step k's results all in → record step k; step k
// recorded → order step k+1 (or the end). An order the records do not lead
// to (a step's record deleted under the run) is an error that ends it.
func NextAction(o Observation) (Action, error) {
	n := len(o.Steps)
	ord := o.Order
	switch {
	case ord != nil && ord.Done:
		return ActEnded, nil
	case o.Ready() < len(o.Clients) || !o.Plan:
		return ActPrepare, nil
	case ord != nil && ord.Index == n:
		if o.ResultsFor(n) < len(o.Clients) {
			return ActWait, nil
		}
		return ActCollect, nil
	case ord == nil && n == 0, ord != nil && ord.Index == n-1:
		return ActOrder, nil
	}
	index := 0
	if ord != nil {
		index = ord.Index
	}
	return ActPrepare, fmt.Errorf("step %d is ordered, but the step ConfigMaps record %d steps: a step's record was deleted or replaced during the run, and the run cannot go on without losing it", index+1, n)
}

// Ready is how many clients are prepared.
func (o Observation) Ready() int {
	n := 0
	for _, c := range o.Clients {
		if c.Readiness == Prepared {
			n++
		}
	}
	return n
}

// ResultsFor is how many clients reported their result of step k.
func (o Observation) ResultsFor(k int) int {
	n := 0
	for _, c := range o.Clients {
		if c.Result == k {
			n++
		}
	}
	return n
}

func (o Observation) bound() int {
	n := 0
	for _, b := range o.Claims {
		if b {
			n++
		}
	}
	return n
}

// later is the later of two instants.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
