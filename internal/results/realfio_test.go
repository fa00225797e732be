package results

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// TestThreeConcurrentFioClients runs three real fio processes at once, as
// three clients, at a low offered rate. The aggregate must deliver the offered
// rate (within 5 %) and its merged percentiles must equal a plain reference
// computation over all the clients' samples taken together.
func TestThreeConcurrentFioClients(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	const clients = 3
	const readIOPS, writeIOPS = 80, 20 // per client: 300 IOPS offered in total
	steps := make([]ClientStep, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			run := fio.Run{Name: fmt.Sprintf("client%d", c), Engine: "libaio", Direct: true, BlockSizeBytes: 4096,
				ReadPercent: 80, Random: true, Runtime: 5 * time.Second, Ramp: time.Second, Seed: uint64(1000 * (c + 1)),
				Jobs: []fio.Job{{IODepth: 4, ReadIOPS: readIOPS, WriteIOPS: writeIOPS}}}
			job, err := fio.Render(run, fio.Layout{Directory: t.TempDir(), BytesPerJob: 16 << 20})
			if err != nil {
				errs[c] = err
				return
			}
			start := time.Now()
			res, err := fio.Executor{Binary: bin, WorkDir: t.TempDir()}.Run(context.Background(), run.Name, job)
			if err != nil {
				errs[c] = err
				return
			}
			r, w := FromFio(res.Output)
			steps[c] = ClientStep{Client: c, Jobs: 1, ActualStart: start, Read: r, Write: w}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
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
		var samples []uint64
		for _, c := range steps {
			parts := []Operation{c.Read, c.Write}
			if dir.get != nil {
				parts = []Operation{dir.get(c)}
			}
			for _, d := range parts {
				for _, b := range d.Latency.Hist.Bins {
					for range b.Count {
						samples = append(samples, fio.BinValue(b.Index))
					}
				}
			}
		}
		slices.Sort(samples)
		if uint64(len(samples)) != dir.sum.Latency.Count || len(samples) == 0 {
			t.Fatalf("%s: %d samples in bins, summary counts %d", dir.name, len(samples), dir.sum.Latency.Count)
		}
		want := fio.ReferencePercentiles(samples, SummaryPercentiles)
		l := dir.sum.Latency
		got := []uint64{l.P50Ns, l.P90Ns, l.P95Ns, l.P99Ns, l.P999Ns, l.P9999Ns}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: merged percentiles %v, reference over concatenated bins %v", dir.name, got, want)
		}
		t.Logf("%s: %.1f IOPS, p50 %d ns, p99 %d ns over %d I/Os", dir.name, dir.sum.IOPS, l.P50Ns, l.P99Ns, l.Count)
	}
}
