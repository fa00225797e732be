package results

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os/exec"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// TestThreeConcurrentFioClients runs three real fio processes at once, as
// three clients, at a low offered rate. The aggregate must deliver the offered
// rate (within 5 %) and its merged percentiles must equal a plain reference
// computation over all the clients' samples taken together.
func TestThreeConcurrentFioClients(t *testing.T) {
	const clients = 3
	const readIOPS, writeIOPS = 80, 20 // per client: 300 IOPS offered in total
	steps := make([]ClientStep, clients)
	for c, f := range concurrentFio(t, clients, 16<<20, false, func(c int) fio.Run {
		return fio.Run{Name: fmt.Sprintf("client%d", c), Engine: "libaio", Direct: true, BlockSizeBytes: 4096,
			ReadPercent: 80, Random: true, Runtime: 5 * time.Second, Ramp: time.Second, Seed: uint64(1000 * (c + 1)),
			Jobs: []fio.Job{{IODepth: 4, ReadIOPS: readIOPS, WriteIOPS: writeIOPS}}}
	}) {
		r, w, _ := FromFio(f.res.Output)
		steps[c] = ClientStep{Client: c, Jobs: 1, ActualStart: f.start, Read: r, Write: w}
	}
	// Real fio output passes the checks applied to untrusted runners, and
	// the incremental merge equals the all-at-once one.
	m := NewMerger(0)
	for _, s := range steps {
		if err := m.Add(s); err != nil {
			t.Fatalf("real fio result refused: %v", err)
		}
	}
	agg := Aggregate(0, steps)
	if !reflect.DeepEqual(m.Result(), agg) {
		t.Fatal("Merger and Aggregate differ")
	}
	offered := float64(clients * (readIOPS + writeIOPS))
	if math.Abs(agg.Total.IOPS-offered)/offered > 0.05 {
		t.Fatalf("achieved %.1f IOPS, offered %.0f: more than 5 %% apart", agg.Total.IOPS, offered)
	}
	if math.Abs(agg.Read.IOPS-clients*readIOPS)/(clients*readIOPS) > 0.05 {
		t.Fatalf("achieved %.1f read IOPS, offered %d", agg.Read.IOPS, clients*readIOPS)
	}
	for _, dir := range []struct {
		name string
		sum  OperationSummary
		get  func(ClientStep) Operation
	}{
		{"read", agg.Read, func(c ClientStep) Operation { return c.Read }},
		{"write", agg.Write, func(c ClientStep) Operation { return c.Write }},
		{"total", agg.Total, nil},
	} {
		var parts []Operation
		for _, c := range steps {
			if dir.get != nil {
				parts = append(parts, dir.get(c))
			} else {
				parts = append(parts, c.Read, c.Write)
			}
		}
		equalsPooledReference(t, dir.name, dir.sum, parts)
	}
}

// fioClient is one client's fio run of concurrentFio: its result and
// when it was launched and ended.
type fioClient struct {
	res        *fio.Result
	start, end time.Time
}

