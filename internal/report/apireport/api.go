package apireport

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/internal/workload"
)

// FromAPI is the report model of a StorageBenchmark: its spec's plan and
// what its status recorded.
func FromAPI(sb *v1alpha1.StorageBenchmark) *report.Run {
	st := &sb.Status
	load := spec.LoadOf(&sb.Spec.Load)
	r := &report.Run{
		Name: sb.Name, Namespace: sb.Namespace, Created: sb.CreationTimestamp.Time,
		Class: className(sb), Profile: sb.Spec.Workload.Profile,
		Phase: Phase(sb), State: StateOf(sb), Failure: FailureMessage(sb),
		Unit: report.UnitOfLoad(load), Target: spec.SelectorOf(sb.Spec.Analysis.TargetLatency), LatencyTarget: latencyTarget(sb),
		Workload: workloadOf(st.Workload),
		Clients:  sb.Spec.Clients.Count, JobsPerClient: sb.Spec.Clients.JobsPerClient,
		LoadKind: report.LoadKindOf(load), StepsPlanned: int(st.StepsPlanned), CurrentStep: -1, ProgressText: st.Progress,
		ClientsReady: st.ClientsReady, ClientsTotal: st.ClientsTotal,
		Storage:    storageOf(st.Storage),
		SLOs:       slosOf(st.SLOs),
		StopReason: st.StopReason,
	}
	if c := condition(sb, v1alpha1.ConditionReady); c != nil {
		r.Message = c.Message
	}
	r.SLOStatus, r.SLOReason, _ = SLOState(sb)
	if c := condition(sb, v1alpha1.ConditionStorageWarning); c != nil && c.Status == metav1.ConditionTrue {
		r.StorageWarning = c.Reason + ": " + c.Message
	}
	if c := condition(sb, v1alpha1.ConditionUnstable); c != nil && c.Status == metav1.ConditionTrue {
		r.Unstable = c.Reason + ": " + c.Message
	}
	if c := condition(sb, v1alpha1.ConditionDataIntegrity); c != nil {
		r.Integrity, r.IntegrityTrue = c.Reason+": "+c.Message, c.Status == metav1.ConditionTrue
	}
	if c := condition(sb, v1alpha1.ConditionClientBound); c != nil {
		r.ClientBound, r.ClientBoundTrue = c.Reason+": "+c.Message, c.Status == metav1.ConditionTrue
	}
	if c := condition(sb, v1alpha1.ConditionClientCPUBound); c != nil {
		r.ClientCPU, r.ClientCPUTrue = c.Reason+": "+c.Message, c.Status == metav1.ConditionTrue
	}
	r.Repeat = int(sb.Spec.Load.Repeat)
	for i := range st.Repeatability {
		r.Repeatability = append(r.Repeatability, repeatabilityOfAPI(&st.Repeatability[i]))
	}
	// A saved spec admission did not default has the API's defaults.
	r.StepDuration, r.RampTime = spec.StepTiming(&sb.Spec.Load)
	if st.CurrentStep != nil {
		r.CurrentStep = int(*st.CurrentStep)
	}
	if st.StartTime != nil {
		r.Started = st.StartTime.Time
	}
	if st.CompletionTime != nil {
		r.Ended = st.CompletionTime.Time
	}
	for i := range st.Steps {
		r.Steps = append(r.Steps, stepOfAPI(&st.Steps[i]))
	}
	r.Summary = summaryOfAPI(st.Summary, r.Steps)
	return r
}

// latencyTarget is the benchmark's latency target: status.summary's, else
// the spec's (spec.LatencyTarget, defaulted).
func latencyTarget(sb *v1alpha1.StorageBenchmark) time.Duration {
	if s := sb.Status.Summary; s != nil && s.LatencyTarget != nil && s.LatencyTarget.Duration > 0 {
		return s.LatencyTarget.Duration
	}
	return spec.LatencyTarget(&sb.Spec)
}

// condition returns the condition of a type, or nil.
func condition(sb *v1alpha1.StorageBenchmark, t string) *metav1.Condition {
	return meta.FindStatusCondition(sb.Status.Conditions, t)
}

// StateOf reads the Complete and Failed conditions.
func StateOf(sb *v1alpha1.StorageBenchmark) report.State {
	if c := condition(sb, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return report.StateFailed
	}
	if c := condition(sb, v1alpha1.ConditionComplete); c != nil && c.Status == metav1.ConditionTrue {
		return report.StateComplete
	}
	if len(sb.Status.Conditions) == 0 {
		return report.StatePending
	}
	return report.StateRunning
}

// SLOState is the SLOMet condition: "True", "False", or "" without
// objectives (or before the run ended); reason and message with it.
func SLOState(sb *v1alpha1.StorageBenchmark) (status, reason, message string) {
	if c := condition(sb, v1alpha1.ConditionSLOMet); c != nil {
		return string(c.Status), c.Reason, c.Message
	}
	return "", "", ""
}

