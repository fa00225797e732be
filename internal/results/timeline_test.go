package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/fio"
)

// tl builds a one-second timeline: window k did ios[k] I/Os of 100 ns at
// ios[k] IOPS.
func tl(ios ...uint64) Timeline {
	t := Timeline{WindowSeconds: 1, Windows: make([]Window, len(ios))}
	for k, n := range ios {
		t.Windows[k] = Window{StartMs: uint64(k) * 1000, IOs: n, Bytes: 4096 * n, IOPS: float64(n), BytesPerSec: float64(4096 * n)}
		if n > 0 {
			t.Windows[k].Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(100), Count: n}}}
		}
	}
	return t
}

func TestCoarsen(t *testing.T) {
	got := tl(10, 20, 30, 40, 50).Coarsen()
	if got.WindowSeconds != 2 || len(got.Windows) != 3 {
		t.Fatalf("Coarsen: %d windows of %d s", len(got.Windows), got.WindowSeconds)
	}
	for k, want := range []struct {
		ios  uint64
		iops float64
	}{{30, 15}, {70, 35}, {50, 50}} {
		w := got.Windows[k]
		if w.IOs != want.ios || w.IOPS != want.iops || w.Hist.Total() != want.ios {
			t.Errorf("window %d: %d I/Os at %v IOPS, want %d at %v", k, w.IOs, w.IOPS, want.ios, want.iops)
		}
	}
}

func TestFit(t *testing.T) {
	long := tl(make([]uint64, 3600)...)
	for k := range long.Windows {
		long.Windows[k] = tl(uint64(k%7 + 1)).Windows[0]
	}
	fit := long.Fit(8 << 10)
	data, _ := json.Marshal(fit)
	if len(data) > 8<<10 || fit.WindowSeconds < 2 {
		t.Fatalf("Fit(8 KiB): %d bytes in windows of %d s", len(data), fit.WindowSeconds)
	}
	var ios, want uint64
	for _, w := range fit.Windows {
		ios += w.IOs
	}
	for _, w := range long.Windows {
		want += w.IOs
	}
	if ios != want {
		t.Fatalf("Fit lost I/Os: %d of %d", ios, want)
	}
	if short := tl(1, 2, 3); !reflect.DeepEqual(short.Fit(1<<20), short) {
		t.Fatal("Fit changed a timeline within its budget")
	}
	day := Timeline{WindowSeconds: 1, Windows: make([]Window, 86400)}
	if fit := day.Fit(1 << 30); len(fit.Windows) > MaxWindows || fit.WindowSeconds != 32 {
		t.Fatalf("a day of seconds fits in %d windows of %d s, want at most %d", len(fit.Windows), fit.WindowSeconds, MaxWindows)
	}
	if err := day.validate(0, 86400_000); err == nil || !strings.Contains(err.Error(), "more than 4096") {
		t.Fatalf("a day of one-second windows from a client: %v", err)
	}
	if one := tl(1, 2, 3).Fit(1); len(one.Windows) != 1 || one.Windows[0].IOs != 6 {
		t.Fatalf("Fit(1 byte) = %+v, want one window of 6 I/Os", one)
	}
}

func TestMergeTimelinesOfDifferentWindows(t *testing.T) {
	// Client 1 coarsened to 2 s windows, client 2 sent seconds: the merge
	// is in 2 s windows whatever the order.
	a, b := tl(1, 2, 3, 4).Coarsen(), tl(10, 20, 30)
	for _, order := range [][]Timeline{{a, b}, {b, a}} {
		got := MergeTimelines(order...)
		if got.WindowSeconds != 2 || len(got.Windows) != 2 ||
			got.Windows[0].IOs != 33 || got.Windows[1].IOs != 37 ||
			got.Windows[0].IOPS != 1.5+15 || got.Windows[1].IOPS != 3.5+30 {
			t.Errorf("MergeTimelines = %+v", got)
		}
	}
	if got := MergeTimelines(Timeline{}, b); !reflect.DeepEqual(got, b) {
		t.Errorf("an empty timeline changed the merge: %+v", got)
	}
}

