package report

import (
	"fmt"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/results"
)

// StepTimeline is one step's timeline as a figure shows it: IOPS and p99
// latency window by window, and the longest stall.
type StepTimeline struct {
	// Name is the benchmark's; Step the step's index, from 0.
	Name string
	Step int
	// WindowSeconds is each point's window (1 unless a long step was
	// coarsened).
	WindowSeconds int
	Points        []TimelinePoint
	Stall         analysis.Stall
}

// TimelinePoint is one window: it starts StartSeconds after the ramp.
type TimelinePoint struct {
	StartSeconds float64
	IOPS         float64
	// P99 is over every I/O of the window; 0 when it completed none.
	P99 time.Duration
}

// TimelineOf is the figure's view of a step's merged timeline.
func TimelineOf(name string, step int, t results.Timeline) StepTimeline {
	st := StepTimeline{Name: name, Step: step, WindowSeconds: t.WindowSeconds, Stall: analysis.LongestStall(t)}
	for k, w := range t.Windows {
		st.Points = append(st.Points, TimelinePoint{StartSeconds: float64(k * t.WindowSeconds), IOPS: w.IOPS,
			P99: nanos(w.Percentiles(99)[0])})
	}
	return st
}

// StallLine says what the longest stall was, or that there was none.
func (t StepTimeline) StallLine() string {
	s := t.Stall
	if s.Seconds == 0 {
		return fmt.Sprintf("no %d s window without a completion", t.WindowSeconds)
	}
	line := fmt.Sprintf("longest stall %d s, from %d s", s.Seconds, s.StartSeconds)
	if s.AfterP999Ns > 0 {
		line += "; p99.9 in the second after: " + numfmt.Duration(nanos(s.AfterP999Ns))
	}
	return line
}
