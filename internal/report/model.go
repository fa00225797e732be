package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/workload"
)

// The report's core model: one run of a benchmark, in the report's own
// terms. Everything in this package renders a Run; apireport.FromAPI builds
// one from a StorageBenchmark, and StepOf, SummaryOf and SLOsOf (core.go)
// from the results and analysis of a run without Kubernetes (`runner
// local`).

// mib is the number of bytes in a mebibyte.
const mib = numfmt.MiB

// Run is one run of a benchmark: what it ran, where it is, the steps it
// measured and what the analysis concluded. Zero fields are unknown (or not
// yet known) and left out of the rendering.
type Run struct {
	Name, Namespace string
	// Created is when the benchmark was created (for list's age).
	Created time.Time
	// Class is the storage class benchmarked.
	Class string
	// Profile is the workload profile as the benchmark names it; "" for
	// explicit fields (printed as "custom").
	Profile string

	// Phase is where the run is as kubectl get's Status column shows it
	// (Pending, Preparing, Running, Completed or a failure's reason);
	// State is the same, coarser. Message says more about the phase (the
	// failure, for a failed run).
	Phase   string
	State   State
	Message string
	// Failure is "reason: message" of a failed run, else "".
	Failure string
	// SLOStatus is "True", "False", or "" without objectives (or before
	// the run ended); SLOReason says why (AllMet, NotMet, …).
	SLOStatus, SLOReason string

	// Unit is the unit the load was offered in.
	Unit Unit
	// Target is the latency figure judged against LatencyTarget.
	Target        analysis.LatencySelector
	LatencyTarget time.Duration

	// Workload is the I/O pattern run; nil before it was resolved.
	Workload *workload.Spec
	// Clients and JobsPerClient (0 is printed as 1).
	Clients, JobsPerClient int32
	// LoadKind is how the load is offered; StepDuration and RampTime are
	// one step's measurement and ramp.
	LoadKind               LoadKind
	StepDuration, RampTime time.Duration
	// StepsPlanned is the number of steps the load plans (0: unknown);
	// CurrentStep the index of the step running now (-1: none).
	StepsPlanned int
	CurrentStep  int
	// ProgressText is the benchmark's own "finished/planned" display,
	// when it records one.
	ProgressText string
	// ClientsReady of ClientsTotal while preparing.
	ClientsReady, ClientsTotal int32
	// Started and Ended bound the run (zero: not yet).
	Started, Ended time.Time
	// Storage is the storage used; nil before it was provisioned (or for
	// a run without Kubernetes).
	Storage *Storage
	// StorageWarning is "reason: message" of a storage warning.
	StorageWarning string

	// Repeat is how many times the load runs each planned step (0 or 1:
	// once); Repeatability is how much the runs of each level varied, and
	// Unstable "reason: message" when they varied more than the benchmark
	// allows.
	Repeat        int
	Repeatability []Repeatability
	Unstable      string
	// ClientBound is the curve's client-bound check, "reason: message",
	// and ClientBoundTrue whether the maximum was the clients'.
	ClientBound     string
	ClientBoundTrue bool
	// ClientCPU is the verdict on the clients' CPU, "reason: message",
	// and ClientCPUTrue whether it bounded the figures.
	ClientCPU     string
	ClientCPUTrue bool
	// Integrity is a verifying run's DataIntegrity condition, "reason:
	// message", and IntegrityTrue whether every block read back intact.
	Integrity     string
	IntegrityTrue bool

	// Steps are the finished steps, in order.
	Steps []Step
	// Summary is nil before any step finished.
	Summary *Summary
	SLOs    []SLO
	// StopReason says how the load ended.
	StopReason string
}

// LoadKind is how a load is offered.
type LoadKind string

// Load kinds.
const (
	LoadRate       LoadKind = "rate"
	LoadCurve      LoadKind = "curve"
	LoadQueueDepth LoadKind = "queue depth"
)

