package analysis

import (
	"fmt"
	"math"

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

// Stall is the longest run of whole timeline windows in which no client
// completed an I/O.
type Stall struct {
	// StartSeconds is when the stall began, in seconds after the ramp;
	// Seconds how long it lasted (0: no window without completions).
	StartSeconds, Seconds int
	// BeforeP999Ns and AfterP999Ns are the p99.9 latency of the windows
	// just before and just after the stall (0 when there is none): the
	// I/Os that waited through it complete in the window after.
	BeforeP999Ns, AfterP999Ns uint64
}

// LongestStall finds the longest run of windows without a completion. Its
// resolution is the timeline's window: a stall shorter than a window, or
// one that straddles two windows that each saw a completion, is not found.
func LongestStall(t results.Timeline) Stall {
	w := t.Windows
	idle := func(k int) bool { return w[k].IOs == 0 }
	start, n := 0, 0
	for i := 0; i < len(w); {
		if !idle(i) {
			i++
			continue
		}
		j := i
		for j < len(w) && idle(j) {
			j++
		}
		if j-i > n {
			start, n = i, j-i
		}
		i = j
	}
	if n == 0 {
		return Stall{}
	}
	st := Stall{StartSeconds: start * t.WindowSeconds, Seconds: n * t.WindowSeconds}
	if start > 0 {
		st.BeforeP999Ns = w[start-1].Percentiles(99.9)[0]
	}
	if end := start + n; end < len(w) {
		st.AfterP999Ns = w[end].Percentiles(99.9)[0]
	}
	return st
}
