package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storagebench/storagebench/internal/results"
)

// Latency metric names a LatencySelector accepts (those of
// results.LatencySummary.Metric).
const (
	MetricMean  = "mean"
	MetricMin   = "min"
	MetricMax   = "max"
	MetricP50   = "p50"
	MetricP90   = "p90"
	MetricP95   = "p95"
	MetricP99   = "p99"
	MetricP999  = "p99.9"
	MetricP9999 = "p99.99"
)

// Operations a LatencySelector accepts.
const (
	OperationRead  = "read"
	OperationWrite = "write"
	// OperationTotal is the latency over all I/O of the step, reads and
	// writes pooled.
	OperationTotal = "total"
	// OperationWorst is the higher of the read and the write figure, among
	// the operations that have samples.
	OperationWorst = "worst"
	// OperationSync is the sync calls (fsync or fdatasync) of a workload
	// that makes them, apart from its I/O.
	OperationSync = "sync"
)

// latencyMetrics lists the accepted LatencySelector.Metric values.
var latencyMetrics = []string{MetricMean, MetricMin, MetricMax, MetricP50, MetricP90, MetricP95, MetricP99, MetricP999, MetricP9999}

// latencyOperations lists the accepted LatencySelector.Operation values.
var latencyOperations = []string{OperationRead, OperationWrite, OperationTotal, OperationWorst, OperationSync}

// LatencySelector picks one latency figure of a step: a metric of one
// operation's merged distribution. An empty Metric means "mean" and an empty
// Operation means "total", so the zero value is the mean latency over all I/O.
type LatencySelector struct {
	// Metric is one of "mean", "min", "max", "p50", "p90",
	// "p95", "p99", "p99.9", "p99.99".
	Metric string
	// Operation is "read", "write", "total", "worst" or "sync".
	Operation string
}

// WithDefaults returns s with an unset metric as the mean and an unset
// operation as the total: the one place these defaults live.
func (s LatencySelector) WithDefaults() LatencySelector {
	if s.Metric == "" {
		s.Metric = MetricMean
	}
	if s.Operation == "" {
		s.Operation = OperationTotal
	}
	return s
}

// Validate reports an unknown metric or operation (empty fields are the
// defaults and valid).
func (s LatencySelector) Validate() error {
	n := s.WithDefaults()
	if !slices.Contains(latencyMetrics, n.Metric) {
		return fmt.Errorf("%w: unknown latency metric %q (want one of %s)", ErrInvalidSelector, s.Metric, strings.Join(latencyMetrics, ", "))
	}
	if !slices.Contains(latencyOperations, n.Operation) {
		return fmt.Errorf("%w: unknown operation %q (want one of %s)", ErrInvalidSelector, s.Operation, strings.Join(latencyOperations, ", "))
	}
	return nil
}

// Of returns the selected latency of a step in nanoseconds. ok is false when
// the selected operation has no samples (for "worst": neither reads nor
// writes have samples) or the selector is invalid.
func (s LatencySelector) Of(a results.StepAggregate) (ns uint64, ok bool) {
	s = s.WithDefaults()
	switch s.Operation {
	case OperationRead:
		return a.Read.Latency.Metric(s.Metric)
	case OperationWrite:
		return a.Write.Latency.Metric(s.Metric)
	case OperationTotal:
		return a.Total.Latency.Metric(s.Metric)
	case OperationSync:
		return a.Sync.Latency.Metric(s.Metric)
	case OperationWorst:
		r, rok := a.Read.Latency.Metric(s.Metric)
		w, wok := a.Write.Latency.Metric(s.Metric)
		switch {
		case rok && wok:
			return max(r, w), true
		case rok:
			return r, true
		case wok:
			return w, true
		}
	}
	return 0, false
}

// String names the figure for humans: "p99 read latency", "p99 write
// latency", "mean latency" (total), "p99 worst-direction latency" (the
// worse of read and write).
func (s LatencySelector) String() string {
	s = s.WithDefaults()
	switch s.Operation {
	case OperationTotal:
		return s.Metric + " latency"
	case OperationWorst:
		return s.Metric + " worst-direction latency"
	}
	return s.Metric + " " + s.Operation + " latency"
}

// missing explains why Of found nothing, for reasons.
func (s LatencySelector) missing() string {
	switch s.WithDefaults().Operation {
	case OperationRead:
		return "no read I/O"
	case OperationWrite:
		return "no write I/O"
	case OperationSync:
		return "no sync calls"
	}
	return "no I/O"
}
