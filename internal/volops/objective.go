package volops

import (
	"fmt"
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// Percentile selects a step's latency figure.
type Percentile string

// The latency figures an objective can bound.
const (
	P50 Percentile = "p50"
	P90 Percentile = "p90"
	P99 Percentile = "p99"
	Max Percentile = "max"
)

// of is p's figure of step s.
func (p Percentile) of(s StepSummary) time.Duration {
	switch p {
	case P50:
		return s.P50
	case P90:
		return s.P90
	case P99:
		return s.P99
	default:
		return s.Max
	}
}

// Objective bounds one operation's latency, and optionally its rate, at
// every step up to a concurrency: "p90 provision ≤ 30 s up to 25 at once".
type Objective struct {
	Operation  Operation
	Percentile Percentile
	// MaxLatency is the largest Percentile latency a step may have; it must
	// be positive. A latency equal to it passes.
	MaxLatency time.Duration
	// UpToConcurrency limits the objective to the steps at or below it; 0
	// means every step.
	UpToConcurrency int
	// MinPerMinute, when positive, is the fewest succeeded operations per
	// minute a step may have (StepSummary.PerMinute); 0 means none. A rate
	// equal to it passes.
	MinPerMinute float64
}

// ObjectiveResult is the verdict on one objective.
type ObjectiveResult struct {
	Objective Objective
	Met       bool
	// Step is the concurrency of the first step that failed the objective,
	// or of the last step checked when it is met; 0 when no step was
	// checked.
	Step int
	// Observed is the objective's Percentile latency at Step (over the
	// succeeded operations; 0 when none succeeded).
	Observed time.Duration
	// Message says why, for humans.
	Message string
}

// ValidateObjective checks o on its own: a known operation and percentile,
// MaxLatency > 0, UpToConcurrency ≥ 0, MinPerMinute ≥ 0 and finite.
func ValidateObjective(o Objective) error {
	if _, err := ParseOperation(string(o.Operation)); err != nil {
		return fmt.Errorf("objective: %w", err)
	}
	switch o.Percentile {
	case P50, P90, P99, Max:
	default:
		return fmt.Errorf("objective on %s: %w %q: must be one of %s, %s, %s, %s",
			o.Operation, ErrUnknownPercentile, o.Percentile, P50, P90, P99, Max)
	}
	if o.MaxLatency <= 0 {
		return fmt.Errorf("objective on %s: %w: MaxLatency must be positive, got %s", o.Operation, ErrInvalidThreshold, o.MaxLatency)
	}
	if o.UpToConcurrency < 0 {
		return fmt.Errorf("objective on %s: %w: UpToConcurrency must be 0 (every step) or at least 1, got %d",
			o.Operation, ErrInvalidThreshold, o.UpToConcurrency)
	}
	if o.MinPerMinute < 0 || math.IsNaN(o.MinPerMinute) || math.IsInf(o.MinPerMinute, 0) {
		return fmt.Errorf("objective on %s: %w: MinPerMinute must be 0 (none) or a positive number, got %v",
			o.Operation, ErrInvalidThreshold, o.MinPerMinute)
	}
	return nil
}

// Evaluate judges each objective against r, in order. An objective is met
// when every step of its operation at or below UpToConcurrency (every step
// when 0) has all its operations succeeded, its Percentile latency ≤
// MaxLatency and, when MinPerMinute > 0, PerMinute ≥ MinPerMinute. The
// steps are checked in ascending concurrency and the first that fails
// decides. An invalid objective, an operation without samples and an
// objective with no step at or below UpToConcurrency are not met.
func Evaluate(r Result, objs []Objective) []ObjectiveResult {
	out := make([]ObjectiveResult, len(objs))
	for i, o := range objs {
		out[i] = evaluate(r, o)
	}
	return out
}

func evaluate(r Result, o Objective) ObjectiveResult {
	res := ObjectiveResult{Objective: o}
	if err := ValidateObjective(o); err != nil {
		res.Message = err.Error()
		return res
	}
	c, ok := r.Curve(o.Operation)
	if !ok {
		res.Message = fmt.Sprintf("nothing was measured: no %s operation has a sample", o.Operation)
		return res
	}
	checked := 0
	var worst, slowest StepSummary
	for _, s := range c.Steps {
		if o.UpToConcurrency > 0 && s.Concurrency > o.UpToConcurrency {
			break
		}
		checked++
		res.Step, res.Observed = s.Concurrency, o.Percentile.of(s)
		if msg := o.failure(s); msg != "" {
			res.Message = msg
			return res
		}
		if checked == 1 || o.Percentile.of(s) > o.Percentile.of(worst) {
			worst = s
		}
		if checked == 1 || s.PerMinute < slowest.PerMinute {
			slowest = s
		}
	}
	if checked == 0 {
		res.Message = fmt.Sprintf("nothing was measured: no %s step at concurrency %d or below", o.Operation, o.UpToConcurrency)
		return res
	}
	res.Met = true
	got, limit := numfmt.LatencyPair(uint64(o.Percentile.of(worst)), uint64(o.MaxLatency))
	count := "the only step"
	if checked > 1 {
		count = fmt.Sprintf("all %d steps", checked)
	}
	res.Message = fmt.Sprintf("%s latency of %s at most %s at %s up to concurrency %d (highest %s, at concurrency %d)",
		o.Percentile, o.Operation, limit, count, res.Step, got, worst.Concurrency)
	if o.MinPerMinute > 0 {
		got, limit := numfmt.Pair(slowest.PerMinute, o.MinPerMinute, 1)
		res.Message += fmt.Sprintf(", and at least %s per minute (lowest %s, at concurrency %d)", limit, got, slowest.Concurrency)
	}
	return res
}

// failure says why step s fails o, or "" when it passes.
func (o Objective) failure(s StepSummary) string {
	if bad := s.Failed + s.TimedOut; bad > 0 {
		reason := "no reason given"
		if s.FirstReason != "" {
			reason = "first reason: " + s.FirstReason
		}
		return fmt.Sprintf("at concurrency %d, %d of %d %s operations did not succeed (%d failed, %d timed out); %s",
			s.Concurrency, bad, s.Count, o.Operation, s.Failed, s.TimedOut, reason)
	}
	if v := o.Percentile.of(s); v > o.MaxLatency {
		got, limit := numfmt.LatencyPair(uint64(v), uint64(o.MaxLatency))
		return fmt.Sprintf("at concurrency %d, %s latency of %s is %s, above %s",
			s.Concurrency, o.Percentile, o.Operation, got, limit)
	}
	if o.MinPerMinute > 0 && s.PerMinute < o.MinPerMinute {
		got, limit := numfmt.Pair(s.PerMinute, o.MinPerMinute, 1)
		return fmt.Sprintf("at concurrency %d, %s %s operations per minute, below %s",
			s.Concurrency, got, o.Operation, limit)
	}
	return ""
}
