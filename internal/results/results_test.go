package results

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

func binAt(ns uint64, count uint64) fio.Bin {
	return fio.Bin{Index: fio.IndexOf(ns), Count: count}
}

// lat builds latency stats whose moments are those of the listed samples.
func lat(samples ...uint64) fio.LatencyStats {
	st := fio.LatencyStats{Count: uint64(len(samples)), MinNs: math.MaxUint64}
	var sum float64
	counts := map[uint64]uint64{}
	for _, s := range samples {
		sum += float64(s)
		st.MinNs = min(st.MinNs, s)
		st.MaxNs = max(st.MaxNs, s)
		counts[s]++
	}
	st.MeanNs = sum / float64(len(samples))
	var ss float64
	for _, s := range samples {
		ss += (float64(s) - st.MeanNs) * (float64(s) - st.MeanNs)
	}
	if len(samples) > 1 {
		st.StdNs = math.Sqrt(ss / float64(len(samples)-1))
	}
	keys := make([]uint64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		st.Hist.Bins = append(st.Hist.Bins, binAt(k, counts[k]))
	}
	return st
}

func TestAggregateIsExact(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Client 0: 9 fast reads; client 1: one slow read, two writes.
	fast := []uint64{100, 100, 100, 100, 100, 100, 100, 100, 100}
	c0 := ClientStep{Client: 0, Jobs: 2, PlannedStart: t0, ActualStart: t0.Add(3 * time.Millisecond),
		Read: Operation{IOs: 9, Bytes: 9 * 4096, IOPS: 900, BytesPerSec: 900 * 4096, Latency: lat(fast...)}}
	c1 := ClientStep{Client: 1, Jobs: 2, PlannedStart: t0, ActualStart: t0.Add(10 * time.Millisecond),
		Read:  Operation{IOs: 1, Bytes: 4096, IOPS: 100.5, BytesPerSec: 100.5 * 4096, Latency: lat(10000)},
		Write: Operation{IOs: 2, Bytes: 8192, IOPS: 200, BytesPerSec: 200 * 4096, Latency: lat(500, 1000)}}
	agg := Aggregate(4, []ClientStep{c0, c1})

	if agg.Step != 4 || agg.Clients != 2 || agg.Jobs != 4 {
		t.Fatalf("identity %+v", agg)
	}
	if agg.Read.IOPS != 1000.5 || agg.Write.IOPS != 200 || agg.Total.IOPS != 1200.5 {
		t.Fatalf("IOPS not summed: read %v write %v total %v", agg.Read.IOPS, agg.Write.IOPS, agg.Total.IOPS)
	}
	if agg.Read.IOs != 10 || agg.Total.Bytes != 12*4096 {
		t.Fatalf("counts not summed: %+v", agg.Read)
	}
	all := append(append([]uint64{}, fast...), 10000)
	want := lat(all...)
	r := agg.Read.Latency
	if r.Count != 10 || r.MinNs != 100 || r.MaxNs != 10000 {
		t.Fatalf("read latency %+v", r)
	}
	if math.Abs(r.MeanNs-want.MeanNs) > 1e-9 || math.Abs(r.StddevNs-want.StdNs) > 1e-9 {
		t.Fatalf("moments: mean %v sd %v, pooled samples have mean %v sd %v", r.MeanNs, r.StddevNs, want.MeanNs, want.StdNs)
	}
	// p90 of 10 samples is the 9th (100 ns); p99 is the 10th (10 µs). The
	// average of the clients' p99s (5,050 ns) would be a latency no I/O had.
	if r.P50Ns != 100 || r.P90Ns != 100 || r.P99Ns != fio.BinValue(fio.IndexOf(10000)) {
		t.Fatalf("percentiles %+v", r)
	}
	tot := agg.Total.Latency
	if tot.Count != 12 || tot.MaxNs != 10000 || tot.MinNs != 100 {
		t.Fatalf("total latency %+v", tot)
	}
	if agg.StartSkew != 7*time.Millisecond || agg.MaxStartDelay != 10*time.Millisecond {
		t.Fatalf("skew %v delay %v", agg.StartSkew, agg.MaxStartDelay)
	}
	if agg.Read.Histogram.Total() != 10 || agg.Write.Histogram.Total() != 2 {
		t.Fatal("merged histograms lost samples")
	}
}

