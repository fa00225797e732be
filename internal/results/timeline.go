package results

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// Timeline is a step window by window, by one client or, merged, by all of
// them, and the spans in which nothing completed. A client's window k is
// what its fio reported at its k-th status tick after the ramp, about a
// second apart; a tick closer than half a second to the one before (the
// final document, or fio catching up after a stall) joins the window before
// it. The clients' windows are merged by index, since their measurements
// start together (within their start skew). Rates are each client's I/Os
// over the time its window spanned, summed over clients; counts and bins are
// exact.
type Timeline struct {
	// WindowSeconds is 1, or a power of two when a long step was
	// coarsened to fit its budget (Fit): each window then merges that many
	// ticks.
	WindowSeconds int      `json:"windowSeconds"`
	Windows       []Window `json:"windows"`
	// Idle are the spans, in ms after the ramp, in which nothing
	// completed: a client's stalls as its latency logs and ticks show them
	// (StallsOf), and, merged, the spans in which every client stalled.
	Idle []Span `json:"idle,omitempty"`
}

// Window is what was completed in one window: reads and writes together.
type Window struct {
	// StartMs is when the window began, in ms after the ramp (merged: the
	// earliest client's).
	StartMs     uint64  `json:"startMs"`
	IOs         uint64  `json:"ios"`
	Bytes       uint64  `json:"bytes"`
	IOPS        float64 `json:"iops"`
	BytesPerSec float64 `json:"bytesPerSec"`
	// Hist holds the completion latencies of the window's I/Os.
	Hist fio.Histogram `json:"bins"`
}

// Span is a stretch of a step's measurement, in ms after the ramp.
type Span struct {
	StartMs uint64 `json:"startMs"`
	EndMs   uint64 `json:"endMs"`
}

// Duration is the span's length.
func (s Span) Duration() time.Duration { return time.Duration(s.EndMs-s.StartMs) * time.Millisecond }

// Percentiles returns the window's latency percentiles by fio's rule; zeros
// without I/O.
func (w Window) Percentiles(ps ...float64) []uint64 { return w.Hist.Percentiles(ps) }

// Limits of a timeline.
const (
	// MaxWindowSeconds bounds a window (a day).
	MaxWindowSeconds = 1 << 16
	// MaxWindows bounds a timeline's windows, and its idle spans; Fit keeps
	// a client's within it (a day-long step ends up in 32-tick windows).
	MaxWindows = 4096
	// ClientTimelineBytes is the JSON budget of one client's timeline in
	// its result; StepTimelineBytes that of the merged one in the step's
	// record.
	ClientTimelineBytes = 64 << 10
	StepTimelineBytes   = 256 << 10
	// MaxMergedBins bounds the bins the merge of all clients' timelines
	// holds at once; past it the merge coarsens its windows.
	MaxMergedBins = 1 << 18
	// minTickMs is the shortest interval between two fio ticks that makes
	// a window of its own.
	minTickMs = 500
	// heldTickMs is how late a tick (due a second after the one before)
	// must be to count as held up by a stall: well past what a loaded
	// machine's scheduling delays a tick by.
	heldTickMs = 1500
)