// Phase is the Ready condition's reason (Preparing, Running, Completed or
// a failure's reason), as kubectl get's Status column shows it.
func Phase(sb *v1alpha1.StorageBenchmark) string {
	if c := condition(sb, v1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return string(report.StatePending)
}

// FailureMessage is the Failed condition's reason and message when the run
// failed, else "".
func FailureMessage(sb *v1alpha1.StorageBenchmark) string {
	if c := condition(sb, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason + ": " + c.Message
	}
	return ""
}

// className is the class benchmarked: the one recorded in status, else the
// spec's.
func className(sb *v1alpha1.StorageBenchmark) string {
	if s := sb.Status.Storage; s != nil && s.StorageClassName != "" {
		return s.StorageClassName
	}
	if c := sb.Spec.Storage.StorageClassName; c != nil {
		return *c
	}
	return ""
}

func workloadOf(w *v1alpha1.ResolvedWorkload) *workload.Spec {
	if w == nil {
		return nil
	}
	return &workload.Spec{
		BlockSizeBytes: w.BlockSizeBytes, ReadPercent: w.ReadPercent, Pattern: workload.Pattern(w.Pattern),
		IODepth: w.IODepth, IOEngine: workload.IOEngine(w.IOEngine), Direct: w.Direct,
		WorkingSetBytesPerClient: w.WorkingSetBytesPerClient, CompressPercent: w.CompressPercent,
		DedupePercent: w.DedupePercent, Sync: workload.SyncMode(w.Sync), SyncEvery: w.SyncEvery,
	}
}

func stepOfAPI(s *v1alpha1.StepStatus) report.Step {
	st := report.Step{
		Index: int(s.Index), Repetition: int(s.Repetition), Attempt: int(s.Attempt), Superseded: s.Superseded,
		OfferedIOPS: s.OfferedIOPS, OfferedBytesPerSec: s.OfferedBytesPerSecond,
		QueueDepthPerClient: s.QueueDepthPerClient, PercentOfMax: s.PercentOfMax, Unthrottled: s.Unthrottled, ActiveClients: s.ActiveClients,
		StartTime: s.StartTime.Time, StartSkew: s.StartSkew.Duration,
		AchievedIOPS: float64(s.AchievedIOPS), AchievedBytesPerSec: float64(s.AchievedBytesPerSecond),
		Read: operationOfAPI(s.Read), Write: operationOfAPI(s.Write), Sync: operationOfAPI(s.Sync),
		Saturated: s.Saturated, Knee: s.Knee, Interrupted: s.Interrupted, Errors: s.Errors,
		NotSteady:  s.SteadyState != nil && !s.SteadyState.Steady,
		ClosedLoop: s.ClosedLoop && (s.OfferedIOPS > 0 || s.OfferedBytesPerSecond > 0),
		QueueFull:  s.QueueFull, ClientBoundCheck: s.ClientBoundCheck,
	}
	if s.LongestStall != nil {
		st.Stall = s.LongestStall.Duration.Duration
	}
	if s.ClientIOPS != nil {
		st.ClientCVPercent = float64(s.ClientIOPS.CVPercent)
	}
	if s.ClientCPU != nil {
		st.CPUBoundClients = int(s.ClientCPU.BoundCount)
	}
	if v := s.Verification; v != nil {
		st.Verify = &report.ReadBack{Verified: uint64(max(v.BlocksVerified, 0)), Bad: uint64(max(v.BadBlocks, 0)), Unread: uint64(max(v.Unverified, 0))}
	}
	for _, o := range []*v1alpha1.OperationStatus{s.Read, s.Write} {
		if o != nil {
			st.Overflow += o.Latency.OverflowIOs
		}
	}
	if s.Latency != nil {
		l := latencyOfAPI(s.Latency)
		st.Latency = &l
	}
	if b := s.Backend; b != nil {
		st.Backend = &report.StorageView{IOPS: float64(b.IOPS), BytesPerSec: float64(b.BytesPerSecond),
			Latency: ptr.Deref(b.Latency, metav1.Duration{}).Duration, Gap: ptr.Deref(b.LatencyGap, metav1.Duration{}).Duration,
			TooShort: b.TooShort, Resolution: b.Resolution.Duration}
	}
	return st
}

func repeatabilityOfAPI(v *v1alpha1.RepeatabilityStatus) report.Repeatability {
	out := report.Repeatability{Level: int(v.Level), OfferedIOPS: v.OfferedIOPS, OfferedBytesPerSec: v.OfferedBytesPerSecond,
		QueueDepthPerClient: v.QueueDepthPerClient, PercentOfMax: v.PercentOfMax, Unthrottled: v.Unthrottled, Runs: int(v.Runs),
		IOPS: report.Spread{Mean: float64(v.IOPS.Mean), CVPercent: float64(v.IOPS.CVPercent),
			CI95Low: float64(v.IOPS.CI95Low), CI95High: float64(v.IOPS.CI95High)},
		Stable: v.Stable}
	if p := v.P99; p != nil {
		out.P99 = &report.LatencySpread{Mean: p.Mean.Duration, CVPercent: float64(p.CVPercent),
			CI95Low: p.CI95Low.Duration, CI95High: p.CI95High.Duration}
	}
	return out
}

func latencyOfAPI(l *v1alpha1.LatencyStatus) report.Latency {
	return report.Latency{Mean: l.Mean.Duration, P50: l.P50.Duration, P90: l.P90.Duration, P99: l.P99.Duration, P999: l.P999.Duration}
}

func operationOfAPI(o *v1alpha1.OperationStatus) *report.OperationFigures {
	if o == nil {
		return nil
	}
	return &report.OperationFigures{IOPS: float64(o.IOPS), BytesPerSec: float64(o.BytesPerSecond), Latency: latencyOfAPI(&o.Latency)}
}

func summaryOfAPI(s *v1alpha1.SummaryStatus, steps []report.Step) *report.Summary {
	if s == nil {
		return nil
	}
	out := &report.Summary{
		PeakIOPS: float64(s.PeakIOPS), PeakIOPSStep: indexOr(s.PeakIOPSStep),
		PeakBytesPerSec: float64(s.PeakBytesPerSecond), PeakBytesStep: peakBytesStep(steps),
		KneeStep: indexOr(s.KneeStep),
	}
	if d := s.LatencyAtPeak; d != nil {
		out.LatencyAtPeak = d.Duration
	}
	if d := s.P99LatencyAtPeak; d != nil {
		out.P99LatencyAtPeak = d.Duration
	}
	if a := s.AtTarget; a != nil {
		out.AtTarget = &report.AtTarget{Step: int(a.Step), IOPS: float64(a.IOPS), BytesPerSec: float64(a.BytesPerSecond), Latency: a.Latency.Duration}
	}
	return out
}

func indexOr(i *int32) int {
	if i == nil {
		return -1
	}
	return int(*i)
}

// peakBytesStep is the index of the successful step with the highest
// achieved bandwidth, or -1 (status records the peak, not its step).
func peakBytesStep(steps []report.Step) int {
	best, bytes := -1, 0.0
	for i := range steps {
		s := &steps[i]
		if s.Evidence() && s.AchievedBytesPerSec > bytes {
			best, bytes = s.Index, s.AchievedBytesPerSec
		}
	}
	return best
}

func slosOf(slos []v1alpha1.SLOStatus) []report.SLO {
	var out []report.SLO
	for _, s := range slos {
		out = append(out, report.SLO{Name: s.Name, Verdict: string(s.Verdict), Message: s.Message})
	}
	return out
}

func storageOf(s *v1alpha1.StorageStatus) *report.Storage {
	if s == nil {
		return nil
	}
	out := &report.Storage{
		Class: s.StorageClassName, Provisioner: s.Provisioner, Driver: s.Driver,
		Claims: s.Claims, ClaimsBound: s.ClaimsBound, VolumeMode: s.VolumeMode, AccessMode: s.AccessMode,
		VolumesOmitted: s.VolumesOmitted,
	}
	if s.Capacity != nil {
		out.Capacity = s.Capacity.String()
	}
	if b := s.Backend; b != nil {
		out.Backend = &report.Backend{Name: b.Name, Driver: b.Driver, Protocol: b.Protocol, Version: b.Version, State: b.State}
	}
	for _, m := range s.Mounts {
		out.Mounts = append(out.Mounts, report.Mount{FSType: m.FSType, Options: m.Options, Clients: m.Clients})
	}
	for _, v := range s.Volumes {
		vol := report.Volume{Claim: v.Claim, PersistentVolume: v.PersistentVolume, Pool: v.Pool, QoSPolicy: v.QoSPolicy,
			ServiceLevel: v.ServiceLevel, TieringPolicy: v.TieringPolicy}
		if v.Capacity != nil {
			vol.Capacity = v.Capacity.String()
		}
		out.Volumes = append(out.Volumes, vol)
	}
	if e := s.Entitlement; e != nil {
		out.Entitlement = &report.Entitlement{ServiceLevel: e.ServiceLevel, ThroughputBytesPerSec: e.ThroughputBytesPerSecond,
			PeakPercent: e.PeakPercent, Message: e.Message, SaturationNote: e.SaturationNote}
	}
	return out
}

// Entry points with StorageBenchmarks, for the kubectl plugin.

// WriteStatus prints what `kubectl storagebench status` shows for a
// benchmark (report.Run.WriteStatus).
func WriteStatus(w io.Writer, sb *v1alpha1.StorageBenchmark, now time.Time) error {
	return FromAPI(sb).WriteStatus(w, now)
}

// ListTable is what `kubectl storagebench list` prints
// (report.ListTableOf).
func ListTable(items []v1alpha1.StorageBenchmark, now time.Time, withNamespace bool) report.Table {
	runs := make([]*report.Run, len(items))
	for i := range items {
		runs[i] = FromAPI(&items[i])
	}
	return report.ListTableOf(runs, now, withNamespace)
}

// ProgressOf estimates a benchmark's progress at now (report.Run.Progress).
func ProgressOf(sb *v1alpha1.StorageBenchmark, now time.Time) report.Progress {
	return FromAPI(sb).Progress(now)
}

// WriteDocument writes the JSON report of a benchmark (DocumentOf),
// indented, with a final newline.
func WriteDocument(w io.Writer, sb *v1alpha1.StorageBenchmark, o report.Options) error {
	return writeJSON(w, DocumentOf(sb, o))
}

// writeJSON writes a JSON document, indented, with a final newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Compare resolves a comparison of benchmarks (at least one):
// report.CompareRuns of their runs.
func Compare(sbs []v1alpha1.StorageBenchmark, o report.Options) (*report.Comparison, error) {
	runs := make([]*report.Run, len(sbs))
	for i := range sbs {
		runs[i] = FromAPI(&sbs[i])
	}
	return report.CompareRuns(runs, o)
}

// Document is the JSON report: the benchmark, the plotted series and the
// recorded steps, summary and verdicts.
type Document struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Class     string `json:"storageClass,omitempty"`
	Profile   string `json:"profile"`
	// Status is the Ready condition's reason.
	Status string `json:"status"`
	// Unit of the series' load.
	Unit report.Unit `json:"unit"`
	// TargetLatency is the figure compared with LatencyTargetMs.
	TargetLatency   report.SelectorJSON `json:"targetLatency"`
	LatencyTargetMs float64             `json:"latencyTargetMs"`
	// Series are the plotted curves (read and write).
	Series []report.Series `json:"series"`
	// Steps, Summary, SLOs and Repeatability are the status' own.
	Steps         []v1alpha1.StepStatus          `json:"steps"`
	Summary       *v1alpha1.SummaryStatus        `json:"summary,omitempty"`
	SLOs          []v1alpha1.SLOStatus           `json:"slos,omitempty"`
	Repeatability []v1alpha1.RepeatabilityStatus `json:"repeatability,omitempty"`
	StopReason    string                         `json:"stopReason,omitempty"`
}

