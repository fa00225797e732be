package results

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// ClientStep is what one client publishes for one step as soon as the step
// ends: its fio jobs already merged (exactly) into one result per direction.
type ClientStep struct {
	Client int `json:"client"`
	Step   int `json:"step"`
	// Jobs is the number of fio jobs the client ran.
	Jobs int `json:"jobs"`
	// PlannedStart is the instant the step was scheduled to start.
	PlannedStart time.Time `json:"plannedStart"`
	// ActualStart is when the client's I/O began (its ramp included), by
	// fio's own timestamps, or when it launched fio if fio did not say; End
	// is when fio ended and its report was read. Both are on the
	// conductor's clock (in Kubernetes the API server's: the runner
	// corrects its own clock by its measured offset), so the clients'
	// start spread is comparable across nodes.
	ActualStart time.Time `json:"actualStart"`
	End         time.Time `json:"end"`
	Read        Operation `json:"read"`
	Write       Operation `json:"write"`
	// Sync is the client's sync calls (fsync or fdatasync), when its
	// workload makes them: their count, rate and latency, no bytes. They
	// are not I/O: not in Read, Write or the step's total.
	Sync Operation `json:"sync,omitzero"`
	// CPU is what the step cost the client's CPU; zero when the runner did
	// not measure it.
	CPU CPU `json:"cpu,omitzero"`
	// Idle says the client ran no I/O in the step: a scale-out step left
	// it out (plan.Step.ActiveClients). Its result has no figures and is
	// not merged; it only says the client is there.
	Idle bool `json:"idle,omitempty"`
	// Interrupted is set when the step was cut short (SIGTERM); the numbers
	// are what fio measured until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error carries fio's own message when the step failed.
	Error string `json:"error,omitempty"`
	// Timeline is the step second by second (coarser when long: Fit);
	// empty when the runner did not collect one.
	Timeline Timeline `json:"timeline,omitzero"`
	// Verification is the verification pass after the step, in a run
	// that verifies what it writes (its I/O is not in Read or Write).
	Verification *Verification `json:"verification,omitempty"`
}

// Operation is one data direction of a client's step.
type Operation struct {
	IOs         uint64           `json:"ios"`
	Bytes       uint64           `json:"bytes"`
	IOPS        float64          `json:"iops"`
	BytesPerSec float64          `json:"bytesPerSec"`
	Latency     fio.LatencyStats `json:"latency"`
}

// FromFio merges the jobs of one fio run into a client's step result: its
// reads, writes and sync calls.
func FromFio(out *fio.Output) (read, write, sync Operation) {
	var r, w, s dirMerger
	for _, j := range out.Jobs {
		r.addFio(j.Read)
		w.addFio(j.Write)
		s.addFio(j.Sync)
	}
	return r.direction(), w.direction(), s.direction()
}

// isZero reports whether the operation holds nothing (no sync calls).
func (o *Operation) isZero() bool {
	return o.IOs == 0 && o.Bytes == 0 && o.IOPS == 0 && o.BytesPerSec == 0 && o.Latency.Count == 0 &&
		o.Latency.MinNs == 0 && o.Latency.MaxNs == 0 && o.Latency.MeanNs == 0 && o.Latency.StdNs == 0 && len(o.Latency.Hist.Bins) == 0
}

// LatencySummary is a merged latency distribution, in nanoseconds.
type LatencySummary struct {
	Count    uint64  `json:"count"`
	MinNs    uint64  `json:"minNs"`
	MaxNs    uint64  `json:"maxNs"`
	MeanNs   float64 `json:"meanNs"`
	StddevNs float64 `json:"stddevNs"`
	P50Ns    uint64  `json:"p50Ns"`
	P90Ns    uint64  `json:"p90Ns"`
	P95Ns    uint64  `json:"p95Ns"`
	P99Ns    uint64  `json:"p99Ns"`
	P999Ns   uint64  `json:"p999Ns"`
	P9999Ns  uint64  `json:"p9999Ns"`
	// Overflow counts I/Os at or above fio.OverflowFloorNs (about 17 s),
	// which fio files in its last bin: the percentiles cannot tell them
	// apart, and MaxNs is the only exact figure for them.
	Overflow uint64 `json:"overflow,omitempty"`
}