// TimelineOf folds one client's fio intervals into windows, one per status
// tick, and collects the stalls the ticks show as idle spans: a tick (of at
// least half a second) in which nothing completed, and the part past its second of a tick that came
// more than 1.5 s after the one before (fio's status thread waits for jobs
// blocked in I/O). Both are lower bounds of the stall, placed to within
// about a second.
func TimelineOf(ivs []fio.Interval) Timeline {
	var accs []windowAcc
	var idle []Span
	for _, iv := range ivs {
		// A tick less than minTickMs after the last joins the window
		// before it, and a first window shorter than that takes the next
		// tick in: fio ticks a second apart from its own start, not from
		// the instant its jobs' I/O began (which it may hold back, see
		// fio.Run.StartAt), so a step's first and last ticks are partial.
		if n := len(accs); n == 0 || iv.EndMs-iv.StartMs >= minTickMs && accs[n-1].endMs-accs[n-1].startMs >= minTickMs {
			accs = append(accs, windowAcc{startMs: iv.StartMs, endMs: iv.StartMs})
		}
		a := &accs[len(accs)-1]
		a.add(iv.IOs(), iv.Read.Bytes+iv.Write.Bytes, iv.Read.Hist, iv.Write.Hist)
		a.endMs = max(a.endMs, iv.EndMs)
		switch d := iv.EndMs - iv.StartMs; {
		case iv.IOs() == 0 && d >= minTickMs: // a partial tick's quiet is no stall seen
			idle = addSpan(idle, Span{iv.StartMs, iv.EndMs})
		case d > heldTickMs:
			// fio's status thread waits for every job to answer, and a
			// job blocked in I/O answers when its I/O returns: the tick
			// came late, and the time past its second was a stall.
			idle = addSpan(idle, Span{iv.StartMs + 1000, iv.EndMs})
		}
	}
	for k := range accs {
		if a := &accs[k]; a.endMs > a.startMs {
			secs := float64(a.endMs-a.startMs) / 1000
			a.iops, a.bps = float64(a.ios)/secs, float64(a.bytes)/secs
		}
	}
	t := timelineOf(1, accs)
	t.Idle = idle
	return t
}

// addSpan appends s to sorted spans, joining it to the last when they touch.
func addSpan(spans []Span, s Span) []Span {
	if n := len(spans); n > 0 && spans[n-1].EndMs >= s.StartMs {
		spans[n-1].EndMs = max(spans[n-1].EndMs, s.EndMs)
		return spans
	}
	return append(spans, s)
}

// intersect returns the spans in both a and b (each sorted and disjoint).
func intersect(a, b []Span) []Span {
	var out []Span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].StartMs, b[j].StartMs), min(a[i].EndMs, b[j].EndMs)
		if lo < hi {
			out = append(out, Span{lo, hi})
		}
		if a[i].EndMs < b[j].EndMs {
			i++
		} else {
			j++
		}
	}
	return out
}

// Coarsen returns t with windows twice as long: pairs of windows merged,
// their rates averaged (a last window without a partner keeps its own). The
// idle spans are kept as they are.
func (t Timeline) Coarsen() Timeline {
	accs := make([]windowAcc, len(t.Windows))
	for k, w := range t.Windows {
		accs[k] = windowAcc{startMs: w.StartMs, ios: w.IOs, bytes: w.Bytes, hist: w.Hist, iops: w.IOPS, bps: w.BytesPerSec}
	}
	out := timelineOf(2*t.WindowSeconds, pairUp(accs))
	out.Idle = t.Idle
	return out
}

// pairUp merges pairs of windows: counts and bins added, rates averaged (a
// client's rates are its own, merged ones sums over clients, so a pair's
// rate is the mean of its two either way).
func pairUp(accs []windowAcc) []windowAcc {
	out := make([]windowAcc, (len(accs)+1)/2)
	for k := range accs {
		a, b := &out[k/2], &accs[k]
		if k%2 == 0 {
			a.startMs = b.startMs
		}
		a.add(b.ios, b.bytes, b.hist)
		a.iops += b.iops
		a.bps += b.bps
		a.n++
	}
	for k := range out {
		out[k].iops /= float64(out[k].n)
		out[k].bps /= float64(out[k].n)
	}
	return out
}

// Fit coarsens t until it has at most MaxWindows windows and its JSON takes
// at most budget bytes, or it has one window left.
func (t Timeline) Fit(budget int) Timeline {
	for len(t.Windows) > MaxWindows {
		t = t.Coarsen()
	}
	for len(t.Windows) > 1 {
		data, err := json.Marshal(t)
		if err == nil && len(data) <= budget {
			break
		}
		t = t.Coarsen()
	}
	return t
}

// timelineMerger adds clients' timelines window by window, coarsening to the
// longest window any client sent and whenever it holds more than
// MaxMergedBins bins, so its memory does not grow with clients. Idle spans
// are intersected: a span is idle when every client that sent a timeline
// was idle in it.
type timelineMerger struct {
	windowSeconds int
	accs          []windowAcc
	bins          int
	idle          []Span
	clients       int
}

