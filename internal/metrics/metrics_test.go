package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

func lat(us int64) v1alpha1.LatencyStatus {
	u := time.Duration(us) * time.Microsecond
	return v1alpha1.LatencyStatus{Mean: dur(u), P50: dur(u), P90: dur(2 * u), P99: dur(4 * u), P999: dur(8 * u), Max: dur(16 * u)}
}

func cond(typ string, status bool) metav1.Condition {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: "X", LastTransitionTime: metav1.Time{Time: t0}}
}

func ptr[T any](v T) *T { return &v }

// extended is complete() run with load.extendUntilSteady, its first step
// superseded by the second.
func extended() *v1alpha1.StorageBenchmark {
	b := complete()
	b.Spec.Load.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 2}
	b.Status.Steps[0].Superseded = true
	return b
}

// scheduled is a schedule whose runs are: nightly-1 failed, nightly-2
// completed, nightly-3 running; suspended unset, no next time.
func scheduled() *v1alpha1.StorageBenchmarkSchedule {
	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly"}}
	at := func(h int) metav1.Time { return metav1.Time{Time: t0.Add(time.Duration(h) * time.Hour)} }
	row := func(k int, st v1alpha1.RunState) v1alpha1.ScheduledRun {
		return v1alpha1.ScheduledRun{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "nightly-" + string(rune('0'+k)), ScheduledTime: at(k)}, State: st}
	}
	s.Status.LastScheduleTime = ptr(at(3))
	s.Status.LastSuccessfulTime = ptr(metav1.Time{Time: t0.Add(2*time.Hour + 10*time.Minute)})
	s.Status.History = []v1alpha1.ScheduledRun{row(3, v1alpha1.RunRunning), row(2, v1alpha1.RunComplete), row(1, v1alpha1.RunFailed)}
	return s
}

// complete is a finished two-step run with reads and writes, one met and
// one unmet objective.
func complete() *v1alpha1.StorageBenchmark {
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}
	b.Spec.Storage.StorageClassName = ptr("spec-class")
	b.Spec.Workload.Profile = "oltp"
	l := lat(500)
	b.Status = v1alpha1.StorageBenchmarkStatus{
		Conditions:     []metav1.Condition{cond(v1alpha1.ConditionComplete, true), cond(v1alpha1.ConditionFailed, false)},
		StartTime:      &metav1.Time{Time: t0},
		CompletionTime: &metav1.Time{Time: t0.Add(90 * time.Second)},
		Storage:        &v1alpha1.StorageStatus{StorageClassName: "fast"},
		Steps: []v1alpha1.StepStatus{
			{Index: 0, AchievedIOPS: 1000, AchievedBytesPerSecond: 4096000, Latency: &l,
				Read:  &v1alpha1.OperationStatus{IOPS: 700, BytesPerSecond: 2867200, Latency: lat(400)},
				Write: &v1alpha1.OperationStatus{IOPS: 300, BytesPerSecond: 1228800, Latency: lat(1000)}},
			{Index: 1, OfferedIOPS: 2000, AchievedIOPS: 1500, AchievedBytesPerSecond: 6144000, Saturated: true, Knee: true},
		},
		Summary: &v1alpha1.SummaryStatus{PeakIOPS: 1500, PeakBytesPerSecond: 6144000, LatencyTarget: ptr(dur(time.Millisecond)),
			AtTarget: &v1alpha1.AtTargetStatus{Step: 0, IOPS: 1000, BytesPerSecond: 4096000, Latency: dur(time.Millisecond)}},
		SLOs: []v1alpha1.SLOStatus{{Name: "p99", Verdict: "Met"}, {Name: "peak", Verdict: "NotMet"}},
	}
	return b
}

