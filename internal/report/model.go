package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
)

// mib is the number of bytes in a mebibyte.
const mib = 1 << 20

// Unit is the unit of a curve's x axis: the achieved load.
type Unit string

const (
	// UnitIOPS plots achieved I/Os per second, reads and writes together.
	UnitIOPS Unit = "IOPS"
	// UnitMiBps plots achieved MiB/s, reads and writes together.
	UnitMiBps Unit = "MiBps"
)

// UnitOf is the unit a benchmark offered its load in: MiBps for a rate or
// curve in MiBps, IOPS otherwise (queue-depth steps included).
func UnitOf(sb *v1alpha1.StorageBenchmark) Unit {
	l := sb.Spec.Load
	if (l.Rate != nil && l.Rate.Unit == "MiBps") || (l.Curve != nil && l.Curve.Unit == "MiBps") {
		return UnitMiBps
	}
	return UnitIOPS
}

// Label is the unit as printed: "IOPS" or "MiB/s".
func (u Unit) Label() string {
	if u == UnitMiBps {
		return "MiB/s"
	}
	return "IOPS"
}

// Achieved is a step's achieved load in the unit.
func (u Unit) Achieved(s *v1alpha1.StepStatus) float64 {
	if u == UnitMiBps {
		return float64(s.AchievedBytesPerSecond) / mib
	}
	return float64(s.AchievedIOPS)
}

// Format renders a load in the unit: "61,837 IOPS", "1,041.4 MiB/s".
func (u Unit) Format(v float64) string {
	return u.Number(v) + " " + u.Label()
}

// Number renders a load in the unit without the unit.
func (u Unit) Number(v float64) string {
	if u == UnitMiBps {
		return formatMiBps(v)
	}
	return analysis.FormatCount(v)
}

// formatMiBps renders MiB/s with one decimal and thousands separators:
// 1041.42 => "1,041.4".
func formatMiBps(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	sign := ""
	if strings.HasPrefix(intPart, "-") {
		sign, intPart = "-", intPart[1:]
	}
	if frac == "" { // NaN, Inf
		return s
	}
	return sign + analysis.GroupThousands(intPart) + "." + frac
}

// Latency metrics a selector accepts, as the API spells them.
var metrics = []v1alpha1.LatencyMetric{"mean", "p50", "p90", "p99", "p99.9"}

// Operations a selector accepts.
var operations = []v1alpha1.Operation{"read", "write", "total", "worst"}