// DocumentOf builds the JSON report of a benchmark.
func DocumentOf(sb *v1alpha1.StorageBenchmark, o report.Options) Document {
	r := FromAPI(sb)
	d := Document{
		Name: r.Name, Namespace: r.Namespace, Class: r.Class, Profile: r.ProfileName(),
		Status: r.Phase, Unit: r.Unit, TargetLatency: report.SelectorJSON(r.Target),
		LatencyTargetMs: float64(r.LatencyTarget) / float64(time.Millisecond),
		Series:          r.CurveSeries(o.Metric), Steps: sb.Status.Steps, Summary: sb.Status.Summary, SLOs: sb.Status.SLOs,
		Repeatability: sb.Status.Repeatability, StopReason: sb.Status.StopReason,
	}
	if d.Series == nil {
		d.Series = []report.Series{}
	}
	if d.Steps == nil {
		d.Steps = []v1alpha1.StepStatus{}
	}
	return d
}

// StepTimeline is step k's timeline, read from its ConfigMap (the step's
// record, where the operator keeps the merged timeline). The ConfigMap
// must be a record of sb, by the rule RunSamples applies (recordOf): one
// planted under the step's name is an error that names it.
func StepTimeline(sb *v1alpha1.StorageBenchmark, cm *corev1.ConfigMap, k int) (report.StepTimeline, error) {
	if err := recordOf(sb, cm); err != nil {
		return report.StepTimeline{}, err
	}
	a, err := exchange.Aggregate(cm)
	if err != nil {
		return report.StepTimeline{}, err
	}
	if a.Step != k {
		return report.StepTimeline{}, fmt.Errorf("ConfigMap %s holds step %d, not step %d", cm.Name, a.Step+1, k+1)
	}
	if len(a.Timeline.Windows) == 0 {
		return report.StepTimeline{}, fmt.Errorf("step %d of %s has no timeline (its runners did not send one)", k+1, sb.Name)
	}
	return report.TimelineOf(sb.Name, k, a.Timeline), nil
}
