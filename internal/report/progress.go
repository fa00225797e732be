package report

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// Progress is where a run is, for watch.
type Progress struct {
	// Phase is the Ready reason: Preparing, Running, Completed or a
	// failure's reason.
	Phase string
	State State
	// Finished and Planned steps; Current is the 1-based step running now
	// (0: none).
	Finished, Planned, Current int
	// Fraction of the planned load done, 0 to 1 (the running step counts
	// pro rata).
	Fraction float64
	// Left is the estimated time until the last step ends: the steps not
	// finished times stepDuration + rampTime, less the time the running
	// step has already run. LeftKnown is false before the plan is known.
	Left      time.Duration
	LeftKnown bool
	// Last is the achieved load of the last finished step, in the
	// benchmark's unit ("" before any).
	Last string
	// ClientsReady and ClientsTotal while preparing.
	ClientsReady, ClientsTotal int32
	// Message is the Ready condition's message (the failure for a failed
	// run).
	Message string
}

// Progress estimates the run's progress at now.
func (r *Run) Progress(now time.Time) Progress {
	p := Progress{
		Phase: r.Phase, State: r.State,
		Finished: len(r.Steps), Planned: r.StepsPlanned,
		ClientsReady: r.ClientsReady, ClientsTotal: r.ClientsTotal,
		Message: r.Message,
	}
	if r.CurrentStep >= 0 {
		p.Current = r.CurrentStep + 1
	}
	if n := len(r.Steps); n > 0 {
		last := &r.Steps[n-1]
		p.Last = r.Unit.Format(r.Unit.Achieved(last))
	}
	if p.State == StateComplete || p.State == StateFailed {
		p.LeftKnown, p.Current = true, 0
		if p.State == StateComplete {
			p.Fraction = 1
		} else if p.Planned > 0 {
			p.Fraction = float64(p.Finished) / float64(p.Planned)
		}
		return p
	}
	if p.Planned == 0 {
		return p
	}
	per := r.StepDuration + r.RampTime
	// The running step started when the previous one ended, or at the
	// run's start.
	var elapsed time.Duration
	if p.Current > 0 {
		var since time.Time
		if n := len(r.Steps); n > 0 {
			since = r.Steps[n-1].StartTime.Add(per)
		} else {
			since = r.Started
		}
		if !since.IsZero() {
			elapsed = min(max(now.Sub(since), 0), per)
		}
	}
	remaining := max(p.Planned-p.Finished, 0)
	p.Left, p.LeftKnown = max(time.Duration(remaining)*per-elapsed, 0), true
	p.Fraction = min((float64(p.Finished)+float64(elapsed)/float64(per))/float64(p.Planned), 1)
	return p
}

// Bar is a text progress bar of width cells: "[#######-------------]".
func Bar(fraction float64, width int) string {
	fraction = min(max(fraction, 0), 1)
	done := int(fraction*float64(width) + 0.5)
	return "[" + strings.Repeat("#", done) + strings.Repeat("-", width-done) + "]"
}

// Line renders the progress on one line: "Running  step 4/8
// [#########-----------]  44 %  ~9m40s left  last step 29,989 IOPS", as
// SafeLine escapes it (a failed run's message quotes clients' errors).
func (p Progress) Line() string {
	parts := []string{p.Phase}
	switch {
	case p.State == StateComplete:
		parts = append(parts, fmt.Sprintf("%d/%d steps", p.Finished, p.Planned))
	case p.State == StateFailed:
		parts = append(parts, fmt.Sprintf("%d/%d steps", p.Finished, p.Planned))
	case p.Current > 0:
		parts = append(parts, fmt.Sprintf("step %d/%d", p.Current, p.Planned))
	case p.Planned > 0:
		parts = append(parts, fmt.Sprintf("%d/%d steps", p.Finished, p.Planned))
	}
	if p.State == StateRunning && p.Current == 0 && p.ClientsTotal > 0 && p.Finished == 0 {
		parts = append(parts, fmt.Sprintf("clients %d/%d ready", p.ClientsReady, p.ClientsTotal))
	}
	parts = append(parts, Bar(p.Fraction, 24), fmt.Sprintf("%5s", numfmt.Percent(p.Fraction*100, 0)))
	if p.State == StateRunning && p.LeftKnown {
		left := "~" + duration.HumanDuration(p.Left) + " left"
		if p.Current == 0 && p.Finished == 0 {
			left = "~" + duration.HumanDuration(p.Left) + " of load to run"
		}
		parts = append(parts, left)
	}
	if p.Last != "" {
		parts = append(parts, "last step "+p.Last)
	}
	if p.State == StateFailed && p.Message != "" {
		parts = append(parts, "— "+p.Message)
	}
	return SafeLine(strings.Join(parts, "  "))
}