// Step is one finished step.
type Step struct {
	// Index is the step's index, from 0 (tables print Index+1).
	Index int
	// Repetition is which run of its load level the step is, 1..Run.Repeat;
	// 0 when the load does not repeat.
	Repetition int
	// Attempt is which run of its planned step the step is when the load
	// runs unsteady steps again (0: it does not); Superseded marks a run
	// that was run again, which is not evidence.
	Attempt    int
	Superseded bool
	// The offered load: a rate in IOPS or bytes per second, a queue depth
	// per client, or none (a curve's unthrottled step); PercentOfMax for a
	// curve's throttled steps.
	OfferedIOPS, OfferedBytesPerSec   int64
	QueueDepthPerClient, PercentOfMax int32
	Unthrottled                       bool
	// StartTime is the instant the step was ordered to start; StartSkew
	// how far apart the clients actually started.
	StartTime time.Time
	StartSkew time.Duration
	// AchievedIOPS and AchievedBytesPerSec are reads and writes together.
	AchievedIOPS, AchievedBytesPerSec float64
	// Latency is over all I/O; nil when the step measured none.
	Latency *Latency
	// Read and Write are nil when the step has no I/O of the operation.
	Read, Write *OperationFigures
	// Sync is the sync calls (fsync or fdatasync); nil without any.
	Sync *OperationFigures
	// Saturated, Knee and Interrupted are the analysis' and the run's marks.
	Saturated, Knee, Interrupted bool
	// Overflow counts the I/Os of about 17 s or longer, which fio's
	// histogram cannot tell apart.
	Overflow int64
	// ClosedLoop is set on a rate step that did not sustain its rate: its
	// latency leaves out the time I/Os waited to be issued.
	ClosedLoop bool
	// QueueFull: a saturated step whose clients kept their queues full;
	// ClientBoundCheck: a curve's unthrottled step at twice the
	// outstanding I/O.
	QueueFull, ClientBoundCheck bool
	// NotSteady is set when the step's IOPS were judged not in steady
	// state; Stall is its longest time without a completion (0: none).
	NotSteady bool
	// ClientCVPercent is the coefficient of variation of the clients'
	// IOPS in percent (0: one client, or an even share).
	ClientCVPercent float64
	// ActiveClients is how many clients ran a scale-out step (0: all).
	ActiveClients int32
	// CPUBoundClients is how many clients were past a CPU bound
	// (results.CPU.Bound).
	CPUBoundClients int
	Stall           time.Duration
	// Errors are fio's; a step with errors failed and is not evidence.
	Errors []string
	// Backend is what the storage itself reported over the step; nil
	// when it was not read.
	Backend *StorageView
	// Verify is the read-back after the step of a run that verifies what
	// it writes; nil otherwise.
	Verify *ReadBack
}

// ReadBack is what a step's read-back found: blocks read and compared,
// bad ones, and blocks not read.
type ReadBack struct {
	Verified, Bad, Unread uint64
}

// StorageView is the storage's own view of a step (NetApp Harvest's volume
// figures): its operations and bytes per second, its mean latency per
// operation, and the clients' mean latency minus it.
type StorageView struct {
	IOPS, BytesPerSec float64
	Latency, Gap      time.Duration
	// TooShort: the step was shorter than twice the source's resolution,
	// and has no figures.
	TooShort   bool
	Resolution time.Duration
}

// Repeatability is how much the runs of one load level varied.
type Repeatability struct {
	// Level is the planned step the runs repeat, from 0 (tables print
	// Level+1).
	Level int
	// The level's load, as its steps offer it (Offered renders it).
	OfferedIOPS, OfferedBytesPerSec   int64
	QueueDepthPerClient, PercentOfMax int32
	Unthrottled                       bool
	// Runs is the number of runs the figures are over.
	Runs int
	// IOPS is the spread of the runs' achieved IOPS; P99 that of their p99
	// latency of the operation the benchmark judges latency on (nil when a
	// run had none).
	IOPS Spread
	P99  *LatencySpread
	// Stable is nil when the benchmark sets no limit on the variation.
	Stable *bool
}

// Spread is a figure's mean over runs, its coefficient of variation (in
// percent) and the 95 % confidence interval of the mean.
type Spread struct {
	Mean, CVPercent, CI95Low, CI95High float64
}

