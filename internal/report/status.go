package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/workload"
)

// StepTable is the per-step table the published reports lay out: offered
// load, achieved read and write IOPS, MiB/s, mean and p99 latency per
// operation, the clients' start skew and the saturated/knee marks. Steps are
// numbered from 1; with a repeated load a "run" column says which run of its
// level each step is ("2/3").
func (r *Run) StepTable() Table {
	t := Table{
		Header:  []string{"step", "offered", "read IOPS", "write IOPS", "MiB/s", "read mean", "read p99", "write mean", "write p99", "skew", ""},
		Numeric: []bool{true, true, true, true, true, true, true, true, true, true, false},
	}
	repeated := r.repeated()
	if repeated { // which run of its level each step is: "2/3"
		t.Header = slices.Insert(t.Header, 1, "run")
		t.Numeric = slices.Insert(t.Numeric, 1, true)
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		row := []string{
			fmt.Sprint(s.Index + 1), s.Offered(),
			opIOPS(s.Read), opIOPS(s.Write),
			numfmt.MiBps(s.AchievedBytesPerSec),
			opLatency(s.Read, analysis.MetricMean), opLatency(s.Read, analysis.MetricP99),
			opLatency(s.Write, analysis.MetricMean), opLatency(s.Write, analysis.MetricP99),
			s.StartSkew.Round(100 * time.Microsecond).String(),
			strings.Join(s.Marks(), ","),
		}
		if repeated {
			run := ""
			if s.Repetition > 0 {
				run = fmt.Sprintf("%d/%d", s.Repetition, max(r.Repeat, s.Repetition))
			}
			row = slices.Insert(row, 1, run)
		}
		t.Rows = append(t.Rows, row)
	}
	if slices.ContainsFunc(r.Steps, func(s Step) bool { return s.Sync != nil }) {
		t = withSyncColumns(t, r.Steps)
	}
	if slices.ContainsFunc(r.Steps, func(s Step) bool { return s.Backend != nil }) {
		t = withBackendColumns(t, r.Steps)
	}
	return t
}

// withSyncColumns adds, before the marks, the sync calls of a workload
// that makes them: their rate and their p99 and p99.9 latency (a
// database log's figures of merit).
func withSyncColumns(t Table, steps []Step) Table {
	return withNumericColumns(t, []string{"syncs/s", "sync p99", "sync p99.9"}, func(i int) []string {
		s := steps[i].Sync
		return []string{opIOPS(s), opLatency(s, analysis.MetricP99), opLatency(s, analysis.MetricP999)}
	})
}

// withBackendColumns adds, before the marks, what the storage reported
// for each step: its IOPS, its mean latency, and the clients' mean
// latency minus it (the time outside the storage).
func withBackendColumns(t Table, steps []Step) Table {
	return withNumericColumns(t, []string{"storage IOPS", "storage mean", "outside storage"}, func(i int) []string {
		b := steps[i].Backend
		cells := []string{"", "", ""}
		switch {
		case b == nil:
		case b.TooShort:
			cells[0] = "too short"
		default:
			cells[0] = numfmt.Count(b.IOPS)
			if b.Latency > 0 {
				cells[1] = numfmt.Duration(b.Latency)
				cells[2] = numfmt.Duration(b.Gap)
				if b.Gap < 0 { // the storage timed more than the clients did
					cells[2] = "−" + numfmt.Duration(-b.Gap)
				}
			}
		}
		return cells
	})
}

// withNumericColumns inserts numeric columns named header before the
// marks (the last column), row i's cells being cells(i).
func withNumericColumns(t Table, header []string, cells func(i int) []string) Table {
	at := len(t.Header) - 1
	t.Header = slices.Insert(t.Header, at, header...)
	for range header {
		t.Numeric = slices.Insert(t.Numeric, at, true)
	}
	for i := range t.Rows {
		t.Rows[i] = slices.Insert(t.Rows[i], at, cells(i)...)
	}
	return t
}

// repeated reports whether the load runs each step more than once.
func (r *Run) repeated() bool {
	return r.Repeat > 1 || slices.ContainsFunc(r.Steps, func(s Step) bool { return s.Repetition > 0 })
}