func TestAggregateEdgeCases(t *testing.T) {
	cases := []struct {
		name    string
		clients []ClientStep
		check   func(t *testing.T, a StepAggregate)
	}{
		{"no clients", nil, func(t *testing.T, a StepAggregate) {
			if a.Clients != 0 || a.Total.Latency.Count != 0 || a.StartSkew != 0 {
				t.Fatalf("%+v", a)
			}
		}},
		{"read-only workload has an empty write side", []ClientStep{{Read: Operation{IOs: 1, IOPS: 1, Latency: lat(200)}}}, func(t *testing.T, a StepAggregate) {
			if a.Write.Latency.Count != 0 || len(a.Write.Histogram.Bins) != 0 {
				t.Fatalf("write %+v", a.Write)
			}
			if _, ok := a.Write.Latency.Metric("p99"); ok {
				t.Fatal("metric reported for an empty direction")
			}
			if v, ok := a.Read.Latency.Metric("p99"); !ok || v != fio.BinValue(fio.IndexOf(200)) {
				t.Fatalf("p99 %d %v", v, ok)
			}
		}},
		{"errors and interruptions are kept", []ClientStep{{Client: 3, Error: "fio failed: ENOSPC"}, {Client: 4, Interrupted: true}}, func(t *testing.T, a StepAggregate) {
			if len(a.Errors) != 1 || a.Errors[0] != "client 3: fio failed: ENOSPC" || !a.Interrupted {
				t.Fatalf("%+v", a)
			}
		}},
		{"I/Os beyond fio's range are counted over clients", []ClientStep{
			{Read: Operation{IOs: 3, Latency: lat(200, fio.OverflowFloorNs, 40_000_000_000)}},
			{Read: Operation{IOs: 2, Latency: lat(fio.OverflowFloorNs-1, fio.OverflowFloorNs+5)}},
		}, func(t *testing.T, a StepAggregate) {
			if a.Read.Latency.Overflow != 3 || a.Total.Latency.Overflow != 3 || a.Read.Latency.MaxNs != 40_000_000_000 {
				t.Fatalf("overflow %d, total %d, max %d; want 3, 3, 40 s", a.Read.Latency.Overflow, a.Total.Latency.Overflow, a.Read.Latency.MaxNs)
			}
		}},
		{"single sample has zero deviation", []ClientStep{{Read: Operation{Latency: lat(300)}}, {Read: Operation{Latency: lat(300)}}}, func(t *testing.T, a StepAggregate) {
			if a.Read.Latency.StddevNs != 0 || a.Read.Latency.MeanNs != 300 {
				t.Fatalf("%+v", a.Read.Latency)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, Aggregate(0, c.clients)) })
	}
}

func TestMetricNames(t *testing.T) {
	l := LatencySummary{Count: 1, MinNs: 1, MaxNs: 9, MeanNs: 4.6, P50Ns: 2, P90Ns: 3, P95Ns: 4, P99Ns: 5, P999Ns: 6, P9999Ns: 7}
	want := map[string]uint64{"mean": 5, "min": 1, "max": 9, "p50": 2, "p90": 3, "p95": 4, "p99": 5, "p99.9": 6, "p99.99": 7}
	for name, v := range want {
		if got, ok := l.Metric(name); !ok || got != v {
			t.Errorf("Metric(%q) = %d, %v; want %d", name, got, ok, v)
		}
	}
	if _, ok := l.Metric("p42"); ok {
		t.Error("unknown metric accepted")
	}
}

// TestClientSpread: the clients' IOPS spread is exact (population CV),
// counts reads and writes, and is the same merged one result at a time.
func TestClientSpread(t *testing.T) {
	client := func(i int, readIOPS, writeIOPS float64) ClientStep {
		return ClientStep{Client: i, Jobs: 1, Read: Operation{IOPS: readIOPS}, Write: Operation{IOPS: writeIOPS}}
	}
	tests := []struct {
		name    string
		clients []ClientStep
		want    ClientSpread
	}{
		{"no client", nil, ClientSpread{}},
		{"one client: no spread", []ClientStep{client(0, 70, 30)}, ClientSpread{}},
		{"an even share", []ClientStep{client(0, 100, 0), client(1, 100, 0), client(2, 50, 50)}, ClientSpread{MinIOPS: 100, MaxIOPS: 100}},
		// mean 100, population standard deviation sqrt(5000/3) = 40.82
		{"an uneven share", []ClientStep{client(0, 50, 0), client(1, 100, 0), client(2, 150, 0)},
			ClientSpread{MinIOPS: 50, MaxIOPS: 150, CVPercent: 100 * math.Sqrt(5000.0/3) / 100}},
		{"no I/O at all", []ClientStep{client(0, 0, 0), client(1, 0, 0)}, ClientSpread{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Aggregate(0, tt.clients).ClientIOPS
			if got.MinIOPS != tt.want.MinIOPS || got.MaxIOPS != tt.want.MaxIOPS || math.Abs(got.CVPercent-tt.want.CVPercent) > 1e-9 {
				t.Errorf("spread %+v, want %+v", got, tt.want)
			}
			m := NewMerger(0)
			for i := len(tt.clients) - 1; i >= 0; i-- { // another order: the same figures
				m.merge(&tt.clients[i])
			}
			if back := m.Result().ClientIOPS; math.Abs(back.CVPercent-got.CVPercent) > 1e-9 || back.MinIOPS != got.MinIOPS || back.MaxIOPS != got.MaxIOPS {
				t.Errorf("merged in reverse: %+v, in order: %+v", back, got)
			}
		})
	}
}
