package volops

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Outcome is how one timed object ended.
type Outcome string

// The outcomes of a sample.
const (
	Succeeded Outcome = "Succeeded"
	Failed    Outcome = "Failed"
	TimedOut  Outcome = "TimedOut"
)

// Sample is one object's timed transition: the Index-th (0-based) of the
// Concurrency objects of Operation created at once in one step.
type Sample struct {
	Operation   Operation
	Concurrency int
	Index       int
	// Start is when the transition was requested; End is when it was
	// observed complete, or, for a failed or timed-out object, when it was
	// judged so. End is never before Start.
	Start, End time.Time
	Outcome    Outcome
	// Reason says why an object failed or timed out; ignored for a
	// succeeded one.
	Reason string
}

// Duration is End − Start: the latency of a succeeded sample.
func (s Sample) Duration() time.Duration { return s.End.Sub(s.Start) }

// StepSummary is one step of one operation. The latencies are over the
// succeeded samples only and are 0 when none succeeded.
type StepSummary struct {
	Concurrency int
	// Count is the number of samples (= Concurrency); Succeeded, Failed and
	// TimedOut add up to it.
	Count, Succeeded, Failed, TimedOut int
	// Mean is rounded to the nearest nanosecond; P50, P90 and P99 are
	// nearest-rank order statistics (see the package documentation).
	Min, Mean, P50, P90, P99, Max time.Duration
	// PerMinute is the succeeded operations per minute over the step's
	// span, from its earliest Start to its latest End (failed and timed-out
	// samples included); 0 when none succeeded or the span is 0.
	PerMinute float64
	// Span is the step's span, from its earliest Start to its latest End.
	Span time.Duration
	// FirstReason is the Reason of the failed or timed-out sample with the
	// lowest Index; empty when all succeeded.
	FirstReason string
}

// Result is what Summarize computes: one Curve per measured operation.
type Result struct {
	// Curves are in the order of Operations; an operation without samples
	// has none.
	Curves []Curve
}

// Curve returns op's curve, and false when op was not measured.
func (r Result) Curve(op Operation) (Curve, bool) {
	for _, c := range r.Curves {
		if c.Operation == op {
			return c, true
		}
	}
	return Curve{}, false
}

type stepKey struct {
	op          Operation
	concurrency int
}

// Summarize checks the samples and summarises them per operation and step.
// It returns the first error found: first the samples one by one in input
// order (operation, outcome, concurrency, index, end before start, an
// index seen before in the same step), then the steps in operation and
// concurrency order (a sample count that differs from the concurrency).
// No samples give an empty Result.
func Summarize(samples []Sample) (Result, error) {
	steps := map[stepKey][]Sample{}
	seen := map[stepKey]map[int]int{} // index => input position
	for i, s := range samples {
		if err := checkSample(s); err != nil {
			return Result{}, fmt.Errorf("sample %d: %w", i, err)
		}
		k := stepKey{s.Operation, s.Concurrency}
		if seen[k] == nil {
			seen[k] = map[int]int{}
		}
		if j, dup := seen[k][s.Index]; dup {
			return Result{}, fmt.Errorf("samples %d and %d: %w: both are index %d of %s at concurrency %d",
				j, i, ErrDuplicateIndex, s.Index, s.Operation, s.Concurrency)
		}
		seen[k][s.Index] = i
		steps[k] = append(steps[k], s)
	}
	keys := make([]stepKey, 0, len(steps))
	for k := range steps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stepKey) int {
		return cmp.Or(cmp.Compare(a.op.order(), b.op.order()), cmp.Compare(a.concurrency, b.concurrency))
	})
	var r Result
	for _, k := range keys {
		ss := steps[k]
		if len(ss) != k.concurrency {
			return Result{}, fmt.Errorf("%s at concurrency %d: %w: %d samples, want %d",
				k.op, k.concurrency, ErrStepCount, len(ss), k.concurrency)
		}
		if n := len(r.Curves); n == 0 || r.Curves[n-1].Operation != k.op {
			r.Curves = append(r.Curves, Curve{Operation: k.op})
		}
		c := &r.Curves[len(r.Curves)-1]
		c.Steps = append(c.Steps, summarizeStep(k.concurrency, ss))
	}
	for i := range r.Curves {
		r.Curves[i].analyse()
	}
	return r, nil
}

// checkSample checks one sample on its own.
func checkSample(s Sample) error {
	if _, err := ParseOperation(string(s.Operation)); err != nil {
		return err
	}
	switch s.Outcome {
	case Succeeded, Failed, TimedOut:
	default:
		return fmt.Errorf("%s: %w %q: must be one of %s, %s, %s", s.Operation, ErrUnknownOutcome, s.Outcome, Succeeded, Failed, TimedOut)
	}
	if s.Concurrency < 1 {
		return fmt.Errorf("%s: %w: concurrency %d, must be at least 1", s.Operation, ErrInvalidConcurrency, s.Concurrency)
	}
	if s.Index < 0 || s.Index >= s.Concurrency {
		return fmt.Errorf("%s at concurrency %d: %w: index %d, must be 0 to %d",
			s.Operation, s.Concurrency, ErrInvalidIndex, s.Index, s.Concurrency-1)
	}
	if s.End.Before(s.Start) {
		return fmt.Errorf("%s at concurrency %d, index %d: %w: ends %s before it starts",
			s.Operation, s.Concurrency, s.Index, ErrEndBeforeStart, s.Start.Sub(s.End))
	}
	return nil
}

// summarizeStep summarises the samples of one step, already checked.
func summarizeStep(concurrency int, ss []Sample) StepSummary {
	st := StepSummary{Concurrency: concurrency, Count: len(ss)}
	first, last := ss[0].Start, ss[0].End
	firstFailed := -1
	var ds []time.Duration
	for _, s := range ss {
		if s.Start.Before(first) {
			first = s.Start
		}
		if s.End.After(last) {
			last = s.End
		}
		switch s.Outcome {
		case Succeeded:
			st.Succeeded++
			ds = append(ds, s.Duration())
			continue
		case Failed:
			st.Failed++
		case TimedOut:
			st.TimedOut++
		}
		if firstFailed < 0 || s.Index < firstFailed {
			firstFailed, st.FirstReason = s.Index, s.Reason
		}
	}
	st.Span = last.Sub(first)
	if len(ds) == 0 {
		return st
	}
	slices.Sort(ds)
	st.Min, st.Max = ds[0], ds[len(ds)-1]
	st.Mean = mean(ds)
	st.P50, st.P90, st.P99 = NearestRank(ds, 50), NearestRank(ds, 90), NearestRank(ds, 99)
	if span := st.Span; span > 0 {
		st.PerMinute = float64(st.Succeeded) / span.Minutes()
	}
	return st
}

// NearestRank is the percent-th percentile (1…100) of the ascending,
// non-empty ds by the nearest-rank rule: the ⌈percent·n/100⌉-th smallest
// (1-based), computed in integers so that no rounding moves the rank (the
// p50 of n is the ⌈n/2⌉-th smallest). It is always one of ds.
func NearestRank(ds []time.Duration, percent int) time.Duration {
	k := (percent*len(ds) + 99) / 100
	return ds[max(k, 1)-1]
}

// mean is the mean of the non-negative ds rounded to the nearest
// nanosecond (half up), without overflow: Σ⌊d/n⌋ plus the sum of the
// remainders over n.
func mean(ds []time.Duration) time.Duration {
	n := time.Duration(len(ds))
	var q, r time.Duration
	for _, d := range ds {
		q += d / n
		r += d % n
	}
	q += r / n
	if 2*(r%n) >= n {
		q++
	}
	return q
}
