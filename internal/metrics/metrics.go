// Package metrics exports StorageBenchmarks, StorageBenchmarkSchedules and
// VolumeOperationsBenchmarks as Prometheus metrics. The Collector reads them from the manager's cache
// at scrape time, so a deleted object's series disappear with it; the run
// counters count the reconciler's transitions. docs/metrics.md lists every
// series.
package metrics

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Namespace prefixes every series.
const Namespace = "storagebench"

// Label names.
const (
	LabelNamespace    = "namespace"
	LabelBenchmark    = "benchmark"
	LabelStorageClass = "storage_class"
	LabelProfile      = "profile"
	LabelStep         = "step"
	LabelOperation    = "operation"
	LabelPercentile   = "percentile"
	LabelObjective    = "objective"
	LabelVerdict      = "verdict"
	LabelState        = "state"
	LabelReason       = "reason"
	LabelSchedule     = "schedule"
	LabelMetric       = "metric"
)

// Operations: reads, writes, and all I/O of a step pooled ("total", as in
// the API's latency selector).
const (
	OperationRead  = "read"
	OperationWrite = "write"
	OperationTotal = "total"
	// OperationSync is the fsync or fdatasync calls of a workload that
	// makes them: a rate and a latency, no bytes.
	OperationSync = "sync"
)

// Run states (storagebench_run_state is one-hot over them).
const (
	StateRunning  = "running"
	StateComplete = "complete"
	StateFailed   = "failed"
)

// States lists the run states in the order they are exported.
var States = []string{StateRunning, StateComplete, StateFailed}

