package results

import (
	"cmp"
	"slices"

	"github.com/storagebench/storagebench/internal/fio"
)

// MinStallMs is the shortest stall a latency log places: two of its
// windows.
const MinStallMs = 2 * fio.LatLogMs

// MaxStalls is how many of a client's stalls a step keeps, the longest: a
// timeline's budget (ClientTimelineBytes) is for its windows, and a step
// reports its longest stall.
const MaxStalls = 128

// StallsOf is when a client stalled, in ms after the ramp: its status
// ticks' idle spans (tickIdle, TimelineOf), joined with the spans its jobs'
// latency logs (fio.LatLogEntry) show every job waited through. A job's
// window written at E whose slowest I/O took L was waited through from
// E−L (or from the window before, if later: something completed then)
// until E, when that I/O completed. A log places a stall that held I/O up
// to within its window (fio.LatLogMs), and its length to within the time
// between two of the job's I/Os being issued; the ticks see only a lower
// bound, to within a second, but also a client whose jobs were stopped
// with no I/O outstanding (a stall of the client, not of the storage).
// Log spans shorter than MinStallMs are left out, and at most MaxStalls
// spans are kept, the longest. Where a tick's span overlaps a log's, the
// log's stands.
func StallsOf(jobs [][]fio.LatLogEntry, tickIdle []Span) []Span {
	var waited []Span
	first := true
	for _, entries := range jobs {
		if len(entries) == 0 {
			continue // a job that completed nothing constrains nothing
		}
		var spans []Span
		var prev uint64
		for i := 0; i < len(entries); {
			// Windows of both directions written at the same ms (in
			// either order) are one: their slowest I/O counts.
			e := entries[i]
			for i++; i < len(entries) && entries[i].TimeMs == e.TimeMs; i++ {
				e.MaxNs = max(e.MaxNs, entries[i].MaxNs)
			}
			start := prev
			if w := (e.MaxNs + 500_000) / 1_000_000; w < e.TimeMs { // to the nearest ms
				start = max(start, e.TimeMs-w)
			}
			if e.TimeMs >= start+MinStallMs {
				spans = addSpan(spans, Span{start, e.TimeMs})
			}
			prev = e.TimeMs
		}
		if first {
			waited, first = spans, false
		} else {
			waited = intersect(waited, spans)
		}
	}
	// Where a log saw a stall, its span stands: a late tick's end is when
	// fio's status thread got its answer, some time after.
	all := slices.Clone(waited)
	for _, t := range tickIdle {
		if !slices.ContainsFunc(waited, func(w Span) bool { return w.StartMs < t.EndMs && t.StartMs < w.EndMs }) {
			all = append(all, t)
		}
	}
	slices.SortFunc(all, func(a, b Span) int { return cmp.Compare(a.StartMs, b.StartMs) })
	var out []Span
	for _, s := range all {
		out = addSpan(out, s)
	}
	if len(out) > MaxStalls {
		longest := slices.SortedFunc(slices.Values(out), func(a, b Span) int { return cmp.Compare(b.Duration(), a.Duration()) })[:MaxStalls]
		out = slices.SortedFunc(slices.Values(longest), func(a, b Span) int { return cmp.Compare(a.StartMs, b.StartMs) })
	}
	return out
}
