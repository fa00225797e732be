package soak

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// resultKit makes the clients' step results from a real fio json+ result
// (two jobs of the oltp profile, 5 s): its read and write histograms
// scaled to one second are a second's I/O, and a step of N seconds is N
// such seconds: N timeline windows of that second's bins, and read and
// write totals N times a second's, so that the windows add up to the
// step exactly, as the conductor checks. Timelines are coarsened to the
// client's budget as the runner does (results.Timeline.Fit), once per
// step length.
type resultKit struct {
	jobs        int
	read, write results.Operation // one second
	window      fio.Histogram     // one second, reads and writes

	mu        sync.Mutex
	timelines map[int]results.Timeline
}

func newResultKit() (*resultKit, error) {
	data, err := os.ReadFile("../../internal/results/testdata/fio-oltp-2jobs.json")
	if err != nil {
		return nil, err
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		return nil, err
	}
	r, w, _ := results.FromFio(out)
	secs := uint64(1)
	for _, j := range out.Jobs {
		secs = max(secs, (j.RuntimeMs+500)/1000)
	}
	k := &resultKit{jobs: len(out.Jobs), read: perSecond(r, secs), write: perSecond(w, secs), timelines: map[int]results.Timeline{}}
	k.window = fio.Merge(k.read.Latency.Hist, k.write.Latency.Hist)
	return k, nil
}

// perSecond is op's I/O over one of its secs seconds: each bin's count
// divided (bins left empty dropped), the figures made from the bins.
func perSecond(op results.Operation, secs uint64) results.Operation {
	var bins []fio.Bin
	for _, b := range op.Latency.Hist.Bins {
		if c := (b.Count + secs/2) / secs; c > 0 {
			bins = append(bins, fio.Bin{Index: b.Index, Count: c})
		}
	}
	if len(bins) == 0 && len(op.Latency.Hist.Bins) > 0 {
		bins = []fio.Bin{{Index: op.Latency.Hist.Bins[0].Index, Count: 1}}
	}
	return operationOf(bins, op.Bytes/max(op.IOs, 1), 1)
}

// operationOf is the operation of n seconds, each completing bins, of
// blockSize bytes each.
func operationOf(bins []fio.Bin, blockSize uint64, n uint64) results.Operation {
	h := fio.Histogram{Bins: make([]fio.Bin, len(bins))}
	var count uint64
	var sum, sum2 float64
	for i, b := range bins {
		h.Bins[i] = fio.Bin{Index: b.Index, Count: b.Count * n}
		count += b.Count * n
		v := float64(fio.BinValue(b.Index))
		sum += v * float64(b.Count*n)
		sum2 += v * v * float64(b.Count*n)
	}
	op := results.Operation{IOs: count, Bytes: count * blockSize}
	if count == 0 {
		return op
	}
	mean := sum / float64(count)
	op.IOPS = float64(count) / float64(n)
	op.BytesPerSec = op.IOPS * float64(blockSize)
	op.Latency = fio.LatencyStats{Count: count, MinNs: fio.BinValue(bins[0].Index), MaxNs: fio.BinValue(bins[len(bins)-1].Index),
		MeanNs: mean, StdNs: math.Sqrt(max(0, sum2/float64(count)-mean*mean)), Hist: h}
	return op
}

// timeline is the client timeline of a step of n seconds.
func (k *resultKit) timeline(n int) results.Timeline {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.timelines[n]; ok {
		return t
	}
	ios := k.window.Total()
	bytes := k.read.Bytes + k.write.Bytes
	t := results.Timeline{WindowSeconds: 1, Windows: make([]results.Window, n)}
	for i := range t.Windows {
		t.Windows[i] = results.Window{StartMs: uint64(i) * 1000, IOs: ios, Bytes: bytes, IOPS: float64(ios),
			BytesPerSec: float64(bytes), Hist: k.window}
	}
	t = t.Fit(results.ClientTimelineBytes)
	k.timelines[n] = t
	return t
}

