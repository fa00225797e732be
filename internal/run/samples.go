package run

import (
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
)

// Samples are a run's recorded steps, in order, as a comparison with a
// baseline matches them: a step that a rerun superseded is left out and
// the others are numbered in order (Planned), so that two runs of the same
// load pair up step by step whatever reruns either needed; IOPS and p99
// are taken from each window of the step's timeline (the p99s as Record
// took them, before the windows' histograms were dropped), labelled with
// the step's load. closedLoop(i) says whether steps[i]'s latency was
// closed-loop (saturated, or without a rate limit), as the run's status
// shows it. The operator's comparison and the plugin's both read a run
// this way.
func Samples(steps []Step, closedLoop func(i int) bool) []analysis.StepSamples {
	ran := make([]plan.Step, len(steps))
	for i, s := range steps {
		ran[i] = s.Order.Step
	}
	var out []analysis.StepSamples
	for i, s := range steps {
		if plan.SupersededAt(ran, i) {
			continue
		}
		iops, _ := analysis.TimelineSamples(s.Aggregate.Timeline)
		out = append(out, analysis.StepSamples{Planned: len(out), Index: s.Order.Index, Label: s.Order.Step.Load(), Offered: s.Order.Step.Offered(),
			ClosedLoop: closedLoop(i), IOPS: iops, P99Ns: s.P99Ns})
	}
	return out
}