var (
	benchLabels = []string{LabelNamespace, LabelBenchmark, LabelStorageClass, LabelProfile}
	stepLabels  = append(append([]string{}, benchLabels...), LabelStep)
	opLabels    = append(append([]string{}, stepLabels...), LabelOperation)

	scheduleLabels = []string{LabelNamespace, LabelSchedule}
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

func with(base []string, more ...string) []string {
	return append(append([]string{}, base...), more...)
}

// Descriptors of the collector's series.
var (
	descStepIOPS = desc("step_achieved_iops",
		"Achieved I/O operations per second of a finished step, summed over clients, per operation (read, write, total; sync: fsync or fdatasync calls per second).", opLabels...)
	descStepBytes = desc("step_achieved_bytes_per_second",
		"Achieved bytes per second of a finished step, summed over clients, per operation (read, write, total).", opLabels...)
	descStepLatency = desc("step_latency_seconds",
		"Completion latency percentile (50, 90, 99, 99.9) of a finished step's merged fio histogram, per operation (read, write, total, and sync: each fsync or fdatasync call's time).", with(opLabels, LabelPercentile)...)
	descStepLatencyMean = desc("step_latency_mean_seconds",
		"Mean completion latency of a finished step, per operation (read, write, total, sync).", opLabels...)
	descStepOfferedIOPS = desc("step_offered_iops",
		"Offered I/O operations per second of a rate-limited step (absent when the step offered no IOPS rate).", stepLabels...)
	descStepOfferedBytes = desc("step_offered_bytes_per_second",
		"Offered bytes per second of a bandwidth-limited step (absent when the step offered no bandwidth).", stepLabels...)
	descStepSaturated = desc("step_saturated",
		"1 when a throttled step achieved less than the saturation percentage of its offered load, else 0.", stepLabels...)
	descStepKnee = desc("step_knee",
		"1 for the step at the knee of the ops-latency curve, else 0.", stepLabels...)
	descStepBackendIOPS = desc("step_backend_iops",
		"Operations per second the storage itself reported over a finished step (NetApp Harvest's volume series, summed over the benchmark's volumes), per operation (read, write, total); absent until the run ended and they were joined (docs/backend-metrics.md).", opLabels...)
	descStepBackendBytes = desc("step_backend_bytes_per_second",
		"Bytes per second the storage itself reported over a finished step, reads and writes together; absent until joined.", stepLabels...)
	descStepBackendLatency = desc("step_backend_latency_mean_seconds",
		"The storage's own mean latency per operation over a finished step, per operation (read, write, total); absent until joined, or without such operations.", opLabels...)
	descStepBackendGap = desc("step_backend_latency_gap_seconds",
		"The clients' mean latency over all I/O of a finished step minus the storage's: the time outside the storage; absent until joined.", stepLabels...)
	descStepSuperseded = desc("step_superseded",
		"1 for a run that was not steady and was run again (load.extendUntilSteady): its rerun stands for the planned step; else 0. Absent when the load does not extend unsteady steps.", stepLabels...)

	descPeakIOPS = desc("peak_iops",
		"Highest achieved IOPS of a successful step of the run.", benchLabels...)
	descPeakBytes = desc("peak_bytes_per_second",
		"Highest achieved bytes per second of a successful step of the run.", benchLabels...)
	descAtTargetIOPS = desc("performance_at_target_iops",
		"Highest achieved IOPS whose latency is at or below the latency target (absent when no step is).", benchLabels...)
	descAtTargetBytes = desc("performance_at_target_bytes_per_second",
		"Bytes per second of the step giving the performance at the latency target (absent when no step is).", benchLabels...)
	descLatencyTarget = desc("latency_target_seconds",
		"The latency target performance at target is judged on.", benchLabels...)
	descSLO = desc("slo_objective_met",
		"1 when the SLO objective was met, else 0; the verdict label is Met, NotMet or NotMeasurable.", with(benchLabels, LabelObjective, LabelVerdict)...)
	descState = desc("run_state",
		"1 for the run's current state (running, complete or failed), 0 for the others.", with(benchLabels, LabelState)...)
	descStart = desc("run_start_timestamp_seconds",
		"Unix time the run's first step started.", benchLabels...)
	descCompletion = desc("run_completion_timestamp_seconds",
		"Unix time the run ended (complete or failed); absent while it runs.", benchLabels...)
	descDuration = desc("run_duration_seconds",
		"Seconds from the first step's start to the run's end, or to now while it runs.", benchLabels...)
	descSteps = desc("run_steps",
		"Number of finished steps of the run.", benchLabels...)
	descRegressed = desc("regressed",
		"1 when a step's metric (iops or p99) regressed against the run's baseline (spec.regression), 0 when the run was compared and it did not; absent when the run was not compared.", with(benchLabels, LabelMetric)...)
	descStepRegressionChange = desc("step_regression_change_ratio",
		"Change of a step's median per-second metric (iops or p99) from the baseline's, as a signed ratio (-0.25: a quarter lower); only for judged tests.", with(stepLabels, LabelMetric)...)
	descStepRegressionP = desc("step_regression_p_value",
		"Holm-adjusted one-sided p-value of a step's regression test (iops or p99); only for judged tests.", with(stepLabels, LabelMetric)...)
	descVerifyBad = desc("verification_bad_blocks",
		"Blocks the run's read-backs found not as written (spec.verify), the steps' and, after a lost client, the verifier's; the DataIntegrity condition says which. Absent when the run does not verify or before its first read-back.", benchLabels...)
	descVerifyBlocks = desc("verification_blocks_verified",
		"Blocks the run's read-backs read and compared, summed over its steps and a verifier's after a lost client; absent when the run does not verify or before its first read-back.", benchLabels...)
	descScrapeErrors = desc("collector_errors",
		"1 when the last scrape could not list StorageBenchmarks or StorageBenchmarkSchedules, else 0.")

	descScheduleLast = desc("schedule_last_schedule_timestamp_seconds",
		"Unix time of the last scheduled time a StorageBenchmarkSchedule created a run for (absent before its first).", scheduleLabels...)
	descScheduleSuccess = desc("schedule_last_success_timestamp_seconds",
		"Unix time the schedule's newest kept completed run completed (absent before one).", scheduleLabels...)
	descScheduleNext = desc("schedule_next_run_timestamp_seconds",
		"Unix time of the schedule's next scheduled time (absent while suspended or invalid).", scheduleLabels...)
	descSchedulePending = desc("schedule_pending_timestamp_seconds",
		"Unix time of a scheduled time that is due but has no run yet (the last run still going with Forbid, a refused run); absent when nothing waits.", scheduleLabels...)
	descScheduleSuspended = desc("schedule_suspended",
		"1 while the schedule is suspended, else 0.", scheduleLabels...)
	descScheduleRegressed = desc("schedule_regressed",
		"1 when the schedule's newest completed run regressed in the metric (iops or p99) against its baseline, 0 when it was compared and did not; absent when it was not compared.", with(scheduleLabels, LabelMetric)...)
	descScheduleRunOutdated = desc("schedule_run_outdated",
		"1 for a kept run of a schedule older than its newest completed run, else 0 (every kept run has the series): alerts on a schedule's runs look at the newest only.", with([]string{LabelNamespace, LabelBenchmark}, LabelSchedule)...)
)

// collectorDescs are the Collector's descriptors.
var collectorDescs = append([]*prometheus.Desc{
	descStepIOPS, descStepBytes, descStepLatency, descStepLatencyMean, descStepOfferedIOPS,
	descStepOfferedBytes, descStepSaturated, descStepKnee, descStepSuperseded,
	descStepBackendIOPS, descStepBackendBytes, descStepBackendLatency, descStepBackendGap, descPeakIOPS, descPeakBytes,
	descAtTargetIOPS, descAtTargetBytes, descLatencyTarget, descSLO, descRegressed, descStepRegressionChange, descStepRegressionP,
	descState, descStart, descVerifyBad, descVerifyBlocks,
	descCompletion, descDuration, descSteps, descScrapeErrors,
	descScheduleLast, descScheduleSuccess, descScheduleNext, descSchedulePending, descScheduleSuspended, descScheduleRegressed,
	descScheduleRunOutdated,
}, operationsDescs...)

// Descs returns every descriptor the collector and the counters export (for
// documentation tests).
func Descs() []*prometheus.Desc {
	out := append([]*prometheus.Desc{}, collectorDescs...)
	ch := make(chan *prometheus.Desc, 16)
	go func() {
		for _, c := range counters() {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		out = append(out, d)
	}
	return out
}

// Collector exports the StorageBenchmarks a reader lists.
type Collector struct {
	// Reader lists the benchmarks (the manager's cache).
	Reader client.Reader
	// Now is the clock (tests may override).
	Now func() time.Time
	// Timeout bounds a scrape's List (default 10 s).
	Timeout time.Duration
}

var _ prometheus.Collector = (*Collector)(nil)

// Describe sends the collector's descriptors.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range collectorDescs {
		ch <- d
	}
}

