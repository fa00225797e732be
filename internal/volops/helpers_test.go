package volops

import (
	"time"
)

// t0 is when every test step starts.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// step is a step of op whose objects are all created at t0 and succeed
// after the given durations; its concurrency is len(ds).
func step(op Operation, ds ...time.Duration) []Sample {
	ss := make([]Sample, len(ds))
	for i, d := range ds {
		ss[i] = Sample{Operation: op, Concurrency: len(ds), Index: i, Start: t0, End: t0.Add(d), Outcome: Succeeded}
	}
	return ss
}

// serial is the step of N = n objects created at once of a driver that
// performs one at a time, each taking d: the k-th finishes at k·d.
func serial(op Operation, n int, d time.Duration) []Sample {
	ds := make([]time.Duration, n)
	for k := range ds {
		ds[k] = time.Duration(k+1) * d
	}
	return step(op, ds...)
}

// parallel is the step of n objects of a driver that serves them all at
// once, each taking d.
func parallel(op Operation, n int, d time.Duration) []Sample {
	ds := make([]time.Duration, n)
	for k := range ds {
		ds[k] = d
	}
	return step(op, ds...)
}

// with changes the outcome of sample i of ss.
func with(ss []Sample, i int, o Outcome, reason string) []Sample {
	ss[i].Outcome, ss[i].Reason = o, reason
	return ss
}

func concat(steps ...[]Sample) []Sample {
	var all []Sample
	for _, s := range steps {
		all = append(all, s...)
	}
	return all
}

// steps is the concurrency ladder of the issue.
var steps = []int{1, 5, 10, 25, 50}

// ceilDiv is ⌈a/b⌉ for positive a and b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