// LatencySpread is a Spread of latencies.
type LatencySpread struct {
	Mean, CI95Low, CI95High time.Duration
	CVPercent               float64
}

// Offered renders the level's load as a step's (Step.Offered).
func (r *Repeatability) Offered() string {
	s := Step{OfferedIOPS: r.OfferedIOPS, OfferedBytesPerSec: r.OfferedBytesPerSec,
		QueueDepthPerClient: r.QueueDepthPerClient, PercentOfMax: r.PercentOfMax, Unthrottled: r.Unthrottled}
	return s.Offered()
}

// VariationSelector is the latency whose spread Repeatability.P99 holds:
// the p99 of the Target's operation.
func (r *Run) VariationSelector() analysis.LatencySelector {
	return analysis.Options{TargetSelector: r.Target}.VariationSelector()
}

// OperationFigures are the figures of one operation (reads or writes) of a
// step.
type OperationFigures struct {
	IOPS, BytesPerSec float64
	Latency           Latency
}

// Latency are the latency figures of a distribution.
type Latency struct {
	Mean, P50, P90, P99, P999 time.Duration
}

// Summary is the run's result. Step fields are step indexes, -1 for none.
type Summary struct {
	PeakIOPS        float64
	PeakIOPSStep    int
	PeakBytesPerSec float64
	PeakBytesStep   int
	// LatencyAtPeak is the Target latency at the peak-IOPS step;
	// P99LatencyAtPeak the worse of its read and write p99 (0: none).
	LatencyAtPeak, P99LatencyAtPeak time.Duration
	// AtTarget is the highest load whose Target latency is at or below the
	// latency target; nil when no step is.
	AtTarget *AtTarget
	KneeStep int
}

// AtTarget is "performance at the latency target".
type AtTarget struct {
	Step              int
	IOPS, BytesPerSec float64
	Latency           time.Duration
}

// SLO is one objective's verdict.
type SLO struct {
	Name, Verdict, Message string
}

// Storage is the storage a run used.
type Storage struct {
	Class, Provisioner, Driver string
	Claims, ClaimsBound        int32
	// Capacity of each claim, as Kubernetes prints it ("200Gi"); "" unknown.
	Capacity               string
	VolumeMode, AccessMode string
	Backend                *Backend
	Mounts                 []Mount
	Volumes                []Volume
	VolumesOmitted         int32
	Entitlement            *Entitlement
}

// Backend is the Trident backend of the volumes.
type Backend struct{ Name, Driver, Protocol, Version, State string }

// Mount is one distinct mount of the volume as clients saw it.
type Mount struct {
	FSType, Options string
	Clients         int32
}

// Volume is one bound volume.
type Volume struct {
	Claim, PersistentVolume, Capacity            string
	Pool, QoSPolicy, ServiceLevel, TieringPolicy string
}

// Entitlement is a Google Cloud NetApp Volumes volume's throughput
// entitlement and how much of it the peak used.
type Entitlement struct {
	ServiceLevel          string
	ThroughputBytesPerSec int64
	PeakPercent           int32
	Message               string
	SaturationNote        string
}

// Unit is the unit of a curve's x axis: the achieved load.
type Unit string

const (
	// UnitIOPS plots achieved I/Os per second, reads and writes together.
	UnitIOPS Unit = "IOPS"
	// UnitMiBps plots achieved MiB/s, reads and writes together.
	UnitMiBps Unit = "MiBps"
)

// Label is the unit as printed: "IOPS" or "MiB/s".
func (u Unit) Label() string {
	if u == UnitMiBps {
		return "MiB/s"
	}
	return "IOPS"
}

// Achieved is a step's achieved load in the unit.
func (u Unit) Achieved(s *Step) float64 {
	if u == UnitMiBps {
		return s.AchievedBytesPerSec / mib
	}
	return s.AchievedIOPS
}

// Format renders a load in the unit: "61,837 IOPS", "1,041.4 MiB/s".
func (u Unit) Format(v float64) string {
	return u.Number(v) + " " + u.Label()
}

// Number renders a load in the unit without the unit.
func (u Unit) Number(v float64) string {
	if u == UnitMiBps {
		return numfmt.Fixed(v, 1)
	}
	return numfmt.Count(v)
}