// RepeatabilityTable is how much the runs of each repeated load level
// varied: the mean, the coefficient of variation and the 95 % confidence
// interval of the mean of the achieved IOPS and of the p99 latency
// (VariationSelector), marked "unstable" above the benchmark's limit.
// Levels are numbered from 1; it has no rows without repeated levels.
func (r *Run) RepeatabilityTable() Table {
	t := Table{
		Header:  []string{"level", "offered", "runs", "IOPS", "IOPS CV", "IOPS 95 % CI", "p99", "p99 CV", "p99 95 % CI", ""},
		Numeric: []bool{true, true, true, true, true, true, true, true, true, false},
	}
	for i := range r.Repeatability {
		v := &r.Repeatability[i]
		p99, p99CV, p99CI := "-", "-", "-"
		if l := v.P99; l != nil {
			p99, p99CV = numfmt.Duration(l.Mean), numfmt.Percent(l.CVPercent, 0)
			p99CI = numfmt.Duration(l.CI95Low) + " – " + numfmt.Duration(l.CI95High)
		}
		mark := ""
		if v.Stable != nil && !*v.Stable {
			mark = "unstable"
		}
		t.Rows = append(t.Rows, []string{
			fmt.Sprint(v.Level + 1), v.Offered(), fmt.Sprint(v.Runs),
			numfmt.Count(v.IOPS.Mean), numfmt.Percent(v.IOPS.CVPercent, 0),
			numfmt.Count(v.IOPS.CI95Low) + " – " + numfmt.Count(v.IOPS.CI95High),
			p99, p99CV, p99CI, mark,
		})
	}
	return t
}

// RepeatabilityLine sums the repeatability table up: how many levels were
// repeated, and the largest coefficient of variation of the IOPS and of
// the p99 latency with their levels; "" without repeated levels.
func (r *Run) RepeatabilityLine() string {
	if len(r.Repeatability) == 0 {
		return ""
	}
	minRuns, maxRuns := r.Repeatability[0].Runs, r.Repeatability[0].Runs
	iops, p99 := -1, -1
	for i, v := range r.Repeatability {
		minRuns, maxRuns = min(minRuns, v.Runs), max(maxRuns, v.Runs)
		if iops < 0 || v.IOPS.CVPercent > r.Repeatability[iops].IOPS.CVPercent {
			iops = i
		}
		if v.P99 != nil && (p99 < 0 || v.P99.CVPercent > r.Repeatability[p99].P99.CVPercent) {
			p99 = i
		}
	}
	runs := fmt.Sprint(minRuns)
	if maxRuns != minRuns {
		runs = fmt.Sprintf("%d–%d", minRuns, maxRuns)
	}
	levels := "levels"
	if len(r.Repeatability) == 1 {
		levels = "level"
	}
	line := fmt.Sprintf("repeatability: %d %s of %s runs; largest coefficient of variation: IOPS %s (level %d)",
		len(r.Repeatability), levels, runs, numfmt.Percent(r.Repeatability[iops].IOPS.CVPercent, 0), r.Repeatability[iops].Level+1)
	if p99 >= 0 {
		line += fmt.Sprintf(", %s %s (level %d)", r.VariationSelector(), numfmt.Percent(r.Repeatability[p99].P99.CVPercent, 0), r.Repeatability[p99].Level+1)
	}
	return line
}

// Offered renders a step's offered load: "20,000 IOPS", "512 MiB/s",
// "QD 32", "max" (a curve's unthrottled step), with a curve step's
// percentage of the maximum.
func (s *Step) Offered() string {
	var o string
	switch {
	case s.OfferedIOPS > 0:
		o = numfmt.Count(float64(s.OfferedIOPS)) + " IOPS"
	case s.OfferedBytesPerSec > 0:
		o = numfmt.Count(float64(s.OfferedBytesPerSec)/mib) + " MiB/s"
	case s.QueueDepthPerClient > 0:
		o = fmt.Sprintf("QD %d", s.QueueDepthPerClient)
	default:
		o = "max"
	}
	if s.PercentOfMax > 0 && s.offersLoad() {
		o += " (" + numfmt.Percent(float64(s.PercentOfMax), 0) + ")"
	}
	switch {
	case s.ActiveClients == 1:
		o = "1 client, " + o
	case s.ActiveClients > 1:
		o = fmt.Sprintf("%d clients, %s", s.ActiveClients, o)
	}
	return o
}

