package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// A volume-operations run: how long a class's control plane takes to
// provision, attach, snapshot, clone, expand and delete volumes, with 1,
// 2, 4 … of each started at once. apireport.OperationsFromAPI builds one
// from a VolumeOperationsBenchmark; this file renders it as the list
// row, the status text and the per-operation step tables, and package
// figure draws its latency-against-concurrency curves.

// OperationsRun is one VolumeOperationsBenchmark: what it times, where
// it is and the curve of each operation. Zero fields are unknown (or not
// yet known) and left out of the rendering.
type OperationsRun struct {
	Name, Namespace string
	// Created is when the benchmark was created (for list's age).
	Created time.Time
	// Class is the storage class timed; SnapshotClass the
	// VolumeSnapshotClass of snapshot operations; Provisioner the class's,
	// as read when the run started.
	Class, SnapshotClass, Provisioner string
	// Size, VolumeMode and AccessMode of each claim, as the spec says.
	Size, VolumeMode, AccessMode string

	// Phase is the Ready condition's reason (Running, Complete or why the
	// run failed; Pending before the operator reported), as kubectl get's
	// Status column shows it; State is the same, coarser; Message is the
	// condition's message.
	Phase   string
	State   State
	Message string
	// SLOStatus is "True", "False", or "" without objectives (or before
	// the run ended); SLOReason says why (AllMet, NotMet).
	SLOStatus, SLOReason string
	// Progress is status.progress: "step 2 of 3 (2 at once): snapshot".
	Progress string
	// Current is the operation step under way; nil before the first and
	// after the last.
	Current *OperationsCurrent

	// Operations and Concurrency are the spec's: what is timed, at which
	// concurrencies (the planned steps).
	Operations  []string
	Concurrency []int
	// Started and Ended bound the run (zero: not yet).
	Started, Ended time.Time
	// Curves are status.operations: one per operation, in spec order.
	Curves []OperationCurve
	// Objectives are the verdicts on spec.objectives.
	Objectives []SLO
	// Notes say what the class's driver does that the figures show.
	Notes []OperationNote
}

// OperationNote is one fact about the storage a reader of the curves must
// know: its name (FlexClone), the operations it concerns, and a sentence.
type OperationNote struct {
	Reason     string
	Operations []string
	Message    string
}

// Line is the note as the status and reports print it: "note FlexClone
// (cloneFromSnapshot): …".
func (n OperationNote) Line() string {
	line := "note " + n.Reason
	if len(n.Operations) > 0 {
		line += " (" + strings.Join(n.Operations, ", ") + ")"
	}
	return line + ": " + n.Message
}

// OperationsCurrent is the operation step under way.
type OperationsCurrent struct {
	Operation   string
	Concurrency int
	// Stage is Preparing, Timing or Clearing, since Since.
	Stage string
	Since time.Time
	// Attempt counts the step's starts.
	Attempt int
}

// OperationCurve is one operation's steps and their curve.
type OperationCurve struct {
	Operation string
	// Steps in ascending concurrency.
	Steps []OperationStep
	// Knee is the concurrency at which median latency bends upward; 0
	// without a knee.
	Knee int
	// PerOperation is the fitted time the path spends on one operation
	// (the slope of each step's slowest operation against concurrency);
	// nil without a fit.
	PerOperation *FittedDuration
}

// FittedDuration is a fitted figure and its 95 % confidence interval.
type FittedDuration struct {
	Value, Low, High time.Duration
	// Steps fitted.
	Steps int
}

// OperationStep is one operation at one concurrency.
type OperationStep struct {
	Concurrency                 int
	Succeeded, Failed, TimedOut int
	// Latency of the succeeded operations; nil when none succeeded.
	Latency *OperationLatency
	// Span is from the first request to the last completion.
	Span time.Duration
	// PerMinute is the status' decimal, as it is ("" without one).
	PerMinute string
	// Reason of the first operation that failed or timed out.
	Reason string
}

// OperationLatency is the latency of a step's succeeded operations.
type OperationLatency struct {
	Min, Mean, P50, P90, P99, Max time.Duration
}