// step is client's result of a step that ran from start to end (its ramp
// included), measuring for duration.
func (k *resultKit) step(client int, order protocol.StepOrder, start, end time.Time) results.ClientStep {
	n := max(1, int(order.Duration/time.Second))
	blockR := k.read.Bytes / max(k.read.IOs, 1)
	blockW := k.write.Bytes / max(k.write.IOs, 1)
	return results.ClientStep{Client: client, Step: order.Index, Jobs: k.jobs, PlannedStart: order.StartAt,
		ActualStart: start, End: end,
		Read:     operationOf(k.read.Latency.Hist.Bins, blockR, uint64(n)),
		Write:    operationOf(k.write.Latency.Hist.Bins, blockW, uint64(n)),
		Timeline: k.timeline(n)}
}

// runnerKey names a runner in the governor.
func runnerKey(ns, bench string, i int) string { return fmt.Sprintf("runner/%s/%s/%03d", ns, bench, i) }

// startRunner plays the runner of a client Job, once per Job.
func (s *soak) startRunner(job *batchv1.Job) {
	i, err := strconv.Atoi(job.Labels[exchange.LabelClient])
	bench := job.Labels[exchange.LabelBenchmark]
	if err != nil || bench == "" {
		return
	}
	s.mu.Lock()
	if s.runnersSeen[job.UID] || s.ctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.runnersSeen[job.UID] = true
	n := len(s.runnersSeen)
	s.mu.Unlock()
	key := runnerKey(job.Namespace, bench, i)
	s.gov.working(key, "preparing")
	s.benchRunner(job.Namespace, bench, +1, 0)
	x := &exchange.Client{Clientset: s.runnerClients[n%len(s.runnerClients)], Namespace: job.Namespace, Benchmark: bench, Index: i}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.runClient(s.ctx, x, key)
		s.gov.remove(key)
		s.benchRunner(job.Namespace, bench, 0, +1)
		if err != nil && s.ctx.Err() == nil && !errors.Is(err, exchange.ErrPlanGone) && !errors.Is(err, exchange.ErrClientGone) {
			s.anomaly("runner %s/%s client %d: %v", job.Namespace, bench, i, err)
		}
	}()
}

// runClient is cmd/runner's client loop (internal/runner.Runner.Run) with
// fio replaced by a wait on the simulated clock and a result from
// resultKit: ready report (clock offset 0: the runners share the
// conductor's clock), then each order, until the done order.
func (s *soak) runClient(ctx context.Context, x *exchange.Client, key string) error {
	if _, err := x.LoadPlan(ctx); err != nil {
		return err
	}
	ready := protocol.Ready{
		Client:     x.Index,
		FioVersion: "fio-3.33",
		Mount: &protocol.Mount{Source: fmt.Sprintf("10.0.0.4:/soak_%s_%03d", x.Benchmark, x.Index), FSType: "nfs4",
			Options: "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,hard,proto=tcp,timeo=600,retrans=2,sec=sys"},
		ClockOffsetUncertainty: 2 * time.Millisecond,
	}
	if err := x.ReportReady(ctx, ready); err != nil {
		return err
	}
	for k := 0; ; k++ {
		s.gov.working(key, fmt.Sprintf("waiting for order %d", k))
		order, err := x.WaitOrder(ctx, k)
		if err != nil {
			return err
		}
		if order.Done {
			return nil
		}
		s.steps.ordered(x.Namespace, x.Benchmark, x.Index, k, time.Now())
		if k == 0 {
			s.firstOrder(x.Namespace, x.Benchmark)
		}
		start := s.clock.Now()
		if order.StartAt.After(start) {
			start = order.StartAt
		}
		end := start.Add(order.Ramp + order.Duration)
		s.gov.set(key, end, fmt.Sprintf("step %d until %s", k, end.UTC().Format(time.RFC3339)))
		if err := s.clock.WaitUntil(ctx, end); err != nil {
			return err
		}
		s.gov.working(key, fmt.Sprintf("publishing step %d", k))
		began := time.Now()
		if err := x.Publish(ctx, s.results.step(x.Index, order, start, end)); err != nil {
			return err
		}
		s.steps.published(x.Namespace, x.Benchmark, x.Index, k, time.Now(), time.Since(began))
	}
}