func TestTimelineValidate(t *testing.T) {
	good := tl(3, 4)
	if err := good.validate(7, 2000); err != nil {
		t.Fatalf("valid timeline refused: %v", err)
	}
	bad := func(f func(*Timeline)) Timeline {
		t := tl(3, 4)
		t.Windows = append([]Window(nil), t.Windows...)
		f(&t)
		return t
	}
	for name, c := range map[string]struct {
		t   Timeline
		ios uint64
		msg string
	}{
		"total differs":       {good, 8, "timeline holds 7 I/Os, the step 8"},
		"window not 2^n":      {bad(func(t *Timeline) { t.WindowSeconds = 3 }), 7, "not a power of two"},
		"bins disagree":       {bad(func(t *Timeline) { t.Windows[0].IOs = 2 }), 6, "histogram holds 3 samples but count is 2"},
		"negative rate":       {bad(func(t *Timeline) { t.Windows[1].IOPS = -1 }), 7, "rate -1"},
		"bin index too large": {bad(func(t *Timeline) { t.Windows[0].Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.PlatNR, Count: 3}}} }), 7, "bin index"},
		// A 2 s step cannot have a day-long window, or a stall past its end.
		"windows longer than the step": {bad(func(t *Timeline) { t.WindowSeconds = 1 << 16 }), 7, "more than the step's 2000 ms"},
		"idle past the end":            {bad(func(t *Timeline) { t.Idle = []Span{{StartMs: 1000, EndMs: 3_600_000}} }), 7, "beyond the step's 2000 ms"},
		"idle out of order":            {bad(func(t *Timeline) { t.Idle = []Span{{StartMs: 1000, EndMs: 1500}, {StartMs: 200, EndMs: 300}} }), 7, "out of order"},
	} {
		if err := c.t.validate(c.ios, 2000); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want it to say %q", name, err, c.msg)
		}
	}
}

// TestTimelineOfTicks folds fio intervals into windows by tick: a short
// final tick joins the window before it, and ticks without a completion are
// idle spans measured to the millisecond.
func TestTimelineOfTicks(t *testing.T) {
	iv := func(start, end, ios uint64) fio.Interval {
		op := fio.IntervalOp{IOs: ios, Bytes: 4096 * ios}
		if ios > 0 {
			op.Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(100), Count: ios}}}
		}
		return fio.Interval{StartMs: start, EndMs: end, Read: op}
	}
	// A tick held up 2.6 s by jobs blocked in I/O, then the catch-up.
	got := TimelineOf([]fio.Interval{iv(0, 1000, 100), iv(1000, 2000, 0), iv(2000, 4400, 0), iv(4400, 5400, 300),
		iv(5400, 8000, 900), iv(8000, 9300, 100), iv(9300, 9303, 1)})
	if len(got.Windows) != 6 || got.Windows[5].IOs != 101 || got.Windows[5].StartMs != 8000 {
		t.Fatalf("windows %+v: want 6, the short last tick joined to the sixth", got.Windows)
	}
	if got.Windows[5].IOPS != 101/1.303 || got.Windows[0].IOPS != 100 {
		t.Errorf("rates %v, %v: want I/Os over each window's span", got.Windows[0].IOPS, got.Windows[5].IOPS)
	}
	// Ticks without a completion, and the 1.6 s a tick came late; a tick
	// 1.3 s after the last is scheduling, not a stall.
	if want := []Span{{1000, 4400}, {6400, 8000}}; !reflect.DeepEqual(got.Idle, want) {
		t.Errorf("idle %v, want %v", got.Idle, want)
	}
	// fio ticked 234 ms into the I/O (its ticks count from its own start):
	// the partial first tick joins the second, and a 5 s step has 5
	// windows whatever the phase of the ticks.
	// At a low rate the partial first tick may see no I/O: that is no
	// stall.
	if got := TimelineOf([]fio.Interval{iv(0, 20, 0), iv(20, 1020, 10), iv(1020, 2000, 10)}); len(got.Idle) != 0 || len(got.Windows) != 2 {
		t.Errorf("a quiet 20 ms first tick: idle %v, windows %+v; want no idle span, 2 windows", got.Idle, got.Windows)
	}
	for _, phase := range []uint64{1, 234, 499, 501, 766, 999} {
		ivs := []fio.Interval{iv(0, phase, phase)} // 1,000 IOPS
		for at := phase; at < 5000; at += 1000 {
			ivs = append(ivs, iv(at, min(at+1000, 5000), min(at+1000, 5000)-at))
		}
		got := TimelineOf(ivs)
		if len(got.Windows) != 5 || got.Windows[0].StartMs != 0 {
			t.Errorf("ticks at %d ms + k s: windows %+v, want 5 from 0", phase, got.Windows)
			continue
		}
		var ios uint64
		for _, w := range got.Windows {
			ios += w.IOs
			if math.Abs(w.IOPS-1000) > 1e-9 {
				t.Errorf("ticks at %d ms + k s: window at %d ms has %v IOPS, want 1,000", phase, w.StartMs, w.IOPS)
			}
		}
		if ios != 5000 {
			t.Errorf("ticks at %d ms + k s: windows hold %d I/Os, want 5,000", phase, ios)
		}
	}
}