// Failures are the step's operations that failed or timed out.
func (s *OperationStep) Failures() int { return s.Failed + s.TimedOut }

// Recorded is the number of operation steps status holds, and Planned
// the number the spec plans (operations × concurrencies; 0 when the spec
// is unknown).
func (r *OperationsRun) Recorded() int {
	n := 0
	for i := range r.Curves {
		n += len(r.Curves[i].Steps)
	}
	return n
}

// Planned is the number of operation steps the spec plans.
func (r *OperationsRun) Planned() int { return len(r.Operations) * len(r.Concurrency) }

// OperationsListTable is what `kubectl storagebench list sbops` prints:
// the printer columns of `kubectl get sbops` (the Ready reason as status,
// the class, the step under way or the operation steps recorded of those
// planned, the SLOMet reason, the age) with the namespace first when
// asked.
func OperationsListTable(runs []*OperationsRun, now time.Time, withNamespace bool) Table {
	t := Table{Header: []string{"NAME", "STATUS", "CLASS", "STEP", "SLO", "AGE"}}
	if withNamespace {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for _, r := range runs {
		progress := stepsOr(r.Progress, r.Recorded(), r.Planned())
		row := []string{r.Name, r.Phase, r.Class, progress, r.SLOReason, ageOf(r.Created, now)}
		if withNamespace {
			row = append([]string{r.Namespace}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// StepTable is an operation's steps, one row each: the concurrency, the
// operations by outcome, the latency percentiles and maximum, the rate,
// the knee's mark and the reason of the first failure.
func (c *OperationCurve) StepTable() Table {
	t := Table{
		Header:  []string{"at once", "succeeded", "failed", "timed out", "p50", "p90", "p99", "max", "per minute", "", "reason"},
		Numeric: []bool{true, true, true, true, true, true, true, true, true, false, false},
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		lat := []string{"-", "-", "-", "-"}
		if l := s.Latency; l != nil {
			lat = []string{numfmt.Duration(l.P50), numfmt.Duration(l.P90), numfmt.Duration(l.P99), numfmt.Duration(l.Max)}
		}
		perMinute := "-"
		if s.PerMinute != "" {
			perMinute = perMinuteOf(s.PerMinute)
		}
		var marks []string
		if c.Knee > 0 && s.Concurrency == c.Knee {
			marks = append(marks, "knee")
		}
		if s.Failures() > 0 {
			marks = append(marks, "failures")
		}
		row := append([]string{strconv.Itoa(s.Concurrency), strconv.Itoa(s.Succeeded), strconv.Itoa(s.Failed), strconv.Itoa(s.TimedOut)}, lat...)
		row = append(row, perMinute, strings.Join(marks, ","), s.Reason)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// perMinuteOf renders the status' decimal with thousands separators
// ("1,234.5"); a value that does not parse is shown as it is.
func perMinuteOf(s string) string {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return numfmt.Decimals(v, 2)
}

// SlopeLine sums an operation's curve up: the fitted time per operation
// with its 95 % confidence interval and the steps fitted, and the knee.
func (c *OperationCurve) SlopeLine() string {
	line := c.Operation + ": "
	if f := c.PerOperation; f != nil {
		line += numfmt.Duration(f.Value) + " per operation"
		if f.Low != f.High {
			line += " (95 % CI " + numfmt.Duration(f.Low) + " – " + numfmt.Duration(f.High) + ")"
		}
		line += fmt.Sprintf(", fitted over %d %s", f.Steps, plural(f.Steps, "step", "steps"))
	} else {
		line += "no time per operation (fewer than 2 steps without failures)"
	}
	if c.Knee > 0 {
		line += fmt.Sprintf("; knee at %d at once", c.Knee)
	} else {
		line += "; no knee"
	}
	return SafeLine(line)
}

// ShortSlope is the fitted time per operation for a figure's legend:
// "1.03 s/op (95 % CI 784 ms – 1.27 s)"; "" without a fit.
func (f *FittedDuration) ShortSlope() string {
	if f == nil {
		return ""
	}
	s := numfmt.Duration(f.Value) + "/op"
	if f.Low != f.High {
		s += " (95 % CI " + numfmt.Duration(f.Low) + " – " + numfmt.Duration(f.High) + ")"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// StorageLine describes what each operation asks of the storage: the
// class and its provisioner, the snapshot class, the claims' size and
// modes; as SafeLine escapes it.
func (r *OperationsRun) StorageLine() string {
	line := orDash(r.Class)
	if r.Provisioner != "" {
		line += " (" + r.Provisioner + ")"
	}
	var parts []string
	if r.SnapshotClass != "" {
		parts = append(parts, "snapshot class "+r.SnapshotClass)
	}
	if r.Size != "" {
		parts = append(parts, r.Size+" claims")
	}
	for _, m := range []string{r.VolumeMode, r.AccessMode} {
		if m != "" {
			parts = append(parts, m)
		}
	}
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	return SafeLine(line)
}

// PlanLine says what is timed: "provision, snapshot at 1, 2, 4 at once;
// 6/6 operation steps recorded".
func (r *OperationsRun) PlanLine() string {
	conc := make([]string, len(r.Concurrency))
	for i, c := range r.Concurrency {
		conc[i] = strconv.Itoa(c)
	}
	line := strings.Join(r.Operations, ", ")
	if len(conc) > 0 {
		line += " at " + strings.Join(conc, ", ") + " at once"
	}
	if p := r.Planned(); p > 0 {
		line += fmt.Sprintf("; %d/%d operation steps recorded", r.Recorded(), p)
	}
	return SafeLine(line)
}

// SummaryLines are the run's result: each operation's time per operation
// and knee (SlopeLine), then VerdictLines; each as SafeLine escapes it.
func (r *OperationsRun) SummaryLines() []string {
	var out []string
	for i := range r.Curves {
		out = append(out, r.Curves[i].SlopeLine())
	}
	if len(r.Curves) == 0 {
		out = append(out, "no operation step recorded yet")
	}
	return append(out, r.VerdictLines()...)
}

// VerdictLines are the objectives' verdicts, the notes and, for a failed
// run, why; each as SafeLine escapes it.
func (r *OperationsRun) VerdictLines() []string {
	out := sloLines(r.Objectives, r.SLOStatus, r.SLOReason)
	for _, n := range r.Notes {
		out = append(out, n.Line())
	}
	if r.State == StateFailed {
		out = append(out, "FAILED: "+r.Phase+": "+r.Message)
	}
	return SafeLines(out)
}

// WriteStatus prints what `kubectl storagebench status sbops/NAME` shows:
// the benchmark, its state, storage and plan, the step under way, then
// per operation its step table and time per operation, then the
// objectives. Text from the benchmark is printed as SafeLine escapes it
// (keyValues, Table.Text, SummaryLines).
func (r *OperationsRun) WriteStatus(w io.Writer, now time.Time) error {
	state, when := stateAndWhen(r.Phase, r.Message, r.Started, r.Ended, now)
	var step string
	if c := r.Current; c != nil {
		step = r.Progress
		if step == "" {
			step = fmt.Sprintf("%s, %d at once", c.Operation, c.Concurrency)
		}
		step += ": " + c.Stage
		if !c.Since.IsZero() {
			step += " for " + duration.HumanDuration(now.Sub(c.Since))
		}
		if c.Attempt > 1 {
			step += fmt.Sprintf(" (attempt %d)", c.Attempt)
		}
	}
	kv := [][2]string{
		{"Name", r.Name},
		{"Namespace", r.Namespace},
		{"Status", state},
		{"Storage", r.StorageLine()},
		{"Operations", r.PlanLine()},
		{"Step", step},
		{"Run", when},
	}
	if err := keyValues(w, kv); err != nil {
		return err
	}
	for i := range r.Curves {
		c := &r.Curves[i]
		fmt.Fprintf(w, "\n%s\n", SafeLine(c.Operation))
		t := c.StepTable()
		if err := t.Text(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, l := range r.SummaryLines() {
		fmt.Fprintln(w, l)
	}
	return nil
}
