package controllers

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/runner"
)

// Condition reasons.
const (
	ReasonPreparing            = "Preparing"
	ReasonRunning              = "Running"
	ReasonCompleted            = "Completed"
	ReasonInvalidSpec          = "InvalidSpec"
	ReasonInvalidPlan          = "InvalidPlan"
	ReasonStorageClassNotFound = "StorageClassNotFound"
	ReasonClaimNotFound        = "ClaimNotFound"
	ReasonClaimNotBound        = "ClaimNotBound"
	ReasonClientsNotReady      = "ClientsNotReady"
	ReasonClientFailed         = "ClientFailed"
	ReasonClientLost           = "ClientLost"
	ReasonStepTimedOut         = "StepTimedOut"
	ReasonAllMet               = "AllMet"
	ReasonNotMet               = "NotMet"
	ReasonNotMeasurable        = "NotMeasurable"
	ReasonFailed               = "Failed"
	// The reasons below end a run that would otherwise touch what the
	// benchmark does not own, or never end.
	ReasonNameConflict        = "NameConflict"
	ReasonCreateRefused       = "CreateRefused"
	ReasonClaimNotConsented   = "ClaimNotConsented"
	ReasonForbiddenByPolicy   = "ForbiddenByPolicy"
	ReasonInvalidResult       = "InvalidResult"
	ReasonExchangeLost        = "ExchangeObjectLost"
	ReasonClockOffsetTooLarge = "ClockOffsetTooLarge"
	ReasonClockSkew           = "ClockSkew"
	ReasonClocksAgree         = "ClocksAgree"
)

// maxStepErrors bounds the errors kept per step, so status stays small.
const maxStepErrors = 5

// maxMessage bounds a condition message: the API allows 32 KiB, and text
// that reaches it comes from places a user controls (names, fio's and the
// API server's errors).
const maxMessage = 2048

// clip bounds text on its way to status: runner.Truncate, the one rule the
// runners apply too.
func clip(s string, n int) string { return runner.Truncate(s, n) }

func setCondition(b *v1alpha1.StorageBenchmark, typ string, status bool, reason, msg string) {
	msg = clip(msg, maxMessage)
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: b.Generation,
	})
}

// finished reports whether the run has ended (Complete or Failed).
func finished(b *v1alpha1.StorageBenchmark) bool {
	return meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) ||
		meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed)
}

// setProgressing marks the run in progress (kstatus: Reconciling, not Ready).
func setProgressing(b *v1alpha1.StorageBenchmark, reason, msg string) {
	setCondition(b, v1alpha1.ConditionReconciling, true, reason, msg)
	setCondition(b, v1alpha1.ConditionReady, false, reason, msg)
}

// setFailed ends the run: Failed and Stalled (kstatus) with the reason.
func setFailed(b *v1alpha1.StorageBenchmark, now time.Time, reason, msg string) {
	setCondition(b, v1alpha1.ConditionFailed, true, reason, msg)
	setCondition(b, v1alpha1.ConditionStalled, true, reason, msg)
	setCondition(b, v1alpha1.ConditionReady, false, reason, msg)
	setCondition(b, v1alpha1.ConditionReconciling, false, ReasonFailed, "the run ended")
	setCondition(b, v1alpha1.ConditionComplete, false, reason, msg)
	b.Status.CurrentStep = nil
	if b.Status.CompletionTime == nil {
		b.Status.CompletionTime = &metav1.Time{Time: now}
	}
}

// setComplete ends the run successfully.
func setComplete(b *v1alpha1.StorageBenchmark, now time.Time, stop string) {
	msg := fmt.Sprintf("%d steps ran: %s", len(b.Status.Steps), stop)
	setCondition(b, v1alpha1.ConditionComplete, true, ReasonCompleted, msg)
	setCondition(b, v1alpha1.ConditionReady, true, ReasonCompleted, msg)
	setCondition(b, v1alpha1.ConditionReconciling, false, ReasonCompleted, "the run ended")
	setCondition(b, v1alpha1.ConditionStalled, false, ReasonCompleted, "the run ended")
	setCondition(b, v1alpha1.ConditionFailed, false, ReasonCompleted, msg)
	b.Status.StopReason = stop
	b.Status.CurrentStep = nil
	if b.Status.CompletionTime == nil {
		b.Status.CompletionTime = &metav1.Time{Time: now}
	}
}

func duration(ns uint64) metav1.Duration {
	if ns > math.MaxInt64 {
		ns = math.MaxInt64
	}
	return metav1.Duration{Duration: time.Duration(ns)}
}