// SummaryPercentiles are the percentiles every summary carries, in the order
// of LatencySummary's fields.
var SummaryPercentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// Metric returns a latency figure by name: "mean", "min", "max", "p50",
// "p90", "p95", "p99", "p99.9", "p99.99". ok is false for an unknown name or
// a distribution without samples.
func (l LatencySummary) Metric(name string) (ns uint64, ok bool) {
	if l.Count == 0 {
		return 0, false
	}
	switch name {
	case "mean":
		return uint64(math.Round(l.MeanNs)), true
	case "min":
		return l.MinNs, true
	case "max":
		return l.MaxNs, true
	case "p50":
		return l.P50Ns, true
	case "p90":
		return l.P90Ns, true
	case "p95":
		return l.P95Ns, true
	case "p99":
		return l.P99Ns, true
	case "p99.9":
		return l.P999Ns, true
	case "p99.99":
		return l.P9999Ns, true
	}
	return 0, false
}

// OperationSummary is one direction of a step, summed over clients.
type OperationSummary struct {
	IOPS        float64        `json:"iops"`
	BytesPerSec float64        `json:"bytesPerSec"`
	IOs         uint64         `json:"ios"`
	Bytes       uint64         `json:"bytes"`
	Latency     LatencySummary `json:"latency"`
	// Histogram is the sum of every client's bins.
	Histogram fio.Histogram `json:"histogram"`
}

// StepAggregate is one step of the benchmark, aggregated over all clients.
type StepAggregate struct {
	Step int `json:"step"`
	// Clients is the number of client results merged; IdleClients those
	// that idled through the step (a scale-out step), not merged.
	Clients     int              `json:"clients"`
	IdleClients int              `json:"idleClients,omitempty"`
	Jobs        int              `json:"jobs"`
	Read        OperationSummary `json:"read"`
	Write       OperationSummary `json:"write"`
	// Total merges reads and writes: IOPS summed, latency over all I/O.
	Total OperationSummary `json:"total"`
	// Sync merges the clients' sync calls (fsync or fdatasync) as a
	// direction is merged; zero when the workload makes none.
	Sync OperationSummary `json:"sync,omitzero"`
	// StartSkew is the spread of the clients' actual start instants.
	StartSkew time.Duration `json:"startSkew"`
	// MaxStartDelay is the largest lateness of a client's actual start
	// behind the planned instant.
	MaxStartDelay time.Duration `json:"maxStartDelay"`
	Interrupted   bool          `json:"interrupted,omitempty"`
	// Errors lists the first MaxErrors clients' errors, then a count.
	Errors []string `json:"errors,omitempty"`
	// FailedClients is how many clients reported an error.
	FailedClients int `json:"failedClients,omitempty"`
	// Timeline is the clients' timelines merged window by window.
	Timeline Timeline `json:"timeline,omitzero"`
	// ClientIOPS is how evenly the clients shared the step's I/O.
	ClientIOPS ClientSpread `json:"clientIOPS,omitzero"`
	// ClientCPU is the clients' CPU in the step: the busiest, the most
	// throttled, and those past a bound.
	ClientCPU ClientCPU `json:"clientCPU,omitzero"`
	// Verification merges the clients' verification passes; nil when none
	// verified.
	Verification *Verification `json:"verification,omitempty"`
}

// ClientSpread is the spread of the clients' IOPS (reads and writes) in a
// step: the lowest and highest client's, and the coefficient of variation
// (the population standard deviation over the mean, in percent; 0 when the
// mean is 0). An even share of the storage has a CV near 0. Zero with
// fewer than two clients.
type ClientSpread struct {
	MinIOPS   float64 `json:"minIOPS"`
	MaxIOPS   float64 `json:"maxIOPS"`
	CVPercent float64 `json:"cvPercent"`
}

// Aggregate merges all clients' results for one step exactly: IOPS and bytes
// per second are summed; latency percentiles are read from the sum of the
// clients' histogram bins with fio's rule; the mean is count-weighted; min and
// max are exact; the standard deviation is the pooled one. It trusts its
// input (the local conductor's own runners); results from untrusted runners
// go through Merger.Add, which validates each one.
func Aggregate(step int, clients []ClientStep) StepAggregate {
	m := NewMerger(step)
	for i := range clients {
		m.merge(&clients[i])
	}
	return m.Result()
}

