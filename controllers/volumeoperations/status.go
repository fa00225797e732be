package volumeoperations

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/volops"
)

// planOf is b's plan as the core checks it, with the API's object bound.
func planOf(b *v1alpha1.VolumeOperationsBenchmark) volops.Plan {
	p := volops.Plan{MaxObjects: maxObjects}
	for _, op := range b.Spec.Operations {
		p.Operations = append(p.Operations, volops.Operation(op))
	}
	for _, c := range b.Spec.Concurrency {
		p.Concurrency = append(p.Concurrency, int(c))
	}
	return p
}

// maxObjects bounds what one benchmark keeps alive at once: the most the
// API's bounds allow (volops.MaxConcurrency at once; attach makes a claim
// and a pod each).
const maxObjects = 2 * volops.MaxConcurrency

// objectivesOf are b's objectives as the core judges them, in spec order.
func objectivesOf(b *v1alpha1.VolumeOperationsBenchmark) []volops.Objective {
	out := make([]volops.Objective, len(b.Spec.Objectives))
	for i, o := range b.Spec.Objectives {
		out[i] = volops.Objective{Operation: volops.Operation(o.Operation), Percentile: volops.Percentile(o.Percentile),
			MaxLatency: o.MaxLatency.Duration, UpToConcurrency: int(ptr.Deref(o.UpToConcurrency, 0)),
			MinPerMinute: float64(ptr.Deref(o.MinPerMinute, 0))}
		if out[i].Percentile == "" {
			out[i].Percentile = volops.P99
		}
	}
	return out
}

// recordStep summarises ph's samples into b's curve of ph's operation.
func recordStep(b *v1alpha1.VolumeOperationsBenchmark, ph phase, samples []volops.Sample) error {
	r, err := volops.Summarize(samples)
	if err != nil {
		return err
	}
	c, ok := r.Curve(volops.Operation(ph.op))
	if !ok || len(c.Steps) != 1 {
		return fmt.Errorf("the %s step at %d summarised to %d steps", ph.op, ph.concurrency, len(c.Steps))
	}
	curve := curveStatus(b, ph.op)
	steps := append(stepsOf(curve), c.Steps[0])
	*curve = curveOf(ph.op, volops.CurveOf(volops.Operation(ph.op), steps))
	return nil
}

// curveStatus is b's status of op's curve, added (in spec order) when
// missing.
func curveStatus(b *v1alpha1.VolumeOperationsBenchmark, op v1alpha1.VolumeOperation) *v1alpha1.OperationCurveStatus {
	for i := range b.Status.Operations {
		if b.Status.Operations[i].Operation == op {
			return &b.Status.Operations[i]
		}
	}
	// Steps run operation after operation, in spec order, so the curves
	// are added in that order.
	b.Status.Operations = append(b.Status.Operations, v1alpha1.OperationCurveStatus{Operation: op})
	return &b.Status.Operations[len(b.Status.Operations)-1]
}

// stepsOf reads a curve's recorded steps back for the core.
func stepsOf(c *v1alpha1.OperationCurveStatus) []volops.StepSummary {
	out := make([]volops.StepSummary, len(c.Steps))
	for i, s := range c.Steps {
		st := volops.StepSummary{Concurrency: int(s.Concurrency), Succeeded: int(s.Succeeded), Failed: int(s.Failed),
			TimedOut: int(s.TimedOut), Span: s.Span.Duration, FirstReason: s.Reason}
		st.Count = st.Succeeded + st.Failed + st.TimedOut
		if l := s.Latency; l != nil {
			st.Min, st.Mean, st.P50, st.P90, st.P99, st.Max = l.Min.Duration, l.Mean.Duration, l.P50.Duration, l.P90.Duration, l.P99.Duration, l.Max.Duration
		}
		if st.Span > 0 {
			st.PerMinute = float64(st.Succeeded) / st.Span.Minutes()
		}
		out[i] = st
	}
	return out
}

// curveOf is the status of a curve.
func curveOf(op v1alpha1.VolumeOperation, c volops.Curve) v1alpha1.OperationCurveStatus {
	out := v1alpha1.OperationCurveStatus{Operation: op}
	d := func(v time.Duration) metav1.Duration { return metav1.Duration{Duration: v} }
	for _, s := range c.Steps {
		st := v1alpha1.OperationStepStatus{Concurrency: int32(s.Concurrency), Succeeded: int32(s.Succeeded),
			Failed: int32(s.Failed), TimedOut: int32(s.TimedOut), Span: d(s.Span), Reason: clip(s.FirstReason)}
		if s.Succeeded > 0 {
			st.Latency = &v1alpha1.OperationLatencyStatus{Min: d(s.Min), Mean: d(s.Mean), P50: d(s.P50), P90: d(s.P90), P99: d(s.P99), Max: d(s.Max)}
			st.PerMinute = numfmt.Plain(s.PerMinute, 2)
		}
		out.Steps = append(out.Steps, st)
	}
	if c.Knee > 0 {
		out.KneeConcurrency = ptr.To(int32(c.Knee))
	}
	if c.Fit.Points >= 2 {
		out.PerOperation = &v1alpha1.FittedDuration{Value: d(c.Fit.Slope), Low: d(c.Fit.SlopeLow), High: d(c.Fit.SlopeHigh), Steps: int32(c.Fit.Points)}
	}
	return out
}

// judge records the objectives' verdicts and the SLOMet condition.
func judge(b *v1alpha1.VolumeOperationsBenchmark) {
	b.Status.Objectives = nil
	if len(b.Spec.Objectives) == 0 {
		meta.RemoveStatusCondition(&b.Status.Conditions, v1alpha1.ConditionSLOMet)
		return
	}
	var r volops.Result
	for i := range b.Status.Operations {
		c := &b.Status.Operations[i]
		r.Curves = append(r.Curves, volops.CurveOf(volops.Operation(c.Operation), stepsOf(c)))
	}
	results := volops.Evaluate(r, objectivesOf(b))
	met := 0
	for i, res := range results {
		v := v1alpha1.Verdict("NotMet")
		if res.Met {
			v, met = "Met", met+1
		}
		b.Status.Objectives = append(b.Status.Objectives, v1alpha1.SLOStatus{Name: b.Spec.Objectives[i].Name, Verdict: v, Message: clip(res.Message)})
	}
	status, reason := metav1.ConditionTrue, "AllMet"
	if met < len(results) {
		status, reason = metav1.ConditionFalse, "NotMet"
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSLOMet, Status: status, Reason: reason,
		Message: fmt.Sprintf("%d of %d objectives met", met, len(results)), ObservedGeneration: b.Generation})
}