// stepTimes records, for the benchmarks whose step overhead is measured,
// when each client published each step and when each order reached it
// (real time), and for every benchmark the highest step ordered.
type stepTimes struct {
	mu sync.Mutex
	// measured: namespace/name of the benchmarks timed.
	measured map[string]bool
	publish  map[string]map[int]time.Time // the last client's publish of step k
	order    map[string]map[int]time.Time // the last client's receipt of order k
	current  map[string]int               // highest step ordered
	// createdAt: benchmarks created whose first order no client has yet;
	// setup: from their creation to the last client's first order.
	createdAt map[string]time.Time
	setup     []time.Duration
	calls     []timedCall
}

func newStepTimes() *stepTimes {
	return &stepTimes{measured: map[string]bool{}, publish: map[string]map[int]time.Time{},
		order: map[string]map[int]time.Time{}, current: map[string]int{}, createdAt: map[string]time.Time{}}
}

// created records a benchmark's creation (real time).
func (st *stepTimes) created(ns, name string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.createdAt[ns+"/"+name] = at
}

// firstOrder closes a benchmark's setup span once all its clients have
// their first order (called as each client gets it).
func (st *stepTimes) firstOrder(ns, name string, clients, received int, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := ns + "/" + name
	c, ok := st.createdAt[key]
	if !ok {
		return
	}
	if received >= clients {
		st.setup = append(st.setup, at.Sub(c))
		delete(st.createdAt, key)
	}
}

// setups are the setup spans so far.
func (st *stepTimes) setups() []time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]time.Duration(nil), st.setup...)
}

func (st *stepTimes) measure(ns, name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.measured[ns+"/"+name] = true
}

func (st *stepTimes) ordered(ns, name string, _, k int, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := ns + "/" + name
	st.current[key] = max(st.current[key], k)
	if st.measured[key] {
		latest(st.order, key, k, at)
	}
}

func (st *stepTimes) published(ns, name string, _, k int, at time.Time, took time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := ns + "/" + name
	if st.measured[key] {
		latest(st.publish, key, k, at)
		st.calls = append(st.calls, timedCall{at, took})
	}
}

// timedCall is a measured benchmark's client's Publish: one PATCH of its
// ConfigMap, the API server's latency as a client sees it.
type timedCall struct {
	at   time.Time
	took time.Duration
}

// publishCalls are the measured benchmarks' Publish calls.
func (st *stepTimes) publishCalls() []timedCall {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]timedCall(nil), st.calls...)
}

func latest(m map[string]map[int]time.Time, key string, k int, at time.Time) {
	if m[key] == nil {
		m[key] = map[int]time.Time{}
	}
	if at.After(m[key][k]) {
		m[key][k] = at
	}
}

// currentStep is the highest step ordered to any client of ns/name (-1:
// none).
func (st *stepTimes) currentStep(ns, name string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	if k, ok := st.current[ns+"/"+name]; ok {
		return k
	}
	return -1
}

// overheads are the step overheads of ns/name: from the last client's
// publish of step k to the last client's receipt of order k+1, with the
// real time of the publish.
func (st *stepTimes) overheads(ns, name string) (at []time.Time, d []time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := ns + "/" + name
	for k, p := range st.publish[key] {
		if o, ok := st.order[key][k+1]; ok && o.After(p) {
			at = append(at, p)
			d = append(d, o.Sub(p))
		}
	}
	return at, d
}