func latencyStatus(l results.LatencySummary) v1alpha1.LatencyStatus {
	return v1alpha1.LatencyStatus{
		Mean: duration(uint64(math.Round(l.MeanNs))), P50: duration(l.P50Ns), P90: duration(l.P90Ns),
		P99: duration(l.P99Ns), P999: duration(l.P999Ns), Max: duration(l.MaxNs),
	}
}

func operationStatus(d results.DirectionSummary) *v1alpha1.OperationStatus {
	if d.IOs == 0 {
		return nil
	}
	return &v1alpha1.OperationStatus{IOPS: int64(math.Round(d.IOPS)), BytesPerSecond: int64(math.Round(d.BytesPerSec)),
		IOs: int64(d.IOs), Latency: latencyStatus(d.Latency)}
}

// stepStatus is a finished step as status records it.
func stepStatus(o runner.StepOrder, agg results.StepAggregate, histograms string) v1alpha1.StepStatus {
	s := v1alpha1.StepStatus{
		Index: int32(o.Index), OfferedIOPS: o.Step.OfferedIOPS, OfferedBytesPerSecond: o.Step.OfferedBytesPerSec,
		QueueDepthPerClient: o.Step.QueueDepthPerClient, PercentOfMax: o.Step.PercentOfMax, Unthrottled: o.Step.Unthrottled,
		Clients: int32(agg.Clients), StartTime: metav1.Time{Time: o.StartAt}, StartSkew: metav1.Duration{Duration: agg.StartSkew},
		AchievedIOPS: int64(math.Round(agg.Total.IOPS)), AchievedBytesPerSecond: int64(math.Round(agg.Total.BytesPerSec)),
		Read: operationStatus(agg.Read), Write: operationStatus(agg.Write), Interrupted: agg.Interrupted, Histograms: histograms,
	}
	if agg.Total.IOs > 0 {
		l := latencyStatus(agg.Total.Latency)
		s.Latency = &l
	}
	s.Errors = nil
	for _, e := range agg.Errors[:min(len(agg.Errors), maxStepErrors)] {
		s.Errors = append(s.Errors, clip(e, maxMessage/4))
	}
	// The merger lists only the first errors: the count is of clients.
	if failed := max(agg.FailedClients, len(agg.Errors)); failed > maxStepErrors {
		s.Errors = append(s.Errors[:maxStepErrors-1:maxStepErrors-1], fmt.Sprintf("… and %d more errors", failed-maxStepErrors+1))
	}
	return s
}

// summaryOf reads a status latency back into the core's form (the figures
// status keeps; what it drops — stddev, p95, p99.99 — no selector uses).
func summaryOf(l *v1alpha1.LatencyStatus, ios int64) results.LatencySummary {
	if l == nil {
		return results.LatencySummary{}
	}
	ns := func(d metav1.Duration) uint64 { return uint64(d.Nanoseconds()) }
	return results.LatencySummary{Count: uint64(ios), MaxNs: ns(l.Max), MeanNs: float64(l.Mean.Nanoseconds()),
		P50Ns: ns(l.P50), P90Ns: ns(l.P90), P99Ns: ns(l.P99), P999Ns: ns(l.P999)}
}

func direction(o *v1alpha1.OperationStatus) results.DirectionSummary {
	if o == nil {
		return results.DirectionSummary{}
	}
	return results.DirectionSummary{IOPS: float64(o.IOPS), BytesPerSec: float64(o.BytesPerSecond), IOs: uint64(o.IOs),
		Latency: summaryOf(&o.Latency, o.IOs)}
}

// aggregateOf rebuilds a step's aggregate from status, for the planner and
// the analysis, which therefore always work from what status recorded.
func aggregateOf(s *v1alpha1.StepStatus) results.StepAggregate {
	a := results.StepAggregate{Step: int(s.Index), Clients: int(s.Clients), Read: direction(s.Read), Write: direction(s.Write),
		Interrupted: s.Interrupted, Errors: s.Errors}
	a.Total = results.DirectionSummary{IOPS: float64(s.AchievedIOPS), BytesPerSec: float64(s.AchievedBytesPerSecond),
		IOs: a.Read.IOs + a.Write.IOs}
	a.Total.Latency = summaryOf(s.Latency, int64(a.Total.IOs))
	return a
}

// outcomes are the finished steps as the planner needs them.
func outcomes(steps []v1alpha1.StepStatus) []plan.StepOutcome {
	out := make([]plan.StepOutcome, len(steps))
	for i := range steps {
		out[i] = runner.OutcomeOf(i, aggregateOf(&steps[i]))
	}
	return out
}