// shownMetrics are the latency metrics a report holds (Latency's figures):
// those of analysis.LatencySelector's metrics that a benchmark's status
// records.
var shownMetrics = []string{analysis.MetricMean, analysis.MetricP50, analysis.MetricP90, analysis.MetricP99, analysis.MetricP999}

// CheckSelector reports a latency selector a report cannot show: an
// operation or metric analysis.LatencySelector does not accept, or a
// metric it accepts that a report does not hold (only mean, p50, p90, p99
// and p99.9 are). Empty fields are valid (the defaults).
func CheckSelector(s analysis.LatencySelector) error {
	if s.Metric != "" && !slices.Contains(shownMetrics, s.Metric) {
		want := strings.Join(shownMetrics, ", ")
		if (analysis.LatencySelector{Metric: s.Metric}).Validate() == nil {
			return fmt.Errorf("latency metric %q is not kept in reports: want one of %s", s.Metric, want)
		}
		return fmt.Errorf("unknown latency metric %q: want one of %s", s.Metric, want)
	}
	return s.Validate()
}

// SelectorJSON is an analysis.LatencySelector as the JSON report writes
// it; the two convert into each other (SelectorJSON(sel)).
type SelectorJSON struct {
	Metric    string `json:"metric"`
	Operation string `json:"operation"`
}

// selectedLatency returns the latency sel selects of the step; ok is false
// when the step has no I/O in the selected operation (for "worst": neither
// reads nor writes) or the metric is not one a report holds.
func (s *Step) selectedLatency(sel analysis.LatencySelector) (time.Duration, bool) {
	sel = sel.WithDefaults()
	switch sel.Operation {
	case analysis.OperationRead:
		return s.Read.metric(sel.Metric)
	case analysis.OperationWrite:
		return s.Write.metric(sel.Metric)
	case analysis.OperationTotal:
		return s.Latency.metric(sel.Metric)
	case analysis.OperationSync:
		return s.Sync.metric(sel.Metric)
	case analysis.OperationWorst:
		// A missing figure is 0, so max is the other one.
		r, rok := s.Read.metric(sel.Metric)
		w, wok := s.Write.metric(sel.Metric)
		return max(r, w), rok || wok
	}
	return 0, false
}

// metric returns a latency metric of the operation; ok is false without
// I/O in it (o nil).
func (o *OperationFigures) metric(m string) (time.Duration, bool) {
	if o == nil {
		return 0, false
	}
	return o.Latency.metric(m)
}

// metric returns a latency metric; ok is false without I/O (l nil) or for
// a metric a report does not hold.
func (l *Latency) metric(m string) (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	switch m {
	case analysis.MetricMean:
		return l.Mean, true
	case analysis.MetricP50:
		return l.P50, true
	case analysis.MetricP90:
		return l.P90, true
	case analysis.MetricP99:
		return l.P99, true
	case analysis.MetricP999:
		return l.P999, true
	}
	return 0, false
}

// Failed reports a step fio reported errors for: the analysis does not use
// it as evidence, and the curve leaves it out.
func (s *Step) Failed() bool { return len(s.Errors) > 0 }

// Evidence reports whether the step counts towards the curve and the
// figures: it neither failed nor was superseded by a rerun.
func (s *Step) Evidence() bool { return !s.Failed() && !s.Superseded }

// State is where a benchmark's run is.
type State string

const (
	// StatePending: the operator has not reported yet.
	StatePending State = "Pending"
	// StateRunning: preparing or running steps.
	StateRunning State = "Running"
	// StateComplete: the run ended successfully.
	StateComplete State = "Complete"
	// StateFailed: the run ended without completing.
	StateFailed State = "Failed"
)

// Point is one step on a curve.
type Point struct {
	// Index is the step's index (from 0; tables print Index+1).
	Index int32 `json:"index"`
	// Load is the achieved load in the curve's unit.
	Load float64 `json:"load"`
	// LatencyMs is the plotted latency in milliseconds.
	LatencyMs float64 `json:"latencyMs"`
	// Saturated and Knee repeat the step's marks.
	Saturated bool `json:"saturated,omitempty"`
	Knee      bool `json:"knee,omitempty"`
}

