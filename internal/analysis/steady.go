package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/results"
)

// Steady-state defaults: SNIA's Solid State Storage Performance Test
// Specification judges five rounds, allowing a data excursion of 20 % and a
// slope excursion of 10 % of their average.
const (
	DefaultSteadyRounds       = 5
	DefaultSteadyRangePercent = 20
	DefaultSteadySlopePercent = 10
)

// SteadyOptions set the steady-state rule; zero fields take the defaults.
type SteadyOptions struct {
	// Rounds is how many equal rounds the step's timeline windows are cut
	// into (a remainder of windows at the start is left out); 2..60.
	Rounds int
	// RangePercent bounds max − min of the rounds' mean IOPS, as a
	// percentage of their average.
	RangePercent float64
	// SlopePercent bounds how far the least-squares line through the rounds
	// moves from the first round to the last, as a percentage of their
	// average.
	SlopePercent float64
}

// WithDefaults fills unset fields.
func (o SteadyOptions) WithDefaults() SteadyOptions {
	if o.Rounds == 0 {
		o.Rounds = DefaultSteadyRounds
	}
	if o.RangePercent == 0 {
		o.RangePercent = DefaultSteadyRangePercent
	}
	if o.SlopePercent == 0 {
		o.SlopePercent = DefaultSteadySlopePercent
	}
	return o
}

// Validate reports out-of-range options.
func (o SteadyOptions) Validate() error {
	o = o.WithDefaults()
	switch {
	case o.Rounds < 2 || o.Rounds > 60:
		return fmt.Errorf("%w: steady-state rounds %d, want 2..60", ErrInvalidOptions, o.Rounds)
	case o.RangePercent <= 0 || o.RangePercent > 100:
		return fmt.Errorf("%w: steady-state range %v %%, want more than 0 and at most 100", ErrInvalidOptions, o.RangePercent)
	case o.SlopePercent <= 0 || o.SlopePercent > 100:
		return fmt.Errorf("%w: steady-state slope %v %%, want more than 0 and at most 100", ErrInvalidOptions, o.SlopePercent)
	}
	return nil
}

// SteadyState is the verdict on one step's per-second IOPS.
type SteadyState struct {
	// Judged is false when the step has fewer timeline windows than
	// rounds.
	Judged bool
	// Steady is true when both excursions are within their bounds.
	Steady bool
	// Mean is the rounds' average IOPS; RangePercent and SlopePercent are
	// the measured excursions as percentages of it (0 when Mean is 0).
	Mean, RangePercent, SlopePercent float64
}

// Steady judges a step's timeline by SNIA PTS's rule: the windows are cut
// into o.Rounds equal rounds, each round's mean IOPS is its value, and the
// step is steady when the rounds' range (max − min) and the excursion of
// their least-squares line (slope × (rounds − 1)) are within RangePercent and
// SlopePercent of the rounds' average. A step that completed nothing is
// judged not steady: there is no rate it held.
func Steady(t results.Timeline, o SteadyOptions) SteadyState {
	o = o.WithDefaults()
	w := t.Windows
	per := len(w) / o.Rounds
	if per == 0 {
		return SteadyState{}
	}
	skip := len(w) - per*o.Rounds
	rounds := make([]float64, o.Rounds)
	for r := range rounds {
		for _, s := range w[skip+r*per : skip+(r+1)*per] {
			rounds[r] += s.IOPS / float64(per)
		}
	}
	mean, lo, hi := 0.0, rounds[0], rounds[0]
	for _, v := range rounds {
		mean += v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean /= float64(len(rounds))
	if mean == 0 {
		return SteadyState{Judged: true}
	}
	// Least-squares slope over x = 0..n-1.
	n := float64(len(rounds))
	xMean := (n - 1) / 2
	var sxy, sxx float64
	for i, v := range rounds {
		dx := float64(i) - xMean
		sxy += dx * (v - mean)
		sxx += dx * dx
	}
	slope := sxy / sxx
	st := SteadyState{Judged: true, Mean: mean,
		RangePercent: (hi - lo) / mean * 100,
		SlopePercent: math.Abs(slope*(n-1)) / mean * 100}
	st.Steady = st.RangePercent <= o.RangePercent && st.SlopePercent <= o.SlopePercent
	return st
}

// Stall is the longest time in which no client completed an I/O, as fio's
// one-second status ticks show it: a tick without a completion, or several
// in a row, on every client at once.
type Stall struct {
	// Start is when it began, after the ramp; Duration how long it lasted
	// (0: no tick without a completion).
	Start, Duration time.Duration
	// P999AroundNs is the highest p99.9 latency of the windows within a
	// second of the stall (0 when there is none): the I/Os that waited
	// through it complete there.
	P999AroundNs uint64
}

// LongestStall finds the step's longest idle span (results.Timeline.Idle).
// A stall that held I/O up is placed by the clients' latency logs, to
// within fio.LatLogMs (results.StallsOf); one of clients stopped with
// nothing outstanding is seen by fio's ticks only, as a lower bound to
// within about a second.
func LongestStall(t results.Timeline) Stall {
	idle := t.LongestIdle()
	if idle.EndMs <= idle.StartMs {
		return Stall{}
	}
	st := Stall{Start: time.Duration(idle.StartMs) * time.Millisecond, Duration: idle.Duration()}
	lo, hi := idle.StartMs-min(idle.StartMs, 1000), idle.EndMs+1000
	for k, w := range t.Windows {
		end := uint64(math.MaxUint64)
		if k+1 < len(t.Windows) {
			end = t.Windows[k+1].StartMs
		}
		if w.StartMs < hi && end > lo && w.IOs > 0 {
			st.P999AroundNs = max(st.P999AroundNs, w.Percentiles(99.9)[0])
		}
	}
	return st
}
