package controllers

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// MaxMessage bounds a condition message: the API allows 32 KiB, and text
// that reaches it comes from places a user controls (names, fio's and the
// API server's errors).
const MaxMessage = 2048

// clip bounds text on its way to status: protocol.Truncate, the one rule the
// runners apply too.
func clip(s string, n int) string { return protocol.Truncate(s, n) }

// conditionOrder is the order conditions are listed in: status is rebuilt
// from the children, and lists in a fixed order compare equal. The
// recorded verdicts' come last.
var conditionOrder = append([]string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled,
	v1alpha1.ConditionComplete, v1alpha1.ConditionFailed, v1alpha1.ConditionSLOMet, v1alpha1.ConditionStorageWarning,
	v1alpha1.ConditionClockSkew, v1alpha1.ConditionSteadyState, v1alpha1.ConditionUnstable, v1alpha1.ConditionClientBound,
	v1alpha1.ConditionClientCPUBound, v1alpha1.ConditionDataIntegrity,
}, verdictConditions()...)

// setCondition sets a condition whose status changed at at (an observed
// instant, so a rebuilt status carries the same times).
func setCondition(b *v1alpha1.StorageBenchmark, typ string, status bool, reason string, at time.Time, msg string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	setConditionStatus(b, typ, s, reason, at, msg)
}

// setConditionStatus is setCondition for a status that may be Unknown.
func setConditionStatus(b *v1alpha1.StorageBenchmark, typ string, s metav1.ConditionStatus, reason string, at time.Time, msg string) {
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: clip(msg, MaxMessage), ObservedGeneration: b.Generation,
		LastTransitionTime: *Stamp(at),
	})
	slices.SortStableFunc(b.Status.Conditions, func(x, y metav1.Condition) int {
		return rank(x.Type) - rank(y.Type)
	})
}

func rank(typ string) int {
	if i := slices.Index(conditionOrder, typ); i >= 0 {
		return i
	}
	return len(conditionOrder)
}

// finished reports whether status says the run has ended (Complete or
// Failed).
func finished(b *v1alpha1.StorageBenchmark) bool {
	return meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) ||
		meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed)
}

// setProgressing marks the run in progress (kstatus: Reconciling, not
// Ready), as it has been since the benchmark was created.
func setProgressing(b *v1alpha1.StorageBenchmark, reason, msg string) {
	since := b.CreationTimestamp.Time
	setCondition(b, v1alpha1.ConditionReconciling, true, reason, since, msg)
	setCondition(b, v1alpha1.ConditionReady, false, reason, since, msg)
}

// setFailed ends the run at at: Failed and Stalled (kstatus) with the
// reason.
func setFailed(b *v1alpha1.StorageBenchmark, at time.Time, reason, msg string) {
	setCondition(b, v1alpha1.ConditionFailed, true, reason, at, msg)
	setCondition(b, v1alpha1.ConditionStalled, true, reason, at, msg)
	setCondition(b, v1alpha1.ConditionReady, false, reason, at, msg)
	setCondition(b, v1alpha1.ConditionReconciling, false, ReasonFailed, at, "the run ended")
	setCondition(b, v1alpha1.ConditionComplete, false, reason, at, msg)
	b.Status.CurrentStep = nil
	if b.Status.CompletionTime == nil {
		b.Status.CompletionTime = Stamp(at)
	}
}

// setComplete ends the run successfully at at.
func setComplete(b *v1alpha1.StorageBenchmark, at time.Time, stop string) {
	msg := fmt.Sprintf("%d steps ran: %s", len(b.Status.Steps), stop)
	setCondition(b, v1alpha1.ConditionComplete, true, ReasonCompleted, at, msg)
	setCondition(b, v1alpha1.ConditionReady, true, ReasonCompleted, at, msg)
	setCondition(b, v1alpha1.ConditionReconciling, false, ReasonCompleted, at, "the run ended")
	setCondition(b, v1alpha1.ConditionStalled, false, ReasonCompleted, at, "the run ended")
	setCondition(b, v1alpha1.ConditionFailed, false, ReasonCompleted, at, msg)
	b.Status.StopReason = stop
	b.Status.CurrentStep = nil
	if b.Status.CompletionTime == nil {
		b.Status.CompletionTime = Stamp(at)
	}
}

