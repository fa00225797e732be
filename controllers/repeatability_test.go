package controllers

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/test/build"
)

// levelRun is what one levelRun of a repeated level achieved: IOPS and p99 (reads
// only, so the total p99 is the read p99).
type levelRun struct {
	iops float64
	p99  time.Duration
}

// repeatedRecs are the records of a load of levels run `repeat` times each,
// of which runs finished: run i is repetition i%repeat+1 of level
// i/repeat, which offers 1000 × (level+1) IOPS.
func repeatedRecs(repeat int, runs ...levelRun) []run.Step {
	var recs []run.Step
	for i, r := range runs {
		lvl := i / repeat
		st := plan.Step{Level: lvl, Repetition: int32(i%repeat + 1), OfferedIOPS: int64(1000 * (lvl + 1))}
		agg := mkAgg(i, dirSpec{r.iops, r.p99 / 2, r.p99}, dirSpec{}, r.p99/2)
		recs = append(recs, rec(order(i, st), agg, exchange.StepName(testName, i)))
	}
	return recs
}

func TestSetRepeatability(t *testing.T) {
	ms := time.Millisecond
	steadyLevel := []levelRun{{1000, ms}, {1000, ms}, {1000, ms}}
	// IOPS 1,900 / 2,000 / 2,100: mean 2,000, s = 100, CV exactly 5 %,
	// 2,000 ± 4.303 · 100 / √3 = 2,000 ± 248.4. p99 1.0 / 1.1 / 1.2 ms:
	// mean 1.1 ms, s = 0.1 ms, CV 9.09 %, 1.1 ms ± 248.4 µs.
	spreadLevel := []levelRun{{1900, ms}, {2000, 1100 * time.Microsecond}, {2100, 1200 * time.Microsecond}}
	spreadEntry := v1alpha1.RepeatabilityStatus{Level: 1, OfferedIOPS: 2000, Runs: 3,
		IOPS: v1alpha1.IOPSVariation{Mean: 2000, CVPercent: 5, CI95Low: 1752, CI95High: 2248},
		P99:  &v1alpha1.LatencyVariation{Mean: d(1_100_000), CVPercent: 9, CI95Low: d(851_586), CI95High: d(1_348_414)}}
	both := append(append([]levelRun{}, steadyLevel...), spreadLevel...)
	cases := []struct {
		name    string
		recs    []run.Step
		limit   int32
		entries int
		stable  []*bool
		cond    string // "", "True", "False"
		at      int    // the step whose end stamps the condition
		msg     string
	}{
		{name: "a load that does not repeat: nothing", limit: 10,
			recs: []run.Step{rec(order(0, plan.Step{OfferedIOPS: 1000}), mkAgg(0, dirSpec{1000, ms, ms}, dirSpec{}, ms), "s0"),
				rec(order(1, plan.Step{OfferedIOPS: 1000}), mkAgg(1, dirSpec{2000, ms, 3 * ms}, dirSpec{}, ms), "s1")}},
		{name: "one run finished: nothing yet", limit: 10, recs: repeatedRecs(3, steadyLevel[:1]...)},
		{name: "no limit: figures, no verdict, no condition", recs: repeatedRecs(3, both...), entries: 2, stable: []*bool{nil, nil}},
		{name: "within the limit: False from the first judged level's second run", limit: 10, recs: repeatedRecs(3, both...),
			entries: 2, stable: []*bool{ptr.To(true), ptr.To(true)}, cond: "False", at: 1,
			msg: "the runs of every repeated level (2) vary within the 10 % limit in IOPS and p99 latency"},
		{name: "p99 above the limit, IOPS exactly at it: True from the run that made it so", limit: 5, recs: repeatedRecs(3, both...),
			entries: 2, stable: []*bool{ptr.To(true), ptr.To(false)}, cond: "True", at: 4,
			msg: "runs vary more than the 5 % limit (coefficient of variation): level 2 (2000 IOPS offered, 3 runs): p99 latency CV 9.1 %"},
		{name: "unstable after 2 runs, within the limit after 3: False from the third", limit: 10,
			recs:    repeatedRecs(3, levelRun{1000, ms}, levelRun{1200, ms}, levelRun{1100, ms}), // CV 11.8 %, then 9.1 %
			entries: 1, stable: []*bool{ptr.To(true)}, cond: "False", at: 2},
		{name: "a level cut short counts its runs", limit: 10, recs: repeatedRecs(3, append(append([]levelRun{}, steadyLevel...), levelRun{2000, ms}, levelRun{3000, ms})...),
			entries: 2, stable: []*bool{ptr.To(true), ptr.To(false)}, cond: "True", at: 4, msg: "level 2 (2000 IOPS offered, 2 runs): IOPS CV 28.3 %"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBench()
			b.Spec.Analysis.MaxVariationPercent = nil
			if c.limit > 0 {
				b.Spec.Analysis.MaxVariationPercent = ptr.To(c.limit)
			}
			d := mustDesired(t, b)
			repeatability(b, d.Analysis, c.recs)
			if got := b.Status.Repeatability; len(got) != c.entries {
				t.Fatalf("repeatability %s, want %d entries", jsonOf(t, got), c.entries)
			}
			for i, want := range c.stable {
				e := b.Status.Repeatability[i]
				if (want == nil) != (e.Stable == nil) || (want != nil && *want != *e.Stable) {
					t.Errorf("level %d: stable %v, want %v", e.Level, e.Stable, want)
				}
				if e.Runs < 2 || e.IOPS.CI95Low > e.IOPS.Mean || e.IOPS.CI95High < e.IOPS.Mean {
					t.Errorf("level %d: %s", e.Level, jsonOf(t, e))
				}
			}
			if c.entries == 2 && len(c.recs) == 6 {
				got := b.Status.Repeatability[1]
				got.Stable = nil
				if !reflect.DeepEqual(got, spreadEntry) {
					t.Errorf("level 2\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, spreadEntry))
				}
			}
			cond := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionUnstable)
			switch {
			case c.cond == "" && cond != nil:
				t.Fatalf("condition set: %+v", cond)
			case c.cond == "":
				return
			case cond == nil || string(cond.Status) != c.cond || !strings.Contains(cond.Message, c.msg) ||
				!cond.LastTransitionTime.Time.Equal(c.recs[c.at].Order.End().Truncate(time.Second)):
				t.Fatalf("condition %+v, want %s stamped at step %d's end (%s), saying %q", cond, c.cond, c.at, c.recs[c.at].Order.End(), c.msg)
			}
			wantReason := ReasonVariationWithin
			if c.cond == "True" {
				wantReason = ReasonVariationAboveLimit
			}
			if cond.Reason != wantReason || cond.ObservedGeneration != b.Generation {
				t.Errorf("condition %+v, want reason %s", cond, wantReason)
			}
			// The same status as one that saw the runs finish one by one.
			lived := newBench()
			lived.Spec.Analysis.MaxVariationPercent = b.Spec.Analysis.MaxVariationPercent
			for k := 1; k <= len(c.recs); k++ {
				repeatability(lived, d.Analysis, c.recs[:k])
			}
			if got, want := jsonOf(t, b.Status), jsonOf(t, lived.Status); got != want {
				t.Errorf("rebuilt status differs from the lived one\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestUnstableIsInformational: an Unstable run still completes, Ready and
// not Stalled (kstatus reads it as Current), and the condition is listed
// last, after SteadyState.
func TestUnstableIsInformational(t *testing.T) {
	b := newBench(func(b *v1alpha1.StorageBenchmark) { b.Spec.Analysis.MaxVariationPercent = ptr.To[int32](1) })
	d := mustDesired(t, b)
	recs := repeatedRecs(2, levelRun{1000, time.Millisecond}, levelRun{1500, 2 * time.Millisecond})
	setComplete(b, t0.Add(time.Hour), "all 2 steps completed")
	repeatability(b, d.Analysis, recs)
	setCondition(b, v1alpha1.ConditionSteadyState, true, ReasonSteady, t0, "steady")
	if !meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionUnstable) {
		t.Fatalf("conditions %+v: want Unstable", b.Status.Conditions)
	}
	if !meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady) ||
		!meta.IsStatusConditionFalse(b.Status.Conditions, v1alpha1.ConditionStalled) || !finished(b) ||
		meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed) {
		t.Errorf("an unstable run is not Ready/Complete: %+v", b.Status.Conditions)
	}
	n := len(b.Status.Conditions)
	if b.Status.Conditions[n-1].Type != v1alpha1.ConditionUnstable || b.Status.Conditions[n-2].Type != v1alpha1.ConditionSteadyState {
		t.Errorf("conditions in order %v", conditionSet(b))
	}
}

// TestProjectRepeatedRun: status projected from the step records of a
// repeated load: every run a step with its repetition, one repeatability
// entry per level, the curve's throttled levels offering a share of the
// unthrottled runs' mean.
func TestProjectRepeatedRun(t *testing.T) {
	b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
		l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS", Percents: []int32{50}, ClientBoundCheck: ptr.To(false)}
		l.Repeat = 3
	}), func(b *v1alpha1.StorageBenchmark) { b.Spec.Analysis.MaxVariationPercent = ptr.To[int32](20) })
	b.CreationTimestamp = metav1.Time{Time: t0}
	d := mustDesired(t, b)
	if d.StepsPlanned != 6 {
		t.Fatalf("StepsPlanned %d, want 6", d.StepsPlanned)
	}
	achieved := []float64{9000, 10000, 11000, 5000, 5000, 5000}
	obs := observedRun(allResults(5), func(o *observed) {
		for k, iops := range achieved {
			next, stop, err := plan.Next(d.Load, outcomes(o.steps))
			if err != nil || stop != nil {
				t.Fatalf("plan.Next after %d runs: %v %v", k, stop, err)
			}
			agg := mkAgg(k, dirSpec{iops * 0.8, time.Millisecond, 2 * time.Millisecond}, dirSpec{iops * 0.2, time.Millisecond, 2 * time.Millisecond}, time.Millisecond)
			o.steps = append(o.steps, rec(order(k, *next), agg, exchange.StepName(b.Name, k)))
		}
		o.order, o.ordered = protocol.StepOrder{Index: 6, Done: true, Reason: "all 6 steps completed", EndedAt: t0.Add(time.Hour)}, true
	})
	if err := project(b, &d, obs); err != nil {
		t.Fatal(err)
	}
	for k, s := range b.Status.Steps {
		if s.Repetition != int32(k%3+1) || (k >= 3 && (s.OfferedIOPS != 5000 || s.PercentOfMax != 50)) || (k < 3 && !s.Unthrottled) {
			t.Errorf("step %d: %s", k, jsonOf(t, s))
		}
	}
	r := b.Status.Repeatability
	if len(r) != 2 || r[0].Level != 0 || !r[0].Unthrottled || r[0].Runs != 3 || r[0].IOPS.Mean != 10000 || r[0].IOPS.CVPercent != 10 ||
		r[1].Level != 1 || r[1].OfferedIOPS != 5000 || r[1].PercentOfMax != 50 || r[1].IOPS.CVPercent != 0 || r[1].P99 == nil {
		t.Fatalf("repeatability %s", jsonOf(t, r))
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionUnstable); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Unstable %+v, want False (CV 10 %% within 20 %%)", c)
	}
}