// Merger aggregates one step's client results one at a time, so a caller can
// decode a result, add it and drop it: memory does not grow with the number
// of clients. Its result equals Aggregate's over the same clients.
type Merger struct {
	agg         StepAggregate
	r, w, t, s  dirMerger
	timeline    timelineMerger
	first, last time.Time
	seen        map[int]bool
	// running is how many clients run the step (Running); 0: all.
	running int
	// clients' IOPS: count, mean, sum of squared deviations (Welford).
	clientN                      int
	clientMean, clientM2         float64
	clientMinIOPS, clientMaxIOPS float64
}

// NewMerger starts the aggregate of step.
func NewMerger(step int) *Merger {
	return &Merger{agg: StepAggregate{Step: step}, seen: map[int]bool{}}
}

// Add validates c (see ClientStep.Validate) and merges it. A result of
// another step, or a second result of the same client, is refused. Nothing
// is merged when Add returns an error.
func (m *Merger) Add(c ClientStep) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Step != m.agg.Step {
		return fmt.Errorf("client %d: result of step %d merged into step %d", c.Client, c.Step, m.agg.Step)
	}
	if m.seen[c.Client] {
		return fmt.Errorf("client %d: a second result for step %d", c.Client, c.Step)
	}
	if left := m.running > 0 && c.Client >= m.running; c.Idle != left {
		switch {
		case left:
			return fmt.Errorf("client %d: a measured result for step %d, which only its first %d clients run", c.Client, c.Step, m.running)
		case m.running > 0:
			return fmt.Errorf("client %d: an idle result for step %d, which its first %d clients run", c.Client, c.Step, m.running)
		}
		return fmt.Errorf("client %d: an idle result for step %d, which every client runs", c.Client, c.Step)
	}
	m.seen[c.Client] = true
	m.merge(&c)
	return nil
}

// Running tells the merger that only the first n clients run the step (a
// scale-out step): the others' results must be idle ones. 0, as before it
// is called: every client runs it.
func (m *Merger) Running(n int) { m.running = n }

func (m *Merger) merge(c *ClientStep) {
	agg := &m.agg
	if c.Idle {
		agg.IdleClients++
		return
	}
	agg.Clients++
	agg.Jobs += c.Jobs
	m.r.addOperation(&c.Read)
	m.w.addOperation(&c.Write)
	m.t.addOperation(&c.Read)
	m.t.addOperation(&c.Write)
	m.s.addOperation(&c.Sync)
	m.timeline.add(c.Timeline)
	m.addClientIOPS(c.Read.IOPS + c.Write.IOPS)
	agg.ClientCPU.add(c.Client, c.CPU)
	if c.Error != "" {
		// A thousand clients' 4 KiB errors would not fit in a ConfigMap:
		// the first MaxErrors are kept, then a count.
		switch agg.FailedClients++; {
		case agg.FailedClients <= MaxErrors:
			agg.Errors = append(agg.Errors, fmt.Sprintf("client %d: %s", c.Client, c.Error))
		case agg.FailedClients == MaxErrors+1:
			agg.Errors = append(agg.Errors, "")
			fallthrough
		default:
			agg.Errors[MaxErrors] = fmt.Sprintf("… and %d more clients' errors", agg.FailedClients-MaxErrors)
		}
	}
	agg.Interrupted = agg.Interrupted || c.Interrupted
	mergeVerification(&agg.Verification, c.Verification)
	if !c.ActualStart.IsZero() {
		if m.first.IsZero() || c.ActualStart.Before(m.first) {
			m.first = c.ActualStart
		}
		if c.ActualStart.After(m.last) {
			m.last = c.ActualStart
		}
		if !c.PlannedStart.IsZero() {
			if d := c.ActualStart.Sub(c.PlannedStart); d > agg.MaxStartDelay {
				agg.MaxStartDelay = d
			}
		}
	}
}

// MaxErrors bounds the client errors a step aggregate lists one by one.
const MaxErrors = 20