// offersLoad says whether the step offered a rate or a queue
// depth (otherwise it ran at the most its clients could do: "max").
func (s *Step) offersLoad() bool {
	return s.OfferedIOPS > 0 || s.OfferedBytesPerSec > 0 || s.QueueDepthPerClient > 0
}

// Marks are a step's flags: a rerun's attempt, superseded, the
// client-bound check, saturated, queue full,
// closed-loop, knee, not steady, stall, uneven clients, clients past a
// CPU bound, I/Os beyond fio's histogram, interrupted, failed.
func (s *Step) Marks() []string {
	var m []string
	if s.Attempt > 1 {
		m = append(m, fmt.Sprintf("attempt %d", s.Attempt))
	}
	if s.Superseded {
		m = append(m, "superseded")
	}
	if s.ClientBoundCheck {
		m = append(m, "2× outstanding I/O")
	}
	if s.Saturated {
		m = append(m, "saturated")
	}
	if s.QueueFull {
		m = append(m, "queue full")
	}
	if s.ClosedLoop {
		m = append(m, "closed-loop")
	}
	if s.NotSteady {
		m = append(m, "not steady")
	}
	if s.Stall > 0 {
		m = append(m, "stall "+s.Stall.String())
	}
	// Rounded as status rounds it: a local report and the plugin's agree.
	if analysis.Uneven(s.ClientCVPercent) {
		m = append(m, fmt.Sprintf("uneven clients (CV %.0f %%)", math.Round(s.ClientCVPercent)))
	}
	if s.CPUBoundClients > 0 {
		m = append(m, fmt.Sprintf("client CPU (%d)", s.CPUBoundClients))
	}
	if s.Overflow > 0 {
		m = append(m, numfmt.Count(float64(s.Overflow))+" I/Os ≥ 17 s")
	}
	if s.Knee {
		m = append(m, "knee")
	}
	if v := s.Verify; v != nil {
		m = append(m, v.Mark())
	}
	if s.Interrupted {
		m = append(m, "interrupted")
	}
	if s.Failed() {
		m = append(m, "failed")
	}
	return m
}

func opIOPS(o *OperationFigures) string {
	if o == nil {
		return "-"
	}
	return numfmt.Count(o.IOPS)
}

func opLatency(o *OperationFigures, m string) string {
	l, ok := o.metric(m)
	if !ok {
		return "-"
	}
	return numfmt.Duration(l)
}

// SummaryLines are the run's result: peak, latency at the peak,
// performance at the latency target, knee, SLO verdicts, how the load ended
// and, for a failed run, why. They quote the operator's messages, which
// quote clients' errors: each line is as SafeLine escapes it.
func (r *Run) SummaryLines() []string {
	var out []string
	sel, unit := r.Target, r.Unit
	if s := r.Summary; s != nil && (s.PeakIOPS > 0 || s.PeakBytesPerSec > 0) {
		iops := numfmt.Count(s.PeakIOPS) + " IOPS"
		if s.PeakIOPSStep >= 0 {
			iops += fmt.Sprintf(" (step %d)", s.PeakIOPSStep+1)
		}
		bytes := numfmt.MiBps(s.PeakBytesPerSec) + " MiB/s"
		if s.PeakBytesStep >= 0 {
			bytes += fmt.Sprintf(" (step %d)", s.PeakBytesStep+1)
		}
		line := "peak: " + iops + ", " + bytes
		if unit == UnitMiBps {
			line = "peak: " + bytes + ", " + iops
		}
		if s.LatencyAtPeak > 0 {
			line += fmt.Sprintf(", %s at peak %s", sel, numfmt.Duration(s.LatencyAtPeak))
		}
		if s.P99LatencyAtPeak > 0 {
			line += ", p99 at peak " + numfmt.Duration(s.P99LatencyAtPeak)
		}
		out = append(out, line)
		target := fmt.Sprintf("performance at the latency target (%s ≤ %s)", sel, numfmt.Duration(r.LatencyTarget))
		if a := s.AtTarget; a != nil {
			first, second := numfmt.Count(a.IOPS)+" IOPS", numfmt.MiBps(a.BytesPerSec)+" MiB/s"
			if unit == UnitMiBps {
				first, second = second, first
			}
			out = append(out, fmt.Sprintf("%s: %s (%s) at %s (step %d)", target, first, second, numfmt.Duration(a.Latency), a.Step+1))
		} else {
			out = append(out, target+": no step was at or below the target")
		}
		if s.KneeStep >= 0 {
			line := fmt.Sprintf("knee: step %d", s.KneeStep+1)
			if k := r.stepByIndex(s.KneeStep); k != nil {
				line += " at " + unit.Format(unit.Achieved(k))
			}
			out = append(out, line)
		} else {
			out = append(out, "knee: none found")
		}
	} else if len(r.Steps) == 0 {
		out = append(out, "no step finished yet")
	}
	if l := r.RepeatabilityLine(); l != "" {
		out = append(out, l)
	}
	out = append(out, r.verdictLines()...)
	out = append(out, sloLines(r.SLOs, r.SLOStatus, r.SLOReason)...)
	if r.StopReason != "" {
		out = append(out, "ended: "+r.StopReason)
	}
	if r.Failure != "" {
		out = append(out, "FAILED: "+r.Failure)
	}
	return SafeLines(out)
}