func (m *timelineMerger) add(t Timeline) {
	if len(t.Windows) == 0 {
		return
	}
	if m.clients == 0 {
		m.idle = slices.Clone(t.Idle)
	} else {
		m.idle = intersect(m.idle, t.Idle)
	}
	m.clients++
	for t.WindowSeconds < m.windowSeconds {
		t = t.Coarsen()
	}
	for m.windowSeconds != 0 && m.windowSeconds < t.WindowSeconds {
		m.coarsen()
	}
	m.windowSeconds = t.WindowSeconds
	for k, w := range t.Windows {
		if k == len(m.accs) {
			m.accs = append(m.accs, windowAcc{startMs: w.StartMs})
		}
		a := &m.accs[k]
		a.startMs = min(a.startMs, w.StartMs)
		m.bins += a.merge(w.IOs, w.Bytes, w.Hist, k < denseWindows)
		a.iops += w.IOPS
		a.bps += w.BytesPerSec
	}
	for m.bins > MaxMergedBins && len(m.accs) > 1 {
		m.coarsen()
	}
}

// coarsen merges pairs of the merged windows.
func (m *timelineMerger) coarsen() {
	for k := range m.accs {
		m.accs[k].flush()
	}
	m.accs, m.windowSeconds = pairUp(m.accs), 2*m.windowSeconds
	m.bins = 0
	for k := range m.accs {
		m.bins += len(m.accs[k].hist.Bins)
	}
}

func (m *timelineMerger) result() Timeline {
	if len(m.accs) == 0 {
		return Timeline{}
	}
	// A copy of the windows with histograms of their own: the merger goes
	// on adding into its buffers.
	accs := slices.Clone(m.accs)
	for k := range accs {
		accs[k].hist = accs[k].snapshot()
	}
	t := timelineOf(m.windowSeconds, accs)
	t.Idle = slices.Clone(m.idle)
	return t.Fit(StepTimelineBytes)
}

// MergeTimelines adds clients' timelines window by window. Bins are added,
// never percentiles, so a merged window's percentiles are exact over every
// I/O all clients completed in it.
func MergeTimelines(ts ...Timeline) Timeline {
	var m timelineMerger
	for _, t := range ts {
		m.add(t)
	}
	return m.result()
}

type windowAcc struct {
	startMs    uint64
	ios, bytes uint64
	// hist is sparse (fio.Merge): a window holds a few dozen bins, where
	// an Accumulator would take 15 KB.
	hist fio.Histogram
	// The merger of clients' timelines adds into dense (its first
	// denseWindows windows), or into spare and swaps it with hist (merge).
	dense     *fio.Accumulator
	spare     []fio.Bin
	iops, bps float64
	// endMs bounds a client's window (TimelineOf); n counts the windows
	// coarsened into this one.
	endMs uint64
	n     int
}

func (a *windowAcc) add(ios, bytes uint64, hs ...fio.Histogram) {
	a.ios += ios
	a.bytes += bytes
	for _, h := range hs {
		if len(h.Bins) > 0 {
			a.hist = fio.Merge(a.hist, h)
		}
	}
}

// denseWindows is how many windows the merger of clients' timelines adds
// into dense accumulators (15 KB each: 3.8 MB at most), where a thousand
// clients' bins cost an indexed add each rather than a sparse merge.
const denseWindows = 256

// merge is add for the merger of clients' timelines, which owns its
// windows' histograms: into a dense accumulator when dense is set,
// otherwise into the spare buffer, swapped with hist, so that adding a
// client allocates nothing. It returns how many bins the window gained.
func (a *windowAcc) merge(ios, bytes uint64, h fio.Histogram, dense bool) int {
	a.ios += ios
	a.bytes += bytes
	if len(h.Bins) == 0 {
		return 0
	}
	if dense && a.dense == nil {
		a.dense = new(fio.Accumulator)
		a.dense.Add(a.hist)
		a.hist, a.spare = fio.Histogram{}, nil
	}
	if a.dense != nil {
		return a.dense.AddCountingNew(h)
	}
	before := len(a.hist.Bins)
	merged := fio.MergeInto(a.spare, a.hist, h)
	a.spare, a.hist = a.hist.Bins, merged
	return len(merged.Bins) - before
}