// Stamp is an instant as status stores it, to the second: status built
// from the children compares equal to status read back from the API.
func Stamp(t time.Time) *metav1.Time {
	s := metav1.NewTime(t).Rfc3339Copy()
	return &s
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
		OverflowIOs: int64(min(l.Overflow, math.MaxInt64)),
	}
}

func operationStatus(d results.OperationSummary) *v1alpha1.OperationStatus {
	if d.IOs == 0 {
		return nil
	}
	return &v1alpha1.OperationStatus{IOPS: int64(math.Round(d.IOPS)), BytesPerSecond: int64(math.Round(d.BytesPerSec)),
		IOs: int64(d.IOs), Latency: latencyStatus(d.Latency)}
}

// stepStatus is a recorded step as status shows it.
func stepStatus(rec run.Step) v1alpha1.StepStatus {
	o, agg := rec.Order, rec.Aggregate
	s := v1alpha1.StepStatus{
		Index: int32(o.Index), Repetition: o.Step.Repetition, OfferedIOPS: o.Step.OfferedIOPS, OfferedBytesPerSecond: o.Step.OfferedBytesPerSec,
		QueueDepthPerClient: o.Step.QueueDepthPerClient, PercentOfMax: o.Step.PercentOfMax, Unthrottled: o.Step.Unthrottled, ClientBoundCheck: o.Step.ClientBoundCheck,
		Attempt: o.Step.Attempt, Superseded: rec.Superseded, ActiveClients: o.Step.ActiveClients,
		Clients: int32(agg.Clients), StartTime: *Stamp(o.StartAt), StartSkew: metav1.Duration{Duration: agg.StartSkew},
		AchievedIOPS: int64(math.Round(agg.Total.IOPS)), AchievedBytesPerSecond: int64(math.Round(agg.Total.BytesPerSec)),
		Read: operationStatus(agg.Read), Write: operationStatus(agg.Write), Sync: operationStatus(agg.Sync), Interrupted: agg.Interrupted, ConfigMap: rec.Name,
		Verification: verificationStatus(agg.Verification),
	}
	if agg.Total.IOs > 0 {
		l := latencyStatus(agg.Total.Latency)
		s.Latency = &l
	}
	s.Errors = protocol.ErrorLines(agg)
	if c := agg.ClientIOPS; c != (results.ClientSpread{}) {
		s.ClientIOPS = &v1alpha1.ClientSpreadStatus{MinIOPS: int64(math.Round(c.MinIOPS)), MaxIOPS: int64(math.Round(c.MaxIOPS)),
			CVPercent: int32(math.Round(c.CVPercent))}
	}
	if c := agg.ClientCPU; c.Measured > 0 {
		// Rounded up, so that a client is past a bound exactly when the
		// figure shown is above it.
		s.ClientCPU = &v1alpha1.ClientCPUStatus{BusyPercent: int32(min(math.Ceil(c.MaxBusyPercent), math.MaxInt32)),
			ThrottledPercent: int32(math.Ceil(c.MaxThrottledPercent)), BoundCount: int32(min(c.BoundCount, math.MaxInt32))}
		for _, i := range c.Bound[:min(len(c.Bound), results.MaxErrors)] {
			s.ClientCPU.BoundClients = append(s.ClientCPU.BoundClients, int32(min(i, math.MaxInt32)))
		}
	}
	if st := rec.Steady; st.Judged { // judged by the benchmark's options when read
		s.SteadyState = &v1alpha1.SteadyStateStatus{Steady: st.Steady,
			RangePercent: int32(min(math.Round(st.RangePercent), math.MaxInt32)),
			SlopePercent: int32(min(math.Round(st.SlopePercent), math.MaxInt32))}
	}
	if st := rec.Stall; st.Duration > 0 {
		s.LongestStall = &v1alpha1.StallStatus{Start: metav1.Duration{Duration: st.Start}, Duration: metav1.Duration{Duration: st.Duration}}
		if st.P999AroundNs > 0 {
			s.LongestStall.P999Around = ptr.To(duration(st.P999AroundNs))
		}
	}
	return s
}