// concurrentFio runs one real fio process per client at once, client c
// running runOf(c) in a directory of its own with bytesPerJob per job
// (with a status document each second when timeline is set).
func concurrentFio(t *testing.T, clients int, bytesPerJob int64, timeline bool, runOf func(c int) fio.Run) []fioClient {
	t.Helper()
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	out := make([]fioClient, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		dir, work := t.TempDir(), t.TempDir()
		wg.Go(func() {
			run := runOf(c)
			job, err := fio.Render(run, fio.Layout{Directory: dir, BytesPerJob: bytesPerJob})
			if err != nil {
				errs[c] = err
				return
			}
			out[c].start = time.Now()
			out[c].res, errs[c] = fio.Executor{Binary: bin, WorkDir: work, Timeline: timeline}.Run(context.Background(), run.Name, job)
			out[c].end = time.Now()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// equalsPooledReference checks that a merged summary's percentiles equal a
// plain reference computation over the samples of every part's bins
// taken together.
func equalsPooledReference(t *testing.T, name string, sum OperationSummary, parts []Operation) {
	t.Helper()
	var samples []uint64
	for _, d := range parts {
		for _, b := range d.Latency.Hist.Bins {
			for range b.Count {
				samples = append(samples, fio.BinValue(b.Index))
			}
		}
	}
	slices.Sort(samples)
	if uint64(len(samples)) != sum.Latency.Count || len(samples) == 0 {
		t.Fatalf("%s: %d samples in bins, summary counts %d", name, len(samples), sum.Latency.Count)
	}
	want := fio.ReferencePercentiles(samples, SummaryPercentiles)
	l := sum.Latency
	got := []uint64{l.P50Ns, l.P90Ns, l.P95Ns, l.P99Ns, l.P999Ns, l.P9999Ns}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: merged percentiles %v, reference over concatenated bins %v", name, got, want)
	}
	t.Logf("%s: %.1f IOPS, p50 %d ns, p99 %d ns over %d I/Os", name, sum.IOPS, l.P50Ns, l.P99Ns, l.Count)
}

// TestSyncLatencyOfThreeConcurrentClients runs three real fio processes at
// once, each a database log (8 KiB sequential writes, fdatasync after
// each). The merged sync calls' percentiles equal a reference over all the
// clients' sync samples taken together, the calls are counted apart from
// the writes (one per write), and they stay out of the step's total.
func TestSyncLatencyOfThreeConcurrentClients(t *testing.T) {
	const clients = 3
	steps := make([]ClientStep, clients)
	for c, f := range concurrentFio(t, clients, 8<<20, false, func(c int) fio.Run {
		return fio.Run{Name: fmt.Sprintf("client%d", c), Engine: "sync", BlockSizeBytes: 8192, ReadPercent: 0,
			Sync: "fdatasync", SyncEvery: 1, Runtime: 3 * time.Second, Seed: uint64(5 * (c + 1)),
			Jobs: []fio.Job{{IODepth: 1, WriteIOPS: 100}}}
	}) {
		r, w, s := FromFio(f.res.Output)
		steps[c] = ClientStep{Client: c, Jobs: 1, Read: r, Write: w, Sync: s}
	}
	m := NewMerger(0)
	syncs := make([]Operation, clients)
	for c, s := range steps {
		if err := m.Add(s); err != nil {
			t.Fatalf("real fio result refused: %v", err)
		}
		if n, w := s.Sync.IOs, s.Write.IOs; n == 0 || n > w || w-n > 1 {
			t.Fatalf("client %d: %d fdatasync calls after %d writes", c, n, w)
		}
		syncs[c] = s.Sync
	}
	agg := m.Result()
	if agg.Total.IOs != agg.Write.IOs || agg.Sync.Bytes != 0 || agg.Sync.IOs == 0 {
		t.Fatalf("total %d I/Os, writes %d, sync calls %d (%d bytes)", agg.Total.IOs, agg.Write.IOs, agg.Sync.IOs, agg.Sync.Bytes)
	}
	equalsPooledReference(t, "sync", agg.Sync, syncs)
	// Rated at 100 writes/s per client, one call after each.
	if agg.Sync.IOPS < 0.9*300 || agg.Sync.IOPS > 1.05*300 {
		t.Errorf("%.1f sync calls/s, 300 writes/s offered", agg.Sync.IOPS)
	}
}

// TestTimelineOfThreeConcurrentClients runs three real fio processes at once
// with a status document every second. Second by second, the merged
// timeline's percentiles equal a reference over all the clients' samples of
// that second taken together, and the seconds add up, bin by bin, to the
// step's exact aggregate.
func TestTimelineOfThreeConcurrentClients(t *testing.T) {
	const clients = 3
	steps := make([]ClientStep, clients)
	timelines := make([]Timeline, clients)
	for c, f := range concurrentFio(t, clients, 8<<20, true, func(c int) fio.Run {
		return fio.Run{Name: fmt.Sprintf("client%d", c), Engine: "psync", BlockSizeBytes: 4096,
			ReadPercent: 70, Random: true, Runtime: 4 * time.Second, Ramp: time.Second, Seed: uint64(77 * (c + 1)),
			Jobs: []fio.Job{{IODepth: 1, ReadIOPS: 70, WriteIOPS: 30}, {IODepth: 1, ReadIOPS: 35, WriteIOPS: 15}}}
	}) {
		r, w, _ := FromFio(f.res.Output)
		steps[c] = ClientStep{Client: c, Jobs: 2, Read: r, Write: w, ActualStart: f.start, End: f.end}
		timelines[c] = TimelineOf(f.res.Intervals)
	}
	merged := MergeTimelines(timelines...)
	if merged.WindowSeconds != 1 || len(merged.Windows) < 4 || len(merged.Windows) > 5 {
		t.Fatalf("merged timeline has %d windows of %d s, want 4 of 1 s", len(merged.Windows), merged.WindowSeconds)
	}
	samplesOf := func(h fio.Histogram) []uint64 {
		var out []uint64
		for _, b := range h.Bins {
			for range b.Count {
				out = append(out, fio.BinValue(b.Index))
			}
		}
		return out
	}
	var total fio.Accumulator
	for k, s := range merged.Windows {
		var pooled []uint64
		var ios uint64
		for _, tl := range timelines {
			if k < len(tl.Windows) {
				pooled = append(pooled, samplesOf(tl.Windows[k].Hist)...)
				ios += tl.Windows[k].IOs
			}
		}
		slices.Sort(pooled)
		if uint64(len(pooled)) != ios || s.IOs != ios || ios == 0 {
			t.Fatalf("second %d: %d I/Os merged, %d I/Os and %d samples in the clients' seconds", k, s.IOs, ios, len(pooled))
		}
		// 3 clients × 150 IOPS offered.
		if s.IOPS < 0.9*450 || s.IOPS > 1.1*450 {
			t.Errorf("second %d: %.1f IOPS, offered 450", k, s.IOPS)
		}
		want := fio.ReferencePercentiles(pooled, []float64{99, 99.9})
		if got := s.Percentiles(99, 99.9); !slices.Equal(got, want) {
			t.Errorf("second %d: merged p99, p99.9 %v ns, reference %v", k, got, want)
		}
		total.Add(s.Hist)
	}
	// Real fio's timelines pass the checks applied to untrusted runners,
	// and the incremental merge gives the same timeline.
	m := NewMerger(0)
	for c := range steps {
		steps[c].Timeline = timelines[c]
		if err := m.Add(steps[c]); err != nil {
			t.Fatalf("real fio result with its timeline refused: %v", err)
		}
	}
	if !reflect.DeepEqual(m.Result().Timeline, merged) {
		t.Fatal("Merger's timeline differs from MergeTimelines'")
	}
	agg := Aggregate(0, steps)
	if got := total.Histogram(); !reflect.DeepEqual(got.Bins, agg.Total.Histogram.Bins) {
		t.Fatal("the merged seconds do not add up to the step's aggregate histogram")
	}
}

// TestStallOfRealFio: real fio writes to a TCP receiver (fio's net engine)
// that stops reading for a known time, so fio's writes block as they
// would on a storage that paused. The stall the latency log places must
// be the pause's length and start to within 100 ms; the status ticks see
// it only to within a second.
func TestStallOfRealFio(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	// A small receive buffer, set before the connection is made (as the
	// window is negotiated), so few writes fit in it once reading stops.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	const pauseAfter, pauseFor = 1500 * time.Millisecond, 3 * time.Second
	type pause struct{ from, to time.Duration } // after the connection
	got := make(chan pause, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- pause{}
			return
		}
		defer func() { _ = c.Close() }()
		accepted := time.Now()
		buf := make([]byte, 64<<10)
		var p pause
		for {
			if p.to == 0 && time.Since(accepted) >= pauseAfter {
				p.from = time.Since(accepted)
				time.Sleep(pauseFor)
				p.to = time.Since(accepted)
			}
			if _, err := c.Read(buf); err != nil {
				got <- p
				return
			}
		}
	}()
	job := fmt.Sprintf(`[global]
ioengine=net
hostname=127.0.0.1
port=%d
protocol=tcp
window_size=8k
rw=write
bs=4k
size=1G
time_based=1
runtime=6
rate_iops=200
[stalled]
`, l.Addr().(*net.TCPAddr).Port)
	res, err := fio.Executor{Binary: bin, WorkDir: t.TempDir(), Timeline: true}.Run(context.Background(), "stall", job)
	if err != nil {
		t.Fatal(err)
	}
	p := <-got
	if p.to == 0 {
		t.Fatal("the receiver never paused")
	}
	if len(res.LatLogs) != 1 {
		t.Fatalf("%d latency logs, want the job's one", len(res.LatLogs))
	}
	ticks := TimelineOf(res.Intervals)
	s := Timeline{Windows: ticks.Windows, Idle: StallsOf(res.LatLogs, ticks.Idle)}.LongestIdle()
	truth := p.to - p.from
	t.Logf("paused %v from %v; the log's stall %v from %v; the ticks' %v", truth, p.from, s.Duration(), time.Duration(s.StartMs)*time.Millisecond, ticks.LongestIdle().Duration())
	if d := s.Duration() - truth; d < -100*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("stall of %v for a pause of %v: off by %v, more than 100 ms", s.Duration(), truth, d)
	}
	if d := time.Duration(s.StartMs)*time.Millisecond - p.from; d < -100*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("stall from %v for a pause from %v: off by %v, more than 100 ms", time.Duration(s.StartMs)*time.Millisecond, p.from, d)
	}
}

