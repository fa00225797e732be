package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/results"
)

// Objective is one service-level objective. Exactly one kind field is set.
// IOPS and MiB/s are always the step's totals (reads plus writes, all
// clients); the latency is whatever the kind's Selector picks.
type Objective struct {
	// Name identifies the objective in results and metrics; when empty the
	// objective's description (String) is used. Names must be unique.
	Name string
	// LatencyAtLoad: "p99 read latency ≤ 2 ms at ≥ 40,000 IOPS".
	LatencyAtLoad *LatencyAtLoad
	// PeakIOPS: "peak IOPS ≥ X".
	PeakIOPS *int64
	// PeakMiBps: "peak throughput ≥ X MiB/s".
	PeakMiBps *int64
	// IOPSAtLatency: "IOPS at 1 ms ≥ Y".
	IOPSAtLatency *IOPSAtLatency
	// MiBpsAtLatency: "MiB/s at 1 ms ≥ Y".
	MiBpsAtLatency *MiBpsAtLatency
	// MaxStall: "no stall longer than X": every successful step's longest
	// time without a completion (LongestStall) is at most X.
	MaxStall *time.Duration
}

// LatencyAtLoad is met when some successful step with achieved total IOPS ≥
// MinIOPS has its selected latency ≤ MaxLatency.
type LatencyAtLoad struct {
	Selector   LatencySelector
	MaxLatency time.Duration
	MinIOPS    int64
}

// IOPSAtLatency is met when the highest achieved total IOPS among the steps
// whose selected latency is ≤ MaxLatency is ≥ MinIOPS.
type IOPSAtLatency struct {
	Selector   LatencySelector
	MaxLatency time.Duration
	MinIOPS    int64
}

// MiBpsAtLatency is IOPSAtLatency for bandwidth: the highest achieved total
// MiB/s among the steps whose selected latency is ≤ MaxLatency must be ≥
// MinMiBps.
type MiBpsAtLatency struct {
	Selector   LatencySelector
	MaxLatency time.Duration
	MinMiBps   int64
}

// Verdict is the outcome of one objective.
type Verdict string

const (
	// Met: the run shows the objective holds.
	Met Verdict = "Met"
	// NotMet: the run measured what the objective needs and it fails.
	NotMet Verdict = "NotMet"
	// NotMeasurable: the run did not produce the evidence the objective
	// needs (load never reached, direction never exercised, every step
	// failed).
	NotMeasurable Verdict = "NotMeasurable"
)

// SLOResult is the verdict on one objective with a human-readable reason.
type SLOResult struct {
	Name    string
	Verdict Verdict
	Reason  string
}

// kinds lists the kind fields that are set, by Go field name.
func (o Objective) kinds() []string {
	var k []string
	if o.LatencyAtLoad != nil {
		k = append(k, "LatencyAtLoad")
	}
	if o.PeakIOPS != nil {
		k = append(k, "PeakIOPS")
	}
	if o.PeakMiBps != nil {
		k = append(k, "PeakMiBps")
	}
	if o.IOPSAtLatency != nil {
		k = append(k, "IOPSAtLatency")
	}
	if o.MiBpsAtLatency != nil {
		k = append(k, "MiBpsAtLatency")
	}
	if o.MaxStall != nil {
		k = append(k, "MaxStall")
	}
	return k
}

