package run

import (
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
)

// View is what a run's status shows, computed from its recorded steps and
// its current order alone: the same records give the same View, so a
// status that was wiped, or written by a manager long gone, is rebuilt as
// it was. The operator writes it into the API's status in one place; the
// verdicts that rest on more than the steps are recorded apart (Verdicts)
// and shown beside it.
type View struct {
	// Planned is how many steps the load plans now, given the steps that
	// ran and the one ordered.
	Planned int
	// Steps are the recorded steps, each marked Superseded when the step
	// after it, recorded or ordered, is its rerun.
	Steps []Step
	// Start is when the first step started (or is ordered to); zero before
	// any is ordered.
	Start time.Time
	// Current is the index of the step ordered and not yet recorded; -1
	// when none is.
	Current int
	// Ended says the final order was written: at EndedAt, failed with
	// Failure (a reason) when set, else complete; Reason is the final
	// order's message (why the run failed, or the stop reason).
	Ended   bool
	EndedAt time.Time
	Failure string
	Reason  string
	// Analysis is the analysis of the steps (saturation, knee, summary,
	// client-bound check), with the objectives judged once the run
	// completed.
	Analysis analysis.Result
	// The verdicts on the steps (nil: none yet, or none asked for): steady
	// state, the variation of repeated levels, the client-bound check, the
	// clients' CPU.
	Steady, Unstable, ClientBound, ClientCPU *Verdict
	// Levels are the repeated load levels' variation (load.repeat).
	Levels []analysis.LevelVariation
}

// ClosedLoop says whether step i's latency was measured closed-loop: the
// step was saturated, or offered no rate.
func (v View) ClosedLoop(i int) bool {
	return v.Analysis.Steps[i].Saturated || !v.Steps[i].Order.Step.RateLimited()
}

// Complete says the run ended with every planned step, or a stop rule.
func (v View) Complete() bool { return v.Ended && v.Failure == "" }

// ViewOf is the View of a run of spec s, judged by the options o and the
// objectives, from its recorded steps and its current order (nil before
// the first). The steps are not changed: View.Steps is a copy.
func ViewOf(s Spec, o analysis.Options, objectives []analysis.Objective, steps []Step, order *protocol.StepOrder) (View, error) {
	v := View{Steps: append([]Step(nil), steps...), Current: -1}
	ran := make([]plan.Step, 0, len(steps)+1)
	for _, st := range steps {
		ran = append(ran, st.Order.Step)
	}
	open := order != nil && !order.Done
	if open && order.Index == len(steps) {
		ran = append(ran, order.Step) // ordered, not yet recorded
	}
	v.Planned = plan.PlannedSteps(s.Load, ran)
	for i := range v.Steps {
		v.Steps[i].Superseded = plan.SupersededAt(ran, i)
	}
	switch {
	case len(steps) > 0:
		v.Start = steps[0].Order.StartAt
	case open:
		v.Start = order.StartAt
	}
	if open {
		v.Current = order.Index
	}
	if order != nil && order.Done {
		v.Ended, v.EndedAt, v.Failure, v.Reason = true, order.EndedAt, order.Failure, order.Reason
	}
	if !v.Complete() {
		objectives = nil
	}
	var err error
	if v.Analysis, err = analysis.Analyze(analysisInputs(s, v.Steps), o, objectives); err != nil {
		return v, err
	}
	v.Steady = SteadyVerdict(v.Steps, o.Steady)
	v.Levels, v.Unstable = Repeatability(v.Steps, o)
	v.ClientBound = ClientBoundVerdict(v.Analysis.ClientBound, v.Steps, o.WithDefaults().Throughput)
	v.ClientCPU = ClientCPUVerdict(v.Steps)
	return v, nil
}

// analysisInputs are the steps as the analysis reads them.
func analysisInputs(s Spec, steps []Step) []analysis.StepInput {
	inputs := make([]analysis.StepInput, len(steps))
	for i, rec := range steps {
		st := rec.Order.Step
		inputs[i] = analysis.StepInput{Aggregate: rec.Aggregate, OfferedIOPS: st.OfferedIOPS, OfferedBytesPerSec: st.OfferedBytesPerSec,
			Outstanding: plan.Outstanding(st, s.Topology, s.Workload), Unthrottled: st.Unthrottled, ClientBoundCheck: st.ClientBoundCheck,
			Superseded: rec.Superseded}
		if rec.Timed {
			inputs[i].Stall = &steps[i].Stall
		}
	}
	return inputs
}
