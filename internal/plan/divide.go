package plan

import (
	"errors"
	"fmt"

	"github.com/storagebench/storagebench/internal/workload"
)

// splitReads splits a total between reads and writes: reads get
// floor(total × readPercent / 100), writes the rest, so that
// reads + writes == total exactly.
func splitReads(total int64, readPercent int32) (reads, writes int64) {
	r := int64(readPercent)
	reads = total/100*r + total%100*r/100 // floor(total*r/100) without overflow
	return reads, total - reads
}

// minTotal returns the smallest total for which every direction the workload
// does gets at least perDirection after splitReads.
func minTotal(perDirection int64, readPercent int32) int64 {
	r := int64(readPercent)
	switch {
	case r <= 0 || r >= 100:
		return perDirection
	default:
		// reads: floor(T*r/100) >= p  <=>  T >= ceil(p*100/r)
		tr := (perDirection*100 + r - 1) / r
		// writes: T - floor(T*r/100) = ceil(T*(100-r)/100) >= p
		//         <=> T > (p-1)*100/(100-r)
		tw := (perDirection-1)*100/(100-r) + 1
		return max(tr, tw)
	}
}

// perJobMinimum is the least a job may get per direction: 1 I/O per second,
// i.e. 1 IOPS or one block per second.
func perJobMinimum(unit RateUnit, w workload.Spec) int64 {
	if unit == MiBps {
		return w.BlockSizeBytes
	}
	return 1
}

// minimumBase returns the smallest total, in IOPS or bytes per second, that
// gives every job at least one I/O per second in every direction the workload
// does.
func minimumBase(unit RateUnit, t Topology, w workload.Spec) int64 {
	return minTotal(t.Jobs()*perJobMinimum(unit, w), w.ReadPercent)
}

// MinimumRate returns the smallest total offered rate, in unit (IOPS or
// whole MiB/s), that gives every fio job of t at least one I/O per second in
// every direction w does. fio treats a rate of 0 as "unlimited", so a lower
// rate would silently unthrottle some jobs; Validate and Divide refuse it.
func MinimumRate(unit RateUnit, t Topology, w workload.Spec) int64 {
	m := minimumBase(unit, t, w)
	if unit == MiBps {
		return (m + bytesPerMiB - 1) / bytesPerMiB
	}
	return m
}

// whyMinimum explains MinimumRate for error messages.
func whyMinimum(unit RateUnit, t Topology, w workload.Spec) string {
	per := "1 read IOPS"
	switch {
	case w.HasReads() && w.HasWrites():
		per = fmt.Sprintf("1 read IOPS and 1 write IOPS at %d %% reads", w.ReadPercent)
	case w.HasWrites():
		per = "1 write IOPS"
	}
	if unit == MiBps {
		per = fmt.Sprintf("%d B/s (one block per second) of %s", w.BlockSizeBytes, directionWords(w))
		if w.HasReads() && w.HasWrites() {
			per += fmt.Sprintf(" at %d %% reads", w.ReadPercent)
		}
	}
	return fmt.Sprintf("each of the %d fio jobs (%d clients × %d jobs) needs at least %s, and fio treats a rate of 0 as unlimited",
		t.Jobs(), t.Clients, t.JobsPerClient, per)
}

func directionWords(w workload.Spec) string {
	switch {
	case w.HasReads() && w.HasWrites():
		return "reads and of writes"
	case w.HasWrites():
		return "writes"
	default:
		return "reads"
	}
}

