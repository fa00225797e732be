package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Labels of the operations benchmarks' series.
const (
	LabelConcurrency = "concurrency"
	LabelOutcome     = "outcome"
)

var (
	opsLabels     = []string{LabelNamespace, LabelBenchmark, LabelStorageClass, LabelOperation}
	opsStepLabels = with(opsLabels, LabelConcurrency)
	opsRunLabels  = []string{LabelNamespace, LabelBenchmark, LabelStorageClass}

	descOpsLatency = desc("volume_operation_latency_seconds",
		"Latency of a VolumeOperationsBenchmark's operations at one concurrency, over the succeeded ones: percentile is min, mean, p50, p90, p99 or max (exact order statistics).",
		with(opsStepLabels, LabelPercentile)...)
	descOpsRate = desc("volume_operation_per_minute",
		"Operations a step completed per minute: succeeded over the step's span, from its first request to its last completion.",
		opsStepLabels...)
	descOpsOutcomes = desc("volume_operations",
		"Operations of a step by outcome: succeeded, failed or timedOut.",
		with(opsStepLabels, LabelOutcome)...)
	descOpsPerOperation = desc("volume_operation_serial_seconds",
		"The slope of each step's slowest operation against its concurrency (least squares): the time the path spends on one operation when it serves them one at a time; about 0 when it serves them in parallel.",
		opsLabels...)
	descOpsKnee = desc("volume_operation_knee_concurrency",
		"The concurrency at which the median latency of an operation bends upward; absent without a knee.",
		opsLabels...)
	descOpsObjective = desc("volume_operations_objective_met",
		"1 when a VolumeOperationsBenchmark's objective is met, 0 when not; absent until the run is complete.",
		with(opsRunLabels, LabelObjective)...)
	descOpsState = desc("volume_operations_run_state",
		"1 for a VolumeOperationsBenchmark's current state (queued, running, complete or failed), 0 for the others.",
		with(opsRunLabels, LabelState)...)
)

// StateQueued is an operations benchmark's state before it starts: it
// waits for its turn (at most so many run at once, one per class).
const StateQueued = "queued"

// operationsStates are an operations benchmark's states, in the order
// they are exported.
var operationsStates = []string{StateQueued, StateRunning, StateComplete, StateFailed}

// operationsDescs are the descriptors of the operations benchmarks' series.
var operationsDescs = []*prometheus.Desc{descOpsLatency, descOpsRate, descOpsOutcomes, descOpsPerOperation, descOpsKnee, descOpsObjective, descOpsState}

// collectOperations exports a VolumeOperationsBenchmark's curves,
// verdicts and state, from its status.
func collectOperations(ch chan<- prometheus.Metric, b *v1alpha1.VolumeOperationsBenchmark) {
	rl := []string{b.Namespace, b.Name, b.Spec.Storage.StorageClassName}
	state := StateRunning
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady); c != nil && b.Status.CompletionTime != nil {
		state = StateFailed
		if c.Status == "True" {
			state = StateComplete
		}
	} else if b.Status.StartTime == nil && b.Status.CompletionTime == nil {
		state = StateQueued
	}
	for _, s := range operationsStates {
		gauge(ch, descOpsState, bool01(s == state), with(rl, s)...)
	}
	for _, o := range b.Status.Objectives {
		gauge(ch, descOpsObjective, bool01(o.Verdict == "Met"), with(rl, o.Name)...)
	}
	for _, c := range b.Status.Operations {
		ol := with(rl, string(c.Operation))
		if c.PerOperation != nil {
			gauge(ch, descOpsPerOperation, c.PerOperation.Value.Seconds(), ol...)
		}
		if c.KneeConcurrency != nil {
			gauge(ch, descOpsKnee, float64(*c.KneeConcurrency), ol...)
		}
		for _, s := range c.Steps {
			sl := with(ol, strconv.Itoa(int(s.Concurrency)))
			for _, o := range []struct {
				name string
				n    int32
			}{{"succeeded", s.Succeeded}, {"failed", s.Failed}, {"timedOut", s.TimedOut}} {
				gauge(ch, descOpsOutcomes, float64(o.n), with(sl, o.name)...)
			}
			l := s.Latency
			if l == nil {
				continue
			}
			for _, p := range []struct {
				name string
				d    time.Duration
			}{{"min", l.Min.Duration}, {"mean", l.Mean.Duration}, {"p50", l.P50.Duration}, {"p90", l.P90.Duration},
				{"p99", l.P99.Duration}, {"max", l.Max.Duration}} {
				gauge(ch, descOpsLatency, p.d.Seconds(), with(sl, p.name)...)
			}
			if s.Span.Duration > 0 {
				gauge(ch, descOpsRate, float64(s.Succeeded)/s.Span.Minutes(), sl...)
			}
		}
	}
}