// Series is one line of a chart.
type Series struct {
	Name     string
	Selector analysis.LatencySelector
	Points   []Point
}

// seriesJSON is Series as the JSON report writes it.
type seriesJSON struct {
	Name     string       `json:"name"`
	Selector SelectorJSON `json:"selector"`
	Points   []Point      `json:"points"`
}

// MarshalJSON writes the series as {"name", "selector": {"metric",
// "operation"}, "points"}.
func (s Series) MarshalJSON() ([]byte, error) {
	return json.Marshal(seriesJSON{Name: s.Name, Selector: SelectorJSON(s.Selector), Points: s.Points})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Series) UnmarshalJSON(b []byte) error {
	var j seriesJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Series{Name: j.Name, Selector: analysis.LatencySelector(j.Selector), Points: j.Points}
	return nil
}

// Series is the curve of one latency figure of the run: one point per
// successful step that has I/O in the selected operation.
func (r *Run) Series(name string, sel analysis.LatencySelector, unit Unit) Series {
	s := Series{Name: name, Selector: sel, Points: []Point{}}
	for i := range r.Steps {
		st := &r.Steps[i]
		if !st.Evidence() || st.ClientBoundCheck {
			continue // the check runs at another depth: not a point of the curve
		}
		l, ok := st.selectedLatency(sel)
		if !ok {
			continue
		}
		s.Points = append(s.Points, Point{Index: int32(st.Index), Load: unit.Achieved(st), LatencyMs: ms(l), Saturated: st.Saturated, Knee: st.Knee})
	}
	return s
}

// StorageSeries names the storage's own mean latency in figures.
const StorageSeries = "storage's mean"

// BackendSeries are, when steps carry the storage's own figures, the
// clients' mean latency over all I/O and the storage's, against the
// achieved load: where the two part, the time is outside the storage. The
// clients' is left out when curve (the curve's series for metric) already
// draws it: the mean of the run's only operation.
func (r *Run) BackendSeries(metric string, curve []Series) []Series {
	client := Series{Name: "clients' mean (all I/O)", Selector: analysis.LatencySelector{Metric: analysis.MetricMean}, Points: []Point{}}
	storage := Series{Name: StorageSeries, Selector: analysis.LatencySelector{Metric: analysis.MetricMean}, Points: []Point{}}
	for i := range r.Steps {
		st := &r.Steps[i]
		if !st.Evidence() || st.ClientBoundCheck || st.Backend == nil || st.Backend.TooShort || st.Latency == nil || st.Backend.Latency == 0 {
			continue
		}
		load := r.Unit.Achieved(st)
		client.Points = append(client.Points, Point{Index: int32(st.Index), Load: load, LatencyMs: ms(st.Latency.Mean)})
		storage.Points = append(storage.Points, Point{Index: int32(st.Index), Load: load, LatencyMs: ms(st.Backend.Latency)})
	}
	switch {
	case len(storage.Points) == 0:
		return nil
	case metric == analysis.MetricMean && len(curve) == 1:
		return []Series{storage}
	}
	return []Series{client, storage}
}

// CurveSeries are the read and the write curve of the run (those with I/O)
// for a latency metric; empty means the Target's metric.
func (r *Run) CurveSeries(metric string) []Series {
	if metric == "" {
		metric = r.Target.WithDefaults().Metric
	}
	var out []Series
	for _, op := range []string{analysis.OperationRead, analysis.OperationWrite} {
		s := r.Series(op+" "+metric, analysis.LatencySelector{Metric: metric, Operation: op}, r.Unit)
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ProfileName is the workload profile, or "custom" for explicit fields.
func (r *Run) ProfileName() string {
	if r.Profile != "" {
		return r.Profile
	}
	return "custom"
}

// stepByIndex is the step of an index, or nil.
func (r *Run) stepByIndex(i int) *Step {
	for k := range r.Steps {
		if r.Steps[k].Index == i {
			return &r.Steps[k]
		}
	}
	return nil
}