// outcomes are the planner's view of the recorded steps.
func outcomes(steps []run.Step) []plan.StepOutcome {
	out := make([]plan.StepOutcome, len(steps))
	for i, s := range steps {
		out[i] = protocol.OutcomeOf(i, s.Aggregate)
	}
	return out
}

func TestStepStatusCarriesTheRepetition(t *testing.T) {
	agg := mkAgg(4, dirSpec{1000, time.Millisecond, 2 * time.Millisecond}, dirSpec{}, time.Millisecond)
	if s := stepStatus(rec(order(4, plan.Step{Level: 1, Repetition: 2, OfferedIOPS: 2000}), agg, "b")); s.Repetition != 2 {
		t.Errorf("repetition %d, want 2", s.Repetition)
	}
	if s := stepStatus(rec(order(4, plan.Step{OfferedIOPS: 2000}), agg, "b")); s.Repetition != 0 {
		t.Errorf("a step of a load that does not repeat has repetition %d", s.Repetition)
	}
}

// repeatability sets status.repeatability and Unstable as project does,
// from the core's judgement of the steps.
func repeatability(b *v1alpha1.StorageBenchmark, o analysis.Options, steps []run.Step) {
	levels, unstable := run.Repeatability(steps, o)
	setRepeatability(b, o, levels, unstable, steps)
}
