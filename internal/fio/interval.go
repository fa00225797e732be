package fio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// With --status-interval fio appends a whole json+ document to its output at
// every interval tick, then the final one when it ends. Each document's
// counters and histogram bins are cumulative since the end of the ramp, so
// the difference of two consecutive documents is exactly what the jobs
// completed between them, bin by bin.
//
// The documents are taken while the jobs run, which shows in three ways the
// reader allows for: a document taken during the ramp counts I/Os but no
// latencies (it is left out); around the end of the ramp a document may pair
// the ramp's clock with counters already reset, so the next one's clock goes
// back (the intervals so far are folded into the next, their counts kept);
// and a document's N may lag its bins by an I/O being recorded (the bins are
// counted).

// Interval is what all of a client's jobs completed between two of fio's
// status documents.
type Interval struct {
	// StartMs and EndMs are the jobs' measured run time (ramp excluded)
	// at the two documents.
	StartMs, EndMs uint64
	Read, Write    IntervalOp
}

// IOs is the interval's reads and writes.
func (iv Interval) IOs() uint64 { return iv.Read.IOs + iv.Write.IOs }

// IntervalOp is one operation (reads or writes) of an Interval.
type IntervalOp struct {
	IOs, Bytes uint64
	Hist       Histogram
}

// jobState is the last document's cumulative figures of one job.
type jobState struct {
	read, write opState
}

type opState struct {
	n, bytes uint64
	bins     [PlatNR]uint64
}

// Intervals reads a status-interval output stream into the client's
// intervals, its jobs summed, in order. Lines fio writes between documents
// (such as "fio: terminating on signal 15" when it is stopped) are skipped.
// The intervals add up, bin by bin, to the final document whenever fio's
// counters only grew after the ramp; callers compare and drop a timeline
// that does not.
func Intervals(r io.Reader) ([]Interval, error) {
	var a intervals
	_, err := documents(r, a.add)
	return a.out, err
}

// intervals turns a status stream's documents, fed in order to add, into
// the intervals Intervals returns (out).
type intervals struct {
	jobs    map[string]*jobState
	out     []Interval
	lastEnd uint64
	carry   Interval // intervals folded after the clock went back
	// beganMs is when the measurement began, in Unix milliseconds: the
	// least of the documents' timestamps less the jobs' run times at them.
	beganMs int64
}

func (a *intervals) add(doc rawOutput) error {
	if a.jobs == nil {
		a.jobs = map[string]*jobState{}
	}
	var iv Interval
	measuring := false
	var recorded uint64 // latencies recorded so far, every job's
	for _, j := range doc.Jobs {
		st := a.jobs[j.JobName]
		if st == nil {
			st = &jobState{}
			a.jobs[j.JobName] = st
		}
		r, err := diffOp(&st.read, &j.Read)
		if err != nil {
			return err
		}
		w, err := diffOp(&st.write, &j.Write)
		if err != nil {
			return err
		}
		if j.Read.ClatNs.N+j.Write.ClatNs.N == 0 && j.Read.TotalIOs+j.Write.TotalIOs > 0 {
			// In the ramp: I/Os counted, no latency recorded; fio
			// resets both when the ramp ends.
			*st = jobState{}
			continue
		}
		measuring = true
		recorded += j.Read.ClatNs.N + j.Write.ClatNs.N
		iv.EndMs = max(iv.EndMs, j.JobRuntime)
		addOp(&iv.Read, r)
		addOp(&iv.Write, w)
	}
	if !measuring {
		return nil
	}
	if iv.EndMs < a.lastEnd {
		// The clock went back: the documents so far paired the ramp's
		// clock with the measurement's counters.
		for _, prev := range a.out {
			addOp(&a.carry.Read, prev.Read)
			addOp(&a.carry.Write, prev.Write)
		}
		a.out, a.lastEnd, a.beganMs = a.out[:0], 0, 0
	}
	// A document's timestamp is taken after its jobs' run times, so each
	// that recorded latencies gives a bound on the start no earlier than
	// it: the least is kept. (Documents before the jobs' first I/O, while
	// they wait to start, say nothing of it.)
	if began := doc.TimestampMs - int64(iv.EndMs); recorded > 0 && (a.beganMs == 0 || began < a.beganMs) {
		a.beganMs = began
	}
	iv.StartMs = a.lastEnd
	addOp(&iv.Read, a.carry.Read)
	addOp(&iv.Write, a.carry.Write)
	a.carry = Interval{}
	a.out = append(a.out, iv)
	a.lastEnd = iv.EndMs
	return nil
}

// diffOp returns what one job did since its last document, and records the
// new cumulative figures. Counters that went down mean fio reset them: the
// job's figures start over from zero.
func diffOp(prev *opState, d *rawDir) (IntervalOp, error) {
	h, err := HistogramFromFio(d.ClatNs.Bins)
	if err != nil {
		return IntervalOp{}, err
	}
	n := h.Total()
	reset := n < prev.n || d.IOBytes < prev.bytes
	for _, b := range h.Bins {
		if b.Count < prev.bins[b.Index] {
			reset = true
		}
	}
	if reset {
		*prev = opState{}
	}
	op := IntervalOp{IOs: n - prev.n, Bytes: d.IOBytes - prev.bytes}
	var cur [PlatNR]uint64
	for _, b := range h.Bins {
		cur[b.Index] = b.Count
		if c := b.Count - prev.bins[b.Index]; c > 0 {
			op.Hist.Bins = append(op.Hist.Bins, Bin{Index: b.Index, Count: c})
		}
	}
	prev.n, prev.bytes, prev.bins = n, d.IOBytes, cur
	return op, nil
}

func addOp(dst *IntervalOp, src IntervalOp) {
	dst.IOs += src.IOs
	dst.Bytes += src.Bytes
	if len(src.Hist.Bins) > 0 {
		dst.Hist = Merge(dst.Hist, src.Hist)
	}
}

// documents calls fn with every top-level JSON document of fio's output, in
// order, reading one at a time: fio prints each document from a line "{" to
// a line "}", and lines outside them are skipped. Text before the first
// document is returned.
func documents(r io.Reader, fn func(rawOutput) error) (preamble string, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var doc, pre bytes.Buffer
	in, found, oneLine := false, false, false
	for {
		line, rerr := br.ReadBytes('\n')
		switch {
		case !in && len(line) > 0 && line[0] == '{':
			in, found = true, true
			doc.Reset()
			doc.Write(line)
			// A document on one line (not fio's layout, but valid).
			oneLine = json.Valid(bytes.TrimSpace(line))
		case in:
			doc.Write(line)
		case !found:
			pre.Write(line)
		}
		if in && (oneLine || bytes.Equal(bytes.TrimRight(line, "\r\n"), []byte("}"))) {
			in = false
			var d rawOutput
			if err := json.Unmarshal(doc.Bytes(), &d); err != nil {
				return pre.String(), err
			}
			if err := fn(d); err != nil {
				return pre.String(), err
			}
		}
		if rerr == io.EOF {
			if in {
				// The last document may close on a line of its own
				// making (not fio's layout): it must decode whole.
				var d rawOutput
				if err := json.Unmarshal(doc.Bytes(), &d); err != nil {
					return pre.String(), fmt.Errorf("the last JSON document is cut short: %w", err)
				}
				return pre.String(), fn(d)
			}
			if !found {
				return pre.String(), errNoDocument
			}
			return pre.String(), nil
		}
		if rerr != nil {
			return pre.String(), rerr
		}
	}
}

var errNoDocument = errors.New("fio output contains no JSON document")