// TestFioCPUOfRealFio: the CPU fio reports for its jobs, as FioCPU reads it.
// A job of fio's null engine without a rate spends its run on the CPU; one
// at 100 IOPS next to none of it.
func TestFioCPUOfRealFio(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	run := func(name, rate string) CPU {
		job := "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=1G\ntime_based=1\nruntime=2\n" + rate + "[" + name + "]\n"
		res, err := fio.Executor{Binary: bin, WorkDir: t.TempDir()}.Run(context.Background(), name, job)
		if err != nil {
			t.Fatal(err)
		}
		return FioCPU(res.Output, AvailableCPU(len(res.Output.Jobs), 2, 0))
	}
	busy, light := run("busy", ""), run("light", "rate_iops=100\n")
	t.Logf("busy: %+v, %.1f %% of a CPU; light: %+v, %.2f %%", busy, busy.BusyPercent(), light, light.BusyPercent())
	if busy.RunUs < 1_900_000 || busy.AvailableMilli != 1000 || light.RunUs < 1_900_000 {
		t.Fatalf("run times %d and %d µs, %d thousandths available; want 2 s and one CPU", busy.RunUs, light.RunUs, busy.AvailableMilli)
	}
	if busy.BusyPercent() < 40 || light.BusyPercent() > 5 || busy.FioUs < 10*light.FioUs {
		t.Fatalf("busy %.1f %%, light %.2f %%: fio's CPU does not tell them apart", busy.BusyPercent(), light.BusyPercent())
	}
}