func reader(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

const header = `# HELP storagebench_collector_errors 1 when the last scrape could not list StorageBenchmarks or StorageBenchmarkSchedules, else 0.
# TYPE storagebench_collector_errors gauge
`

func TestCollector(t *testing.T) {
	running := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}}
	running.Status.StartTime = &metav1.Time{Time: t0}
	failed := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "bad"}}
	failed.Spec.Workload.Profile = "seq-read"
	failed.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionFailed, true)}
	failed.Status.CompletionTime = &metav1.Time{Time: t0}

	for _, tc := range []struct {
		name  string
		objs  []client.Object
		names []string
		want  string
	}{
		{name: "none", names: []string{"storagebench_collector_errors", "storagebench_run_state"},
			want: header + "storagebench_collector_errors 0\n"},
		{name: "running", objs: []client.Object{running},
			names: []string{"storagebench_run_state", "storagebench_run_duration_seconds", "storagebench_run_completion_timestamp_seconds", "storagebench_peak_iops"},
			want: `
# HELP storagebench_run_duration_seconds Seconds from the first step's start to the run's end, or to now while it runs.
# TYPE storagebench_run_duration_seconds gauge
storagebench_run_duration_seconds{benchmark="new",namespace="ns",profile="",storage_class=""} 60
# HELP storagebench_run_state 1 for the run's current state (running, complete or failed), 0 for the others.
# TYPE storagebench_run_state gauge
storagebench_run_state{benchmark="new",namespace="ns",profile="",state="complete",storage_class=""} 0
storagebench_run_state{benchmark="new",namespace="ns",profile="",state="failed",storage_class=""} 0
storagebench_run_state{benchmark="new",namespace="ns",profile="",state="running",storage_class=""} 1
`},
		{name: "failed", objs: []client.Object{failed},
			names: []string{"storagebench_run_state", "storagebench_run_completion_timestamp_seconds", "storagebench_run_duration_seconds"},
			want: `
# HELP storagebench_run_completion_timestamp_seconds Unix time the run ended (complete or failed); absent while it runs.
# TYPE storagebench_run_completion_timestamp_seconds gauge
storagebench_run_completion_timestamp_seconds{benchmark="bad",namespace="other",profile="seq-read",storage_class=""} 1.767323045e+09
# HELP storagebench_run_state 1 for the run's current state (running, complete or failed), 0 for the others.
# TYPE storagebench_run_state gauge
storagebench_run_state{benchmark="bad",namespace="other",profile="seq-read",state="complete",storage_class=""} 0
storagebench_run_state{benchmark="bad",namespace="other",profile="seq-read",state="failed",storage_class=""} 1
storagebench_run_state{benchmark="bad",namespace="other",profile="seq-read",state="running",storage_class=""} 0
`},
		{name: "complete summary", objs: []client.Object{complete()},
			names: []string{"storagebench_peak_iops", "storagebench_peak_bytes_per_second", "storagebench_performance_at_target_iops",
				"storagebench_performance_at_target_bytes_per_second", "storagebench_latency_target_seconds", "storagebench_slo_objective_met",
				"storagebench_run_duration_seconds", "storagebench_run_start_timestamp_seconds", "storagebench_run_steps"},
			want: `
# HELP storagebench_latency_target_seconds The latency target performance at target is judged on.
# TYPE storagebench_latency_target_seconds gauge
storagebench_latency_target_seconds{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 0.001
# HELP storagebench_peak_bytes_per_second Highest achieved bytes per second of a successful step of the run.
# TYPE storagebench_peak_bytes_per_second gauge
storagebench_peak_bytes_per_second{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 6.144e+06
# HELP storagebench_peak_iops Highest achieved IOPS of a successful step of the run.
# TYPE storagebench_peak_iops gauge
storagebench_peak_iops{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 1500
# HELP storagebench_performance_at_target_bytes_per_second Bytes per second of the step giving the performance at the latency target (absent when no step is).
# TYPE storagebench_performance_at_target_bytes_per_second gauge
storagebench_performance_at_target_bytes_per_second{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 4.096e+06
# HELP storagebench_performance_at_target_iops Highest achieved IOPS whose latency is at or below the latency target (absent when no step is).
# TYPE storagebench_performance_at_target_iops gauge
storagebench_performance_at_target_iops{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 1000
# HELP storagebench_run_duration_seconds Seconds from the first step's start to the run's end, or to now while it runs.
# TYPE storagebench_run_duration_seconds gauge
storagebench_run_duration_seconds{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 90
# HELP storagebench_run_start_timestamp_seconds Unix time the run's first step started.
# TYPE storagebench_run_start_timestamp_seconds gauge
storagebench_run_start_timestamp_seconds{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 1.767323045e+09
# HELP storagebench_run_steps Number of finished steps of the run.
# TYPE storagebench_run_steps gauge
storagebench_run_steps{benchmark="db",namespace="ns",profile="oltp",storage_class="fast"} 2
# HELP storagebench_slo_objective_met 1 when the SLO objective was met, else 0; the verdict label is Met, NotMet or NotMeasurable.
# TYPE storagebench_slo_objective_met gauge
storagebench_slo_objective_met{benchmark="db",namespace="ns",objective="p99",profile="oltp",storage_class="fast",verdict="Met"} 1
storagebench_slo_objective_met{benchmark="db",namespace="ns",objective="peak",profile="oltp",storage_class="fast",verdict="NotMet"} 0
`},
		{name: "complete steps", objs: []client.Object{complete()},
			names: []string{"storagebench_step_achieved_iops", "storagebench_step_offered_iops", "storagebench_step_offered_bytes_per_second",
				"storagebench_step_saturated", "storagebench_step_knee"},
			want: `
# HELP storagebench_step_achieved_iops Achieved I/O operations per second of a finished step, summed over clients, per operation (read, write, total; sync: fsync or fdatasync calls per second).
# TYPE storagebench_step_achieved_iops gauge
storagebench_step_achieved_iops{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 1000
storagebench_step_achieved_iops{benchmark="db",namespace="ns",operation="total",profile="oltp",step="1",storage_class="fast"} 1500
storagebench_step_achieved_iops{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 700
storagebench_step_achieved_iops{benchmark="db",namespace="ns",operation="write",profile="oltp",step="0",storage_class="fast"} 300
# HELP storagebench_step_knee 1 for the step at the knee of the ops-latency curve, else 0.
# TYPE storagebench_step_knee gauge
storagebench_step_knee{benchmark="db",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0
storagebench_step_knee{benchmark="db",namespace="ns",profile="oltp",step="1",storage_class="fast"} 1
# HELP storagebench_step_offered_iops Offered I/O operations per second of a rate-limited step (absent when the step offered no IOPS rate).
# TYPE storagebench_step_offered_iops gauge
storagebench_step_offered_iops{benchmark="db",namespace="ns",profile="oltp",step="1",storage_class="fast"} 2000
# HELP storagebench_step_saturated 1 when a throttled step achieved less than the saturation percentage of its offered load, else 0.
# TYPE storagebench_step_saturated gauge
storagebench_step_saturated{benchmark="db",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0
storagebench_step_saturated{benchmark="db",namespace="ns",profile="oltp",step="1",storage_class="fast"} 1
`},
		{name: "superseded runs of a load extended until steady", objs: []client.Object{extended()},
			names: []string{"storagebench_step_superseded"},
			want: `
# HELP storagebench_step_superseded 1 for a run that was not steady and was run again (load.extendUntilSteady): its rerun stands for the planned step; else 0. Absent when the load does not extend unsteady steps.
# TYPE storagebench_step_superseded gauge
storagebench_step_superseded{benchmark="db",namespace="ns",profile="oltp",step="0",storage_class="fast"} 1
storagebench_step_superseded{benchmark="db",namespace="ns",profile="oltp",step="1",storage_class="fast"} 0
`},
		{name: "no superseded series without extendUntilSteady", objs: []client.Object{complete()},
			names: []string{"storagebench_step_superseded"}, want: ``},
		{name: "a schedule: its times, and its runs older than the newest completed one", objs: []client.Object{scheduled()},
			names: []string{"storagebench_schedule_last_schedule_timestamp_seconds", "storagebench_schedule_last_success_timestamp_seconds",
				"storagebench_schedule_next_run_timestamp_seconds", "storagebench_schedule_suspended", "storagebench_schedule_run_outdated"},
			want: `
# HELP storagebench_schedule_last_schedule_timestamp_seconds Unix time of the last scheduled time a StorageBenchmarkSchedule created a run for (absent before its first).
# TYPE storagebench_schedule_last_schedule_timestamp_seconds gauge
storagebench_schedule_last_schedule_timestamp_seconds{namespace="ns",schedule="nightly"} 1.767333845e+09
# HELP storagebench_schedule_last_success_timestamp_seconds Unix time the schedule's newest kept completed run completed (absent before one).
# TYPE storagebench_schedule_last_success_timestamp_seconds gauge
storagebench_schedule_last_success_timestamp_seconds{namespace="ns",schedule="nightly"} 1.767330845e+09
# HELP storagebench_schedule_run_outdated 1 for a kept run of a schedule older than its newest completed run, else 0 (every kept run has the series): alerts on a schedule's runs look at the newest only.
# TYPE storagebench_schedule_run_outdated gauge
storagebench_schedule_run_outdated{benchmark="nightly-3",namespace="ns",schedule="nightly"} 0
storagebench_schedule_run_outdated{benchmark="nightly-2",namespace="ns",schedule="nightly"} 0
storagebench_schedule_run_outdated{benchmark="nightly-1",namespace="ns",schedule="nightly"} 1
# HELP storagebench_schedule_suspended 1 while the schedule is suspended, else 0.
# TYPE storagebench_schedule_suspended gauge
storagebench_schedule_suspended{namespace="ns",schedule="nightly"} 0
`},
		{name: "a run compared with its baseline, and its schedule's newest completed run", objs: []client.Object{regressed(), regressedSchedule()},
			names: []string{"storagebench_regressed", "storagebench_step_regression_change_ratio", "storagebench_step_regression_p_value",
				"storagebench_schedule_regressed"},
			want: `
# HELP storagebench_regressed 1 when a step's metric (iops or p99) regressed against the run's baseline (spec.regression), 0 when the run was compared and it did not; absent when the run was not compared.
# TYPE storagebench_regressed gauge
storagebench_regressed{benchmark="db",metric="iops",namespace="ns",profile="oltp",storage_class="fast"} 1
storagebench_regressed{benchmark="db",metric="p99",namespace="ns",profile="oltp",storage_class="fast"} 0
# HELP storagebench_schedule_regressed 1 when the schedule's newest completed run regressed in the metric (iops or p99) against its baseline, 0 when it was compared and did not; absent when it was not compared.
# TYPE storagebench_schedule_regressed gauge
storagebench_schedule_regressed{metric="iops",namespace="ns",schedule="nightly"} 0
storagebench_schedule_regressed{metric="p99",namespace="ns",schedule="nightly"} 1
# HELP storagebench_step_regression_change_ratio Change of a step's median per-second metric (iops or p99) from the baseline's, as a signed ratio (-0.25: a quarter lower); only for judged tests.
# TYPE storagebench_step_regression_change_ratio gauge
storagebench_step_regression_change_ratio{benchmark="db",metric="iops",namespace="ns",profile="oltp",step="0",storage_class="fast"} -0.01
storagebench_step_regression_change_ratio{benchmark="db",metric="iops",namespace="ns",profile="oltp",step="1",storage_class="fast"} -0.25
storagebench_step_regression_change_ratio{benchmark="db",metric="p99",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0.1
# HELP storagebench_step_regression_p_value Holm-adjusted one-sided p-value of a step's regression test (iops or p99); only for judged tests.
# TYPE storagebench_step_regression_p_value gauge
storagebench_step_regression_p_value{benchmark="db",metric="iops",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0.9
storagebench_step_regression_p_value{benchmark="db",metric="iops",namespace="ns",profile="oltp",step="1",storage_class="fast"} 4e-06
storagebench_step_regression_p_value{benchmark="db",metric="p99",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0.5
`},
		{name: "a run that verifies, and one that does not", objs: []client.Object{verified(), complete()},
			names: []string{"storagebench_verification_bad_blocks", "storagebench_verification_blocks_verified"},
			want: `
# HELP storagebench_verification_bad_blocks Blocks the run's read-backs found not as written (spec.verify), the steps' and, after a lost client, the verifier's; the DataIntegrity condition says which. Absent when the run does not verify or before its first read-back.
# TYPE storagebench_verification_bad_blocks gauge
storagebench_verification_bad_blocks{benchmark="takeover",namespace="ns",profile="",storage_class="fast"} 5
# HELP storagebench_verification_blocks_verified Blocks the run's read-backs read and compared, summed over its steps and a verifier's after a lost client; absent when the run does not verify or before its first read-back.
# TYPE storagebench_verification_blocks_verified gauge
storagebench_verification_blocks_verified{benchmark="takeover",namespace="ns",profile="",storage_class="fast"} 10000
`},
		{name: "no regression series without a comparison", objs: []client.Object{complete(), scheduled()},
			names: []string{"storagebench_regressed", "storagebench_step_regression_change_ratio", "storagebench_schedule_regressed"}, want: ``},
		{name: "complete latency", objs: []client.Object{complete()},
			names: []string{"storagebench_step_latency_seconds", "storagebench_step_latency_mean_seconds", "storagebench_step_achieved_bytes_per_second"},
			want: `
# HELP storagebench_step_achieved_bytes_per_second Achieved bytes per second of a finished step, summed over clients, per operation (read, write, total).
# TYPE storagebench_step_achieved_bytes_per_second gauge
storagebench_step_achieved_bytes_per_second{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 4.096e+06
storagebench_step_achieved_bytes_per_second{benchmark="db",namespace="ns",operation="total",profile="oltp",step="1",storage_class="fast"} 6.144e+06
storagebench_step_achieved_bytes_per_second{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 2.8672e+06
storagebench_step_achieved_bytes_per_second{benchmark="db",namespace="ns",operation="write",profile="oltp",step="0",storage_class="fast"} 1.2288e+06
# HELP storagebench_step_latency_mean_seconds Mean completion latency of a finished step, per operation (read, write, total, sync).
# TYPE storagebench_step_latency_mean_seconds gauge
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 0.0005
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 0.0004
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="write",profile="oltp",step="0",storage_class="fast"} 0.001
# HELP storagebench_step_latency_seconds Completion latency percentile (50, 90, 99, 99.9) of a finished step's merged fio histogram, per operation (read, write, total, and sync: each fsync or fdatasync call's time).
# TYPE storagebench_step_latency_seconds gauge
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="total",percentile="50",profile="oltp",step="0",storage_class="fast"} 0.0005
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="total",percentile="90",profile="oltp",step="0",storage_class="fast"} 0.001
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="total",percentile="99",profile="oltp",step="0",storage_class="fast"} 0.002
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="total",percentile="99.9",profile="oltp",step="0",storage_class="fast"} 0.004
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="read",percentile="50",profile="oltp",step="0",storage_class="fast"} 0.0004
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="read",percentile="90",profile="oltp",step="0",storage_class="fast"} 0.0008
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="read",percentile="99",profile="oltp",step="0",storage_class="fast"} 0.0016
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="read",percentile="99.9",profile="oltp",step="0",storage_class="fast"} 0.0032
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="write",percentile="50",profile="oltp",step="0",storage_class="fast"} 0.001
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="write",percentile="90",profile="oltp",step="0",storage_class="fast"} 0.002
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="write",percentile="99",profile="oltp",step="0",storage_class="fast"} 0.004
storagebench_step_latency_seconds{benchmark="db",namespace="ns",operation="write",percentile="99.9",profile="oltp",step="0",storage_class="fast"} 0.008
`},
		{name: "a log's sync calls: their latency", objs: []client.Object{func() client.Object {
			b := complete()
			b.Status.Steps[0].Sync = &v1alpha1.OperationStatus{IOPS: 300, IOs: 3000, Latency: lat(3000)}
			return b
		}()},
			names: []string{"storagebench_step_latency_mean_seconds"},
			want: `
# HELP storagebench_step_latency_mean_seconds Mean completion latency of a finished step, per operation (read, write, total, sync).
# TYPE storagebench_step_latency_mean_seconds gauge
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 0.0005
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 0.0004
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="write",profile="oltp",step="0",storage_class="fast"} 0.001
storagebench_step_latency_mean_seconds{benchmark="db",namespace="ns",operation="sync",profile="oltp",step="0",storage_class="fast"} 0.003
`},
		{name: "the storage's own figures, once joined; none for a step too short", objs: []client.Object{func() client.Object {
			b := complete()
			b.Status.Steps[0].Backend = &v1alpha1.StepBackendStatus{Resolution: dur(time.Second), Samples: 9, IOPS: 990, ReadIOPS: 690, WriteIOPS: 300,
				BytesPerSecond: 4055040, Latency: ptr(dur(300 * time.Microsecond)), ReadLatency: ptr(dur(250 * time.Microsecond)),
				LatencyGap: ptr(dur(200 * time.Microsecond))}
			b.Status.Steps[1].Backend = &v1alpha1.StepBackendStatus{Resolution: dur(time.Second), TooShort: true}
			return b
		}()},
			names: []string{"storagebench_step_backend_iops", "storagebench_step_backend_bytes_per_second", "storagebench_step_backend_latency_mean_seconds", "storagebench_step_backend_latency_gap_seconds"},
			want: `
# HELP storagebench_step_backend_bytes_per_second Bytes per second the storage itself reported over a finished step, reads and writes together; absent until joined.
# TYPE storagebench_step_backend_bytes_per_second gauge
storagebench_step_backend_bytes_per_second{benchmark="db",namespace="ns",profile="oltp",step="0",storage_class="fast"} 4.05504e+06
# HELP storagebench_step_backend_iops Operations per second the storage itself reported over a finished step (NetApp Harvest's volume series, summed over the benchmark's volumes), per operation (read, write, total); absent until the run ended and they were joined (docs/backend-metrics.md).
# TYPE storagebench_step_backend_iops gauge
storagebench_step_backend_iops{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 990
storagebench_step_backend_iops{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 690
storagebench_step_backend_iops{benchmark="db",namespace="ns",operation="write",profile="oltp",step="0",storage_class="fast"} 300
# HELP storagebench_step_backend_latency_gap_seconds The clients' mean latency over all I/O of a finished step minus the storage's: the time outside the storage; absent until joined.
# TYPE storagebench_step_backend_latency_gap_seconds gauge
storagebench_step_backend_latency_gap_seconds{benchmark="db",namespace="ns",profile="oltp",step="0",storage_class="fast"} 0.0002
# HELP storagebench_step_backend_latency_mean_seconds The storage's own mean latency per operation over a finished step, per operation (read, write, total); absent until joined, or without such operations.
# TYPE storagebench_step_backend_latency_mean_seconds gauge
storagebench_step_backend_latency_mean_seconds{benchmark="db",namespace="ns",operation="total",profile="oltp",step="0",storage_class="fast"} 0.0003
storagebench_step_backend_latency_mean_seconds{benchmark="db",namespace="ns",operation="read",profile="oltp",step="0",storage_class="fast"} 0.00025
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Collector{Reader: reader(t, tc.objs...), Now: func() time.Time { return t0.Add(time.Minute) }}
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCollectorLint checks names, units and help with client_golang's
// linter, and that collecting is consistent with Describe (pedantic).
func TestCollectorLint(t *testing.T) {
	c := &Collector{Reader: reader(t, complete()), Now: func() time.Time { return t0 }}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

type failing struct{ client.Reader }

func (failing) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("cache not synced")
}

func TestCollectorListError(t *testing.T) {
	c := &Collector{Reader: failing{}}
	if err := testutil.CollectAndCompare(c, strings.NewReader(header+"storagebench_collector_errors 1\n")); err != nil {
		t.Error(err)
	}
}

// TestDeletedBenchmarkDisappears checks the series follow the cache.
func TestDeletedBenchmarkDisappears(t *testing.T) {
	b := complete()
	r := reader(t, b)
	c := &Collector{Reader: r}
	if n := testutil.CollectAndCount(c, "storagebench_peak_iops"); n != 1 {
		t.Fatalf("%d peak series, want 1", n)
	}
	if err := r.(client.Client).Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c); n != 1 {
		t.Errorf("%d series after delete, want only storagebench_collector_errors", n)
	}
}

func TestRegisterReplaces(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		if err := Register(reg, &Collector{Reader: reader(t, complete())}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "storagebench_peak_iops"); err != nil || n != 1 {
		t.Errorf("%d peak series (%v), want 1 from the last collector", n, err)
	}
}

// regressed is complete() compared with a baseline: step 2's IOPS
// regressed, step 1's p99 did not, step 2's p99 was not judged.
func regressed() *v1alpha1.StorageBenchmark {
	b := complete()
	b.Status.Regression = &v1alpha1.RegressionStatus{Baseline: "StorageBenchmark/base", Tests: []v1alpha1.RegressionTestStatus{
		{Step: 0, Metric: "iops", Verdict: v1alpha1.RegressionNotRegressed, ChangePercent: "-1.0", PValue: "0.9"},
		{Step: 0, Metric: "p99", Verdict: v1alpha1.RegressionNotRegressed, ChangePercent: "10.0", PValue: "0.5"},
		{Step: 1, Metric: "iops", Verdict: v1alpha1.RegressionRegressed, ChangePercent: "-25.0", PValue: "4e-06"},
		{Step: 1, Metric: "p99", Verdict: v1alpha1.RegressionNotJudged},
	}}
	return b
}

// regressedSchedule is scheduled() whose newest completed run regressed
// in p99; an older completed run's verdict does not count.
func regressedSchedule() *v1alpha1.StorageBenchmarkSchedule {
	s := scheduled()
	s.Status.History[1].Regression, s.Status.History[1].RegressedMetrics = v1alpha1.RegressionReasonRegressed, []string{"p99"}
	older := s.Status.History[1]
	older.Name, older.ScheduledTime.Time = "nightly-0", older.ScheduledTime.Add(-48*time.Hour)
	older.RegressedMetrics = []string{"iops"}
	s.Status.History = append(s.Status.History, older)
	return s
}

// verified is a failed run whose read-backs found 5 bad blocks.
func verified() *v1alpha1.StorageBenchmark {
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "takeover"}}
	b.Status.Storage = &v1alpha1.StorageStatus{StorageClassName: "fast"}
	b.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionFailed, true)}
	b.Status.Verification = &v1alpha1.VerificationStatus{BlocksWritten: 5000, BlocksVerified: 9000, BadBlocks: 4}
	b.Status.VerificationAfterLoss = &v1alpha1.VerificationStatus{BlocksVerified: 1000, BadBlocks: 1}
	return b
}
