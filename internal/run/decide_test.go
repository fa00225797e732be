package run

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// The run's rules over pure observations: which ending wins, when the
// next deadline falls, and the protocol's move. The operator's reading of
// pods, Jobs and Nodes into an Observation is tested in controllers.

var (
	began    = time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	timeouts = Timeouts{ClaimBind: 5 * time.Minute, Ready: 30 * time.Minute, StartLead: 3 * time.Second,
		NextStepLead: time.Second, ResultGrace: 2 * time.Minute}
)

// running is a run of two prepared clients on a bound claim, the plan
// written; changes change it.
func running(changes ...func(*Observation)) Observation {
	o := Observation{Began: began, Claims: map[string]bool{"data": true}, StorageClass: "fast", Plan: true, Planned: 3,
		Clients: []Client{{Readiness: Prepared, Result: -1}, {Readiness: Prepared, Result: -1}}}
	for _, c := range changes {
		c(&o)
	}
	return o
}

// orderedAt: step k is ordered to start at start, for 10 s; k steps
// recorded before it.
func orderedAt(k int, start time.Time) func(*Observation) {
	return func(o *Observation) {
		o.Order = &protocol.StepOrder{Index: k, StartAt: start, Duration: 10 * time.Second, Step: plan.Step{Index: k}}
		o.Steps = make([]Step, k)
	}
}

func resultsOf(k int) func(*Observation) {
	return func(o *Observation) {
		for i := range o.Clients {
			o.Clients[i].Result = k
		}
	}
}

