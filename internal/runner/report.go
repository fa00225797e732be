package runner

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/workload"
)

// Analyze runs the curve analysis over a conducted run.
func Analyze(out *Outcome, opts analysis.Options, slos []analysis.Objective) (analysis.Result, error) {
	in := make([]analysis.StepInput, len(out.Steps))
	ran := out.stepsRan()
	for i, s := range out.Steps {
		in[i] = analysis.StepInput{Aggregate: s.Aggregate, OfferedIOPS: s.Step.OfferedIOPS, OfferedBytesPerSec: s.Step.OfferedBytesPerSec,
			Unthrottled: s.Step.Unthrottled, ClientBoundCheck: s.Step.ClientBoundCheck,
			Superseded: plan.SupersededAt(ran, i)}
	}
	return analysis.Analyze(in, opts, slos)
}

// Report is a local run as internal/report renders a benchmark: the plan,
// the steps conducted with the analysis' marks, the summary and how the run
// ended. opts are the options res was analysed with; runErr is the error
// the run ended with (nil: it completed). started and ended bound the run
// (zero: unknown).
func (l *Local) Report(out *Outcome, runErr error, opts analysis.Options, res analysis.Result, started, ended time.Time) *report.Run {
	opts = opts.WithDefaults()
	r := &report.Run{
		Name: l.Name, Profile: l.Profile,
		Phase: "Completed", State: report.StateComplete,
		Unit: report.UnitOfLoad(l.Load), Target: opts.TargetSelector, LatencyTarget: opts.LatencyTarget,
		Clients: l.Topology.Clients, JobsPerClient: l.Topology.JobsPerClient,
		LoadKind: report.LoadKindOf(l.Load), StepDuration: l.Load.StepDuration, RampTime: l.Load.RampTime,
		StepsPlanned: plan.PlannedSteps(l.Load, out.stepsRan()), CurrentStep: -1,
		Started: started, Ended: ended,
		SLOs: report.SLOsOf(res.SLOs),
	}
	if l.Workload != (workload.Spec{}) {
		w := l.Workload
		r.Workload = &w
	}
	for i, s := range out.Steps {
		var v analysis.StepAnalysis
		if i < len(res.Steps) {
			v = res.Steps[i]
		}
		r.Steps = append(r.Steps, report.StepOf(s.Step, s.StartAt, s.Aggregate, v))
	}
	r.Summary = report.SummaryOf(res.Summary, r.Steps)
	if out.Stop != nil {
		r.StopReason = out.Stop.Message
	}
	r.Failure = out.Failure
	if r.Failure == "" && runErr != nil {
		r.Failure = runErr.Error()
	}
	if r.Failure != "" {
		r.Phase, r.State = "Failed", report.StateFailed
		if errors.Is(runErr, ErrInterrupted) || errors.Is(runErr, context.Canceled) {
			r.Phase = "Interrupted"
		}
	}
	return r
}

// WriteReport prints a local run as `kubectl storagebench status` prints a
// benchmark: the run (name, state, workload, load, timing), one row per step
// as the published reports lay it out, and the summary.
func (l *Local) WriteReport(w io.Writer, out *Outcome, runErr error, opts analysis.Options, res analysis.Result, started, ended time.Time) error {
	return l.Report(out, runErr, opts, res, started, ended).WriteStatus(w, ended)
}

// stepsRan are the steps the run conducted, in order.
func (o *Outcome) stepsRan() []plan.Step {
	ran := make([]plan.Step, len(o.Steps))
	for i, s := range o.Steps {
		ran[i] = s.Step
	}
	return ran
}
