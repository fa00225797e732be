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
// p99 samples a regression comparison uses). Measured or Record makes it.
type Step struct {
	Order protocol.StepOrder `json:"order"`
	// Aggregate is the exact aggregate: without its histograms once
	// recorded (Record; the analysis and the planner use the summaries,
	// the histograms stay in the step's record), whole as a local run
	// reports it (Measured). Its timeline's windows are included.
	Aggregate results.StepAggregate `json:"aggregate"`
	// Name is where the step is recorded (the operator: its ConfigMap).
	Name string `json:"name,omitempty"`
	// Stall is the timeline's longest stall, found before its windows'
	// histograms were dropped; Timed says the step had a timeline at all.
	Stall analysis.Stall `json:"stall"`
	Timed bool           `json:"timed"`
	// Steady is the timeline's steady-state verdict by the benchmark's
	// options (analysis.Steady), judged once.
	Steady analysis.SteadyState `json:"steady"`
	// P99Ns are the p99 completion latencies of the timeline's windows
	// with I/O, one per second, taken before the windows' histograms were
	// dropped: a regression comparison's samples.
	P99Ns []float64 `json:"p99Ns,omitempty"`
	// Superseded: the step was not steady and the one after it, recorded
	// or ordered, is its rerun (plan.Step.Supersedes). It depends on the
	// steps after this one, so whoever knows them sets it (ViewOf).
	Superseded bool `json:"superseded,omitempty"`
}

// Measured is the step from its order and merged result, judged once (its
// timeline's longest stall, its steady state by the options steady, its
// per-second p99s), with the aggregate whole. A timeline longer than
// results.MaxWindows is not one a conductor writes: it is dropped
// unjudged.
func Measured(order protocol.StepOrder, agg results.StepAggregate, name string, steady analysis.SteadyOptions) Step {
	if len(agg.Timeline.Windows) > results.MaxWindows || len(agg.Timeline.Idle) > results.MaxWindows {
		agg.Timeline = results.Timeline{}
	}
	_, p99 := analysis.TimelineSamples(agg.Timeline)
	return Step{Order: order, Aggregate: agg, Name: name, Stall: analysis.LongestStall(agg.Timeline), Timed: len(agg.Timeline.Windows) > 0,
		Steady: analysis.Steady(agg.Timeline, steady), P99Ns: p99}
}

// Record is the step as the operator records it: Measured, then its
// histograms dropped (the timeline's windows stay, without theirs). agg
// is not changed.
func Record(order protocol.StepOrder, agg results.StepAggregate, name string, steady analysis.SteadyOptions) Step {
	s := Measured(order, agg, name, steady)
	windows := make([]results.Window, len(s.Aggregate.Timeline.Windows))
	for k, w := range s.Aggregate.Timeline.Windows {
		w.Hist = fio.Histogram{}
		windows[k] = w
	}
	s.Aggregate.Timeline.Windows = windows
	s.dropHistograms()
	return s
}

func (s *Step) dropHistograms() {
	for _, d := range []*results.OperationSummary{&s.Aggregate.Read, &s.Aggregate.Write, &s.Aggregate.Total, &s.Aggregate.Sync} {
		d.Histogram = fio.Histogram{}
	}
}

// Kept is s as it is kept for the run's length: its summaries and
// verdicts, not its histograms, its timeline's windows or its per-second
// p99s (a long step has thousands); whatever needs them reads the record
// again.
func (s Step) Kept() Step {
	s.Aggregate.Timeline.Windows = nil
	s.P99Ns = nil
	s.dropHistograms()
	return s
}