// snapshot returns a copy of the window's bins, dense or not.
func (a *windowAcc) snapshot() fio.Histogram {
	if a.dense != nil {
		return a.dense.Histogram()
	}
	return fio.Histogram{Bins: slices.Clone(a.hist.Bins)}
}

// flush moves a dense window's bins back into hist.
func (a *windowAcc) flush() {
	if a.dense != nil {
		a.hist, a.dense, a.spare = a.dense.Histogram(), nil, nil
	}
}

func timelineOf(windowSeconds int, accs []windowAcc) Timeline {
	t := Timeline{WindowSeconds: windowSeconds, Windows: make([]Window, len(accs))}
	for k := range accs {
		a := &accs[k]
		t.Windows[k] = Window{StartMs: a.startMs, IOs: a.ios, Bytes: a.bytes, IOPS: a.iops, BytesPerSec: a.bps, Hist: a.hist}
	}
	return t
}

// LongestIdle is the longest idle span (zero when there is none).
func (t Timeline) LongestIdle() Span {
	var best Span
	for _, s := range t.Idle {
		if s.EndMs-s.StartMs > best.EndMs-best.StartMs {
			best = s
		}
	}
	return best
}

// validate checks a timeline from a client that may not be trusted: window
// length, count and figures within bounds, each window's bins holding its
// I/Os, idle spans sorted and disjoint, nothing beyond the step's span
// (measuredMs: from the client's start to its end, ramp included), and the
// windows adding up to ios, the client's step total (real fio's do
// exactly).
func (t Timeline) validate(ios uint64, measuredMs uint64) error {
	if len(t.Windows) == 0 {
		if len(t.Idle) > 0 {
			return fmt.Errorf("timeline has idle spans but no windows")
		}
		return nil
	}
	if t.WindowSeconds < 1 || t.WindowSeconds > MaxWindowSeconds || t.WindowSeconds&(t.WindowSeconds-1) != 0 {
		return fmt.Errorf("timeline window of %d s is not a power of two up to %d", t.WindowSeconds, MaxWindowSeconds)
	}
	if len(t.Windows) > MaxWindows || len(t.Idle) > MaxWindows {
		return fmt.Errorf("timeline has %d windows and %d idle spans, more than %d", len(t.Windows), len(t.Idle), MaxWindows)
	}
	// A window is about a second per tick it merges; allow two ticks of
	// slack for fio's first and last.
	limitMs := measuredMs + 2000
	if uint64(len(t.Windows)-1)*uint64(t.WindowSeconds)*1000 > limitMs {
		return fmt.Errorf("timeline has %d windows of %d s, more than the step's %d ms", len(t.Windows), t.WindowSeconds, measuredMs)
	}
	var sum uint64
	for k, w := range t.Windows {
		for _, f := range []float64{w.IOPS, w.BytesPerSec} {
			if math.IsNaN(f) || f < 0 || f > MaxFloat {
				return fmt.Errorf("timeline window %d: rate %v is outside [0, %g]", k, f, MaxFloat)
			}
		}
		if w.IOs > MaxCount || w.Bytes > MaxCount || w.StartMs > limitMs {
			return fmt.Errorf("timeline window %d: %d I/Os and %d bytes from %d ms, beyond the bounds", k, w.IOs, w.Bytes, w.StartMs)
		}
		if err := validateHist(w.Hist, w.IOs); err != nil {
			return fmt.Errorf("timeline window %d: %w", k, err)
		}
		sum += w.IOs // at most MaxWindows × 2^53 < 2^64
	}
	if sum != ios {
		return fmt.Errorf("timeline holds %d I/Os, the step %d", sum, ios)
	}
	for k, s := range t.Idle {
		if s.EndMs <= s.StartMs || s.EndMs > limitMs || (k > 0 && s.StartMs <= t.Idle[k-1].EndMs) {
			return fmt.Errorf("timeline idle span %d (%d..%d ms) is empty, out of order or beyond the step's %d ms", k, s.StartMs, s.EndMs, measuredMs)
		}
	}
	return nil
}
