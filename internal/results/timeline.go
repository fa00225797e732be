package results

import (
	"github.com/storagebench/storagebench/internal/fio"
)

// Second is what was completed in one second of a step's measurement, by one
// client or, merged, by all of them. Second i of a timeline covers about i to
// i+1 seconds after the ramp ended: fio's ticks are a second apart, but
// without a ramp the first and last tick of a run fall where fio's status
// timer puts them, so a client's second may span 0.8 s or 1.2 s. The rates
// are therefore each client's I/Os divided by the time its second spanned,
// summed over clients, while the counts and bins are exact.
type Second struct {
	Read  SecondOp `json:"read"`
	Write SecondOp `json:"write"`
	// IOPS and BytesPerSec are reads and writes together.
	IOPS        float64 `json:"iops"`
	BytesPerSec float64 `json:"bytesPerSec"`
}

// SecondOp is one operation of a Second: its I/Os, bytes and the histogram
// of their completion latencies (fio's bins, exact).
type SecondOp struct {
	IOs   uint64        `json:"ios"`
	Bytes uint64        `json:"bytes"`
	Hist  fio.Histogram `json:"bins"`
}

// Timeline is a step's seconds in order.
type Timeline []Second

// TimelineOf folds one client's fio intervals (every job's, keyed by job
// name) into seconds, summing the jobs: fio ticks about once a second, and
// an interval belongs to the second its end is nearest to (fio.Second).
func TimelineOf(jobs map[string][]fio.Interval) Timeline {
	var accs []secondAcc
	for _, ivs := range jobs {
		for _, iv := range ivs {
			k := fio.Second(iv.EndMs)
			for len(accs) <= k {
				accs = append(accs, secondAcc{})
			}
			accs[k].addInterval(iv)
		}
	}
	return timelineOf(accs)
}

// MergeTimelines sums clients' timelines second by second. Bins are added,
// never percentiles, so a merged second's percentiles are exact over every
// I/O all clients completed in it.
func MergeTimelines(ts ...Timeline) Timeline {
	var accs []secondAcc
	for _, t := range ts {
		for k, s := range t {
			for len(accs) <= k {
				accs = append(accs, secondAcc{})
			}
			accs[k].addSecond(s)
		}
	}
	return timelineOf(accs)
}

type secondAcc struct {
	read, write opAcc
	// startMs and endMs bound a client's second (TimelineOf); iops and
	// bps are summed rates (MergeTimelines).
	startMs, endMs uint64
	spanned        bool
	iops, bps      float64
}

type opAcc struct {
	ios, bytes uint64
	hist       fio.Accumulator
}

func (o *opAcc) add(ios, bytes uint64, h fio.Histogram) {
	o.ios += ios
	o.bytes += bytes
	o.hist.Add(h)
}

func (s *secondAcc) addInterval(iv fio.Interval) {
	s.read.add(iv.Read.IOs, iv.Read.Bytes, iv.Read.Hist)
	s.write.add(iv.Write.IOs, iv.Write.Bytes, iv.Write.Hist)
	if !s.spanned || iv.StartMs < s.startMs {
		s.startMs = iv.StartMs
	}
	s.endMs = max(s.endMs, iv.EndMs)
	s.spanned = true
}

func (s *secondAcc) addSecond(x Second) {
	s.read.add(x.Read.IOs, x.Read.Bytes, x.Read.Hist)
	s.write.add(x.Write.IOs, x.Write.Bytes, x.Write.Hist)
	s.iops += x.IOPS
	s.bps += x.BytesPerSec
}

// rates returns the second's rates: a client's counts over the time its
// intervals spanned, or the merged sum of clients' rates.
func (s *secondAcc) rates() (iops, bps float64) {
	if !s.spanned {
		return s.iops, s.bps
	}
	if s.endMs <= s.startMs {
		return 0, 0
	}
	secs := float64(s.endMs-s.startMs) / 1000
	return float64(s.read.ios+s.write.ios) / secs, float64(s.read.bytes+s.write.bytes) / secs
}

func timelineOf(accs []secondAcc) Timeline {
	t := make(Timeline, len(accs))
	for k := range accs {
		a := &accs[k]
		t[k] = Second{
			Read:  SecondOp{IOs: a.read.ios, Bytes: a.read.bytes, Hist: a.read.hist.Histogram()},
			Write: SecondOp{IOs: a.write.ios, Bytes: a.write.bytes, Hist: a.write.hist.Histogram()},
		}
		t[k].IOPS, t[k].BytesPerSec = a.rates()
	}
	return t
}

// Percentiles returns the second's latency percentiles by fio's rule over
// its reads and writes pooled; zeros without I/O.
func (s Second) Percentiles(ps ...float64) []uint64 {
	var a fio.Accumulator
	a.Add(s.Read.Hist)
	a.Add(s.Write.Hist)
	return a.Percentiles(ps)
}
