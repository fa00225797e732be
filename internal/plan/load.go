package plan

import "time"

// RateUnit is the unit of an offered rate.
type RateUnit string

const (
	// IOPS is I/O operations per second, reads and writes together. An empty
	// RateUnit means IOPS.
	IOPS RateUnit = "IOPS"
	// MiBps is mebibytes (1,048,576 bytes) per second, reads and writes
	// together.
	MiBps RateUnit = "MiBps"
)

// Limits enforced by Validate.
const (
	// MaxSteps is the most steps a load may have (a curve's unthrottled step
	// included).
	MaxSteps = 100
	// MaxRate is the largest offered rate per step, in either unit; it keeps
	// byte arithmetic far from int64 overflow (2^40 MiB/s = 2^60 B/s).
	MaxRate = 1 << 40
	// MaxFactorPercent is the largest growth factor of generated rate steps
	// (×100 per step).
	MaxFactorPercent = 10000
	// MaxQueueDepthPerClient is the most outstanding I/Os per client.
	MaxQueueDepthPerClient = 4096
	// MinStepDuration and MaxStepDuration bound how long a step measures.
	MinStepDuration = 5 * time.Second
	MaxStepDuration = 24 * time.Hour
	// MaxClients and MaxJobsPerClient bound the topology.
	MaxClients       = 1000
	MaxJobsPerClient = 64
	// MaxLatencyLimitMicroseconds is the largest latency stop limit (1 h).
	MaxLatencyLimitMicroseconds = 3_600_000_000
	// MaxStallLimitSeconds is the largest stall stop limit (1 h).
	MaxStallLimitSeconds = 3600
	// MaxRepeat is the most runs of each planned step (Load.Repeat); every
	// run is a step, so steps × repeat is bounded by MaxSteps too.
	MaxRepeat = 10
	// MaxRunsUntilSteady is the largest Load.ExtendUntilSteady: the most
	// runs of one planned step while it is not steady.
	MaxRunsUntilSteady = 10
)

// RateSteps offers a total rate (across ALL clients and jobs) per step. Set
// either Steps, or Start, Max and exactly one of Increment or FactorPercent.
type RateSteps struct {
	// Unit of every value below; empty means IOPS.
	Unit RateUnit
	// Steps lists the total offered rate of each step, strictly increasing.
	Steps []int64
	// Start is the first generated step.
	Start int64
	// Increment is added to each generated step to get the next one.
	Increment int64
	// FactorPercent multiplies each generated step to get the next one
	// (200 = ×2), rounding down but growing by at least 1; 101..10000.
	FactorPercent int32
	// Max bounds generation: steps are generated while they are <= Max.
	// Max itself is a step only if the sequence reaches it exactly; it is not
	// appended otherwise, so every step keeps the requested spacing.
	Max int64
}

// QueueDepthSteps raises the number of outstanding I/Os per client step by
// step; the per-client depth is divided over the client's fio jobs. Set
// either Steps, or Start and Max.
type QueueDepthSteps struct {
	// Steps lists the outstanding I/Os per client of each step, strictly
	// increasing, each at least JobsPerClient and at most 4096.
	Steps []int32
	// Start and Max generate doubling steps: Start, 2×Start, 4×Start, … <= Max.
	Start, Max int32
}

// CurveSpec is a vdbench-style curve: step 0 runs unthrottled to find the
// maximum, then one step runs at each percentage of the measured maximum.
type CurveSpec struct {
	// Percents of the measured maximum, strictly increasing, 1..100; empty
	// means 10, 20, …, 100.
	Percents []int32
	// Unit is what the maximum is measured in and the steps offer; empty
	// means IOPS.
	Unit RateUnit
	// ClientBoundCheck runs the unthrottled level again at twice the
	// outstanding I/O right after it: a maximum that grows with more I/O in
	// flight was the clients', not the storage's.
	ClientBoundCheck bool
}

// ClientSteps is a scale-out sweep: step i runs the first Steps[i] clients
// of the topology, the others idle, each running client at PerClientIOPS
// (divided over its jobs) or, when 0, unthrottled at the workload's depth.
type ClientSteps struct {
	// Steps lists the clients that run in each step, strictly increasing,
	// 1..Topology.Clients.
	Steps []int32
	// PerClientIOPS is each running client's offered rate; 0: unthrottled.
	PerClientIOPS int64
}

