package runner

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/workload"
)

// View is a conducted run as the operator's status shows a benchmark
// (run.ViewOf, the same analysis): its steps, superseded or not, the
// analysis of the curve with the objectives judged once it completed, and
// the verdicts on its steps. runErr is the error the run ended with (nil:
// it completed).
func (l *Local) View(out *Outcome, runErr error, opts analysis.Options, slos []analysis.Objective) (run.View, error) {
	final := protocol.StepOrder{Index: len(out.Steps), Done: true, Failure: out.Failure}
	if final.Failure == "" && runErr != nil {
		final.Failure = runErr.Error()
	}
	if out.Stop != nil {
		final.Reason = out.Stop.Message
	}
	return run.ViewOf(l.spec(), opts, slos, out.Steps, &final)
}

// Report is a local run as internal/report renders a benchmark: the plan,
// the steps conducted with the analysis' marks, the summary and how the run
// ended. v is its View by the options opts; runErr is the error the run
// ended with (nil: it completed). started and ended bound the run (zero:
// unknown).
func (l *Local) Report(out *Outcome, runErr error, opts analysis.Options, v run.View, started, ended time.Time) *report.Run {
	opts = opts.WithDefaults()
	r := &report.Run{
		Name: l.Name, Profile: l.Profile,
		Phase: "Completed", State: report.StateComplete,
		Unit: report.UnitOfLoad(l.Load), Target: opts.TargetSelector, LatencyTarget: opts.LatencyTarget,
		Clients: l.Topology.Clients, JobsPerClient: l.Topology.JobsPerClient,
		LoadKind: report.LoadKindOf(l.Load), StepDuration: l.Load.StepDuration, RampTime: l.Load.RampTime,
		StepsPlanned: v.Planned, CurrentStep: -1,
		Started: started, Ended: ended,
		SLOs: report.SLOsOf(v.Analysis.SLOs),
	}
	if l.Workload != (workload.Spec{}) {
		w := l.Workload
		r.Workload = &w
	}
	for i, s := range v.Steps {
		r.Steps = append(r.Steps, report.StepOf(s.Order.Step, s.Order.StartAt, s.Aggregate, v.Analysis.Steps[i]))
	}
	r.Summary = report.SummaryOf(v.Analysis.Summary, r.Steps)
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
func (l *Local) WriteReport(w io.Writer, out *Outcome, runErr error, opts analysis.Options, v run.View, started, ended time.Time) error {
	return l.Report(out, runErr, opts, v, started, ended).WriteStatus(w, ended)
}