// Divide returns what each fio job runs in step s, indexed [client][job].
//
// Throttled steps: the total is split into reads and writes (reads get
// floor(total × ReadPercent / 100), writes the rest), because fio's rate_iops
// and rate apply per data direction. Each direction is then divided over all
// clients × jobs by integer division; the remainder goes one unit per job in
// slot order client 0 job 0, client 1 job 0, …, client 0 job 1, … (clients
// first), and the write remainder continues where the read remainder stopped.
// Hence the sum over all jobs equals the offered total exactly, and client
// totals (reads, writes, and both together) differ by at most 1. IOPS steps
// fill ReadIOPS/WriteIOPS; MiBps steps fill ReadBytesPerSec/WriteBytesPerSec.
// A step too small to give every job at least one I/O per second in every
// direction with I/O is an error, because fio would read a zero share as
// "unlimited".
//
// Every job gets the workload's IODepth, except in queue-depth steps, where a
// client's outstanding I/Os are divided over its jobs (remainder one each to
// the first jobs), so a client's jobs add up to QueueDepthPerClient exactly,
// and in a curve's client-bound check, where every job gets twice it.
// Unthrottled steps get no rate limits.
//
// t and w must have passed Validate (or ValidateFor): Divide checks only the
// step.
func Divide(s Step, t Topology, w workload.Spec) ([][]JobLoad, error) {
	if s.ActiveClients < 0 || s.ActiveClients > t.Clients {
		return nil, fmt.Errorf("step %d: %d clients running, of %d", s.Index, s.ActiveClients, t.Clients)
	}
	if n := s.Running(t); n < t.Clients {
		// A scale-out step: its load over the clients that run it, none
		// for the others.
		active := s
		active.ActiveClients = 0
		loads, err := Divide(active, Topology{Clients: n, JobsPerClient: t.JobsPerClient}, w)
		if err != nil {
			return nil, err
		}
		return append(loads, make([][]JobLoad, t.Clients-n)...), nil
	}
	switch {
	case s.OfferedIOPS < 0 || s.OfferedBytesPerSec < 0 || s.QueueDepthPerClient < 0:
		return nil, fmt.Errorf("step %d: negative offered load", s.Index)
	case s.OfferedIOPS > 0 && s.OfferedBytesPerSec > 0:
		return nil, fmt.Errorf("step %d: offers both IOPS and bytes per second; a step offers one", s.Index)
	case s.RateLimited() && (s.Unthrottled || s.QueueDepthPerClient > 0):
		return nil, fmt.Errorf("step %d: a rate step cannot also be unthrottled or set a queue depth", s.Index)
	case s.QueueDepthPerClient > 0 && s.QueueDepthPerClient < t.JobsPerClient:
		return nil, fmt.Errorf("step %d: queue depth %d per client is below the %d jobs per client: every job needs at least one outstanding I/O",
			s.Index, s.QueueDepthPerClient, t.JobsPerClient)
	}

	loads := make([][]JobLoad, t.Clients)
	for c := range loads {
		loads[c] = make([]JobLoad, t.JobsPerClient)
		for j := range loads[c] {
			loads[c][j].IODepth = jobDepth(s, t, w, int32(j))
		}
	}
	if !s.RateLimited() {
		return loads, nil
	}

	unit, total := IOPS, s.OfferedIOPS
	if s.OfferedBytesPerSec > 0 {
		unit, total = MiBps, s.OfferedBytesPerSec
	}
	if need := minimumBase(unit, t, w); total < need {
		return nil, errors.New(tooLowMessage(s, unit, total, need, t, w))
	}
	reads, writes := splitReads(total, w.ReadPercent)
	n := t.Jobs()
	spread(reads, 0, t, func(l *JobLoad, v int64) {
		if unit == MiBps {
			l.ReadBytesPerSec = v
		} else {
			l.ReadIOPS = v
		}
	}, loads)
	spread(writes, reads%n, t, func(l *JobLoad, v int64) {
		if unit == MiBps {
			l.WriteBytesPerSec = v
		} else {
			l.WriteIOPS = v
		}
	}, loads)
	return loads, nil
}

// spread divides total over every job: each gets total/n, and the remainder
// goes one unit each to the slots first, first+1, … (mod n), where slot k is
// client k % clients, job k / clients.
func spread(total, first int64, t Topology, set func(*JobLoad, int64), loads [][]JobLoad) {
	n := t.Jobs()
	c := int64(t.Clients)
	base, rem := total/n, total%n
	for k := range n {
		v := base
		if (k-first+n)%n < rem {
			v++
		}
		set(&loads[k%c][k/c], v)
	}
}

func tooLowMessage(s Step, unit RateUnit, total, need int64, t Topology, w workload.Spec) string {
	if unit == MiBps {
		return fmt.Sprintf("step %d offers %d B/s, below the minimum of %d B/s (%d MiBps): %s",
			s.Index+1, total, need, MinimumRate(MiBps, t, w), whyMinimum(unit, t, w))
	}
	return fmt.Sprintf("step %d offers %d IOPS, below the minimum of %d IOPS: %s",
		s.Index+1, total, need, whyMinimum(unit, t, w))
}

// jobDepth is the iodepth Divide gives job j of every client: a queue-depth
// step's depth per client spread over its jobs, else the workload's, twice
// it for a curve's client-bound check.
func jobDepth(s Step, t Topology, w workload.Spec, j int32) int32 {
	if q := s.QueueDepthPerClient; q > 0 {
		depth := q / t.JobsPerClient
		if j < q%t.JobsPerClient {
			depth++
		}
		return depth
	}
	if s.ClientBoundCheck {
		return 2 * w.IODepth
	}
	return w.IODepth
}

// Outstanding is how many I/Os a step's clients may keep in flight: every
// job's depth as Divide sets it, summed over the jobs of all clients. It
// does not allocate the per-job loads (the status is projected on every
// reconcile), and s is a step Divide accepts.
func Outstanding(s Step, t Topology, w workload.Spec) int64 {
	var perClient int64
	for j := range t.JobsPerClient {
		perClient += int64(jobDepth(s, t, w, j))
	}
	return int64(s.Running(t)) * perClient
}
