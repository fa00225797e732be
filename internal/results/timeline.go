package results

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/storagebench/storagebench/internal/fio"
)

// Timeline is a step window by window, by one client or, merged, by all of
// them. Window k covers about k×WindowSeconds to (k+1)×WindowSeconds seconds
// after the ramp ended: fio ticks once a second, but without a ramp its
// first tick falls where fio's status timer puts it, so a client's first and
// last second may span 0.8 s or 1.2 s. Rates are therefore each client's
// I/Os over the time its window spanned, summed over clients; counts and
// bins are exact.
type Timeline struct {
	// WindowSeconds is 1, or a power of two when a long step was
	// coarsened to fit its budget (Fit).
	WindowSeconds int      `json:"windowSeconds"`
	Windows       []Window `json:"windows"`
}

// Window is what was completed in one window: reads and writes together.
type Window struct {
	IOs         uint64  `json:"ios"`
	Bytes       uint64  `json:"bytes"`
	IOPS        float64 `json:"iops"`
	BytesPerSec float64 `json:"bytesPerSec"`
	// Hist holds the completion latencies of the window's I/Os.
	Hist fio.Histogram `json:"bins"`
}

// Percentiles returns the window's latency percentiles by fio's rule; zeros
// without I/O.
func (w Window) Percentiles(ps ...float64) []uint64 { return w.Hist.Percentiles(ps) }

// Limits of a timeline.
const (
	// MaxWindowSeconds bounds a window (a day).
	MaxWindowSeconds = 1 << 16
	// MaxWindows bounds a timeline's windows; Fit keeps a client's within
	// it (a day-long step ends up in 32 s windows).
	MaxWindows = 4096
	// ClientTimelineBytes is the JSON budget of one client's timeline in
	// its result; StepTimelineBytes that of the merged one in the step's
	// record.
	ClientTimelineBytes = 64 << 10
	StepTimelineBytes   = 256 << 10
)

// TimelineOf folds one client's fio intervals (every job's, keyed by job
// name) into one-second windows, summing the jobs: an interval belongs to
// the second its end is nearest to (fio.Second).
func TimelineOf(jobs map[string][]fio.Interval) Timeline {
	var accs []windowAcc
	for _, ivs := range jobs {
		for _, iv := range ivs {
			k := fio.Second(iv.EndMs)
			for len(accs) <= k {
				accs = append(accs, windowAcc{})
			}
			a := &accs[k]
			a.add(iv.Read.IOs+iv.Write.IOs, iv.Read.Bytes+iv.Write.Bytes, iv.Read.Hist, iv.Write.Hist)
			if !a.spanned || iv.StartMs < a.startMs {
				a.startMs = iv.StartMs
			}
			a.endMs = max(a.endMs, iv.EndMs)
			a.spanned = true
		}
	}
	for k := range accs {
		if a := &accs[k]; a.spanned && a.endMs > a.startMs {
			secs := float64(a.endMs-a.startMs) / 1000
			a.iops, a.bps = float64(a.ios)/secs, float64(a.bytes)/secs
		}
	}
	return timelineOf(1, accs)
}