// Result returns the aggregate of the results added so far.
func (m *Merger) Result() StepAggregate {
	agg := m.agg
	agg.Errors = slices.Clone(agg.Errors)
	agg.ClientCPU.Bound = slices.Clone(agg.ClientCPU.Bound)
	if v := agg.Verification; v != nil {
		c := *v
		c.BadBlocks = slices.Clone(v.BadBlocks)
		agg.Verification = &c
	}
	agg.StartSkew = m.last.Sub(m.first)
	agg.Read = m.r.summary()
	agg.Write = m.w.summary()
	agg.Total = m.t.summary()
	agg.Sync = m.s.summary()
	agg.Timeline = m.timeline.result()
	if m.clientN > 1 { // one client's share is all there is
		agg.ClientIOPS = ClientSpread{MinIOPS: m.clientMinIOPS, MaxIOPS: m.clientMaxIOPS}
		if m.clientMean > 0 {
			agg.ClientIOPS.CVPercent = 100 * math.Sqrt(m.clientM2/float64(m.clientN)) / m.clientMean
		}
	}
	return agg
}

// addClientIOPS adds one client's IOPS to the spread (Welford's update).
func (m *Merger) addClientIOPS(iops float64) {
	m.clientN++
	if m.clientN == 1 || iops < m.clientMinIOPS {
		m.clientMinIOPS = iops
	}
	m.clientMaxIOPS = max(m.clientMaxIOPS, iops)
	d := iops - m.clientMean
	m.clientMean += d / float64(m.clientN)
	m.clientM2 += d * (iops - m.clientMean)
}

// dirMerger combines directions exactly. Moments are combined with Chan et
// al.'s parallel update, so the result equals the statistics of the pooled
// samples.
type dirMerger struct {
	ios, bytes uint64
	iops, bps  float64
	n          uint64
	mean, m2   float64
	min, max   uint64
	acc        fio.Accumulator
}

func (m *dirMerger) addFio(d fio.DirResult) {
	m.add(d.IOs, d.Bytes, d.IOPS, d.BytesPerSec, &d.Latency)
}

func (m *dirMerger) addOperation(d *Operation) {
	m.add(d.IOs, d.Bytes, d.IOPS, d.BytesPerSec, &d.Latency)
}

func (m *dirMerger) add(ios, bytes uint64, iops, bps float64, l *fio.LatencyStats) {
	m.ios += ios
	m.bytes += bytes
	m.iops += iops
	m.bps += bps
	if l.Count == 0 {
		return
	}
	if m.n == 0 || l.MinNs < m.min {
		m.min = l.MinNs
	}
	if l.MaxNs > m.max {
		m.max = l.MaxNs
	}
	nb := float64(l.Count)
	m2b := 0.0
	if l.Count > 1 {
		m2b = l.StdNs * l.StdNs * (nb - 1)
	}
	if m.n == 0 {
		m.mean, m.m2 = l.MeanNs, m2b
	} else {
		na := float64(m.n)
		n := na + nb
		delta := l.MeanNs - m.mean
		m.mean += delta * nb / n
		m.m2 += m2b + delta*delta*na*nb/n
	}
	m.n += l.Count
	m.acc.Add(l.Hist)
}

func (m *dirMerger) stats() fio.LatencyStats {
	st := fio.LatencyStats{Count: m.n, MinNs: m.min, MaxNs: m.max, MeanNs: m.mean, StdNs: m.stddev()}
	if m.n > 0 {
		st.Hist = m.acc.Histogram()
	}
	return st
}

func (m *dirMerger) stddev() float64 {
	if m.n < 2 {
		return 0
	}
	return math.Sqrt(m.m2 / float64(m.n-1))
}

func (m *dirMerger) direction() Operation {
	return Operation{IOs: m.ios, Bytes: m.bytes, IOPS: m.iops, BytesPerSec: m.bps, Latency: m.stats()}
}

func (m *dirMerger) summary() OperationSummary {
	s := OperationSummary{IOPS: m.iops, BytesPerSec: m.bps, IOs: m.ios, Bytes: m.bytes}
	if m.n == 0 {
		return s
	}
	p := m.acc.Percentiles(SummaryPercentiles)
	s.Latency = LatencySummary{
		Count: m.n, MinNs: m.min, MaxNs: m.max, MeanNs: m.mean, StddevNs: m.stddev(),
		P50Ns: p[0], P90Ns: p[1], P95Ns: p[2], P99Ns: p[3], P999Ns: p[4], P9999Ns: p[5],
		Overflow: m.acc.Overflow(),
	}
	s.Histogram = m.acc.Histogram()
	return s
}
