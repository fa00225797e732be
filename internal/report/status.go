package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
)

// StepTable is the per-step table the published reports lay out: offered
// load, achieved read and write IOPS, MiB/s, mean and p99 latency per
// direction, the clients' start skew and the saturated/knee marks. Steps are
// numbered from 1.
func StepTable(sb *v1alpha1.StorageBenchmark) Table {
	t := Table{
		Header:  []string{"step", "offered", "read IOPS", "write IOPS", "MiB/s", "read mean", "read p99", "write mean", "write p99", "skew", ""},
		Numeric: []bool{true, true, true, true, true, true, true, true, true, true, false},
	}
	for i := range sb.Status.Steps {
		s := &sb.Status.Steps[i]
		t.Rows = append(t.Rows, []string{
			fmt.Sprint(s.Index + 1), Offered(s),
			opIOPS(s.Read), opIOPS(s.Write),
			formatMiBps(float64(s.AchievedBytesPerSecond) / mib),
			opLatency(s.Read, "mean"), opLatency(s.Read, "p99"),
			opLatency(s.Write, "mean"), opLatency(s.Write, "p99"),
			s.StartSkew.Round(100 * time.Microsecond).String(),
			strings.Join(Marks(s), ","),
		})
	}
	return t
}

// Offered renders a step's offered load: "20,000 IOPS", "512 MiB/s",
// "QD 32", "max" (a curve's unthrottled step), with a curve step's
// percentage of the maximum.
func Offered(s *v1alpha1.StepStatus) string {
	var o string
	switch {
	case s.OfferedIOPS > 0:
		o = analysis.FormatCount(float64(s.OfferedIOPS)) + " IOPS"
	case s.OfferedBytesPerSecond > 0:
		o = analysis.FormatCount(float64(s.OfferedBytesPerSecond)/mib) + " MiB/s"
	case s.QueueDepthPerClient > 0:
		o = fmt.Sprintf("QD %d", s.QueueDepthPerClient)
	default:
		return "max"
	}
	if s.PercentOfMax > 0 {
		o += fmt.Sprintf(" (%d %%)", s.PercentOfMax)
	}
	return o
}

// Marks are a step's flags: saturated, knee, interrupted, failed.
func Marks(s *v1alpha1.StepStatus) []string {
	var m []string
	if s.Saturated {
		m = append(m, "saturated")
	}
	if s.Knee {
		m = append(m, "knee")
	}
	if s.Interrupted {
		m = append(m, "interrupted")
	}
	if failed(s) {
		m = append(m, "failed")
	}
	return m
}

func opIOPS(o *v1alpha1.OperationStatus) string {
	if o == nil {
		return "-"
	}
	return analysis.FormatCount(float64(o.IOPS))
}

func opLatency(o *v1alpha1.OperationStatus, m v1alpha1.LatencyMetric) string {
	if o == nil {
		return "-"
	}
	return formatLatency(metricOf(&o.Latency, m))
}

func formatLatency(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return analysis.FormatLatency(uint64(d))
}

// SummaryLines are the run's result: peak, latency at the peak,
// performance at the latency target, knee, SLO verdicts, how the load ended
// and, for a failed run, why.
func SummaryLines(sb *v1alpha1.StorageBenchmark) []string {
	var out []string
	st := &sb.Status
	sel := TargetSelector(sb)
	unit := UnitOf(sb)
	if s := st.Summary; s != nil && (s.PeakIOPS > 0 || s.PeakBytesPerSecond > 0) {
		iops := analysis.FormatCount(float64(s.PeakIOPS)) + " IOPS"
		if s.PeakIOPSStep != nil {
			iops += fmt.Sprintf(" (step %d)", *s.PeakIOPSStep+1)
		}
		bytes := formatMiBps(float64(s.PeakBytesPerSecond)/mib) + " MiB/s"
		if i := peakBytesStep(sb); i >= 0 {
			bytes += fmt.Sprintf(" (step %d)", i+1)
		}
		line := "peak: " + iops + ", " + bytes
		if unit == UnitMiBps {
			line = "peak: " + bytes + ", " + iops
		}
		if s.LatencyAtPeak != nil {
			line += fmt.Sprintf(", %s at peak %s", sel, formatLatency(s.LatencyAtPeak.Duration))
		}
		if s.P99LatencyAtPeak != nil {
			line += ", p99 at peak " + formatLatency(s.P99LatencyAtPeak.Duration)
		}
		out = append(out, line)
		target := fmt.Sprintf("performance at the latency target (%s ≤ %s)", sel, formatLatency(LatencyTarget(sb)))
		if a := s.AtTarget; a != nil {
			first, second := analysis.FormatCount(float64(a.IOPS))+" IOPS", formatMiBps(float64(a.BytesPerSecond)/mib)+" MiB/s"
			if unit == UnitMiBps {
				first, second = second, first
			}
			out = append(out, fmt.Sprintf("%s: %s (%s) at %s (step %d)", target, first, second, formatLatency(a.Latency.Duration), a.Step+1))
		} else {
			out = append(out, target+": no step was at or below the target")
		}
		if s.KneeStep != nil {
			line := fmt.Sprintf("knee: step %d", *s.KneeStep+1)
			if k := stepByIndex(sb, *s.KneeStep); k != nil {
				line += " at " + unit.Format(unit.Achieved(k))
			}
			out = append(out, line)
		} else {
			out = append(out, "knee: none found")
		}
	} else if len(st.Steps) == 0 {
		out = append(out, "no step finished yet")
	}
	for _, s := range st.SLOs {
		line := fmt.Sprintf("SLO %s: %s", s.Name, s.Verdict)
		if s.Message != "" {
			line += " — " + s.Message
		}
		out = append(out, line)
	}
	if status, reason, _ := SLOState(sb); status != "" {
		out = append(out, fmt.Sprintf("SLOs: %s (SLOMet %s)", reason, status))
	}
	if st.StopReason != "" {
		out = append(out, "ended: "+st.StopReason)
	}
	if f := FailureMessage(sb); f != "" {
		out = append(out, "FAILED: "+f)
	}
	return out
}

