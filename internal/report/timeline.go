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
	// WindowSeconds is how many of fio's one-second ticks each point
	// merges (1 unless a long step was coarsened).
	WindowSeconds int
	Points        []TimelinePoint
	Stall         analysis.Stall
}

// TimelinePoint is one window: it spans StartSeconds to EndSeconds after
// the ramp.
type TimelinePoint struct {
	StartSeconds, EndSeconds float64
	IOPS                     float64
	// P99 is over every I/O of the window; 0 when it completed none.
	P99 time.Duration
}

// TimelineOf is the figure's view of a step's merged timeline.
func TimelineOf(name string, step int, t results.Timeline) StepTimeline {
	st := StepTimeline{Name: name, Step: step, WindowSeconds: t.WindowSeconds, Stall: analysis.LongestStall(t)}
	for k, w := range t.Windows {
		start := float64(w.StartMs) / 1000
		end := start + float64(t.WindowSeconds)
		if k+1 < len(t.Windows) {
			end = float64(t.Windows[k+1].StartMs) / 1000
		}
		st.Points = append(st.Points, TimelinePoint{StartSeconds: start, EndSeconds: end, IOPS: w.IOPS,
			P99: nanos(w.Percentiles(99)[0])})
	}
	return st
}

// StallLine says what the longest stall was, or that there was none.
func (t StepTimeline) StallLine() string {
	s := t.Stall
	if s.Duration == 0 {
		return "no status tick without a completion"
	}
	line := fmt.Sprintf("longest stall %s, from %s", numfmt.Duration(s.Duration), numfmt.Duration(s.Start))
	if s.P999AroundNs > 0 {
		line += "; p99.9 within a second of it: " + numfmt.Duration(nanos(s.P999AroundNs))
	}
	return line
}

// Timelines are the steps' timelines a report shows, read from the steps'
// records. A step without one has the reason in Missing; Unavailable says
// why none could be read at all (then ByStep and Missing are empty).
type Timelines struct {
	// ByStep and Missing are keyed by step index, from 0.
	ByStep      map[int]StepTimeline
	Missing     map[int]string
	Unavailable string
}
