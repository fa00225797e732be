package report

import (
	"fmt"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/workload"
)

// The report's core model: one run of a benchmark, in the report's own
// terms. Everything in this package renders a Run; FromAPI (api.go) builds
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
	Target        Selector
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
	// Read and Write are nil when the step has no I/O in the direction.
	Read, Write *Direction
	// Saturated, Knee and Interrupted are the analysis' and the run's marks.
	Saturated, Knee, Interrupted bool
	// Errors are fio's; a step with errors failed and is not evidence.
	Errors []string
}

// Direction is one direction of a step.
type Direction struct {
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
type Backend struct{ Name, Driver, Version, State string }

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

// Metric is a latency metric: mean, p50, p90, p99 or p99.9.
type Metric string

// Operation is a direction of I/O a latency is taken from: read, write,
// total or worst (the worse of read and write).
type Operation string

// Latency metrics a selector accepts.
var metrics = []Metric{"mean", "p50", "p90", "p99", "p99.9"}

// Operations a selector accepts.
var operations = []Operation{"read", "write", "total", "worst"}

// ParseMetric checks a latency metric name (mean, p50, p90, p99, p99.9).
func ParseMetric(s string) (Metric, error) {
	for _, m := range metrics {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown latency metric %q: want one of mean, p50, p90, p99, p99.9", s)
}

// ParseOperation checks an operation name (read, write, total, worst).
func ParseOperation(s string) (Operation, error) {
	for _, o := range operations {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("unknown operation %q: want one of read, write, total, worst", s)
}

// Selector picks one latency figure of a step, as the API's
// LatencySelector does.
type Selector struct {
	Metric    Metric    `json:"metric"`
	Operation Operation `json:"operation"`
}

// DefaultSelector is the latency figure judged when none is set: the mean
// over all I/O.
var DefaultSelector = Selector{Metric: "mean", Operation: "total"}

// orDefault fills an unset metric or operation with the default's.
func (s Selector) orDefault() Selector {
	if s.Metric == "" {
		s.Metric = DefaultSelector.Metric
	}
	if s.Operation == "" {
		s.Operation = DefaultSelector.Operation
	}
	return s
}

// String names the figure: "mean latency", "p99 read latency", "p99
// worst-direction latency".
func (s Selector) String() string {
	switch s.Operation {
	case "", "total":
		return string(s.Metric) + " latency"
	case "worst":
		return string(s.Metric) + " worst-direction latency"
	default:
		return string(s.Metric) + " " + string(s.Operation) + " latency"
	}
}

// Of returns the selected latency of a step; ok is false when the step has
// no I/O in the selected direction.
func (s Selector) Of(st *Step) (time.Duration, bool) {
	switch s.Operation {
	case "read":
		if st.Read == nil {
			return 0, false
		}
		return st.Read.Latency.Of(s.Metric), true
	case "write":
		if st.Write == nil {
			return 0, false
		}
		return st.Write.Latency.Of(s.Metric), true
	case "worst":
		var worst time.Duration
		ok := false
		for _, d := range []*Direction{st.Read, st.Write} {
			if d != nil {
				worst, ok = max(worst, d.Latency.Of(s.Metric)), true
			}
		}
		return worst, ok
	default:
		if st.Latency == nil {
			return 0, false
		}
		return st.Latency.Of(s.Metric), true
	}
}

// Of returns a latency metric (mean for an unknown one).
func (l *Latency) Of(m Metric) time.Duration {
	switch m {
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	default:
		return l.Mean
	}
}

// Failed reports a step fio reported errors for: the analysis does not use
// it as evidence, and the curve leaves it out.
func (s *Step) Failed() bool { return len(s.Errors) > 0 }

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
	Name     string   `json:"name"`
	Selector Selector `json:"selector"`
	Points   []Point  `json:"points"`
}

// Series is the curve of one latency figure of the run: one point per
// successful step that has I/O in the selected direction.
func (r *Run) Series(name string, sel Selector, unit Unit) Series {
	s := Series{Name: name, Selector: sel, Points: []Point{}}
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Failed() {
			continue
		}
		l, ok := sel.Of(st)
		if !ok {
			continue
		}
		s.Points = append(s.Points, Point{Index: int32(st.Index), Load: unit.Achieved(st), LatencyMs: ms(l), Saturated: st.Saturated, Knee: st.Knee})
	}
	return s
}

// CurveSeries are the read and the write curve of the run (those with I/O)
// for a latency metric; empty means the Target's metric.
func (r *Run) CurveSeries(metric Metric) []Series {
	if metric == "" {
		metric = r.Target.Metric
	}
	var out []Series
	for _, op := range []Operation{"read", "write"} {
		s := r.Series(fmt.Sprintf("%s %s", op, metric), Selector{Metric: metric, Operation: op}, r.Unit)
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
