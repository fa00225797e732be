package run

import (
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// Step is one finished step of a run: the order it ran under, the exact
// merged result of every client without its histograms, and what was
// judged of it once (its longest stall, its steady state, the per-second
// p99 samples a regression comparison uses). Record makes it.
type Step struct {
	Order protocol.StepOrder
	// Aggregate is the exact aggregate without its histograms (the
	// analysis and the planner use the summaries; the histograms stay in
	// the step's record), its timeline's windows included.
	Aggregate results.StepAggregate
	// Name is where the step is recorded (the operator: its ConfigMap).
	Name string
	// Stall is the timeline's longest stall, found before its windows'
	// histograms were dropped; Timed says the step had a timeline at all.
	Stall analysis.Stall
	Timed bool
	// Steady is the timeline's steady-state verdict by the benchmark's
	// options (analysis.Steady), judged once.
	Steady analysis.SteadyState
	// P99Ns are the p99 completion latencies of the timeline's windows
	// with I/O, one per second, taken before the windows' histograms were
	// dropped: a regression comparison's samples.
	P99Ns []float64
	// Superseded: the step was not steady and the one after it, recorded
	// or ordered, is its rerun (plan.Step.Supersedes). It depends on the
	// steps after this one, so whoever knows them sets it.
	Superseded bool
}

// Record is the step recorded from its order and merged result: the
// histograms are dropped, and the timeline is judged (its longest stall,
// its steady state by the options steady, its per-second p99s). A
// timeline longer than results.MaxWindows is not one a conductor writes:
// it is dropped unjudged.
func Record(order protocol.StepOrder, agg results.StepAggregate, name string, steady analysis.SteadyOptions) Step {
	if len(agg.Timeline.Windows) > results.MaxWindows || len(agg.Timeline.Idle) > results.MaxWindows {
		agg.Timeline = results.Timeline{}
	}
	stall := analysis.LongestStall(agg.Timeline)
	verdict := analysis.Steady(agg.Timeline, steady)
	for _, d := range []*results.OperationSummary{&agg.Read, &agg.Write, &agg.Total} {
		d.Histogram = fio.Histogram{}
	}
	_, p99 := analysis.TimelineSamples(agg.Timeline)
	windows := make([]results.Window, len(agg.Timeline.Windows))
	for k, w := range agg.Timeline.Windows {
		w.Hist = fio.Histogram{}
		windows[k] = w
	}
	agg.Timeline.Windows = windows
	return Step{Order: order, Aggregate: agg, Name: name, Stall: stall, Timed: len(windows) > 0, Steady: verdict, P99Ns: p99}
}

// Kept is s as it is kept for the run's length: its verdicts, not its
// timeline's windows or per-second p99s (a long step has thousands);
// whatever needs them reads the record again.
func (s Step) Kept() Step {
	s.Aggregate.Timeline.Windows = nil
	s.P99Ns = nil
	return s
}