// TestMergedIdleIsEveryClients: a span is idle only when every client was.
func TestMergedIdleIsEveryClients(t *testing.T) {
	a, b := tl(5, 0, 0, 0, 5), tl(5, 5, 0, 0, 5)
	a.Idle = []Span{{1000, 4000}}
	b.Idle = []Span{{2000, 4000}, {4500, 4700}}
	got := MergeTimelines(a, b)
	if want := []Span{{2000, 4000}}; !reflect.DeepEqual(got.Idle, want) || got.LongestIdle() != want[0] {
		t.Errorf("merged idle %v, longest %v; want %v", got.Idle, got.LongestIdle(), want)
	}
	// A client that sent no timeline does not count.
	if got := MergeTimelines(a, Timeline{}); !reflect.DeepEqual(got.Idle, a.Idle) {
		t.Errorf("with a client without a timeline: %v", got.Idle)
	}
}

// TestMergeKeepsItsBinsBounded: past MaxMergedBins bins the merge coarsens.
func TestMergeKeepsItsBinsBounded(t *testing.T) {
	wide := Timeline{WindowSeconds: 1}
	for k := range 1024 {
		w := Window{StartMs: uint64(k) * 1000}
		for i := 0; i < 400; i++ {
			w.Hist.Bins = append(w.Hist.Bins, fio.Bin{Index: i, Count: 1})
		}
		w.IOs = 400
		wide.Windows = append(wide.Windows, w)
	}
	var m timelineMerger
	m.add(wide)
	if m.bins > MaxMergedBins || m.windowSeconds < 2 {
		t.Fatalf("merge holds %d bins in %d s windows, want at most %d", m.bins, m.windowSeconds, MaxMergedBins)
	}
}

// TestMergeTimelinesDenseAndSparseWindows merges timelines longer than the
// merger's dense windows: every window, dense or sparse, holds exactly the
// sum of the clients' bins.
func TestMergeTimelinesDenseAndSparseWindows(t *testing.T) {
	const clients, windows = 3, denseWindows + 44
	ts := make([]Timeline, clients)
	for c := range ts {
		ts[c].WindowSeconds = 1
		for k := range windows {
			bins := []fio.Bin{{Index: 100 + k%7, Count: uint64(1 + c)}, {Index: 200 + (k+c)%5, Count: 2}, {Index: 300 + c, Count: uint64(k + 1)}}
			h := fio.Histogram{Bins: bins}
			ts[c].Windows = append(ts[c].Windows, Window{StartMs: uint64(k * 1000), IOs: h.Total(), Hist: h})
		}
	}
	got := MergeTimelines(ts...)
	if got.WindowSeconds != 1 || len(got.Windows) != windows {
		t.Fatalf("merged %d windows of %d s, want %d of 1 s", len(got.Windows), got.WindowSeconds, windows)
	}
	for k, w := range got.Windows {
		var want fio.Histogram
		for c := range ts {
			want = fio.Merge(want, ts[c].Windows[k].Hist)
		}
		if !reflect.DeepEqual(w.Hist, want) || w.IOs != want.Total() {
			t.Fatalf("window %d (dense: %v): %d I/Os, bins %v; want %v", k, k < denseWindows, w.IOs, w.Hist.Bins, want.Bins)
		}
	}
}
