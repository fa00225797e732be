package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

func TestCollectOperations(t *testing.T) {
	d := func(v time.Duration) metav1.Duration { return metav1.Duration{Duration: v} }
	complete := &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ops"},
		Spec: v1alpha1.VolumeOperationsBenchmarkSpec{Storage: v1alpha1.OperationsStorage{StorageClassName: "csi"}}}
	complete.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, true)}
	complete.Status.CompletionTime = &metav1.Time{Time: t0}
	knee := int32(4)
	complete.Status.Operations = []v1alpha1.OperationCurveStatus{{
		Operation: v1alpha1.OperationProvision,
		Steps: []v1alpha1.OperationStepStatus{
			{Concurrency: 1, Succeeded: 1, Span: d(2 * time.Second), Latency: &v1alpha1.OperationLatencyStatus{
				Min: d(2 * time.Second), Mean: d(2 * time.Second), P50: d(2 * time.Second), P90: d(2 * time.Second), P99: d(2 * time.Second), Max: d(2 * time.Second)}},
			{Concurrency: 2, Succeeded: 1, TimedOut: 1, Span: d(30 * time.Second), Latency: &v1alpha1.OperationLatencyStatus{
				Min: d(time.Second), Mean: d(time.Second), P50: d(time.Second), P90: d(time.Second), P99: d(time.Second), Max: d(time.Second)}},
			{Concurrency: 4, Failed: 4, Span: d(time.Second)},
		},
		KneeConcurrency: &knee,
		PerOperation:    &v1alpha1.FittedDuration{Value: d(1500 * time.Millisecond), Low: d(time.Second), High: d(2 * time.Second), Steps: 2},
	}}
	complete.Status.Objectives = []v1alpha1.SLOStatus{{Name: "fast", Verdict: "Met"}, {Name: "faster", Verdict: "NotMet"}}
	running := &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"},
		Spec: v1alpha1.VolumeOperationsBenchmarkSpec{Storage: v1alpha1.OperationsStorage{StorageClassName: "csi"}}}
	queued := running.DeepCopy()
	queued.Name = "waits"
	running.Status.StartTime = &metav1.Time{Time: t0}
	failed := running.DeepCopy()
	failed.Name = "bad"
	failed.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, false)}
	failed.Status.CompletionTime = &metav1.Time{Time: t0}

	for _, tc := range []struct {
		name  string
		objs  []client.Object
		names []string
		want  string
	}{
		{name: "states", objs: []client.Object{running, failed, queued}, names: []string{"storagebench_volume_operations_run_state"}, want: `
# HELP storagebench_volume_operations_run_state 1 for a VolumeOperationsBenchmark's current state (queued, running, complete or failed), 0 for the others.
# TYPE storagebench_volume_operations_run_state gauge
storagebench_volume_operations_run_state{benchmark="bad",namespace="ns",state="complete",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="bad",namespace="ns",state="failed",storage_class="csi"} 1
storagebench_volume_operations_run_state{benchmark="bad",namespace="ns",state="queued",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="bad",namespace="ns",state="running",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="new",namespace="ns",state="complete",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="new",namespace="ns",state="failed",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="new",namespace="ns",state="queued",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="new",namespace="ns",state="running",storage_class="csi"} 1
storagebench_volume_operations_run_state{benchmark="waits",namespace="ns",state="complete",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="waits",namespace="ns",state="failed",storage_class="csi"} 0
storagebench_volume_operations_run_state{benchmark="waits",namespace="ns",state="queued",storage_class="csi"} 1
storagebench_volume_operations_run_state{benchmark="waits",namespace="ns",state="running",storage_class="csi"} 0
`},
		{name: "a curve: latency of the succeeded, outcomes, rate, fit, knee, verdicts", objs: []client.Object{complete},
			names: []string{"storagebench_volume_operation_latency_seconds", "storagebench_volume_operations", "storagebench_volume_operation_per_minute",
				"storagebench_volume_operation_serial_seconds", "storagebench_volume_operation_knee_concurrency", "storagebench_volume_operations_objective_met"},
			want: `
# HELP storagebench_volume_operation_knee_concurrency The concurrency at which the median latency of an operation bends upward; absent without a knee.
# TYPE storagebench_volume_operation_knee_concurrency gauge
storagebench_volume_operation_knee_concurrency{benchmark="ops",namespace="ns",operation="provision",storage_class="csi"} 4
# HELP storagebench_volume_operation_latency_seconds Latency of a VolumeOperationsBenchmark's operations at one concurrency, over the succeeded ones: percentile is min, mean, p50, p90, p99 or max (exact order statistics).
# TYPE storagebench_volume_operation_latency_seconds gauge
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="max",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="mean",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="min",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="p50",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="p90",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="1",namespace="ns",operation="provision",percentile="p99",storage_class="csi"} 2
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="max",storage_class="csi"} 1
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="mean",storage_class="csi"} 1
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="min",storage_class="csi"} 1
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="p50",storage_class="csi"} 1
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="p90",storage_class="csi"} 1
storagebench_volume_operation_latency_seconds{benchmark="ops",concurrency="2",namespace="ns",operation="provision",percentile="p99",storage_class="csi"} 1
# HELP storagebench_volume_operation_per_minute Operations a step completed per minute: succeeded over the step's span, from its first request to its last completion.
# TYPE storagebench_volume_operation_per_minute gauge
storagebench_volume_operation_per_minute{benchmark="ops",concurrency="1",namespace="ns",operation="provision",storage_class="csi"} 30
storagebench_volume_operation_per_minute{benchmark="ops",concurrency="2",namespace="ns",operation="provision",storage_class="csi"} 2
# HELP storagebench_volume_operation_serial_seconds The slope of each step's slowest operation against its concurrency (least squares): the time the path spends on one operation when it serves them one at a time; about 0 when it serves them in parallel.
# TYPE storagebench_volume_operation_serial_seconds gauge
storagebench_volume_operation_serial_seconds{benchmark="ops",namespace="ns",operation="provision",storage_class="csi"} 1.5
# HELP storagebench_volume_operations Operations of a step by outcome: succeeded, failed or timedOut.
# TYPE storagebench_volume_operations gauge
storagebench_volume_operations{benchmark="ops",concurrency="1",namespace="ns",operation="provision",outcome="failed",storage_class="csi"} 0
storagebench_volume_operations{benchmark="ops",concurrency="1",namespace="ns",operation="provision",outcome="succeeded",storage_class="csi"} 1
storagebench_volume_operations{benchmark="ops",concurrency="1",namespace="ns",operation="provision",outcome="timedOut",storage_class="csi"} 0
storagebench_volume_operations{benchmark="ops",concurrency="2",namespace="ns",operation="provision",outcome="failed",storage_class="csi"} 0
storagebench_volume_operations{benchmark="ops",concurrency="2",namespace="ns",operation="provision",outcome="succeeded",storage_class="csi"} 1
storagebench_volume_operations{benchmark="ops",concurrency="2",namespace="ns",operation="provision",outcome="timedOut",storage_class="csi"} 1
storagebench_volume_operations{benchmark="ops",concurrency="4",namespace="ns",operation="provision",outcome="failed",storage_class="csi"} 4
storagebench_volume_operations{benchmark="ops",concurrency="4",namespace="ns",operation="provision",outcome="succeeded",storage_class="csi"} 0
storagebench_volume_operations{benchmark="ops",concurrency="4",namespace="ns",operation="provision",outcome="timedOut",storage_class="csi"} 0
# HELP storagebench_volume_operations_objective_met 1 when a VolumeOperationsBenchmark's objective is met, 0 when not; absent until the run is complete.
# TYPE storagebench_volume_operations_objective_met gauge
storagebench_volume_operations_objective_met{benchmark="ops",namespace="ns",objective="fast",storage_class="csi"} 1
storagebench_volume_operations_objective_met{benchmark="ops",namespace="ns",objective="faster",storage_class="csi"} 0
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Collector{Reader: reader(t, tc.objs...), Now: func() time.Time { return t0 }}
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Error(err)
			}
		})
	}
}