// ValidateObjective checks that exactly one kind is set, its selector is
// valid and its thresholds are positive. The error wraps one of
// ErrNoObjectiveKind, ErrMultipleObjectiveKinds, ErrInvalidSelector or
// ErrInvalidThreshold.
func ValidateObjective(o Objective) error {
	prefix := "objective"
	if o.Name != "" {
		prefix = fmt.Sprintf("objective %q", o.Name)
	}
	switch k := o.kinds(); len(k) {
	case 0:
		return fmt.Errorf("%s: %w (set one of LatencyAtLoad, PeakIOPS, PeakMiBps, IOPSAtLatency, MiBpsAtLatency, MaxStall)", prefix, ErrNoObjectiveKind)
	case 1:
	default:
		return fmt.Errorf("%s: %w: %s", prefix, ErrMultipleObjectiveKinds, strings.Join(k, ", "))
	}
	latency := func(field string, sel LatencySelector, maxLat time.Duration) error {
		if err := sel.Validate(); err != nil {
			return fmt.Errorf("%s: %s.Selector: %w", prefix, field, err)
		}
		if maxLat <= 0 {
			return fmt.Errorf("%s: %w: %s.MaxLatency must be positive, got %s", prefix, ErrInvalidThreshold, field, maxLat)
		}
		return nil
	}
	positive := func(field string, v int64) error {
		if v <= 0 {
			return fmt.Errorf("%s: %w: %s must be positive, got %d", prefix, ErrInvalidThreshold, field, v)
		}
		return nil
	}
	switch {
	case o.LatencyAtLoad != nil:
		l := o.LatencyAtLoad
		if err := latency("LatencyAtLoad", l.Selector, l.MaxLatency); err != nil {
			return err
		}
		return positive("LatencyAtLoad.MinIOPS", l.MinIOPS)
	case o.PeakIOPS != nil:
		return positive("PeakIOPS", *o.PeakIOPS)
	case o.PeakMiBps != nil:
		return positive("PeakMiBps", *o.PeakMiBps)
	case o.MaxStall != nil:
		if *o.MaxStall < time.Second || *o.MaxStall%time.Second != 0 {
			return fmt.Errorf("%s: %w: MaxStall must be whole seconds, at least 1 s, got %s", prefix, ErrInvalidThreshold, *o.MaxStall)
		}
		return nil
	case o.IOPSAtLatency != nil:
		l := o.IOPSAtLatency
		if err := latency("IOPSAtLatency", l.Selector, l.MaxLatency); err != nil {
			return err
		}
		return positive("IOPSAtLatency.MinIOPS", l.MinIOPS)
	default:
		l := o.MiBpsAtLatency
		if err := latency("MiBpsAtLatency", l.Selector, l.MaxLatency); err != nil {
			return err
		}
		return positive("MiBpsAtLatency.MinMiBps", l.MinMiBps)
	}
}

// String describes a valid objective: "p99 read latency ≤ 2 ms at ≥ 40,000
// IOPS", "peak IOPS ≥ 40,000", "peak throughput ≥ 4,000 MiB/s", "≥ 40,000
// IOPS at mean latency ≤ 1 ms", "≥ 4,000 MiB/s at mean latency ≤ 1 ms",
// "longest stall ≤ 2 s".
func (o Objective) String() string {
	switch {
	case o.LatencyAtLoad != nil:
		l := o.LatencyAtLoad
		return fmt.Sprintf("%s ≤ %s at ≥ %s IOPS", l.Selector, formatDuration(l.MaxLatency), numfmt.Count(float64(l.MinIOPS)))
	case o.PeakIOPS != nil:
		return "peak IOPS ≥ " + numfmt.Count(float64(*o.PeakIOPS))
	case o.PeakMiBps != nil:
		return "peak throughput ≥ " + numfmt.Count(float64(*o.PeakMiBps)) + " MiB/s"
	case o.IOPSAtLatency != nil:
		l := o.IOPSAtLatency
		return fmt.Sprintf("≥ %s IOPS at %s ≤ %s", numfmt.Count(float64(l.MinIOPS)), l.Selector, formatDuration(l.MaxLatency))
	case o.MiBpsAtLatency != nil:
		l := o.MiBpsAtLatency
		return fmt.Sprintf("≥ %s MiB/s at %s ≤ %s", numfmt.Count(float64(l.MinMiBps)), l.Selector, formatDuration(l.MaxLatency))
	case o.MaxStall != nil:
		return fmt.Sprintf("longest stall ≤ %d s", *o.MaxStall/time.Second)
	}
	return "empty objective"
}

func formatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + numfmt.Latency(uint64(-d))
	}
	return numfmt.Latency(uint64(d))
}

// axis is a throughput an objective is judged on, in the objective's unit.
type axis struct {
	unit string
	// value is the step's throughput in unit.
	value func(a *results.StepAggregate) float64
	// decimals is the least number of fraction digits shown for v.
	decimals func(v float64) int
}

var (
	iopsAxis = axis{
		unit:     "IOPS",
		value:    func(a *results.StepAggregate) float64 { return a.Total.IOPS },
		decimals: func(float64) int { return 0 },
	}
	mibpsAxis = axis{
		unit:  "MiB/s",
		value: func(a *results.StepAggregate) float64 { return a.Total.BytesPerSec / numfmt.MiB },
		decimals: func(v float64) int {
			if v < 100 {
				return 1
			}
			return 0
		},
	}
)

