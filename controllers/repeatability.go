package controllers

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/run"
)

// setRepeatability projects how much the runs of each repeated load level
// varied (load.repeat) into status.repeatability, and sets the Unstable
// condition when analysis.maxVariationPercent asks for it. Like the rest of
// status it is a function of the step records alone: the figures come from
// the core (analysis.Repeatability), and the condition is stamped with the
// end of the run after which its verdict last changed, so a rebuilt status
// carries the same time as one that lived through the run. Informational:
// it never ends the run, nor touches Ready, Stalled or Failed.
func setRepeatability(b *v1alpha1.StorageBenchmark, o analysis.Options, steps []run.Step) {
	runs := make([]analysis.LevelRun, 0, len(steps))
	for _, s := range steps {
		if s.Order.Step.Repetition == 0 {
			continue // the load does not repeat
		}
		if s.Superseded {
			continue // its rerun stands for it
		}
		runs = append(runs, analysis.LevelRun{Level: s.Order.Step.Level, Aggregate: s.Aggregate})
	}
	sel := o.VariationSelector()
	levels := analysis.Repeatability(runs, sel)
	b.Status.Repeatability = nil
	for _, v := range levels {
		entry := repeatabilityStatus(v, steps)
		if o.MaxVariationPercent > 0 {
			entry.Stable = ptr.To(v.Stable(o.MaxVariationPercent))
		}
		b.Status.Repeatability = append(b.Status.Repeatability, entry)
	}
	if o.MaxVariationPercent <= 0 || len(levels) == 0 {
		meta.RemoveStatusCondition(&b.Status.Conditions, v1alpha1.ConditionUnstable)
		return
	}
	msgs, unstable := unstableLevels(levels, o.MaxVariationPercent, steps)
	// The condition changed after the earliest run from which on the
	// verdict has been what it is now.
	var at time.Time
	for k := len(runs); k >= 1; k-- {
		judged := analysis.Repeatability(runs[:k], sel)
		if len(judged) == 0 {
			break
		}
		if _, u := unstableLevels(judged, o.MaxVariationPercent, steps); u != unstable {
			break
		}
		at = endOf(steps, runs[k-1].Aggregate.Step)
	}
	limit := numfmt.Count(o.MaxVariationPercent)
	if unstable {
		setCondition(b, v1alpha1.ConditionUnstable, true, ReasonVariationAboveLimit, at,
			fmt.Sprintf("runs vary more than the %s %% limit (coefficient of variation): %s", limit, strings.Join(msgs, "; ")))
		return
	}
	setCondition(b, v1alpha1.ConditionUnstable, false, ReasonVariationWithin, at,
		fmt.Sprintf("the runs of every repeated level (%d) vary within the %s %% limit in IOPS and %s (coefficient of variation)",
			len(levels), limit, sel))
}

// unstableLevels names the levels whose runs vary more than limit, with
// the figures that do: "level 2/3 (2000 IOPS offered, 3 runs): IOPS CV
// 12.3 % above the limit".
func unstableLevels(levels []analysis.LevelVariation, limit float64, steps []run.Step) ([]string, bool) {
	var out []string
	for _, v := range levels {
		over := v.Over(limit)
		if len(over) == 0 {
			continue
		}
		load := ""
		if s := stepRecordAt(steps, v.Steps[0]); s != nil {
			load = s.Order.Step.Load() + ", "
		}
		out = append(out, fmt.Sprintf("level %d (%s%d runs): %s", v.Level+1, load, v.Runs(), strings.Join(over, ", ")))
	}
	return out, len(out) > 0
}

// stepRecordAt is the record of step k, or nil: readSteps reads the
// records in step order from 0, so step k's is steps[k].
func stepRecordAt(steps []run.Step, k int) *run.Step {
	if k < 0 || k >= len(steps) {
		return nil
	}
	return &steps[k]
}

// endOf is when step k's measurement ended.
func endOf(steps []run.Step, k int) time.Time {
	if s := stepRecordAt(steps, k); s != nil {
		return s.Order.End()
	}
	return time.Time{}
}

// repeatabilityStatus is a level's spread as status shows it: IOPS rounded
// as achievedIOPS is, latencies exact to the nanosecond as the steps' are,
// CVs rounded to a whole percent as steadyState's excursions are, and the
// intervals' low ends at 0 at the least.
func repeatabilityStatus(v analysis.LevelVariation, steps []run.Step) v1alpha1.RepeatabilityStatus {
	out := v1alpha1.RepeatabilityStatus{Level: int32(v.Level), Runs: int32(v.Runs()),
		IOPS: v1alpha1.IOPSVariation{Mean: roundInt64(v.IOPS.Mean), CVPercent: percent(v.IOPS.CVPercent),
			CI95Low: roundInt64(max(v.IOPS.CI95Low, 0)), CI95High: roundInt64(v.IOPS.CI95High)}}
	if s := stepRecordAt(steps, v.Steps[0]); s != nil {
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