func TestDecide(t *testing.T) {
	start := began.Add(time.Minute)
	failedStep := Step{Aggregate: results.StepAggregate{Errors: []string{"client 1: fio: io_u error"}}}
	for _, tc := range []struct {
		name     string
		o        Observation
		now      time.Time
		end      string // the ending's reason; "" none
		msg      string
		act      Action
		progress string
		retry    time.Duration
	}{
		{name: "a claim unbound, before its deadline: a re-check at it", o: running(func(o *Observation) {
			o.Claims["data"], o.Clients[0].Readiness, o.Clients[1].Readiness = false, Preparing, Preparing
		}), now: began.Add(time.Minute), act: ActPrepare, progress: "0/1 claims bound, 0/2 clients ready", retry: 4 * time.Minute},
		{name: "a claim unbound past its deadline", o: running(func(o *Observation) { o.Claims["data"] = false }),
			now: began.Add(6 * time.Minute), end: ReasonClaimNotBound, msg: "claim data is not bound 5m0s after the benchmark was created (StorageClass fast)"},
		{name: "a client that could not prepare says why", o: running(func(o *Observation) { o.Clients[1].Readiness = NotPrepared }),
			now: began, end: ReasonClientFailed, msg: "client 1 could not prepare: no space left"},
		{name: "a clock further off than the lead", o: running(func(o *Observation) { o.ClockOffset = 4 * time.Second }),
			now: began, end: ReasonClockOffsetTooLarge, msg: "4s from the API server's, more than the step start lead (3s)"},
		{name: "a clock within the lead", o: running(func(o *Observation) { o.ClockOffset = 3 * time.Second }),
			now: began, act: ActOrder},
		{name: "a recorded step a client failed", o: running(orderedAt(1, start), func(o *Observation) { o.Steps[0] = failedStep }),
			now: start, end: ReasonClientFailed},
		{name: "a Job at its deadline: the manager was away", o: running(orderedAt(1, start), func(o *Observation) { o.Clients[0].Job = JobDeadlineExceeded }),
			now: start, end: ReasonManagerUnavailable, msg: "while step 2 was ordered (1 steps recorded)"},
		{name: "a failed Job with what its pod said", o: running(func(o *Observation) {
			o.Clients[1].Job, o.Clients[1].Exit = JobFailed, &Ending{ReasonClientFailed, "client 1 (pod p) failed with exit code 1: fio"}
		}), now: began, end: ReasonClientFailed, msg: "exit code 1"},
		{name: "a failed Job whose pod says nothing: lost", o: running(func(o *Observation) { o.Clients[1].Job = JobFailed }),
			now: began, end: ReasonClientLost, msg: "client 1's pod failed: it was deleted or lost"},
		{name: "a Job complete before the run ended", o: running(orderedAt(0, start), func(o *Observation) { o.Clients[0].Job = JobComplete }),
			now: start, end: ReasonClientLost, msg: "client 0's pod exited before the run ended"},
		{name: "a Job complete after the final order", o: running(func(o *Observation) {
			o.Order, o.Clients[0].Job = &protocol.StepOrder{Index: 2, Done: true}, JobComplete
		}), now: start, act: ActEnded},
		{name: "a node lost", o: running(func(o *Observation) { o.Clients[0].NodeLost = "client 0 (pod p) lost its node n" }),
			now: began, end: ReasonClientLost, msg: "lost its node n"},
		{name: "a Job's end is judged before a node lost", o: running(func(o *Observation) {
			o.Clients[1].NodeLost, o.Clients[0].Job = "client 1 lost its node", JobFailed
		}), now: began, end: ReasonClientLost, msg: "client 0's pod failed"},
		{name: "a client preparing, before the deadline", o: running(func(o *Observation) { o.Clients[1].Readiness = Preparing }),
			now: began.Add(10 * time.Minute), act: ActPrepare, progress: "1/1 claims bound, 1/2 clients ready", retry: 20 * time.Minute},
		{name: "a client preparing, past the deadline", o: running(func(o *Observation) { o.Clients[1].Readiness = Preparing }),
			now: began.Add(31 * time.Minute), end: ReasonClientsNotReady, msg: "1 of 2 clients were not ready 30m0s"},
		{name: "no plan yet", o: running(func(o *Observation) { o.Plan = false }), now: began, act: ActPrepare,
			progress: "1/1 claims bound, 2/2 clients ready"},
		{name: "ready, nothing ordered: order step 1", o: running(), now: began, act: ActOrder},
		{name: "step 1 running: wait, re-check a grace after its end", o: running(orderedAt(0, start)), now: start,
			act: ActWait, progress: "step 1/3 running", retry: 10*time.Second + 2*time.Minute},
		{name: "step 1's results late past the grace", o: running(orderedAt(0, start)), now: start.Add(time.Hour),
			end: ReasonStepTimedOut, msg: "step 1: 2 of 2 clients did not report a result by 2026-11-28T01:03:10Z"},
		{name: "a manager that just started allows the grace from its start", o: running(orderedAt(0, start)), now: start.Add(time.Hour),
			act: ActWait, progress: "step 1/3 running", retry: 2 * time.Minute},
		{name: "results all in, however late: record them", o: running(orderedAt(0, start), resultsOf(0)), now: start.Add(time.Hour), act: ActCollect},
		{name: "step 1 recorded: order step 2", o: running(orderedAt(0, start), resultsOf(0), func(o *Observation) { o.Steps = make([]Step, 1) }),
			now: start, act: ActOrder},
		{name: "an order the records do not lead to", o: running(orderedAt(0, start), func(o *Observation) { o.Steps = make([]Step, 3) }),
			now: start, end: ReasonExchangeLost, msg: "step 1 is ordered, but the step ConfigMaps record 3 steps"},
		{name: "records without any order", o: running(func(o *Observation) { o.Steps = make([]Step, 1) }),
			now: start, end: ReasonExchangeLost, msg: "step 1 is ordered, but the step ConfigMaps record 1 steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to := timeouts
			if strings.HasPrefix(tc.name, "a manager that just started") {
				to.Since = tc.now
			}
			d := Decide(tc.o, to, tc.now, func(int) string { return "no space left" })
			switch {
			case tc.end != "":
				if d.End == nil || d.End.Reason != tc.end || !strings.Contains(d.End.Message, tc.msg) {
					t.Fatalf("ended with %+v, want %s containing %q", d.End, tc.end, tc.msg)
				}
			case d.End != nil:
				t.Fatalf("ended with %+v, want none", d.End)
			case d.Act != tc.act || d.Progress != tc.progress || d.Retry != tc.retry:
				t.Fatalf("act %v, progress %q, retry %s; want %v, %q, %s", d.Act, d.Progress, d.Retry, tc.act, tc.progress, tc.retry)
			}
		})
	}
}
