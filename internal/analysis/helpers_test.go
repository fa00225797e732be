package analysis

import (
	"github.com/storagebench/storagebench/internal/results"
)

const blockSize = 8192

// lat is a latency distribution whose every figure is ns, or an empty one
// when count is 0.
func lat(count, ns uint64) results.LatencySummary {
	if count == 0 {
		return results.LatencySummary{}
	}
	return results.LatencySummary{
		Count: count, MinNs: ns, MaxNs: ns, MeanNs: float64(ns),
		P50Ns: ns, P90Ns: ns, P95Ns: ns, P99Ns: ns, P999Ns: ns, P9999Ns: ns,
	}
}

// dir is one direction at iops with every latency figure ns (no samples when
// iops is 0).
func dir(iops float64, ns uint64) results.OperationSummary {
	count := uint64(iops * 60)
	return results.OperationSummary{
		IOPS: iops, BytesPerSec: iops * blockSize, IOs: count, Bytes: count * blockSize,
		Latency: lat(count, ns),
	}
}

// mixed builds a step with reads and writes; the total latency's mean is
// count-weighted and its other figures are the slower direction's.
func mixed(step int, rIOPS float64, rNs uint64, wIOPS float64, wNs uint64) results.StepAggregate {
	r, w := dir(rIOPS, rNs), dir(wIOPS, wNs)
	t := dir(rIOPS+wIOPS, max(r.Latency.MaxNs, w.Latency.MaxNs))
	if n := r.Latency.Count + w.Latency.Count; n > 0 {
		t.Latency.MeanNs = (r.Latency.MeanNs*float64(r.Latency.Count) + w.Latency.MeanNs*float64(w.Latency.Count)) / float64(n)
	}
	return results.StepAggregate{Step: step, Clients: 1, Jobs: 1, Read: r, Write: w, Total: t}
}

// reads builds a read-only step.
func reads(step int, iops float64, ns uint64) results.StepAggregate {
	return mixed(step, iops, ns, 0, 0)
}

// writes builds a write-only step.
func writes(step int, iops float64, ns uint64) results.StepAggregate {
	return mixed(step, 0, 0, iops, ns)
}

func failed(a results.StepAggregate) results.StepAggregate {
	a.Errors = []string{"client 0: fio: io_u error"}
	return a
}

// unthrottled wraps aggregates as unthrottled step inputs.
func unthrottled(aggs ...results.StepAggregate) []StepInput {
	in := make([]StepInput, len(aggs))
	for i, a := range aggs {
		in[i] = StepInput{Aggregate: a}
	}
	return in
}

func ptr[T any](v T) *T { return &v }

const (
	us = uint64(1000)
	ms = uint64(1000000)
)
