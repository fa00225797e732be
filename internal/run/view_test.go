package run

import (
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/workload"
)

// TestViewOf: what status shows of a run follows from its steps and its
// order alone, at each point of a run's life.
func TestViewOf(t *testing.T) {
	s := Spec{Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200, 300}}, StepDuration: 10 * time.Second},
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1}, Workload: workload.BaseSpec()}
	peak := int64(50)
	objectives := []analysis.Objective{{Name: "peak", PeakIOPS: &peak}}
	first, err := Next(s, nil, nil, now, protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{recorded(t, s, 0), recorded(t, s, 1), recorded(t, s, 2)}
	steps[0].Order.StartAt = now.Add(time.Second)
	next := steps[2].Order
	final := protocol.StepOrder{Index: 3, Done: true, Reason: "all 3 steps completed", EndedAt: now.Add(time.Minute)}
	failed := protocol.StepOrder{Index: 2, Done: true, Failure: "ClientLost", Reason: "client 1 was lost", EndedAt: now.Add(time.Minute)}
	for _, tc := range []struct {
		name     string
		steps    []Step
		order    *protocol.StepOrder
		start    time.Time
		current  int
		ended    bool
		complete bool
		judged   bool // the objectives were judged
	}{
		{name: "nothing ordered", current: -1},
		{name: "the first step ordered", order: &first.Order, start: first.Order.StartAt, current: 0},
		{name: "two recorded, the third ordered", steps: steps[:2], order: &next, start: steps[0].Order.StartAt, current: 2},
		{name: "complete", steps: steps, order: &final, start: steps[0].Order.StartAt, current: -1, ended: true, complete: true, judged: true},
		{name: "failed", steps: steps[:2], order: &failed, start: steps[0].Order.StartAt, current: -1, ended: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ViewOf(s, analysis.Options{}, objectives, tc.steps, tc.order)
			if err != nil {
				t.Fatal(err)
			}
			if v.Planned != 3 || len(v.Steps) != len(tc.steps) || len(v.Analysis.Steps) != len(tc.steps) {
				t.Errorf("planned %d, %d steps, %d analysed; want 3, %d, %d", v.Planned, len(v.Steps), len(v.Analysis.Steps), len(tc.steps), len(tc.steps))
			}
			if !v.Start.Equal(tc.start) || v.Current != tc.current || v.Ended != tc.ended || v.Complete() != tc.complete {
				t.Errorf("start %s current %d ended %v complete %v; want %s %d %v %v", v.Start, v.Current, v.Ended, v.Complete(),
					tc.start, tc.current, tc.ended, tc.complete)
			}
			if judged := len(v.Analysis.SLOs) > 0; judged != tc.judged {
				t.Errorf("objectives judged: %v, want %v", judged, tc.judged)
			}
			if tc.ended && (!v.EndedAt.Equal(tc.order.EndedAt) || v.Failure != tc.order.Failure || v.Reason != tc.order.Reason) {
				t.Errorf("end %s %q %q, want the final order's", v.EndedAt, v.Failure, v.Reason)
			}
		})
	}
}

// TestViewMarksSupersededSteps: a step whose rerun was ordered is
// superseded in the View, and the steps passed in are left as they were.
func TestViewMarksSupersededSteps(t *testing.T) {
	s := Spec{Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200}}, StepDuration: 10 * time.Second,
		ExtendUntilSteady: 3},
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1}, Workload: workload.BaseSpec()}
	steps := []Step{recorded(t, s, 0)}
	rerun := steps[0].Order
	rerun.Index, rerun.Step.Index, rerun.Step.Attempt = 1, 1, 2
	v, err := ViewOf(s, analysis.Options{}, nil, steps, &rerun)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Steps[0].Superseded || steps[0].Superseded {
		t.Errorf("View's step superseded %v, the caller's %v: want true, false", v.Steps[0].Superseded, steps[0].Superseded)
	}
	if v.Current != 1 {
		t.Errorf("current %d, want the rerun, 1", v.Current)
	}
}