func stepByIndex(sb *v1alpha1.StorageBenchmark, i int32) *v1alpha1.StepStatus {
	for k := range sb.Status.Steps {
		if sb.Status.Steps[k].Index == i {
			return &sb.Status.Steps[k]
		}
	}
	return nil
}

// peakBytesStep is the index of the successful step with the highest
// achieved bandwidth, or -1.
func peakBytesStep(sb *v1alpha1.StorageBenchmark) int32 {
	best := int32(-1)
	var bytes int64
	for i := range sb.Status.Steps {
		s := &sb.Status.Steps[i]
		if !failed(s) && s.AchievedBytesPerSecond > bytes {
			best, bytes = s.Index, s.AchievedBytesPerSecond
		}
	}
	return best
}

// StorageLines describe the storage used: class and provisioner, claims,
// capacity and modes, Trident's driver and backend, the mounts the clients
// saw, the volumes, a NetApp Volumes entitlement and storage warnings.
func StorageLines(sb *v1alpha1.StorageBenchmark) []string {
	s := sb.Status.Storage
	if s == nil {
		if c := className(sb); c != "" {
			return []string{"class " + c + " (not provisioned yet)"}
		}
		return nil
	}
	var out []string
	line := s.StorageClassName
	if s.Provisioner != "" {
		line += " (" + s.Provisioner + ")"
	}
	var parts []string
	if s.Driver != "" {
		parts = append(parts, "Trident driver "+s.Driver)
	}
	parts = append(parts, fmt.Sprintf("%d/%d claims bound", s.ClaimsBound, s.Claims))
	if s.Capacity != nil {
		parts = append(parts, s.Capacity.String()+" each")
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
		for _, v := range []string{b.Driver, b.Version, b.State} {
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
		if v.Capacity != nil {
			line += " " + v.Capacity.String()
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
		if e.ThroughputBytesPerSecond > 0 {
			line += " " + analysis.FormatCount(float64(e.ThroughputBytesPerSecond)/mib) + " MiB/s"
		}
		if e.PeakPercent > 0 {
			line += fmt.Sprintf(", peak at %d %% of it", e.PeakPercent)
		}
		if e.Message != "" {
			line += " — " + e.Message
		}
		out = append(out, line)
		if e.SaturationNote != "" {
			out = append(out, e.SaturationNote)
		}
	}
	if c := condition(sb, v1alpha1.ConditionStorageWarning); c != nil && c.Status == "True" {
		out = append(out, "WARNING "+c.Reason+": "+c.Message)
	}
	return out
}

// WorkloadLine describes the I/O pattern: "oltp: 8 KiB, 80 % reads,
// random, iodepth 16, libaio, direct, 32 GiB per client; 5 clients × 4 jobs".
func WorkloadLine(sb *v1alpha1.StorageBenchmark) string {
	line := profileName(sb)
	if w := sb.Status.Workload; w != nil {
		parts := []string{sizeString(w.BlockSizeBytes), fmt.Sprintf("%d %% reads", w.ReadPercent), w.Pattern, fmt.Sprintf("iodepth %d", w.IODepth), w.IOEngine}
		if w.Direct {
			parts = append(parts, "direct")
		}
		parts = append(parts, sizeString(w.WorkingSetBytesPerClient)+" per client")
		if w.CompressPercent > 0 {
			parts = append(parts, fmt.Sprintf("%d %% compressible", w.CompressPercent))
		}
		line += ": " + strings.Join(parts, ", ")
	}
	c := sb.Spec.Clients
	return line + fmt.Sprintf("; %d clients × %d jobs", max(c.Count, 1), max(c.JobsPerClient, 1))
}

// sizeString renders bytes in binary units: 8192 => "8 KiB".
func sizeString(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// StepLength is how long one step takes: its measurement plus the ramp
// (API defaults 60s and 5s when unset).
func StepLength(sb *v1alpha1.StorageBenchmark) (measure, ramp time.Duration) {
	measure, ramp = sb.Spec.Load.StepDuration.Duration, 5*time.Second
	if measure <= 0 {
		measure = time.Minute
	}
	if r := sb.Spec.Load.RampTime; r != nil {
		ramp = r.Duration
	}
	return measure, ramp
}

// LoadLine describes the load plan: "8/8 steps of 2m (+15s ramp), offered
// in IOPS".
func LoadLine(sb *v1alpha1.StorageBenchmark) string {
	measure, ramp := StepLength(sb)
	kind := "rate in " + UnitOf(sb).Label()
	switch {
	case sb.Spec.Load.QueueDepth != nil:
		kind = "queue depth"
	case sb.Spec.Load.Curve != nil:
		kind = "curve in " + UnitOf(sb).Label()
	}
	planned := sb.Status.StepsPlanned
	if planned == 0 {
		return fmt.Sprintf("steps of %s (+%s ramp), %s", shortDuration(measure), shortDuration(ramp), kind)
	}
	return fmt.Sprintf("%d/%d steps of %s (+%s ramp), %s", len(sb.Status.Steps), planned, shortDuration(measure), shortDuration(ramp), kind)
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
// summary.
func WriteStatus(w io.Writer, sb *v1alpha1.StorageBenchmark, now time.Time) error {
	st := &sb.Status
	state := Phase(sb)
	if c := condition(sb, v1alpha1.ConditionReady); c != nil && c.Message != "" {
		state += " — " + c.Message
	}
	var when string
	if st.StartTime != nil {
		when = "started " + st.StartTime.UTC().Format(time.RFC3339)
		if st.CompletionTime != nil {
			when += ", ended " + st.CompletionTime.UTC().Format(time.RFC3339) +
				" (" + duration.HumanDuration(st.CompletionTime.Sub(st.StartTime.Time)) + ")"
		} else {
			when += " (" + duration.HumanDuration(now.Sub(st.StartTime.Time)) + " ago)"
		}
	}
	storage := StorageLines(sb)
	kv := [][2]string{
		{"Name", sb.Name},
		{"Namespace", sb.Namespace},
		{"Status", state},
		{"Workload", WorkloadLine(sb)},
		{"Load", LoadLine(sb)},
		{"Run", when},
	}
	for i, l := range storage {
		k := ""
		if i == 0 {
			k = "Storage"
		}
		kv = append(kv, [2]string{k, l})
	}
	if err := keyValues(w, kv); err != nil {
		return err
	}
	if len(st.Steps) > 0 {
		fmt.Fprintln(w)
		t := StepTable(sb)
		if err := t.Text(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, l := range SummaryLines(sb) {
		fmt.Fprintln(w, l)
	}
	return nil
}

// ListTable is what `kubectl storagebench list` prints: the printer
// columns of `kubectl get sbench`, with figures formatted (peak in the
// load's unit, p99 at the peak as a latency) and the namespace first when
// listing all namespaces.
func ListTable(items []v1alpha1.StorageBenchmark, now time.Time, withNamespace bool) Table {
	t := Table{Header: []string{"NAME", "STATUS", "CLASS", "PROFILE", "STEP", "PEAK", "P99 AT PEAK", "SLO", "AGE"}}
	t.Numeric = []bool{false, false, false, false, false, true, true, false, false}
	if withNamespace {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
		t.Numeric = append([]bool{false}, t.Numeric...)
	}
	for i := range items {
		sb := &items[i]
		peak, p99 := "", ""
		if s := sb.Status.Summary; s != nil {
			if UnitOf(sb) == UnitMiBps && s.PeakBytesPerSecond > 0 {
				peak = UnitMiBps.Format(float64(s.PeakBytesPerSecond) / mib)
			} else if s.PeakIOPS > 0 {
				peak = UnitIOPS.Format(float64(s.PeakIOPS))
			}
			if s.P99LatencyAtPeak != nil {
				p99 = formatLatency(s.P99LatencyAtPeak.Duration)
			}
		}
		progress := sb.Status.Progress
		if progress == "" && sb.Status.StepsPlanned > 0 {
			progress = fmt.Sprintf("%d/%d", len(sb.Status.Steps), sb.Status.StepsPlanned)
		}
		_, slo, _ := SLOState(sb)
		age := "<unknown>"
		if !sb.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(now.Sub(sb.CreationTimestamp.Time))
		}
		row := []string{sb.Name, Phase(sb), className(sb), sb.Spec.Workload.Profile, progress, peak, p99, slo, age}
		if withNamespace {
			row = append([]string{sb.Namespace}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