// Coarsen returns t with windows twice as long: pairs of windows merged,
// their rates averaged (a last window without a partner keeps its own).
func (t Timeline) Coarsen() Timeline {
	accs := make([]windowAcc, (len(t.Windows)+1)/2)
	for k, w := range t.Windows {
		a := &accs[k/2]
		a.add(w.IOs, w.Bytes, w.Hist)
		a.iops += w.IOPS
		a.bps += w.BytesPerSec
		a.n++
	}
	for k := range accs {
		accs[k].iops /= float64(accs[k].n)
		accs[k].bps /= float64(accs[k].n)
	}
	return timelineOf(2*t.WindowSeconds, accs)
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
// longest window any client sent, so its memory does not grow with clients.
type timelineMerger struct {
	windowSeconds int
	accs          []windowAcc
}

func (m *timelineMerger) add(t Timeline) {
	if len(t.Windows) == 0 {
		return
	}
	for t.WindowSeconds < m.windowSeconds {
		t = t.Coarsen()
	}
	for m.windowSeconds != 0 && m.windowSeconds < t.WindowSeconds {
		m.coarsen()
	}
	m.windowSeconds = t.WindowSeconds
	for k, w := range t.Windows {
		for len(m.accs) <= k {
			m.accs = append(m.accs, windowAcc{})
		}
		a := &m.accs[k]
		a.add(w.IOs, w.Bytes, w.Hist)
		a.iops += w.IOPS
		a.bps += w.BytesPerSec
	}
}

// coarsen merges pairs of the merged windows; merged rates are sums over
// clients, so a pair's rate is the mean of its two.
func (m *timelineMerger) coarsen() {
	accs := make([]windowAcc, (len(m.accs)+1)/2)
	for k := range m.accs {
		a, b := &accs[k/2], &m.accs[k]
		a.ios += b.ios
		a.bytes += b.bytes
		a.hist = fio.Merge(a.hist, b.hist)
		a.iops += b.iops
		a.bps += b.bps
		a.n++
	}
	for k := range accs {
		accs[k].iops /= float64(accs[k].n)
		accs[k].bps /= float64(accs[k].n)
	}
	m.accs, m.windowSeconds = accs, 2*m.windowSeconds
}

func (m *timelineMerger) result() Timeline {
	if len(m.accs) == 0 {
		return Timeline{}
	}
	return timelineOf(m.windowSeconds, m.accs).Fit(StepTimelineBytes)
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
	ios, bytes uint64
	// hist is sparse (fio.Merge): a timeline's windows each hold a few
	// dozen bins, where an Accumulator would take 15 KB apiece.
	hist      fio.Histogram
	iops, bps float64
	// startMs, endMs and spanned bound a client's second (TimelineOf); n
	// counts the windows coarsened into this one.
	startMs, endMs uint64
	spanned        bool
	n              int
}

func (a *windowAcc) add(ios, bytes uint64, hs ...fio.Histogram) {
	a.ios += ios
	a.bytes += bytes
	for _, h := range hs {
		a.hist = fio.Merge(a.hist, h)
	}
}

func timelineOf(windowSeconds int, accs []windowAcc) Timeline {
	t := Timeline{WindowSeconds: windowSeconds, Windows: make([]Window, len(accs))}
	for k := range accs {
		a := &accs[k]
		t.Windows[k] = Window{IOs: a.ios, Bytes: a.bytes, IOPS: a.iops, BytesPerSec: a.bps, Hist: a.hist}
	}
	return t
}

// validate checks a timeline from a client that may not be trusted: window
// length, count and figures within bounds, and each window's bins holding
// its I/Os. ios is the client's step total, which the windows must add up
// to (real fio's do exactly).
func (t Timeline) validate(ios uint64) error {
	if len(t.Windows) == 0 {
		return nil
	}
	if t.WindowSeconds < 1 || t.WindowSeconds > MaxWindowSeconds || t.WindowSeconds&(t.WindowSeconds-1) != 0 {
		return fmt.Errorf("timeline window of %d s is not a power of two up to %d", t.WindowSeconds, MaxWindowSeconds)
	}
	if len(t.Windows) > MaxWindows {
		return fmt.Errorf("timeline has %d windows, more than %d", len(t.Windows), MaxWindows)
	}
	var sum uint64
	for k, w := range t.Windows {
		for _, f := range []float64{w.IOPS, w.BytesPerSec} {
			if math.IsNaN(f) || f < 0 || f > MaxFloat {
				return fmt.Errorf("timeline window %d: rate %v is outside [0, %g]", k, f, MaxFloat)
			}
		}
		if w.IOs > MaxCount || w.Bytes > MaxCount {
			return fmt.Errorf("timeline window %d: %d I/Os and %d bytes, above %d", k, w.IOs, w.Bytes, uint64(MaxCount))
		}
		if err := validateHist(w.Hist, w.IOs); err != nil {
			return fmt.Errorf("timeline window %d: %w", k, err)
		}
		sum += w.IOs // at most MaxWindows × 2^53 < 2^64
	}
	if sum != ios {
		return fmt.Errorf("timeline holds %d I/Os, the step %d", sum, ios)
	}
	return nil
}
