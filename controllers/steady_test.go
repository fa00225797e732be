package controllers

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/test/build"
)

// timelineRec is step i's record whose timeline did iops[k] I/Os of 1 µs in
// second k, as decoded from its ConfigMap (recordOf).
func timelineRec(i int, iops ...uint64) run.Step {
	tl := results.Timeline{WindowSeconds: 1, Windows: make([]results.Window, len(iops))}
	for k, n := range iops {
		start := uint64(k) * 1000
		tl.Windows[k] = results.Window{StartMs: start, IOs: n, IOPS: float64(n)}
		switch last := len(tl.Idle) - 1; {
		case n > 0:
			tl.Windows[k].Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(1000), Count: n}}}
		case last >= 0 && tl.Idle[last].EndMs == start:
			tl.Idle[last].EndMs += 1000
		default:
			tl.Idle = append(tl.Idle, results.Span{StartMs: start, EndMs: start + 1000})
		}
	}
	// Kept as the memo keeps it: the verdicts, not the windows.
	return run.Record(order(i, plan.Step{OfferedIOPS: 100}), results.StepAggregate{Step: i, Timeline: tl}, "b-step", analysis.SteadyOptions{}).Kept()
}

func TestSetSteadyState(t *testing.T) {
	flat := []uint64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	rising := []uint64{50, 50, 75, 75, 100, 100, 125, 125, 150, 150}
	cases := []struct {
		name    string
		steps   []run.Step
		cond    string // "", "True", "False"
		at      int    // the step whose end stamps the condition
		msg     string
		verdict []*bool
	}{
		{"no timelines", []run.Step{timelineRec(0), timelineRec(1)}, "", 0, "", []*bool{nil, nil}},
		{"too short to judge", []run.Step{timelineRec(0, 100, 100)}, "", 0, "", []*bool{nil}},
		{"all steady", []run.Step{timelineRec(0, flat...), timelineRec(1, flat...)}, "True", 0,
			"within 20 % (range) and 10 % (slope) over 5 rounds", []*bool{ptr.To(true), ptr.To(true)}},
		{"the second rises", []run.Step{timelineRec(0, flat...), timelineRec(1, rising...)}, "False", 1,
			"step 2 (IOPS range 100 %, slope 100 %)", []*bool{ptr.To(true), ptr.To(false)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBench()
			for _, rec := range c.steps {
				b.Status.Steps = append(b.Status.Steps, stepStatus(rec))
			}
			showVerdict(b, v1alpha1.ConditionSteadyState, run.SteadyVerdict(c.steps, analysis.SteadyOptions{}))
			got := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSteadyState)
			switch {
			case c.cond == "" && got != nil:
				t.Fatalf("condition set: %+v", got)
			case c.cond != "" && (got == nil || string(got.Status) != c.cond || !strings.Contains(got.Message, c.msg) ||
				!got.LastTransitionTime.Time.Equal(c.steps[c.at].Order.End().Truncate(time.Second))):
				t.Fatalf("condition %+v, want %s stamped at step %d's end, saying %q", got, c.cond, c.at, c.msg)
			}
			for i, want := range c.verdict {
				s := b.Status.Steps[i].SteadyState
				if (want == nil) != (s == nil) || (s != nil && s.Steady != *want) {
					t.Errorf("step %d: steadyState %+v, want steady %v", i, s, want)
				}
			}
		})
	}
}

func TestStepStatusCarriesTheLongestStall(t *testing.T) {
	r := timelineRec(0, 100, 100, 0, 0, 0, 100, 100)
	s := stepStatus(r)
	st := s.LongestStall
	if st == nil || st.Start.Duration != 2*time.Second || st.Duration.Duration != 3*time.Second ||
		st.P999Around == nil || st.P999Around.Duration != time.Duration(fio.BinValue(fio.IndexOf(1000))) {
		t.Fatalf("longestStall = %+v, want 3 s from 2 s with the p99.9 around it", st)
	}
	for _, w := range r.Aggregate.Timeline.Windows {
		if len(w.Hist.Bins) != 0 {
			t.Fatal("the record kept a window's histogram")
		}
	}
	if stepStatus(timelineRec(0, 100, 100)).LongestStall != nil {
		t.Fatal("a step without a stall has one")
	}
}