// pair renders v and a threshold in the axis unit: "41,230 IOPS", "40,000 IOPS".
func (x axis) pair(v, ref float64) (string, string) {
	a, b := numfmt.Pair(v, ref, x.decimals(min(v, ref)))
	return a + " " + x.unit, b + " " + x.unit
}

// one renders v in the axis unit.
func (x axis) one(v float64) string {
	return numfmt.Decimals(v, x.decimals(v)) + " " + x.unit
}

// evaluator holds the successful steps of a run, in input order.
type evaluator struct {
	steps []*results.StepAggregate
	// stalls are the steps' StepInput.Stall (nil: from the timeline).
	stalls []*Stall
}

func newEvaluator(in []StepInput, steps []StepAnalysis) *evaluator {
	ev := &evaluator{}
	for i := range in {
		if steps[i].evidence() {
			ev.steps = append(ev.steps, &in[i].Aggregate)
			ev.stalls = append(ev.stalls, in[i].Stall)
		}
	}
	return ev
}

const noSuccessfulStep = "no step completed without errors"

func (ev *evaluator) evaluate(o Objective) SLOResult {
	r := SLOResult{Name: o.Name}
	if r.Name == "" {
		r.Name = o.String()
	}
	switch {
	case o.LatencyAtLoad != nil:
		l := o.LatencyAtLoad
		r.Verdict, r.Reason = ev.latencyAtLoad(l.Selector, l.MaxLatency, l.MinIOPS)
	case o.PeakIOPS != nil:
		r.Verdict, r.Reason = ev.peak(iopsAxis, float64(*o.PeakIOPS))
	case o.PeakMiBps != nil:
		r.Verdict, r.Reason = ev.peak(mibpsAxis, float64(*o.PeakMiBps))
	case o.IOPSAtLatency != nil:
		l := o.IOPSAtLatency
		r.Verdict, r.Reason = ev.atLatency(iopsAxis, l.Selector, l.MaxLatency, float64(l.MinIOPS))
	case o.MiBpsAtLatency != nil:
		l := o.MiBpsAtLatency
		r.Verdict, r.Reason = ev.atLatency(mibpsAxis, l.Selector, l.MaxLatency, float64(l.MinMiBps))
	case o.MaxStall != nil:
		r.Verdict, r.Reason = ev.maxStall(*o.MaxStall)
	}
	return r
}

// maxStall is met when no successful step stalled longer than limit; it
// needs at least one step with a timeline.
func (ev *evaluator) maxStall(limit time.Duration) (Verdict, string) {
	if len(ev.steps) == 0 {
		return NotMeasurable, noSuccessfulStep
	}
	var worst *results.StepAggregate
	var longest time.Duration
	judged := false
	for k, a := range ev.steps {
		var d time.Duration
		switch {
		case ev.stalls[k] != nil:
			d = ev.stalls[k].Duration
		case len(a.Timeline.Windows) > 0:
			d = LongestStall(a.Timeline).Duration
		default:
			continue
		}
		judged = true
		if worst == nil || d > longest {
			worst, longest = a, d
		}
	}
	switch {
	case !judged:
		return NotMeasurable, "no step has a timeline"
	case longest == 0:
		return Met, fmt.Sprintf("no status tick without a completion (limit %s)", limit)
	}
	got, lim := numfmt.LatencyPair(uint64(longest), uint64(limit))
	if longest <= limit {
		return Met, fmt.Sprintf("longest stall %s (step %d) ≤ %s", got, worst.Step+1, lim)
	}
	return NotMet, fmt.Sprintf("longest stall %s (step %d) > %s", got, worst.Step+1, lim)
}

// peakOf returns the successful step with the highest value on x (the
// earliest on a tie), or nil when there is no successful step.
func (ev *evaluator) peakOf(x axis) *results.StepAggregate {
	var best *results.StepAggregate
	for _, a := range ev.steps {
		if best == nil || x.value(a) > x.value(best) {
			best = a
		}
	}
	return best
}