// ParseMetric checks a latency metric name (mean, p50, p90, p99, p99.9).
func ParseMetric(s string) (v1alpha1.LatencyMetric, error) {
	for _, m := range metrics {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown latency metric %q: want one of mean, p50, p90, p99, p99.9", s)
}

// ParseOperation checks an operation name (read, write, total, worst).
func ParseOperation(s string) (v1alpha1.Operation, error) {
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
	Metric    v1alpha1.LatencyMetric `json:"metric"`
	Operation v1alpha1.Operation     `json:"operation"`
}

// TargetSelector is the latency figure a benchmark's analysis compares with
// its latency target (spec.analysis.targetLatency; default mean, total).
func TargetSelector(sb *v1alpha1.StorageBenchmark) Selector {
	s := Selector{Metric: sb.Spec.Analysis.TargetLatency.Metric, Operation: sb.Spec.Analysis.TargetLatency.Operation}
	if s.Metric == "" {
		s.Metric = "mean"
	}
	if s.Operation == "" {
		s.Operation = "total"
	}
	return s
}

// LatencyTarget is the benchmark's latency target: status.summary's, else
// spec.analysis.latencyTarget, else the API default of 1 ms.
func LatencyTarget(sb *v1alpha1.StorageBenchmark) time.Duration {
	if s := sb.Status.Summary; s != nil && s.LatencyTarget != nil && s.LatencyTarget.Duration > 0 {
		return s.LatencyTarget.Duration
	}
	if t := sb.Spec.Analysis.LatencyTarget.Duration; t > 0 {
		return t
	}
	return time.Millisecond
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
func (s Selector) Of(st *v1alpha1.StepStatus) (time.Duration, bool) {
	switch s.Operation {
	case "read":
		if st.Read == nil {
			return 0, false
		}
		return metricOf(&st.Read.Latency, s.Metric), true
	case "write":
		if st.Write == nil {
			return 0, false
		}
		return metricOf(&st.Write.Latency, s.Metric), true
	case "worst":
		var worst time.Duration
		ok := false
		for _, o := range []*v1alpha1.OperationStatus{st.Read, st.Write} {
			if o != nil {
				worst, ok = max(worst, metricOf(&o.Latency, s.Metric)), true
			}
		}
		return worst, ok
	default:
		if st.Latency == nil {
			return 0, false
		}
		return metricOf(st.Latency, s.Metric), true
	}
}

func metricOf(l *v1alpha1.LatencyStatus, m v1alpha1.LatencyMetric) time.Duration {
	switch m {
	case "p50":
		return l.P50.Duration
	case "p90":
		return l.P90.Duration
	case "p99":
		return l.P99.Duration
	case "p99.9":
		return l.P999.Duration
	default:
		return l.Mean.Duration
	}
}

// failed reports a step fio reported errors for: the analysis does not use
// it as evidence, and the curve leaves it out.
func failed(s *v1alpha1.StepStatus) bool { return len(s.Errors) > 0 }

// Point is one step on a curve.
type Point struct {
	// Index is the step's index in status.steps (from 0; tables print
	// Index+1).
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

// SeriesOf is the curve of one latency figure of a benchmark: one point per
// successful step that has I/O in the selected direction.
func SeriesOf(sb *v1alpha1.StorageBenchmark, name string, sel Selector, unit Unit) Series {
	s := Series{Name: name, Selector: sel, Points: []Point{}}
	for i := range sb.Status.Steps {
		st := &sb.Status.Steps[i]
		if failed(st) {
			continue
		}
		l, ok := sel.Of(st)
		if !ok {
			continue
		}
		s.Points = append(s.Points, Point{Index: st.Index, Load: unit.Achieved(st), LatencyMs: ms(l), Saturated: st.Saturated, Knee: st.Knee})
	}
	return s
}

// CurveSeries are the read and the write curve of a benchmark (those with
// I/O) for a latency metric.
func CurveSeries(sb *v1alpha1.StorageBenchmark, metric v1alpha1.LatencyMetric) []Series {
	unit := UnitOf(sb)
	var out []Series
	for _, op := range []v1alpha1.Operation{"read", "write"} {
		s := SeriesOf(sb, fmt.Sprintf("%s %s", op, metric), Selector{Metric: metric, Operation: op}, unit)
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// condition returns the condition of a type, or nil.
func condition(sb *v1alpha1.StorageBenchmark, t string) *readCondition {
	for i := range sb.Status.Conditions {
		c := &sb.Status.Conditions[i]
		if c.Type == t {
			return &readCondition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	return nil
}

type readCondition struct{ Status, Reason, Message string }

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

// StateOf reads the Complete and Failed conditions.
func StateOf(sb *v1alpha1.StorageBenchmark) State {
	if c := condition(sb, v1alpha1.ConditionFailed); c != nil && c.Status == "True" {
		return StateFailed
	}
	if c := condition(sb, v1alpha1.ConditionComplete); c != nil && c.Status == "True" {
		return StateComplete
	}
	if len(sb.Status.Conditions) == 0 {
		return StatePending
	}
	return StateRunning
}

// SLOState is the SLOMet condition: "True", "False", or "" without
// objectives (or before the run ended); reason and message with it.
func SLOState(sb *v1alpha1.StorageBenchmark) (status, reason, message string) {
	if c := condition(sb, v1alpha1.ConditionSLOMet); c != nil {
		return c.Status, c.Reason, c.Message
	}
	return "", "", ""
}

// Phase is the Ready condition's reason (Preparing, Running, Completed or
// a failure's reason), as kubectl get's Status column shows it.
func Phase(sb *v1alpha1.StorageBenchmark) string {
	if c := condition(sb, v1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return string(StatePending)
}

// FailureMessage is the Failed condition's reason and message when the run
// failed, else "".
func FailureMessage(sb *v1alpha1.StorageBenchmark) string {
	if c := condition(sb, v1alpha1.ConditionFailed); c != nil && c.Status == "True" {
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

// profileName is the workload profile, or "custom" for explicit fields.
func profileName(sb *v1alpha1.StorageBenchmark) string {
	if p := sb.Spec.Workload.Profile; p != "" {
		return p
	}
	return "custom"
}