// TestClosedLoopWithoutOfferedRate: queue-depth steps offer no rate, so
// their latency is closed-loop whatever they achieved.
func TestClosedLoopWithoutOfferedRate(t *testing.T) {
	b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
		l.Rate, l.QueueDepth = nil, &v1alpha1.QueueDepthSteps{Steps: []int32{16, 32}}
	}))
	d := mustDesired(t, b)
	var recs []run.Step
	for i, qd := range []int32{16, 32} {
		agg := mkAgg(i, dirSpec{800, time.Millisecond, 2 * time.Millisecond}, dirSpec{200, time.Millisecond, 2 * time.Millisecond}, time.Millisecond)
		recs = append(recs, rec(order(i, plan.Step{QueueDepthPerClient: qd}), agg, "b-step"))
		b.Status.Steps = append(b.Status.Steps, stepStatus(recs[i]))
	}
	if err := analyze(b, &d, recs, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range b.Status.Steps {
		if !s.ClosedLoop || s.Saturated {
			t.Errorf("step %d: closedLoop %v saturated %v, want closed-loop, not saturated", s.Index, s.ClosedLoop, s.Saturated)
		}
	}
}

// TestProjectExtendedRun: a load that runs unsteady steps again. A run is
// superseded once its rerun is ordered, stays in status with its verdict,
// and is left out of the summary and the SteadyState condition; the
// planned count grows by the reruns decided.
func TestProjectExtendedRun(t *testing.T) {
	b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
		l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{100, 200}}
		l.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 3}
	}))
	b.CreationTimestamp = metav1.Time{Time: t0}
	d := mustDesired(t, b)
	if d.StepsPlanned != 6 {
		t.Fatalf("StepsPlanned %d, want the most runs, 6", d.StepsPlanned)
	}
	flat := []uint64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	rising := []uint64{50, 50, 75, 75, 100, 100, 125, 125, 150, 900}
	step := func(i int, s plan.Step, iops float64, tl ...uint64) run.Step {
		r := timelineRec(i, tl...)
		r.Order = order(i, s)
		r.Aggregate.Total.IOPS, r.Aggregate.Total.IOs = iops, uint64(iops)
		return r
	}
	first := step(0, plan.Step{OfferedIOPS: 100, Attempt: 1}, 185, rising...)

	// The first run was not steady and its rerun is ordered.
	obs := observedRun(allResults(1), func(o *observed) {
		o.steps = []run.Step{first}
		o.order, o.ordered = order(1, plan.Step{OfferedIOPS: 100, Attempt: 2}), true
	})
	if err := project(b, &d, obs); err != nil {
		t.Fatal(err)
	}
	if s := b.Status.Steps[0]; !s.Superseded || s.Attempt != 1 || s.SteadyState == nil || s.SteadyState.Steady {
		t.Errorf("the unsteady first run: %s; want superseded, attempt 1, judged not steady", jsonOf(t, s))
	}
	if b.Status.StepsPlanned != 3 || b.Status.Progress != "1/3" {
		t.Errorf("stepsPlanned %d, progress %q; want 3 and 1/3 (2 planned + 1 rerun)", b.Status.StepsPlanned, b.Status.Progress)
	}
	if meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSteadyState) != nil {
		t.Errorf("SteadyState set from a superseded run alone: %+v", b.Status.Conditions)
	}

	// The rerun and the second planned step were steady: the run ended.
	obs = observedRun(allResults(1), func(o *observed) {
		o.steps = []run.Step{first, step(1, plan.Step{OfferedIOPS: 100, Attempt: 2}, 100, flat...),
			step(2, plan.Step{OfferedIOPS: 200, Attempt: 1}, 150, flat...)}
		o.order, o.ordered = protocol.StepOrder{Index: 3, Done: true, Reason: "all 3 steps completed", EndedAt: t0.Add(time.Hour)}, true
	})
	if err := project(b, &d, obs); err != nil {
		t.Fatal(err)
	}
	if s := b.Status.Steps; !s[0].Superseded || s[1].Superseded || s[1].Attempt != 2 || s[2].Superseded || s[2].Attempt != 1 {
		t.Errorf("steps %s; want only the first superseded", jsonOf(t, s))
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSteadyState); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("SteadyState %+v, want True: the unsteady run was superseded", c)
	}
	if sum := b.Status.Summary; sum == nil || sum.PeakIOPSStep == nil || *sum.PeakIOPSStep != 2 || sum.PeakIOPS != 150 {
		t.Errorf("summary %s; want the peak at step 3 (150 IOPS), not the superseded 185", jsonOf(t, sum))
	}
}