// project writes into status what the spec and the observed children say,
// through the core's View of them (run.ViewOf) and the verdicts recorded
// on the plan ConfigMap: the same children give the same status, whatever
// status held before. Every field of a benchmark's status that follows
// from its steps is written here.
func project(b *v1alpha1.StorageBenchmark, d *spec.Run, obs *observed) error {
	var order *protocol.StepOrder
	if obs.ordered {
		order = &obs.order
	}
	v, err := run.ViewOf(d.Spec, d.Analysis, d.Objectives, obs.steps, order)
	if err != nil {
		return err
	}
	obs.steps = v.Steps // marked superseded, for what the pass does next
	st := &b.Status
	st.ClientsTotal = b.Spec.Clients.Count
	st.ClientsReady = readyCount(obs)
	st.StepsPlanned = int32(v.Planned)
	w := d.Workload
	st.Workload = &v1alpha1.ResolvedWorkload{BlockSizeBytes: w.BlockSizeBytes, ReadPercent: w.ReadPercent, Pattern: string(w.Pattern),
		IODepth: w.IODepth, IOEngine: string(w.IOEngine), Direct: w.Direct, WorkingSetBytesPerClient: w.WorkingSetBytesPerClient,
		CompressPercent: w.CompressPercent, DedupePercent: w.DedupePercent, Sync: string(w.Sync), SyncEvery: w.SyncEvery}
	st.Steps = nil
	for _, rec := range v.Steps {
		st.Steps = append(st.Steps, stepStatus(rec))
	}
	st.Progress = progress(len(v.Steps), v.Planned)
	st.StartTime, st.CurrentStep = nil, nil
	if !v.Start.IsZero() {
		st.StartTime = Stamp(v.Start)
	}
	if v.Current >= 0 {
		st.CurrentStep = ptr.To(int32(v.Current))
	}
	if v.Ended {
		st.CompletionTime = Stamp(v.EndedAt)
		if v.Failure != "" {
			setFailed(b, v.EndedAt, v.Failure, v.Reason)
		} else {
			setComplete(b, v.EndedAt, v.Reason)
		}
	}
	setVerdicts(b, verdictsOf(obs.plan, obs.order.EndedAt), v.Complete(), obs.order.EndedAt)
	setIntegrity(b, &v, d.Verify, integrityTime(&v), lostFrom(obs.plan))
	setCleanup(b, obs.plan, v.Ended)
	writeAnalysis(b, d, v)
	return nil
}

// writeAnalysis writes the View's analysis of the steps: each step's
// flags, the verdicts on them, the levels' variation, the summary and,
// once the run completed, the objectives' verdicts.
func writeAnalysis(b *v1alpha1.StorageBenchmark, d *spec.Run, v run.View) {
	for i, a := range v.Analysis.Steps {
		s := &b.Status.Steps[i]
		s.Saturated, s.QueueFull, s.Knee = a.Saturated, a.QueueFull, a.Knee
		s.ClosedLoop = v.ClosedLoop(i)
	}
	showVerdict(b, v1alpha1.ConditionSteadyState, v.Steady)
	setRepeatability(b, d.Analysis, v.Levels, v.Unstable, v.Steps)
	// Informational, like SteadyState: it never ends the run.
	showVerdict(b, v1alpha1.ConditionClientBound, v.ClientBound)
	showVerdict(b, v1alpha1.ConditionClientCPUBound, v.ClientCPU)
	b.Status.Summary = summaryStatus(b, v.Analysis.Summary, d.Analysis.WithDefaults().LatencyTarget)
	entitlementPercents(b)
	if v.Complete() && len(d.Objectives) > 0 {
		setSLOs(b, v.Analysis)
	}
}

