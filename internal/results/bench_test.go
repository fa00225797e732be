package results

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

const (
	benchClients = 1000
	benchSteps   = 20
)

// benchBase is one real client result: from fio's json+ report of an 8 KiB
// 80/20 random step of two jobs (fio-oltp-2jobs.json, no timeline: the shape
// the budget was first stated for), or a real 20-second step as a runner
// publishes it, timeline included (client-step-20s.json, recorded by
// hack/benchdata).
func benchBase(b testing.TB, timeline bool) ClientStep {
	b.Helper()
	if timeline {
		data, err := os.ReadFile("testdata/client-step-20s.json")
		if err != nil {
			b.Fatal(err)
		}
		var c ClientStep
		if err := json.Unmarshal(data, &c); err != nil {
			b.Fatal(err)
		}
		return c
	}
	data, err := os.ReadFile("testdata/fio-oltp-2jobs.json")
	if err != nil {
		b.Fatal(err)
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := ClientStep{Jobs: 2, PlannedStart: t0, ActualStart: t0, End: t0.Add(20 * time.Second)}
	c.Read, c.Write, c.Sync = FromFio(out)
	return c
}

// benchClient is client c's result of step s: the base with its histograms
// shifted and scaled so that no two clients are identical, and still valid
// (Merger.Add checks every result, as the operator does).
func benchClient(base *ClientStep, c, s int) ClientStep {
	shift, scale := (c+s)%13, uint64(1+(c+s)%3)
	hist := func(h fio.Histogram) fio.Histogram {
		bins := make([]fio.Bin, len(h.Bins))
		// The shift stops at fio's last bin, so that bins stay distinct.
		by := min(shift, fio.PlatNR-1-h.Bins[len(h.Bins)-1].Index)
		for i, bin := range h.Bins {
			bins[i] = fio.Bin{Index: bin.Index + by, Count: bin.Count * scale}
		}
		return fio.Histogram{Bins: bins}
	}
	op := func(d Operation) Operation {
		d.IOPS *= float64(scale)
		d.BytesPerSec *= float64(scale)
		d.IOs *= scale
		d.Bytes *= scale
		l := &d.Latency
		if l.Count == 0 {
			return d
		}
		l.Hist = hist(l.Hist)
		l.Count *= scale
		// Min and max move with the bins, as they would in fio's output.
		bins := l.Hist.Bins
		l.MinNs, l.MaxNs = fio.BinValue(bins[0].Index), fio.BinValue(bins[len(bins)-1].Index)
		l.MeanNs = min(max(l.MeanNs, float64(l.MinNs)), float64(l.MaxNs))
		l.StdNs = min(l.StdNs, float64(l.MaxNs-l.MinNs))
		return d
	}
	r := *base
	r.Client, r.Step = c, s
	r.ActualStart = r.ActualStart.Add(time.Duration(c) * time.Microsecond)
	r.Read, r.Write = op(base.Read), op(base.Write)
	r.Timeline.Windows = make([]Window, len(base.Timeline.Windows))
	for i, w := range base.Timeline.Windows {
		w.IOs *= scale
		w.Bytes *= scale
		w.IOPS *= float64(scale)
		w.BytesPerSec *= float64(scale)
		if len(w.Hist.Bins) > 0 {
			w.Hist = hist(w.Hist)
		}
		r.Timeline.Windows[i] = w
	}
	if len(r.Timeline.Windows) == 0 {
		r.Timeline.Windows = nil
	}
	return r
}

// benchInput builds 1,000 clients × 20 steps of client results.
func benchInput(b testing.TB) [][]ClientStep {
	b.Helper()
	base := benchBase(b, false)
	steps := make([][]ClientStep, benchSteps)
	for s := range steps {
		steps[s] = make([]ClientStep, benchClients)
		for c := range steps[s] {
			steps[s][c] = benchClient(&base, c, s)
		}
	}
	return steps
}

// BenchmarkAggregate1000Clients20Steps merges a whole benchmark's client
// results, step by step, already decoded (goal: < 1 s and < 500 MB
// allocated per op on one core: make bench).
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

// BenchmarkDecodeAndAggregate is the operator's path from the runners'
// published values to each step's record, for every step of a benchmark:
// each client's result decoded, validated and merged (Merger.Add), one at
// a time. Goal, for 1,000 clients × 20 steps: < 1 s and < 500 MB allocated
// per op on one core (make bench).
//
//   - json: the JSON encoding ([latencyNs, count] bins), the only one
//     before wire version 1 and still what runners write for an older
//     conductor; the value as the API client hands it over, already
//     unescaped from the ConfigMap's JSON.
//   - wire: wire version 1, decoded from base64 as a ConfigMap's
//     binaryData arrives.
//
// "timeline" is a real 20-second step with its per-second timeline, as
// runners publish it; without, the step's two histograms alone. Reported:
// the mean encoded size of a result and the size of the step record the
// operator writes (aggregate.json, JSON), which does not grow with clients.
func BenchmarkDecodeAndAggregate(b *testing.B) {
	for _, tc := range []struct {
		clients  int
		timeline bool
		json     bool
	}{
		{benchClients, false, true},
		{benchClients, false, false},
		{100, true, true},
		{100, true, false},
		{benchClients, true, false},
	} {
		name := fmt.Sprintf("%dx%d/wire", tc.clients, benchSteps)
		if tc.json {
			name = fmt.Sprintf("%dx%d/json", tc.clients, benchSteps)
		}
		if tc.timeline {
			name += "+timeline"
		}
		b.Run(name, func(b *testing.B) { benchDecodeAndAggregate(b, tc.clients, tc.timeline, tc.json) })
	}
}

func benchDecodeAndAggregate(b *testing.B, clients int, timeline, asJSON bool) {
	base := benchBase(b, timeline)
	docs := make([][][]byte, benchSteps)
	var size int
	var buf []byte
	for s := range docs {
		docs[s] = make([][]byte, clients)
		for c := range docs[s] {
			r := benchClient(&base, c, s)
			var d []byte
			if asJSON {
				var err error
				if d, err = json.Marshal(&r); err != nil {
					b.Fatal(err)
				}
			} else {
				buf = AppendWire(buf[:0], &r)
				d = []byte(base64.StdEncoding.EncodeToString(buf))
				size -= len(d) - len(buf) // the encoding's size, not base64's
			}
			docs[s][c] = d
			size += len(d)
		}
	}
	var wd WireDecoder // as exchange.ResultReader decodes
	decode := func(d []byte, scratch []byte) (ClientStep, []byte, error) {
		if asJSON {
			var r ClientStep
			return r, scratch, json.Unmarshal(d, &r)
		}
		n, err := base64.StdEncoding.Decode(scratch[:cap(scratch)], d)
		if err != nil {
			return ClientStep{}, scratch, err
		}
		r, err := wd.Decode(scratch[:n])
		if err != nil {
			return ClientStep{}, scratch, err
		}
		return *r, scratch, nil
	}
	var last StepAggregate
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		scratch := make([]byte, 0, 256<<10)
		for s := range docs {
			m := NewMerger(s)
			for _, d := range docs[s] {
				var r ClientStep
				var err error
				if r, scratch, err = decode(d, scratch); err != nil {
					b.Fatal(err)
				}
				if err := m.Add(r); err != nil {
					b.Fatal(err)
				}
			}
			if last = m.Result(); last.Clients != clients {
				b.Fatal("lost clients")
			}
		}
	}
	b.StopTimer()
	record, err := json.Marshal(&last)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/float64(clients*benchSteps), "bytes/result")
	b.ReportMetric(float64(len(record)), "bytes/step-record")
}