// sloLines are the objectives' verdicts, a line each, then the SLOMet
// condition's ("" status: none, before the run ended or without
// objectives); unescaped.
func sloLines(slos []SLO, status, reason string) []string {
	var out []string
	for _, s := range slos {
		line := fmt.Sprintf("SLO %s: %s", s.Name, s.Verdict)
		if s.Message != "" {
			line += " — " + s.Message
		}
		out = append(out, line)
	}
	if status != "" {
		out = append(out, fmt.Sprintf("SLOs: %s (SLOMet %s)", reason, status))
	}
	return out
}

// StorageLines describe the storage used: class and provisioner, claims,
// capacity and modes, Trident's driver and backend, the mounts the clients
// saw, the volumes, a NetApp Volumes entitlement and storage warnings.
// Each line is as SafeLine escapes it (the mounts are as clients reported
// them).
func (r *Run) StorageLines() []string {
	s := r.Storage
	if s == nil {
		if r.Class != "" {
			return SafeLines([]string{"class " + r.Class + " (not provisioned yet)"})
		}
		return nil
	}
	var out []string
	line := s.Class
	if s.Provisioner != "" {
		line += " (" + s.Provisioner + ")"
	}
	var parts []string
	if s.Driver != "" {
		parts = append(parts, "Trident driver "+s.Driver)
	}
	parts = append(parts, fmt.Sprintf("%d/%d claims bound", s.ClaimsBound, s.Claims))
	if s.Capacity != "" {
		parts = append(parts, s.Capacity+" each")
	}
	for _, m := range []string{s.VolumeMode, s.AccessMode} {
		if m != "" {
			parts = append(parts, m)
		}
	}
	out = append(out, line+": "+strings.Join(parts, ", "))
	if b := s.Backend; b != nil {
		line := "backend " + b.Name
		var d []string
		for _, v := range []string{b.Driver, b.Protocol, b.Version, b.State} {
			if v != "" {
				d = append(d, v)
			}
		}
		if len(d) > 0 {
			line += " (" + strings.Join(d, ", ") + ")"
		}
		out = append(out, line)
	}
	for _, m := range s.Mounts {
		out = append(out, fmt.Sprintf("mount %s %s (%d clients)", m.FSType, m.Options, m.Clients))
	}
	for _, v := range s.Volumes {
		line := "volume " + v.Claim + " → " + v.PersistentVolume
		if v.Capacity != "" {
			line += " " + v.Capacity
		}
		for _, kv := range [][2]string{{"pool", v.Pool}, {"QoS", v.QoSPolicy}, {"service level", v.ServiceLevel}, {"tiering", v.TieringPolicy}} {
			if kv[1] != "" {
				line += ", " + kv[0] + " " + kv[1]
			}
		}
		out = append(out, line)
	}
	if s.VolumesOmitted > 0 {
		out = append(out, fmt.Sprintf("(%d more volumes)", s.VolumesOmitted))
	}
	if e := s.Entitlement; e != nil {
		line := "entitlement " + e.ServiceLevel
		if e.ThroughputBytesPerSec > 0 {
			// As the entitlement's own message prints it (internal/trident).
			line += " " + numfmt.Quotient(e.ThroughputBytesPerSec, mib, 2) + " MiB/s"
		}
		if e.PeakPercent > 0 {
			line += ", peak at " + numfmt.Percent(float64(e.PeakPercent), 0) + " of it"
		}
		if e.Message != "" {
			line += " — " + e.Message
		}
		out = append(out, line)
		if e.SaturationNote != "" {
			out = append(out, e.SaturationNote)
		}
	}
	if r.StorageWarning != "" {
		out = append(out, "WARNING "+r.StorageWarning)
	}
	return SafeLines(out)
}