// DefaultCurvePercents returns the percentages a curve uses when none are
// given: 10, 20, …, 100.
func DefaultCurvePercents() []int32 {
	return []int32{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
}

// LatencyMetric is a latency statistic of one step.
type LatencyMetric string

const (
	Mean LatencyMetric = "mean"
	P50  LatencyMetric = "p50"
	P90  LatencyMetric = "p90"
	P99  LatencyMetric = "p99"
	P999 LatencyMetric = "p99.9"
)

// LatencyMetrics returns the allowed metrics.
func LatencyMetrics() []LatencyMetric { return []LatencyMetric{Mean, P50, P90, P99, P999} }

// LatencyOperation selects which operations a latency rule looks at.
type LatencyOperation string

const (
	Read  LatencyOperation = "read"
	Write LatencyOperation = "write"
	// Total is the latency over all I/O, reads and writes pooled.
	Total LatencyOperation = "total"
	// Worst is the worse of read and write.
	Worst LatencyOperation = "worst"
	// Sync is the sync calls (fsync or fdatasync) of a workload that
	// makes them.
	Sync LatencyOperation = "sync"
)

// LatencyOperations returns the allowed operations (the same names as
// analysis.LatencySelector's).
func LatencyOperations() []LatencyOperation {
	return []LatencyOperation{Read, Write, Total, Worst, Sync}
}

// StopRules end a load early. Each rule is checked on every finished step.
type StopRules struct {
	// Latency stops after a step whose latency exceeds a limit; nil = off.
	Latency *LatencyStop
	// SaturationPercent stops after a throttled rate step that achieved less
	// than this percentage of its offered rate; 0 = off. It needs an offered
	// rate, so it is refused with queue-depth steps.
	SaturationPercent int32
	// MaxStallSeconds stops after a step in which no client completed an
	// I/O for longer than this many seconds (its timeline's longest stall);
	// 0 = off.
	MaxStallSeconds int32
}

// LatencyStop stops the load when Metric of Operation exceeds (is strictly
// above) LimitMicroseconds.
type LatencyStop struct {
	Metric            LatencyMetric
	Operation         LatencyOperation
	LimitMicroseconds int64
}

// Load is how the offered load changes from step to step. Exactly one of
// Rate, QueueDepth, Curve or Clients is set.
type Load struct {
	Rate       *RateSteps
	QueueDepth *QueueDepthSteps
	Curve      *CurveSpec
	Clients    *ClientSteps
	// StepDuration is how long each step measures, 5 s..24 h.
	StepDuration time.Duration
	// RampTime runs before each step's measurement and is excluded from its
	// results; 0 <= RampTime < StepDuration.
	RampTime time.Duration
	Stop     StopRules
	// Arrivals is how rated jobs space their I/Os; empty means Uniform.
	Arrivals Arrivals
	// Repeat runs every planned step this many times back to back, 1..10;
	// 0 means 1. Each run is a step of its own (Steps lists them all).
	Repeat int32
	// ExtendUntilSteady, when 2 or more, is the most runs of a planned step
	// while it is not steady: a step whose outcome was judged not steady
	// (StepOutcome.Steady) is run again at the same load, as a step of its
	// own, until a run is steady or this many have run; the last run is
	// the planned step's figure and the earlier ones are superseded. 0 or
	// 1: every planned step runs once.
	ExtendUntilSteady int32
}

// Fixed reports whether every step of l is known before any has run: a
// rate or queue-depth list without stop rules and without reruns of
// unsteady steps. A curve's steps follow from its unthrottled result, and
// a stop rule or a rerun from each step's, so theirs are not.
func (l Load) Fixed() bool {
	return l.Curve == nil && l.Stop == (StopRules{}) && l.runsUntilSteady() == 1
}

// runsUntilSteady is l.ExtendUntilSteady, or 1 when it does not extend.
func (l Load) runsUntilSteady() int {
	if l.ExtendUntilSteady < 2 {
		return 1
	}
	return int(l.ExtendUntilSteady)
}

// repeat is l.Repeat, or 1 when unset: the one place it is defaulted (the
// API's admission default sets the same value).
func (l Load) repeat() int {
	if l.Repeat < 1 {
		return 1
	}
	return int(l.Repeat)
}

// Arrivals is how a rated job spaces its I/Os in time.
type Arrivals string

const (
	// Uniform issues I/Os at even intervals (fio's linear rate_process).
	Uniform Arrivals = "Uniform"
	// Poisson issues I/Os with exponentially distributed gaps of the same
	// mean (fio's poisson rate_process). It needs an offered rate.
	Poisson Arrivals = "Poisson"
)

// Topology is how many fio jobs share the load.
type Topology struct {
	// Clients is the number of client pods, 1..1000.
	Clients int32
	// JobsPerClient is fio's numjobs in each client, 1..64.
	JobsPerClient int32
}

// Jobs returns the total number of fio jobs.
func (t Topology) Jobs() int64 { return int64(t.Clients) * int64(t.JobsPerClient) }

// Step is one planned step of a load: with Load.Repeat > 1, one run of a
// planned level.
type Step struct {
	// Index is the step's position, from 0.
	Index int
	// Level is the planned step (the load level) this step is a run of,
	// from 0, and Repetition which run of it, 1..Load.Repeat. Both are set
	// only when the load repeats (Repeat > 1); otherwise both are 0 and
	// every step is its own level, as in orders written before repeats
	// existed (which is why they are left out of JSON when 0).
	Level      int   `json:",omitempty"`
	Repetition int32 `json:",omitempty"`
	// Unthrottled is true for a curve's first step, which runs without any
	// rate limit to find the maximum.
	Unthrottled bool
	// ClientBoundCheck marks the unthrottled step a curve runs after its
	// maximum, at twice the outstanding I/O of every job (CurveSpec). It is
	// not part of the maximum the curve's rates are built from.
	ClientBoundCheck bool `json:",omitempty"`
	// Attempt is which run of its planned step this is, 1..
	// Load.ExtendUntilSteady, when the load extends unsteady steps; 0
	// otherwise. A run with Attempt above 1 supersedes the step before it
	// (Supersedes).
	Attempt int32 `json:",omitempty"`
	// OfferedIOPS is the total offered IOPS across all clients, or 0 if the
	// step is not an IOPS rate step.
	OfferedIOPS int64
	// OfferedBytesPerSec is the total offered bytes per second across all
	// clients, or 0 if the step is not a MiBps rate step.
	OfferedBytesPerSec int64
	// QueueDepthPerClient is the outstanding I/Os per client of a queue-depth
	// step, or 0: each job then uses the workload's IODepth.
	QueueDepthPerClient int32
	// PercentOfMax is the curve percentage of this step, or 0.
	PercentOfMax int32
	// ActiveClients is how many clients run the step, the first ones of the
	// topology, in a scale-out sweep (Load.Clients); the others idle. 0:
	// every client runs it.
	ActiveClients int32 `json:",omitempty"`
}

// Running is how many of t's clients run s: its ActiveClients, or all.
func (s Step) Running(t Topology) int32 {
	if s.ActiveClients > 0 && s.ActiveClients < t.Clients {
		return s.ActiveClients
	}
	return t.Clients
}

// Idle says whether client c of t idles through s (a scale-out step that
// leaves it out).
func (s Step) Idle(c int, t Topology) bool { return int32(c) >= s.Running(t) }

// Supersedes reports whether s is a rerun of the step just before it,
// which was not steady: that earlier step is then superseded, not a figure
// of the run.
func (s Step) Supersedes() bool { return s.Attempt > 1 }

// SupersededAt reports whether ran[i], of the steps ordered so far in
// order, was superseded: the step after it is its rerun.
func SupersededAt(ran []Step, i int) bool { return i+1 < len(ran) && ran[i+1].Supersedes() }

// Offered is the load a rate step offers, in its unit (IOPS, or bytes per
// second); 0 for a step that offers no rate.
func (s Step) Offered() float64 { return float64(s.OfferedIOPS + s.OfferedBytesPerSec) }

// RateLimited reports whether the step offers a fixed rate.
func (s Step) RateLimited() bool { return s.OfferedIOPS > 0 || s.OfferedBytesPerSec > 0 }

// JobLoad is what one fio job runs in a step. A zero rate means "no limit" —
// which is what fio does with rate 0 — so a direction with I/O is never given
// a zero share of a throttled step.
type JobLoad struct {
	// ReadIOPS and WriteIOPS are fio's rate_iops=read,write; 0 = no limit.
	ReadIOPS, WriteIOPS int64
	// ReadBytesPerSec and WriteBytesPerSec are fio's rate=read,write;
	// 0 = no limit.
	ReadBytesPerSec, WriteBytesPerSec int64
	// IODepth is fio's iodepth for the job.
	IODepth int32
}