// analyze recomputes the per-step flags, the summary and (once the run is
// complete) the SLO verdicts from the steps in status.
func analyze(b *v1alpha1.StorageBenchmark, d *desired, complete bool) error {
	inputs := make([]analysis.StepInput, len(b.Status.Steps))
	for i := range b.Status.Steps {
		s := &b.Status.Steps[i]
		inputs[i] = analysis.StepInput{Aggregate: aggregateOf(s), OfferedIOPS: s.OfferedIOPS, OfferedBytesPerSec: s.OfferedBytesPerSecond}
	}
	var objectives []analysis.Objective
	if complete {
		objectives = d.Objectives
	}
	res, err := analysis.Analyze(inputs, d.Analysis, objectives)
	if err != nil {
		return err
	}
	for i, a := range res.Steps {
		b.Status.Steps[i].Saturated = a.Saturated
		b.Status.Steps[i].Knee = a.Knee
	}
	b.Status.Summary = summaryStatus(b, res.Summary, d.Analysis.WithDefaults().LatencyTarget)
	entitlementPercents(b)
	if complete && len(d.Objectives) > 0 {
		setSLOs(b, res)
	}
	return nil
}

func summaryStatus(b *v1alpha1.StorageBenchmark, s analysis.Summary, target time.Duration) *v1alpha1.SummaryStatus {
	if len(b.Status.Steps) == 0 {
		return nil
	}
	out := &v1alpha1.SummaryStatus{LatencyTarget: &metav1.Duration{Duration: target}}
	if s.PeakIOPSStep >= 0 {
		out.PeakIOPS = int64(math.Round(s.PeakIOPS))
		out.PeakIOPSStep = ptrTo(int32(s.PeakIOPSStep))
		if s.LatencyAtPeakNs > 0 {
			out.LatencyAtPeak = ptrTo(duration(s.LatencyAtPeakNs))
		}
		if p99 := worstP99(stepByIndex(b, s.PeakIOPSStep)); p99 > 0 {
			out.P99LatencyAtPeak = ptrTo(metav1.Duration{Duration: p99})
		}
	}
	if s.PeakBytesStep >= 0 {
		out.PeakBytesPerSecond = int64(math.Round(s.PeakBytesPerSec))
	}
	if t := s.AtTarget; t != nil {
		out.AtTarget = &v1alpha1.AtTargetStatus{Step: int32(t.Step), IOPS: int64(math.Round(t.IOPS)),
			BytesPerSecond: int64(math.Round(t.BytesPerSec)), Latency: duration(t.LatencyNs)}
	}
	if s.KneeStep >= 0 {
		out.KneeStep = ptrTo(int32(s.KneeStep))
	}
	return out
}

func stepByIndex(b *v1alpha1.StorageBenchmark, index int) *v1alpha1.StepStatus {
	for i := range b.Status.Steps {
		if int(b.Status.Steps[i].Index) == index {
			return &b.Status.Steps[i]
		}
	}
	return nil
}

func worstP99(s *v1alpha1.StepStatus) time.Duration {
	if s == nil {
		return 0
	}
	var p99 time.Duration
	for _, o := range []*v1alpha1.OperationStatus{s.Read, s.Write} {
		if o != nil && o.Latency.P99.Duration > p99 {
			p99 = o.Latency.P99.Duration
		}
	}
	return p99
}

func setSLOs(b *v1alpha1.StorageBenchmark, res analysis.Result) {
	b.Status.SLOs = b.Status.SLOs[:0]
	reason, msg := ReasonAllMet, "every objective was met"
	for _, r := range res.SLOs {
		b.Status.SLOs = append(b.Status.SLOs, v1alpha1.SLOStatus{Name: r.Name, Verdict: v1alpha1.Verdict(r.Verdict), Message: r.Reason})
		switch {
		case r.Verdict == analysis.NotMeasurable && reason == ReasonAllMet:
			reason, msg = ReasonNotMeasurable, fmt.Sprintf("objective %s could not be measured: %s", r.Name, r.Reason)
		case r.Verdict == analysis.NotMet && reason != ReasonNotMet:
			reason, msg = ReasonNotMet, fmt.Sprintf("objective %s not met: %s", r.Name, r.Reason)
		}
	}
	setCondition(b, v1alpha1.ConditionSLOMet, res.AllSLOsMet, reason, msg)
}

// progress is "finished/planned" for kubectl get.
func progress(finishedSteps, planned int) string {
	return fmt.Sprintf("%d/%d", finishedSteps, planned)
}

func ptrTo[T any](v T) *T { return &v }
