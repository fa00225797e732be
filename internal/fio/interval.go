package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// With --status-interval fio appends a whole json+ document to its output at
// every interval tick, then the final one when it ends. Each document's
// counters and histogram bins are cumulative since the end of the ramp, so
// the difference of two consecutive documents is exactly what the job
// completed between them, bin by bin.

// Interval is what one job completed between two of fio's status snapshots.
type Interval struct {
	// StartMs and EndMs are the job's measured run time (ramp excluded) at
	// the two snapshots.
	StartMs, EndMs uint64
	Read, Write    IntervalOp
}

// IntervalOp is one operation (reads or writes) of an Interval.
type IntervalOp struct {
	IOs, Bytes uint64
	Hist       Histogram
}

// snapshot is one job in one status document.
type snapshot struct {
	runtimeMs   uint64
	read, write snapOp
}

type snapOp struct {
	ios, n, bytes uint64
	bins          [PlatNR]uint64
}

// Intervals splits a status-interval output stream into each job's
// intervals, in order, keyed by job name. Snapshots taken during the ramp
// (I/Os done but no latency recorded) are skipped: measurement starts from
// zero when the ramp ends. An interval's I/Os are its histogram's count. The intervals of a job add up exactly to its
// final document.
func Intervals(data []byte) (map[string][]Interval, error) {
	start := jsonStart(data)
	if start < 0 {
		return nil, errors.New("fio output contains no JSON document")
	}
	series := map[string][]snapshot{}
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	for {
		var raw rawOutput
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decoding fio status document %d: %w", len(series), err)
		}
		for _, j := range raw.Jobs {
			s, err := snapshotOf(j)
			if err != nil {
				return nil, fmt.Errorf("job %q: %w", j.JobName, err)
			}
			if s.read.n+s.write.n == 0 && s.read.ios+s.write.ios > 0 {
				// In the ramp: fio counts I/Os but records no latency,
				// and resets both when the ramp ends.
				series[j.JobName] = series[j.JobName][:0]
				continue
			}
			series[j.JobName] = append(series[j.JobName], s)
		}
	}
	out := make(map[string][]Interval, len(series))
	for name, snaps := range series {
		var prev snapshot
		for _, s := range snaps {
			iv := Interval{StartMs: prev.runtimeMs, EndMs: s.runtimeMs}
			var err error
			if iv.Read, err = diff(prev.read, s.read); err == nil {
				iv.Write, err = diff(prev.write, s.write)
			}
			if err != nil || s.runtimeMs < prev.runtimeMs {
				return nil, fmt.Errorf("job %q: status snapshot at %d ms is not cumulative over the one at %d ms: %v",
					name, s.runtimeMs, prev.runtimeMs, err)
			}
			out[name] = append(out[name], iv)
			prev = s
		}
	}
	return out, nil
}

func snapshotOf(j rawJob) (snapshot, error) {
	s := snapshot{runtimeMs: j.JobRuntime}
	for _, d := range []struct {
		raw *rawDir
		op  *snapOp
	}{{&j.Read, &s.read}, {&j.Write, &s.write}} {
		h, err := HistogramFromFio(d.raw.ClatNs.Bins)
		if err != nil {
			return s, err
		}
		// A snapshot is taken while the job runs: its N may lag its bins
		// by an I/O being recorded. The bins are what the intervals count;
		// the final document, taken after the job ended, agrees with them.
		d.op.ios, d.op.n, d.op.bytes = d.raw.TotalIOs, h.Total(), d.raw.IOBytes
		for _, b := range h.Bins {
			d.op.bins[b.Index] = b.Count
		}
	}
	return s, nil
}

func diff(prev, cur snapOp) (IntervalOp, error) {
	if cur.n < prev.n || cur.bytes < prev.bytes {
		return IntervalOp{}, errors.New("counts went down")
	}
	op := IntervalOp{IOs: cur.n - prev.n, Bytes: cur.bytes - prev.bytes}
	for i := range cur.bins {
		if cur.bins[i] < prev.bins[i] {
			return IntervalOp{}, fmt.Errorf("bin %d ns went down", BinValue(i))
		}
		if c := cur.bins[i] - prev.bins[i]; c > 0 {
			op.Hist.Bins = append(op.Hist.Bins, Bin{Index: i, Count: c})
		}
	}
	return op, nil
}

// Second returns the index of the second of measurement an interval ending
// at endMs belongs to: fio ticks about every 1000 ms from the end of the
// ramp, so the tick nearest k × 1000 ms closes second k-1; the final
// document, a few milliseconds after the last tick, joins that second.
func Second(endMs uint64) int {
	return max(int(math.Round(float64(endMs)/1000))-1, 0)
}