// WorkloadLine describes the I/O pattern: "oltp: 8 KiB, 80 % reads,
// random, iodepth 16, libaio, direct, 32 GiB per client; 5 clients × 4 jobs",
// as SafeLine escapes it.
func (r *Run) WorkloadLine() string {
	line := r.ProfileName()
	if w := r.Workload; w != nil {
		parts := []string{numfmt.Size(w.BlockSizeBytes), numfmt.Percent(float64(w.ReadPercent), 0) + " reads", string(w.Pattern), fmt.Sprintf("iodepth %d", w.IODepth), string(w.IOEngine)}
		if w.Direct {
			parts = append(parts, "direct")
		}
		parts = append(parts, numfmt.Size(w.WorkingSetBytesPerClient)+" per client")
		if w.CompressPercent > 0 {
			parts = append(parts, numfmt.Percent(float64(w.CompressPercent), 0)+" compressible")
		}
		if w.DedupePercent > 0 {
			parts = append(parts, numfmt.Percent(float64(w.DedupePercent), 0)+" repeated buffers")
		}
		switch {
		case w.Sync.Call() && w.SyncEvery == 1:
			parts = append(parts, string(w.Sync)+" after each write")
		case w.Sync.Call():
			parts = append(parts, fmt.Sprintf("%s after every %d writes", w.Sync, w.SyncEvery))
		case w.Sync == workload.DSync:
			parts = append(parts, "O_DSYNC writes")
		}
		line += ": " + strings.Join(parts, ", ")
	}
	return SafeLine(line + fmt.Sprintf("; %d clients × %d jobs", max(r.Clients, 1), max(r.JobsPerClient, 1)))
}

// LoadLine describes the load plan: "8/8 steps of 2m (+15s ramp), offered
// in IOPS".
func (r *Run) LoadLine() string {
	kind := "rate in " + r.Unit.Label()
	switch r.LoadKind {
	case LoadQueueDepth:
		kind = "queue depth"
	case LoadCurve:
		kind = "curve in " + r.Unit.Label()
	}
	if r.StepsPlanned == 0 {
		return fmt.Sprintf("steps of %s (+%s ramp), %s", shortDuration(r.StepDuration), shortDuration(r.RampTime), kind)
	}
	return fmt.Sprintf("%d/%d steps of %s (+%s ramp), %s", len(r.Steps), r.StepsPlanned, shortDuration(r.StepDuration), shortDuration(r.RampTime), kind)
}

