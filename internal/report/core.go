package report

import (
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
)

// Builders of the core model from the measurement's own types, for runs
// that have no StorageBenchmark (`runner local`). They record what the
// operator's status records for the same step, so that a local run prints
// as `kubectl storagebench status` prints a benchmark.

// StepOf is a finished step: the step the plan offered, the instant it was
// ordered to start, the clients' merged results and the analysis' verdict
// on it; its steady state is judged by the default rule.
func StepOf(s plan.Step, start time.Time, a results.StepAggregate, v analysis.StepAnalysis) Step {
	st := Step{
		Index: a.Step, Repetition: int(s.Repetition), Attempt: int(s.Attempt), Superseded: v.Superseded,
		OfferedIOPS: s.OfferedIOPS, OfferedBytesPerSec: s.OfferedBytesPerSec,
		QueueDepthPerClient: s.QueueDepthPerClient, PercentOfMax: s.PercentOfMax, Unthrottled: s.Unthrottled, ActiveClients: s.ActiveClients,
		StartTime: start, StartSkew: a.StartSkew,
		AchievedIOPS: a.Total.IOPS, AchievedBytesPerSec: a.Total.BytesPerSec,
		Read: operationOf(a.Read), Write: operationOf(a.Write), Sync: operationOf(a.Sync),
		Saturated: v.Saturated, Knee: v.Knee, Interrupted: a.Interrupted, Errors: a.Errors,
		Stall:      analysis.LongestStall(a.Timeline).Duration,
		ClosedLoop: v.Saturated && s.RateLimited(),
		Overflow:   int64(min(a.Total.Latency.Overflow, math.MaxInt64)),

		ClientCVPercent: a.ClientIOPS.CVPercent, CPUBoundClients: a.ClientCPU.BoundCount,
	}
	if v := analysis.Steady(a.Timeline, analysis.SteadyOptions{}); v.Judged && !v.Steady {
		st.NotSteady = true
	}
	if a.Total.IOs > 0 {
		l := LatencyOf(a.Total.Latency)
		st.Latency = &l
	}
	if v := a.Verification; v != nil {
		st.Verify = &ReadBack{Verified: v.BlocksVerified, Bad: v.BadBlockCount, Unread: v.Unverified}
	}
	return st
}

// LatencyOf are the figures of a merged latency distribution.
func LatencyOf(l results.LatencySummary) Latency {
	return Latency{Mean: nanos(uint64(math.Round(l.MeanNs))), P50: nanos(l.P50Ns), P90: nanos(l.P90Ns), P99: nanos(l.P99Ns), P999: nanos(l.P999Ns)}
}

// operationOf are the figures of one operation, or nil without I/O in it.
func operationOf(o results.OperationSummary) *OperationFigures {
	if o.IOs == 0 {
		return nil
	}
	return &OperationFigures{IOPS: o.IOPS, BytesPerSec: o.BytesPerSec, Latency: LatencyOf(o.Latency)}
}

func nanos(ns uint64) time.Duration { return time.Duration(min(ns, math.MaxInt64)) }

// SummaryOf is the analysis' summary of the steps (as StepOf built them),
// or nil when no step finished.
func SummaryOf(s analysis.Summary, steps []Step) *Summary {
	if len(steps) == 0 {
		return nil
	}
	out := &Summary{PeakIOPSStep: -1, PeakBytesStep: -1, KneeStep: s.KneeStep}
	if s.PeakIOPSStep >= 0 {
		out.PeakIOPS, out.PeakIOPSStep = s.PeakIOPS, s.PeakIOPSStep
		out.LatencyAtPeak = nanos(s.LatencyAtPeakNs)
		for i := range steps {
			if steps[i].Index == s.PeakIOPSStep {
				out.P99LatencyAtPeak = worstP99(&steps[i])
			}
		}
	}
	if s.PeakBytesStep >= 0 {
		out.PeakBytesPerSec, out.PeakBytesStep = s.PeakBytesPerSec, s.PeakBytesStep
	}
	if t := s.AtTarget; t != nil {
		out.AtTarget = &AtTarget{Step: t.Step, IOPS: t.IOPS, BytesPerSec: t.BytesPerSec, Latency: nanos(t.LatencyNs)}
	}
	return out
}

// worstP99 is the worse of a step's read and write p99 (0 without I/O).
func worstP99(s *Step) time.Duration {
	var p99 time.Duration
	for _, o := range []*OperationFigures{s.Read, s.Write} {
		if o != nil {
			p99 = max(p99, o.Latency.P99)
		}
	}
	return p99
}

// SLOsOf are the objectives' verdicts.
func SLOsOf(r []analysis.SLOResult) []SLO {
	var out []SLO
	for _, s := range r {
		out = append(out, SLO{Name: s.Name, Verdict: string(s.Verdict), Message: s.Reason})
	}
	return out
}

// UnitOfLoad is the unit a load is offered in: MiB/s for a rate or curve in
// MiBps, IOPS otherwise (queue-depth steps included).
func UnitOfLoad(l plan.Load) Unit {
	if (l.Rate != nil && l.Rate.Unit == plan.MiBps) || (l.Curve != nil && l.Curve.Unit == plan.MiBps) {
		return UnitMiBps
	}
	return UnitIOPS
}

// LoadKindOf is how a load is offered.
func LoadKindOf(l plan.Load) LoadKind {
	switch {
	case l.QueueDepth != nil:
		return LoadQueueDepth
	case l.Curve != nil:
		return LoadCurve
	}
	return LoadRate
}