func summaryStatus(b *v1alpha1.StorageBenchmark, s analysis.Summary, target time.Duration) *v1alpha1.SummaryStatus {
	if len(b.Status.Steps) == 0 {
		return nil
	}
	out := &v1alpha1.SummaryStatus{LatencyTarget: &metav1.Duration{Duration: target}}
	if s.PeakIOPSStep >= 0 {
		out.PeakIOPS = int64(math.Round(s.PeakIOPS))
		out.PeakIOPSStep = ptr.To(int32(s.PeakIOPSStep))
		if s.LatencyAtPeakNs > 0 {
			out.LatencyAtPeak = ptr.To(duration(s.LatencyAtPeakNs))
		}
		if p99 := worstP99(stepByIndex(b, s.PeakIOPSStep)); p99 > 0 {
			out.P99LatencyAtPeak = ptr.To(metav1.Duration{Duration: p99})
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
		out.KneeStep = ptr.To(int32(s.KneeStep))
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
	var at time.Time // judged when the run completed
	if b.Status.CompletionTime != nil {
		at = b.Status.CompletionTime.Time
	}
	setCondition(b, v1alpha1.ConditionSLOMet, res.AllSLOsMet, reason, at, msg)
}

// progress is "finished/planned" for kubectl get.
func progress(finishedSteps, planned int) string {
	return fmt.Sprintf("%d/%d", finishedSteps, planned)
}

// setRepeatability projects how much the runs of each repeated load level
// varied (load.repeat) into status.repeatability, and sets the Unstable
// condition when analysis.maxVariationPercent asks for it. Like the rest of
// status it is a function of the step records alone: the figures come from
// the core (run.Repeatability), and so does the verdict, stamped with the
// end of the run after which it last changed, so a rebuilt status carries
// the same time as one that lived through the run. Informational:
// it never ends the run, nor touches Ready, Stalled or Failed.
func setRepeatability(b *v1alpha1.StorageBenchmark, o analysis.Options, levels []analysis.LevelVariation, unstable *run.Verdict, steps []run.Step) {
	b.Status.Repeatability = nil
	for _, v := range levels {
		entry := repeatabilityStatus(v, steps)
		if o.MaxVariationPercent > 0 {
			entry.Stable = ptr.To(v.Stable(o.MaxVariationPercent))
		}
		b.Status.Repeatability = append(b.Status.Repeatability, entry)
	}
	showVerdict(b, v1alpha1.ConditionUnstable, unstable)
}

// repeatabilityStatus is a level's spread as status shows it: IOPS rounded
// as achievedIOPS is, latencies exact to the nanosecond as the steps' are,
// CVs rounded to a whole percent as steadyState's excursions are, and the
// intervals' low ends at 0 at the least.
func repeatabilityStatus(v analysis.LevelVariation, steps []run.Step) v1alpha1.RepeatabilityStatus {
	out := v1alpha1.RepeatabilityStatus{Level: int32(v.Level), Runs: int32(v.Runs()),
		IOPS: v1alpha1.IOPSVariation{Mean: roundInt64(v.IOPS.Mean), CVPercent: percent(v.IOPS.CVPercent),
			CI95Low: roundInt64(max(v.IOPS.CI95Low, 0)), CI95High: roundInt64(v.IOPS.CI95High)}}
	if s := run.StepAt(steps, v.Steps[0]); s != nil {
		st := s.Order.Step
		out.OfferedIOPS, out.OfferedBytesPerSecond, out.QueueDepthPerClient = st.OfferedIOPS, st.OfferedBytesPerSec, st.QueueDepthPerClient
		out.PercentOfMax, out.Unthrottled = st.PercentOfMax, st.Unthrottled
	}
	if v.HasP99 {
		ns := func(f float64) metav1.Duration { return duration(uint64(roundInt64(max(f, 0)))) }
		out.P99 = &v1alpha1.LatencyVariation{Mean: ns(v.P99.Mean), CVPercent: percent(v.P99.CVPercent),
			CI95Low: ns(v.P99.CI95Low), CI95High: ns(v.P99.CI95High)}
	}
	return out
}

// roundInt64 rounds a non-negative figure to an int64, saturating.
func roundInt64(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Round(f))
}

// percent rounds a percentage to a whole one, saturating.
func percent(f float64) int32 { return int32(min(math.Round(f), math.MaxInt32)) }