// Collect lists the benchmarks and sends their series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var list v1alpha1.StorageBenchmarkList
	var schedules v1alpha1.StorageBenchmarkScheduleList
	if err := c.Reader.List(ctx, &list); err != nil {
		ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, 1)
		return
	}
	if err := c.Reader.List(ctx, &schedules); err != nil {
		ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, 1)
		return
	}
	var operations v1alpha1.VolumeOperationsBenchmarkList
	if err := c.Reader.List(ctx, &operations); err != nil {
		ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, 0)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	for i := range list.Items {
		collectBenchmark(ch, &list.Items[i], now())
	}
	for i := range schedules.Items {
		collectSchedule(ch, &schedules.Items[i])
	}
	for i := range operations.Items {
		collectOperations(ch, &operations.Items[i])
	}
}

// collectSchedule exports a schedule's times and marks its kept runs
// older than its newest completed run, from its status.
func collectSchedule(ch chan<- prometheus.Metric, s *v1alpha1.StorageBenchmarkSchedule) {
	sl := []string{s.Namespace, s.Name}
	st := &s.Status
	for _, t := range []struct {
		d  *prometheus.Desc
		at *metav1.Time
	}{{descScheduleLast, st.LastScheduleTime}, {descScheduleSuccess, st.LastSuccessfulTime}, {descScheduleNext, st.NextScheduleTime},
		{descSchedulePending, st.PendingScheduleTime}} {
		if t.at != nil {
			gauge(ch, t.d, unix(t.at.Time), sl...)
		}
	}
	gauge(ch, descScheduleSuspended, bool01(s.Spec.Suspend != nil && *s.Spec.Suspend), sl...)
	var newest time.Time
	var latest *v1alpha1.ScheduledRun
	for i, h := range st.History {
		if h.State == v1alpha1.RunComplete && h.ScheduledTime.After(newest) {
			newest, latest = h.ScheduledTime.Time, &st.History[i]
		}
	}
	if latest != nil && (latest.Regression == v1alpha1.RegressionReasonRegressed || latest.Regression == v1alpha1.RegressionReasonNotRegressed) {
		for _, m := range v1alpha1.RegressionMetrics {
			gauge(ch, descScheduleRegressed, bool01(slices.Contains(latest.RegressedMetrics, m)), with(sl, m)...)
		}
	}
	for _, h := range st.History {
		gauge(ch, descScheduleRunOutdated, bool01(h.ScheduledTime.Time.Before(newest)), s.Namespace, h.Name, s.Name)
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// State is a benchmark's run state (v1alpha1.RunStateOf) as the
// storagebench_run_state label spells it.
func State(b *v1alpha1.StorageBenchmark) string {
	switch v1alpha1.RunStateOf(b) {
	case v1alpha1.RunFailed:
		return StateFailed
	case v1alpha1.RunComplete:
		return StateComplete
	default:
		return StateRunning
	}
}

func storageClass(b *v1alpha1.StorageBenchmark) string {
	if s := b.Status.Storage; s != nil && s.StorageClassName != "" {
		return s.StorageClassName
	}
	if p := b.Spec.Storage.StorageClassName; p != nil {
		return *p
	}
	return ""
}

func collectBenchmark(ch chan<- prometheus.Metric, b *v1alpha1.StorageBenchmark, now time.Time) {
	bl := []string{b.Namespace, b.Name, storageClass(b), b.Spec.Workload.Profile}
	st := &b.Status
	state := State(b)
	for _, s := range States {
		gauge(ch, descState, bool01(s == state), with(bl, s)...)
	}
	gauge(ch, descSteps, float64(len(st.Steps)), bl...)
	if st.StartTime != nil {
		gauge(ch, descStart, unix(st.StartTime.Time), bl...)
		end := now
		if st.CompletionTime != nil {
			end = st.CompletionTime.Time
		}
		if d := end.Sub(st.StartTime.Time); d >= 0 {
			gauge(ch, descDuration, d.Seconds(), bl...)
		}
	}
	if st.CompletionTime != nil && state != StateRunning {
		gauge(ch, descCompletion, unix(st.CompletionTime.Time), bl...)
	}
	if s := st.Summary; s != nil {
		gauge(ch, descPeakIOPS, float64(s.PeakIOPS), bl...)
		gauge(ch, descPeakBytes, float64(s.PeakBytesPerSecond), bl...)
		if s.LatencyTarget != nil {
			gauge(ch, descLatencyTarget, s.LatencyTarget.Seconds(), bl...)
		}
		if a := s.AtTarget; a != nil {
			gauge(ch, descAtTargetIOPS, float64(a.IOPS), bl...)
			gauge(ch, descAtTargetBytes, float64(a.BytesPerSecond), bl...)
		}
	}
	for _, o := range st.SLOs {
		gauge(ch, descSLO, bool01(o.Verdict == "Met"), with(bl, o.Name, string(o.Verdict))...)
	}
	collectRegression(ch, bl, st.Regression)
	if v, lost := st.Verification, st.VerificationAfterLoss; v != nil || lost != nil {
		var bad, verified int64
		for _, r := range []*v1alpha1.VerificationStatus{v, lost} {
			if r != nil {
				bad, verified = bad+r.BadBlocks, verified+r.BlocksVerified
			}
		}
		gauge(ch, descVerifyBad, float64(bad), bl...)
		gauge(ch, descVerifyBlocks, float64(verified), bl...)
	}
	for i := range st.Steps {
		collectStep(ch, bl, &st.Steps[i])
		if b.Spec.Load.ExtendUntilSteady != nil {
			gauge(ch, descStepSuperseded, bool01(st.Steps[i].Superseded), with(bl, strconv.Itoa(int(st.Steps[i].Index)))...)
		}
	}
}

// collectRegression exports the comparison with the baseline: a verdict
// per metric when any test of it was judged, and each judged test's change
// and p-value.
func collectRegression(ch chan<- prometheus.Metric, bl []string, r *v1alpha1.RegressionStatus) {
	if r == nil {
		return
	}
	judged, regressed := map[string]bool{}, map[string]bool{}
	for _, t := range r.Tests {
		if t.Verdict == v1alpha1.RegressionNotJudged {
			continue
		}
		judged[t.Metric] = true
		regressed[t.Metric] = regressed[t.Metric] || t.Verdict == v1alpha1.RegressionRegressed
		sl := with(bl, strconv.Itoa(int(t.Step)), t.Metric)
		if v, err := strconv.ParseFloat(t.ChangePercent, 64); err == nil {
			gauge(ch, descStepRegressionChange, v/100, sl...)
		}
		if v, err := strconv.ParseFloat(t.PValue, 64); err == nil {
			gauge(ch, descStepRegressionP, v, sl...)
		}
	}
	for _, m := range v1alpha1.RegressionMetrics {
		if judged[m] {
			gauge(ch, descRegressed, bool01(regressed[m]), with(bl, m)...)
		}
	}
}

func collectStep(ch chan<- prometheus.Metric, bl []string, s *v1alpha1.StepStatus) {
	sl := with(bl, strconv.Itoa(int(s.Index)))
	if s.OfferedIOPS > 0 {
		gauge(ch, descStepOfferedIOPS, float64(s.OfferedIOPS), sl...)
	}
	if s.OfferedBytesPerSecond > 0 {
		gauge(ch, descStepOfferedBytes, float64(s.OfferedBytesPerSecond), sl...)
	}
	gauge(ch, descStepSaturated, bool01(s.Saturated), sl...)
	gauge(ch, descStepKnee, bool01(s.Knee), sl...)
	op := func(name string, iops, bps int64, l *v1alpha1.LatencyStatus) {
		ol := with(sl, name)
		gauge(ch, descStepIOPS, float64(iops), ol...)
		if name != OperationSync { // sync calls move no bytes
			gauge(ch, descStepBytes, float64(bps), ol...)
		}
		if l == nil {
			return
		}
		gauge(ch, descStepLatencyMean, l.Mean.Seconds(), ol...)
		for _, q := range []struct {
			q string
			d time.Duration
		}{{"50", l.P50.Duration}, {"90", l.P90.Duration}, {"99", l.P99.Duration}, {"99.9", l.P999.Duration}} {
			gauge(ch, descStepLatency, q.d.Seconds(), with(ol, q.q)...)
		}
	}
	op(OperationTotal, s.AchievedIOPS, s.AchievedBytesPerSecond, s.Latency)
	if r := s.Read; r != nil {
		op(OperationRead, r.IOPS, r.BytesPerSecond, &r.Latency)
	}
	if w := s.Write; w != nil {
		op(OperationWrite, w.IOPS, w.BytesPerSecond, &w.Latency)
	}
	if y := s.Sync; y != nil {
		op(OperationSync, y.IOPS, y.BytesPerSecond, &y.Latency)
	}
	collectBackend(ch, sl, s.Backend)
}

// collectBackend exports what the storage reported over a step, once
// joined (and not too short to join).
func collectBackend(ch chan<- prometheus.Metric, sl []string, b *v1alpha1.StepBackendStatus) {
	if b == nil || b.TooShort {
		return
	}
	gauge(ch, descStepBackendBytes, float64(b.BytesPerSecond), sl...)
	for _, o := range []struct {
		name    string
		iops    int64
		latency *metav1.Duration
	}{{OperationTotal, b.IOPS, b.Latency}, {OperationRead, b.ReadIOPS, b.ReadLatency}, {OperationWrite, b.WriteIOPS, b.WriteLatency}} {
		ol := with(sl, o.name)
		gauge(ch, descStepBackendIOPS, float64(o.iops), ol...)
		if o.latency != nil {
			gauge(ch, descStepBackendLatency, o.latency.Seconds(), ol...)
		}
	}
	if b.LatencyGap != nil {
		gauge(ch, descStepBackendGap, b.LatencyGap.Seconds(), sl...)
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Operator counters.
var (
	// RunsStarted counts runs whose first step was ordered.
	RunsStarted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_started_total", Help: "Runs whose first step was ordered."})
	// RunsCompleted counts completed runs.
	RunsCompleted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_completed_total", Help: "Runs that completed."})
	// RunsFailed counts failed runs by reason.
	RunsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_failed_total", Help: "Runs that failed, by the Failed condition's reason."}, []string{LabelReason})
	// StepRecords is how many step records the manager holds decoded: at
	// most one per step of each running benchmark, none of ended ones.
	StepRecords = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "manager_step_records",
		Help: "Step records the manager holds decoded in memory: at most one per planned step of each running benchmark, none of ended ones."})
)

// counters are the operator's own counters. Reconcile errors are not among
// them: controller-runtime counts those as
// controller_runtime_reconcile_errors_total{controller="storagebenchmark"}.
func counters() []prometheus.Collector {
	return []prometheus.Collector{RunsStarted, RunsCompleted, RunsFailed, StepRecords}
}

var (
	registerMu sync.Mutex
	registered = map[prometheus.Registerer]*Collector{}
)

// Register registers the counters (once per registry) and c on reg; a
// collector registered before on reg (a previous manager in the same
// process) is replaced.
func Register(reg prometheus.Registerer, c *Collector) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	prev, seen := registered[reg]
	if !seen {
		for _, k := range counters() {
			if err := reg.Register(k); err != nil {
				return err
			}
		}
	}
	if prev != nil {
		reg.Unregister(prev)
	}
	if err := reg.Register(c); err != nil {
		return err
	}
	registered[reg] = c
	return nil
}