func (ev *evaluator) peak(x axis, threshold float64) (Verdict, string) {
	p := ev.peakOf(x)
	if p == nil {
		return NotMeasurable, noSuccessfulStep
	}
	v, t := x.pair(x.value(p), threshold)
	if x.value(p) >= threshold {
		return Met, fmt.Sprintf("peak %s ≥ %s (step %d)", v, t, p.Step+1)
	}
	return NotMet, fmt.Sprintf("peak %s < %s (step %d)", v, t, p.Step+1)
}

func (ev *evaluator) latencyAtLoad(sel LatencySelector, maxLat time.Duration, minIOPS int64) (Verdict, string) {
	x, load := iopsAxis, float64(minIOPS)
	limit := uint64(maxLat)
	var reached, measured int
	var metStep, bestStep *results.StepAggregate
	var metNs, bestNs uint64
	for _, a := range ev.steps {
		if x.value(a) < load {
			continue
		}
		reached++
		ns, ok := sel.Of(*a)
		if !ok {
			continue
		}
		measured++
		// Evidence for Met: the highest load meeting the limit (on a tie,
		// the lower latency).
		if ns <= limit && (metStep == nil || x.value(a) > x.value(metStep) || (x.value(a) == x.value(metStep) && ns < metNs)) {
			metStep, metNs = a, ns
		}
		// Closest miss: the lowest latency (on a tie, the higher load).
		if bestStep == nil || ns < bestNs || (ns == bestNs && x.value(a) > x.value(bestStep)) {
			bestStep, bestNs = a, ns
		}
	}
	minLoad := numfmt.Count(load) + " IOPS"
	switch {
	case reached == 0:
		p := ev.peakOf(x)
		if p == nil {
			return NotMeasurable, fmt.Sprintf("no step reached %s; %s", minLoad, noSuccessfulStep)
		}
		v, t := x.pair(x.value(p), load)
		return NotMeasurable, fmt.Sprintf("no step reached %s; peak was %s (step %d)", t, v, p.Step+1)
	case bestStep == nil:
		return NotMeasurable, fmt.Sprintf("no step at ≥ %s measured %s (%s)", minLoad, sel, sel.missing())
	case metStep != nil:
		l, t := numfmt.LatencyPair(metNs, limit)
		return Met, fmt.Sprintf("%s %s ≤ %s at %s (step %d)", sel, l, t, x.one(x.value(metStep)), metStep.Step+1)
	}
	l, t := numfmt.LatencyPair(bestNs, limit)
	among := "the only step at ≥ " + minLoad
	if measured > 1 {
		among = fmt.Sprintf("the lowest of %d steps at ≥ %s", measured, minLoad)
	}
	return NotMet, fmt.Sprintf("%s %s > %s at %s (step %d), %s", sel, l, t, x.one(x.value(bestStep)), bestStep.Step+1, among)
}

func (ev *evaluator) atLatency(x axis, sel LatencySelector, maxLat time.Duration, threshold float64) (Verdict, string) {
	if len(ev.steps) == 0 {
		return NotMeasurable, noSuccessfulStep
	}
	limit := uint64(maxLat)
	var best, lowest *results.StepAggregate
	var bestNs, lowestNs uint64
	for _, a := range ev.steps {
		ns, ok := sel.Of(*a)
		if !ok {
			continue
		}
		if lowest == nil || ns < lowestNs || (ns == lowestNs && x.value(a) > x.value(lowest)) {
			lowest, lowestNs = a, ns
		}
		if ns <= limit && (best == nil || x.value(a) > x.value(best) || (x.value(a) == x.value(best) && ns < bestNs)) {
			best, bestNs = a, ns
		}
	}
	switch {
	case lowest == nil:
		return NotMeasurable, fmt.Sprintf("no step measured %s (%s)", sel, sel.missing())
	case best == nil:
		l, t := numfmt.LatencyPair(lowestNs, limit)
		return NotMet, fmt.Sprintf("no step had %s ≤ %s; the lowest was %s at %s (step %d)", sel, t, l, x.one(x.value(lowest)), lowest.Step+1)
	}
	v, t := x.pair(x.value(best), threshold)
	l, lt := numfmt.LatencyPair(bestNs, limit)
	if x.value(best) >= threshold {
		return Met, fmt.Sprintf("%s ≥ %s with %s %s ≤ %s (step %d)", v, t, sel, l, lt, best.Step+1)
	}
	return NotMet, fmt.Sprintf("%s < %s with %s %s ≤ %s (step %d), the highest at or below the target", v, t, sel, l, lt, best.Step+1)
}
