// Package backend joins what the storage itself reported to a benchmark's
// steps: the figures NetApp Harvest publishes for an ONTAP volume (its
// volume series in Prometheus), over each step's measured window, beside
// the figures the clients measured. It is pure: it builds the PromQL
// queries, decides which windows a source of a given resolution can cover,
// and reduces the series a query returned to one step's figures. Querying
// Prometheus is the manager's.
//
// Harvest exports each counter of ONTAP's volume object as a gauge, the
// rate over its last poll: volume_read_ops and volume_write_ops in
// operations per second, volume_read_data and volume_write_data in bytes
// per second, volume_read_latency and volume_write_latency in microseconds
// per operation, each labelled with the volume and its svm. A sample
// therefore covers one poll interval, the source's resolution, and ends
// when it was taken.
package backend

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Harvest's volume series read for a step.
const (
	ReadOps      = "volume_read_ops"
	WriteOps     = "volume_write_ops"
	ReadData     = "volume_read_data"
	WriteData    = "volume_write_data"
	ReadLatency  = "volume_read_latency"
	WriteLatency = "volume_write_latency"
)

// Metrics are the series a step's figures are made of, in query order.
var Metrics = []string{ReadOps, WriteOps, ReadData, WriteData, ReadLatency, WriteLatency}

// DefaultResolution is Harvest's default poll of ONTAP's performance
// counters: one minute.
const DefaultResolution = time.Minute

// settle is how long after a sample is due the manager waits for it to
// have been scraped and stored, beyond one resolution.
const settle = 5 * time.Second

// Target is the storage a benchmark's figures are read for: the volumes'
// names as the source labels them and, when known, their storage VM.
type Target struct {
	Volumes []string
	SVM     string
}

// Selector is the label matchers of t's series, every name escaped: a
// volume name is matched exactly whatever characters it holds.
func (t Target) Selector() string {
	quoted := make([]string, len(t.Volumes))
	for i, v := range t.Volumes {
		quoted[i] = regexp.QuoteMeta(v)
	}
	sel := "volume=~" + strconv.Quote(strings.Join(quoted, "|"))
	if t.SVM != "" {
		sel += ",svm=" + strconv.Quote(t.SVM)
	}
	return sel
}

// Window is the part of a step the source's samples cover completely: the
// samples taken from one resolution after the measured window opened until
// it closed, so none of them holds the ramp or the idle time before it.
type Window struct {
	// End is when the measured window closed: the queries' evaluation time.
	End time.Time
	// Range is the span, ending at End, whose samples are joined.
	Range time.Duration
}

// WindowOf is the window of a step that started (every client told to
// start) at start, ramped for ramp and measured for measured, read from a
// source of the given resolution. ok is false when the step is too short
// to join: a span shorter than one resolution may hold no sample taken
// wholly inside it, so a step must measure at least twice the resolution.
func WindowOf(start time.Time, ramp, measured, resolution time.Duration) (w Window, ok bool) {
	w.End = start.Add(ramp + measured)
	w.Range = (measured - resolution).Truncate(time.Millisecond)
	return w, resolution > 0 && w.Range >= resolution
}

// Due is when the samples of w are stored: one resolution for the source
// to take the sample covering its end, another for Prometheus to scrape
// it, and a few seconds to spare.
func Due(w Window, resolution time.Duration) time.Time {
	return w.End.Add(2*resolution + settle)
}

// Queries are the instant queries, evaluated at w.End, whose results Join
// reduces: for each series, its mean over w per volume; and the number of
// samples in w per volume.
func Queries(t Target, w Window) (means map[string]string, samples string) {
	sel, rng := t.Selector(), promDuration(w.Range)
	means = make(map[string]string, len(Metrics))
	for _, m := range Metrics {
		means[m] = fmt.Sprintf("avg_over_time(%s{%s}[%s])", m, sel, rng)
	}
	return means, fmt.Sprintf("count_over_time(%s{%s}[%s])", ReadOps, sel, rng)
}