// shortDuration drops a Go duration's zero units: 2m0s => "2m".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// WriteStatus prints what `kubectl storagebench status` shows: the
// benchmark, its state, storage and workload, the per-step table and the
// summary. Text from the benchmark is printed as SafeLine escapes it
// (keyValues, Table.Text, SummaryLines).
func (r *Run) WriteStatus(w io.Writer, now time.Time) error {
	state, when := stateAndWhen(r.Phase, r.Message, r.Started, r.Ended, now)
	kv := [][2]string{
		{"Name", r.Name},
		{"Namespace", r.Namespace},
		{"Status", state},
		{"Workload", r.WorkloadLine()},
		{"Load", r.LoadLine()},
		{"Run", when},
	}
	for i, l := range r.StorageLines() {
		k := ""
		if i == 0 {
			k = "Storage"
		}
		kv = append(kv, [2]string{k, l})
	}
	if err := keyValues(w, kv); err != nil {
		return err
	}
	if len(r.Steps) > 0 {
		fmt.Fprintln(w)
		t := r.StepTable()
		if err := t.Text(w); err != nil {
			return err
		}
	}
	if len(r.Repeatability) > 0 {
		fmt.Fprintf(w, "\nrepeatability of each level's runs (%s, Student's t):\n", r.RepeatabilityKey())
		t := r.RepeatabilityTable()
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

// stateAndWhen are a status' Status and Run values: the phase with the
// Ready condition's message, and when the run started and ended (and how
// long it took), or how long ago it started; when is "" before the start.
func stateAndWhen(phase, message string, started, ended, now time.Time) (state, when string) {
	state = phase
	if message != "" {
		state += " — " + message
	}
	if !started.IsZero() {
		when = "started " + started.UTC().Format(time.RFC3339)
		if !ended.IsZero() {
			when += ", ended " + ended.UTC().Format(time.RFC3339) +
				" (" + duration.HumanDuration(ended.Sub(started)) + ")"
		} else {
			when += " (" + duration.HumanDuration(now.Sub(started)) + " ago)"
		}
	}
	return state, when
}

// ListTableOf is what `kubectl storagebench list` prints: the printer
// columns of `kubectl get sbench`, with figures formatted (peak in the
// load's unit, p99 at the peak as a latency) and the namespace first when
// listing all namespaces.
func ListTableOf(runs []*Run, now time.Time, withNamespace bool) Table {
	t := Table{Header: []string{"NAME", "STATUS", "CLASS", "PROFILE", "STEP", "PEAK", "P99 AT PEAK", "SLO", "AGE"}}
	t.Numeric = []bool{false, false, false, false, false, true, true, false, false}
	if withNamespace {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
		t.Numeric = append([]bool{false}, t.Numeric...)
	}
	for _, r := range runs {
		peak, p99 := "", ""
		if s := r.Summary; s != nil {
			if r.Unit == UnitMiBps && s.PeakBytesPerSec > 0 {
				peak = UnitMiBps.Format(s.PeakBytesPerSec / mib)
			} else if s.PeakIOPS > 0 {
				peak = UnitIOPS.Format(s.PeakIOPS)
			}
			if s.P99LatencyAtPeak > 0 {
				p99 = numfmt.Duration(s.P99LatencyAtPeak)
			}
		}
		progress := stepsOr(r.ProgressText, len(r.Steps), r.StepsPlanned)
		row := []string{r.Name, r.Phase, r.Class, r.Profile, progress, peak, p99, r.SLOReason, ageOf(r.Created, now)}
		if withNamespace {
			row = append([]string{r.Namespace}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// stepsOr is a list's STEP column: the status' progress text, or else
// the steps recorded of those planned ("3/8"); "" with neither.
func stepsOr(progress string, recorded, planned int) string {
	if progress == "" && planned > 0 {
		return fmt.Sprintf("%d/%d", recorded, planned)
	}
	return progress
}

// ageOf is a list's AGE column: how long ago the object was created.
func ageOf(created, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}

// RepeatabilityKey says what the repeatability table's p99 and CI are, for
// its heading in every format.
func (r *Run) RepeatabilityKey() string {
	return fmt.Sprintf("p99: the %s; CI: 95 %% confidence interval of the mean", r.VariationSelector())
}

// verdictLines are the run's verdicts on its own figures and data: the
// levels' variation, the client-bound check, the read-backs.
func (r *Run) verdictLines() []string {
	var out []string
	if r.Unstable != "" {
		out = append(out, "UNSTABLE "+r.Unstable)
	}
	if r.ClientBound != "" {
		what := "maximum is the storage's"
		if r.ClientBoundTrue {
			what = "CLIENT-BOUND"
		}
		out = append(out, what+": "+r.ClientBound)
	}
	if r.ClientCPUTrue { // its headroom is in status, not worth a line
		out = append(out, "CLIENT CPU-BOUND: "+r.ClientCPU)
	}
	if r.Integrity != "" {
		what := "data integrity"
		switch {
		case r.IntegrityTrue:
			what = "data read back as written"
		case strings.HasPrefix(r.Integrity, "DataCorrupted:"):
			what = "DATA NOT AS WRITTEN"
		}
		out = append(out, what+": "+r.Integrity)
	}
	return out
}

// Mark says a read-back plainly: its bad blocks, or how many blocks read
// back intact, and those it did not read.
func (v *ReadBack) Mark() string {
	m := numfmt.Count(float64(v.Verified)) + " blocks read back intact"
	if v.Bad > 0 {
		m = fmt.Sprintf("%s of %s blocks NOT AS WRITTEN", numfmt.Count(float64(v.Bad)), numfmt.Count(float64(v.Verified)))
	}
	if v.Unread > 0 {
		m += ", " + numfmt.Count(float64(v.Unread)) + " not read"
	}
	return m
}
