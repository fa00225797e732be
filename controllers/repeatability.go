package controllers

import (
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/run"
)

// setRepeatability projects how much the runs of each repeated load level
// varied (load.repeat) into status.repeatability, and sets the Unstable
// condition when analysis.maxVariationPercent asks for it. Like the rest of
// status it is a function of the step records alone: the figures come from
// the core (run.Repeatability), and so does the verdict, stamped with the
// end of the run after which it last changed, so a rebuilt status carries
// the same time as one that lived through the run. Informational:
// it never ends the run, nor touches Ready, Stalled or Failed.
func setRepeatability(b *v1alpha1.StorageBenchmark, o analysis.Options, steps []run.Step) {
	levels, unstable := run.Repeatability(steps, o)
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