// promDuration renders d as a PromQL duration in milliseconds.
func promDuration(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// Sample is one series' value in a query's result.
type Sample struct {
	Volume string
	SVM    string
	Value  float64
}

// Figures are what the storage reported over one step's window, summed
// over the target's volumes. Latencies are means per operation, each
// volume's weighted by its operations.
type Figures struct {
	ReadIOPS, WriteIOPS   float64
	ReadBytes, WriteBytes float64
	ReadLatency           time.Duration
	WriteLatency          time.Duration
	// Latency pools reads and writes; 0 without operations.
	Latency time.Duration
	// Samples is the fewest samples any volume had in the window.
	Samples int
}

// IOPS is reads and writes together.
func (f Figures) IOPS() float64 { return f.ReadIOPS + f.WriteIOPS }

// BytesPerSecond is reads and writes together.
func (f Figures) BytesPerSecond() float64 { return f.ReadBytes + f.WriteBytes }

// ErrNoSeries is a volume the source has no series for in a window.
var ErrNoSeries = errors.New("no series")

// Join reduces the queries' results (means per series, by metric; the
// sample counts) to a step's figures. Every volume of t must have exactly
// one series of each rate and of the sample count: a missing one is
// ErrNoSeries, two are a selector that reaches more than one source (two
// pollers or clusters exporting the same volume), which no sum could make
// right. A latency series may be missing (Harvest leaves out the latency
// of a poll with too few operations to time): the mean is over the
// volumes that have one.
func Join(t Target, means map[string][]Sample, samples []Sample) (Figures, error) {
	per := make(map[string]map[string]float64, len(Metrics)) // metric → volume → value
	for _, m := range Metrics {
		byVolume, err := oneEach(t, m, means[m], m != ReadLatency && m != WriteLatency)
		if err != nil {
			return Figures{}, err
		}
		per[m] = byVolume
	}
	counts, err := oneEach(t, "samples of "+ReadOps, samples, true)
	if err != nil {
		return Figures{}, err
	}
	f := Figures{Samples: math.MaxInt}
	var lat [2]struct{ weighted, ops float64 } // reads, writes: Σ µs × ops/s, Σ ops/s
	for _, v := range t.Volumes {
		ro, wo := per[ReadOps][v], per[WriteOps][v]
		f.ReadIOPS += ro
		f.WriteIOPS += wo
		f.ReadBytes += per[ReadData][v]
		f.WriteBytes += per[WriteData][v]
		if l, ok := per[ReadLatency][v]; ok {
			lat[0].weighted, lat[0].ops = lat[0].weighted+l*ro, lat[0].ops+ro
		}
		if l, ok := per[WriteLatency][v]; ok {
			lat[1].weighted, lat[1].ops = lat[1].weighted+l*wo, lat[1].ops+wo
		}
		f.Samples = min(f.Samples, int(counts[v]))
	}
	f.ReadLatency = meanMicros(lat[0].weighted, lat[0].ops)
	f.WriteLatency = meanMicros(lat[1].weighted, lat[1].ops)
	f.Latency = meanMicros(lat[0].weighted+lat[1].weighted, lat[0].ops+lat[1].ops)
	return f, nil
}

// oneEach maps got by volume: at most one sample per volume of t, none of
// another (the selector names them exactly), and, when required, one for
// every volume.
func oneEach(t Target, metric string, got []Sample, required bool) (map[string]float64, error) {
	out := make(map[string]float64, len(t.Volumes))
	for _, s := range got {
		if !slices.Contains(t.Volumes, s.Volume) || (t.SVM != "" && s.SVM != t.SVM) {
			return nil, fmt.Errorf("%s: a series of volume %q (svm %q) the query did not ask for", metric, s.Volume, s.SVM)
		}
		if _, dup := out[s.Volume]; dup {
			return nil, fmt.Errorf("%s: more than one series for volume %q: the selector reaches more than one source (two pollers or clusters export it)", metric, s.Volume)
		}
		if math.IsNaN(s.Value) && !required {
			continue // a latency over no operations (0/0): none
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) || s.Value < 0 {
			return nil, fmt.Errorf("%s: volume %q has the value %v, not a rate", metric, s.Volume, s.Value)
		}
		out[s.Volume] = s.Value
	}
	for _, v := range t.Volumes {
		if _, ok := out[v]; !ok && required {
			return nil, fmt.Errorf("%s of volume %q: %w in the window", metric, v, ErrNoSeries)
		}
	}
	return out, nil
}

// meanMicros is Σ(latency µs × ops) ÷ Σ ops as a duration, rounded to the
// nanosecond; 0 without operations.
func meanMicros(weighted, ops float64) time.Duration {
	if ops <= 0 {
		return 0
	}
	return time.Duration(math.Round(weighted / ops * float64(time.Microsecond)))
}