// TestProjectExtendedRunLivedEqualsRebuilt: a status that saw an extended
// run step by step, through every state between (a step recorded before
// the next is ordered; a rerun ordered; a rerun recorded), equals the one
// rebuilt from the final step records, conditions and their times
// included.
func TestProjectExtendedRunLivedEqualsRebuilt(t *testing.T) {
	spec := build.Load(func(l *v1alpha1.LoadSpec) {
		l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{100, 200}}
		l.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 3}
	})
	lived, fresh := newBench(spec), newBench(spec)
	lived.CreationTimestamp, fresh.CreationTimestamp = metav1.Time{Time: t0}, metav1.Time{Time: t0}
	d := mustDesired(t, lived)
	flat := []uint64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	rising := []uint64{50, 50, 75, 75, 100, 100, 125, 125, 150, 900}
	recs := []run.Step{timelineRec(0, rising...), timelineRec(1, flat...), timelineRec(2, flat...)}
	steps := []plan.Step{{OfferedIOPS: 100, Attempt: 1}, {OfferedIOPS: 100, Attempt: 2}, {OfferedIOPS: 200, Attempt: 1}}
	for i := range recs {
		recs[i].Order = order(i, steps[i])
		recs[i].Aggregate.Total.IOPS = float64(100 + 10*i)
	}
	state := func(recorded, ordered int) *observed {
		return observedRun(allResults(1), func(o *observed) {
			o.steps = append([]run.Step{}, recs[:recorded]...)
			if ordered < len(recs) {
				o.order, o.ordered = order(ordered, steps[ordered]), true
			} else {
				o.order, o.ordered = protocol.StepOrder{Index: 3, Done: true, Reason: "all 3 steps completed", EndedAt: t0.Add(time.Hour)}, true
			}
		})
	}
	for _, st := range []struct{ recorded, ordered, planned int }{
		{0, 0, 2}, {1, 0, 2}, {1, 1, 3}, {2, 1, 3}, {2, 2, 3}, {3, 2, 3}, {3, 3, 3},
	} {
		if err := project(lived, &d, state(st.recorded, st.ordered)); err != nil {
			t.Fatal(err)
		}
		if lived.Status.StepsPlanned != int32(st.planned) {
			t.Errorf("%d recorded, step %d ordered: stepsPlanned %d, want %d", st.recorded, st.ordered+1, lived.Status.StepsPlanned, st.planned)
		}
		if st.recorded >= 1 && lived.Status.Steps[0].Superseded != (st.ordered >= 1) {
			t.Errorf("%d recorded, step %d ordered: step 1 superseded %v", st.recorded, st.ordered+1, lived.Status.Steps[0].Superseded)
		}
		if st.recorded >= 2 && lived.Status.Steps[1].Superseded {
			t.Errorf("%d recorded, step %d ordered: the steady rerun is superseded", st.recorded, st.ordered+1)
		}
	}
	if err := project(fresh, &d, state(3, 3)); err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, lived.Status), jsonOf(t, fresh.Status); got != want {
		t.Errorf("lived status\n%s\nrebuilt\n%s", got, want)
	}
}

// analyze writes the analysis of steps into b's status as project does
// (writeAnalysis), with status.steps already there; complete stands for a
// final order after them.
func analyze(b *v1alpha1.StorageBenchmark, d *spec.Run, steps []run.Step, complete bool) error {
	var final *protocol.StepOrder
	if complete {
		final = &protocol.StepOrder{Index: len(steps), Done: true}
	}
	v, err := run.ViewOf(d.Spec, d.Analysis, d.Objectives, steps, final)
	if err != nil {
		return err
	}
	writeAnalysis(b, d, v)
	return nil
}
