package results

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

const (
	benchClients = 1000
	benchSteps   = 20
)

// benchInput builds 1,000 clients × 20 steps of client results from a real
// fio json+ report (testdata, 8 KiB 80/20 random, two jobs), each client's
// histograms shifted and scaled so that no two clients are identical.
func benchInput(b testing.TB) [][]ClientStep {
	b.Helper()
	data, err := os.ReadFile("testdata/fio-oltp-2jobs.json")
	if err != nil {
		b.Fatal(err)
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	r, w := FromFio(out)
	vary := func(d Operation, shift int, scale uint64) Operation {
		d.IOPS *= float64(scale)
		d.IOs *= scale
		bins := make([]fio.Bin, len(d.Latency.Hist.Bins))
		for i, bin := range d.Latency.Hist.Bins {
			bins[i] = fio.Bin{Index: min(bin.Index+shift, fio.PlatNR-1), Count: bin.Count * scale}
		}
		d.Latency.Hist = fio.Histogram{Bins: bins}
		d.Latency.Count *= scale
		// Min and max move with the bins, as they would in fio's output.
		d.Latency.MinNs, d.Latency.MaxNs = fio.BinValue(bins[0].Index), fio.BinValue(bins[len(bins)-1].Index)
		return d
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := make([][]ClientStep, benchSteps)
	for s := range steps {
		steps[s] = make([]ClientStep, benchClients)
		for c := range steps[s] {
			shift, scale := (c+s)%13, uint64(1+(c+s)%3)
			steps[s][c] = ClientStep{Client: c, Step: s, Jobs: 2, PlannedStart: t0, ActualStart: t0.Add(time.Duration(c) * time.Microsecond),
				Read: vary(r, shift, scale), Write: vary(w, shift, scale)}
		}
	}
	return steps
}

// BenchmarkAggregate1000Clients20Steps merges a whole benchmark's client
// results, step by step (goal: < 1 s and < 500 MB allocated per op on one
// core: make bench).
func BenchmarkAggregate1000Clients20Steps(b *testing.B) {
	steps := benchInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for s, clients := range steps {
			if agg := Aggregate(s, clients); agg.Clients != benchClients {
				b.Fatal("lost clients")
			}
		}
	}
}

// BenchmarkDecodeAndAggregate1000Clients20Steps includes decoding the
// results as the runners publish them (JSON with [latencyNs, count] bins):
// the operator's real path from stored objects to status.
func BenchmarkDecodeAndAggregate1000Clients20Steps(b *testing.B) {
	steps := benchInput(b)
	docs := make([][][]byte, len(steps))
	var size int
	for s := range steps {
		docs[s] = make([][]byte, len(steps[s]))
		for c := range steps[s] {
			d, err := json.Marshal(&steps[s][c])
			if err != nil {
				b.Fatal(err)
			}
			docs[s][c] = d
			size += len(d)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer b.ReportMetric(float64(size)/float64(benchClients*benchSteps), "bytes/result")
	for b.Loop() {
		for s := range docs {
			clients := make([]ClientStep, len(docs[s]))
			for c, d := range docs[s] {
				if err := json.Unmarshal(d, &clients[c]); err != nil {
					b.Fatal(err)
				}
			}
			if agg := Aggregate(s, clients); agg.Clients != benchClients {
				b.Fatal("lost clients")
			}
		}
	}
}
