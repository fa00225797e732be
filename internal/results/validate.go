package results

import (
	"fmt"
	"math"

	"github.com/storagebench/storagebench/internal/fio"
)

// Bounds on what one client may report. They are far above anything real
// and low enough that summing MaxClients results (both directions, as the
// total does) can neither overflow a uint64 nor reach +Inf.
const (
	// MaxClients is the API's limit on clients per benchmark.
	MaxClients = 1000
	// MaxJobsPerClient is the API's limit on fio jobs per client.
	MaxJobsPerClient = 64
	// MaxSteps is well above the API's limit (100 steps).
	MaxSteps = 1000
	// MaxCount bounds every count a client reports: I/Os, bytes, histogram
	// counts and latencies in nanoseconds (2^53, about 9·10^15: 8 PiB, or
	// 104 days). 2 × MaxClients × MaxCount < 2^64.
	MaxCount = 1 << 53
	// MaxFloat bounds every rate and latency moment a client reports.
	MaxFloat = 1e15
)

// Validate checks a result read from a client that may not be trusted: no
// NaN or infinite figures, nothing negative, nothing beyond the bounds above,
// indices in range, and figures that agree with each other (the histogram
// holds Count samples, min ≤ mean ≤ max, the first and last bins hold min and
// max as fio's own histogram does). Real fio output always passes.
func (c ClientStep) Validate() error {
	switch {
	case c.Client < 0 || c.Client >= MaxClients:
		return fmt.Errorf("client index %d is outside [0, %d)", c.Client, MaxClients)
	case c.Step < 0 || c.Step >= MaxSteps:
		return fmt.Errorf("client %d: step index %d is outside [0, %d)", c.Client, c.Step, MaxSteps)
	case c.Jobs < 0 || c.Jobs > MaxJobsPerClient:
		return fmt.Errorf("client %d: %d jobs is outside [0, %d]", c.Client, c.Jobs, MaxJobsPerClient)
	}
	if c.Idle && (!c.Read.isZero() || !c.Write.isZero() || !c.Sync.isZero() || c.CPU != (CPU{}) || len(c.Timeline.Windows) > 0 || c.Verification != nil || c.Jobs != 0) {
		return fmt.Errorf("client %d step %d: an idle result carries figures", c.Client, c.Step)
	}
	if err := c.Read.validate(); err != nil {
		return fmt.Errorf("client %d step %d: read: %w", c.Client, c.Step, err)
	}
	if err := c.Write.validate(); err != nil {
		return fmt.Errorf("client %d step %d: write: %w", c.Client, c.Step, err)
	}
	if err := c.Sync.validate(); err != nil {
		return fmt.Errorf("client %d step %d: sync: %w", c.Client, c.Step, err)
	}
	if err := c.CPU.validate(); err != nil {
		return fmt.Errorf("client %d step %d: %w", c.Client, c.Step, err)
	}
	if err := c.Verification.validate(c.Client); err != nil {
		return fmt.Errorf("client %d step %d: %w", c.Client, c.Step, err)
	}
	var measuredMs uint64
	if c.End.After(c.ActualStart) {
		measuredMs = uint64(c.End.Sub(c.ActualStart).Milliseconds())
	}
	if err := c.Timeline.validate(c.Read.Latency.Count+c.Write.Latency.Count, measuredMs); err != nil {
		return fmt.Errorf("client %d step %d: %w", c.Client, c.Step, err)
	}
	return nil
}

func (d *Operation) validate() error {
	l := &d.Latency
	for _, f := range []struct {
		name string
		v    float64
	}{{"iops", d.IOPS}, {"bytesPerSec", d.BytesPerSec}, {"meanNs", l.MeanNs}, {"stddevNs", l.StdNs}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > MaxFloat {
			return fmt.Errorf("%s %v is outside [0, %g]", f.name, f.v, MaxFloat)
		}
	}
	for _, f := range []struct {
		name string
		v    uint64
	}{{"ios", d.IOs}, {"bytes", d.Bytes}, {"count", l.Count}, {"minNs", l.MinNs}, {"maxNs", l.MaxNs}} {
		if f.v > MaxCount {
			return fmt.Errorf("%s %d is above %d", f.name, f.v, uint64(MaxCount))
		}
	}
	if err := validateHist(l.Hist, l.Count); err != nil {
		return err
	}
	if l.Count == 0 {
		return nil
	}
	// Rounding slack for fio's running moments.
	slack := func(v float64) float64 { return v*1e-9 + 1 }
	lo, hi, bins := float64(l.MinNs), float64(l.MaxNs), l.Hist.Bins
	switch {
	case l.MinNs > l.MaxNs:
		return fmt.Errorf("latency min %d ns > max %d ns", l.MinNs, l.MaxNs)
	case l.MeanNs < lo-slack(lo) || l.MeanNs > hi+slack(hi):
		return fmt.Errorf("latency mean %v ns is outside [min %d, max %d]", l.MeanNs, l.MinNs, l.MaxNs)
	case l.StdNs > hi-lo+slack(hi):
		return fmt.Errorf("latency stddev %v ns exceeds the range max-min %d ns", l.StdNs, l.MaxNs-l.MinNs)
	case fio.IndexOf(l.MinNs) != bins[0].Index:
		return fmt.Errorf("latency min %d ns is not in the first histogram bin (%d ns)", l.MinNs, fio.BinValue(bins[0].Index))
	case fio.IndexOf(l.MaxNs) != bins[len(bins)-1].Index:
		return fmt.Errorf("latency max %d ns is not in the last histogram bin (%d ns)", l.MaxNs, fio.BinValue(bins[len(bins)-1].Index))
	}
	return nil
}

// validateHist checks an untrusted histogram's bins (indices in range and
// ascending, counts within bounds) and that they hold count samples.
func validateHist(h fio.Histogram, count uint64) error {
	var total uint64
	for i, b := range h.Bins {
		switch {
		case b.Index < 0 || b.Index >= fio.PlatNR:
			return fmt.Errorf("histogram bin index %d is outside [0, %d)", b.Index, fio.PlatNR)
		case i > 0 && b.Index <= h.Bins[i-1].Index:
			return fmt.Errorf("histogram bins are not in ascending order at bin %d", i)
		case b.Count == 0 || b.Count > MaxCount:
			return fmt.Errorf("histogram bin %d count %d is outside [1, %d]", i, b.Count, uint64(MaxCount))
		}
		total += b.Count // at most PlatNR × 2^53 < 2^64
	}
	if total != count {
		return fmt.Errorf("histogram holds %d samples but count is %d", total, count)
	}
	return nil
}
