package results

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
)

// realStep is a client's step from a real fio json+ report (testdata).
func realStep(t testing.TB) ClientStep {
	t.Helper()
	data, err := os.ReadFile("testdata/fio-oltp-2jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r, w, _ := FromFio(out)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return ClientStep{Client: 7, Step: 3, Jobs: 2, PlannedStart: t0, ActualStart: t0.Add(time.Millisecond), End: t0.Add(time.Minute), Read: r, Write: w}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(c *ClientStep)
		want   string // "" when valid
	}{
		{"real fio output", func(*ClientStep) {}, ""},
		{"failed step without I/O", func(c *ClientStep) { c.Read, c.Write, c.Error = Operation{}, Operation{}, "fio: ENOSPC" }, ""},
		{"negative client", func(c *ClientStep) { c.Client = -1 }, "client index -1"},
		{"client beyond the API limit", func(c *ClientStep) { c.Client = MaxClients }, "client index 1000"},
		{"negative step", func(c *ClientStep) { c.Step = -2 }, "step index -2"},
		{"step beyond bound", func(c *ClientStep) { c.Step = MaxSteps }, "step index 1000"},
		{"negative jobs", func(c *ClientStep) { c.Jobs = -1 }, "-1 jobs"},
		{"too many jobs", func(c *ClientStep) { c.Jobs = 65 }, "65 jobs"},
		{"NaN IOPS", func(c *ClientStep) { c.Read.IOPS = math.NaN() }, "read: iops NaN"},
		{"+Inf bandwidth", func(c *ClientStep) { c.Write.BytesPerSec = math.Inf(1) }, "write: bytesPerSec +Inf"},
		{"negative IOPS", func(c *ClientStep) { c.Read.IOPS = -1 }, "iops -1"},
		{"rate that overflows over 1,000 clients", func(c *ClientStep) { c.Read.IOPS = 1e306 }, "iops 1e+306"},
		{"negative mean", func(c *ClientStep) { c.Read.Latency.MeanNs = -5 }, "meanNs -5"},
		{"NaN stddev", func(c *ClientStep) { c.Read.Latency.StdNs = math.NaN() }, "stddevNs NaN"},
		{"huge I/O count", func(c *ClientStep) { c.Read.IOs = math.MaxUint64 }, "ios 18446744073709551615"},
		{"huge bytes", func(c *ClientStep) { c.Write.Bytes = MaxCount + 1 }, "bytes 9007199254740993"},
		{"huge latency", func(c *ClientStep) { c.Read.Latency.MaxNs = math.MaxUint64 }, "maxNs"},
		{"bins disagree with count", func(c *ClientStep) { c.Read.Latency.Count++ }, "histogram holds 10000 samples but count is 10001"},
		{"count without bins", func(c *ClientStep) { c.Write.Latency.Hist.Bins = nil }, "histogram holds 0 samples"},
		{"bin index out of range", func(c *ClientStep) { c.Read.Latency.Hist.Bins[0].Index = fio.PlatNR }, "bin index 1856"},
		{"bins out of order", func(c *ClientStep) {
			b := c.Read.Latency.Hist.Bins
			b[0], b[1] = b[1], b[0]
		}, "not in ascending order"},
		{"empty bin", func(c *ClientStep) {
			c.Read.Latency.Hist.Bins = append(c.Read.Latency.Hist.Bins, fio.Bin{Index: fio.PlatNR - 1})
		}, "count 0"},
		{"bin count overflowing the sum", func(c *ClientStep) { c.Read.Latency.Hist.Bins[0].Count = math.MaxUint64 }, "count 18446744073709551615"},
		{"min above max", func(c *ClientStep) { c.Read.Latency.MinNs = c.Read.Latency.MaxNs + 1 }, "min"},
		{"mean below min", func(c *ClientStep) { c.Read.Latency.MeanNs = float64(c.Read.Latency.MinNs) / 2 }, "mean"},
		{"mean above max", func(c *ClientStep) { c.Read.Latency.MeanNs = float64(c.Read.Latency.MaxNs) * 2 }, "mean"},
		{"stddev beyond the range", func(c *ClientStep) { c.Write.Latency.StdNs = float64(c.Write.Latency.MaxNs) }, "stddev"},
		{"min not in the first bin", func(c *ClientStep) { c.Read.Latency.MinNs = 1 }, "min 1 ns is not in the first histogram bin"},
		{"max not in the last bin", func(c *ClientStep) { c.Read.Latency.MaxNs *= 2 }, "not in the last histogram bin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := realStep(t)
			tc.mutate(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid result refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestMergerEqualsAggregate decodes and adds 1,000 real-fio client results
// one at a time, as the operator does, and compares with Aggregate over all
// of them at once.
func TestMergerEqualsAggregate(t *testing.T) {
	steps := benchInput(t)
	const k = 5
	m := NewMerger(k)
	for _, c := range steps[k] {
		doc, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		var decoded ClientStep
		if err := json.Unmarshal(doc, &decoded); err != nil {
			t.Fatal(err)
		}
		if err := m.Add(decoded); err != nil {
			t.Fatal(err)
		}
	}
	got, want := m.Result(), Aggregate(k, steps[k])
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Merger and Aggregate differ:\n%+v\n%+v", got.Total.Latency, want.Total.Latency)
	}
	if got.Clients != benchClients || got.Total.Latency.Count == 0 {
		t.Fatalf("merged %d clients, %d I/Os", got.Clients, got.Total.Latency.Count)
	}
}

func TestMergerAdd(t *testing.T) {
	valid := realStep(t)
	cases := []struct {
		name  string
		first *ClientStep
		add   func(c ClientStep) ClientStep
		want  string
	}{
		{"valid", nil, func(c ClientStep) ClientStep { return c }, ""},
		{"invalid result", nil, func(c ClientStep) ClientStep { c.Read.IOPS = math.Inf(1); return c }, "iops"},
		{"another step's result", nil, func(c ClientStep) ClientStep { c.Step = 4; return c }, "result of step 4 merged into step 3"},
		{"same client twice", &valid, func(c ClientStep) ClientStep { return c }, "a second result"},
		{"another client", &valid, func(c ClientStep) ClientStep { c.Client = 8; return c }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMerger(3)
			if tc.first != nil {
				if err := m.Add(*tc.first); err != nil {
					t.Fatal(err)
				}
			}
			before := m.Result()
			err := m.Add(tc.add(valid))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if !reflect.DeepEqual(m.Result(), before) {
				t.Fatal("a refused result was merged")
			}
		})
	}
}

// TestAggregateAtTheBoundsIsFinite merges 1,000 clients that each report the
// largest valid figures: no sum overflows, nothing becomes NaN or infinite,
// and the aggregate still encodes as JSON (which refuses NaN and Inf).
func TestAggregateAtTheBoundsIsFinite(t *testing.T) {
	hist := fio.Histogram{Bins: []fio.Bin{{Index: 0, Count: MaxCount - 1}, {Index: fio.PlatNR - 1, Count: 1}}}
	d := Operation{IOs: MaxCount, Bytes: MaxCount, IOPS: MaxFloat, BytesPerSec: MaxFloat,
		Latency: fio.LatencyStats{Count: MaxCount, MinNs: 0, MaxNs: MaxCount, MeanNs: MaxFloat, StdNs: MaxFloat, Hist: hist}}
	m := NewMerger(0)
	for c := range MaxClients {
		if err := m.Add(ClientStep{Client: c, Jobs: MaxJobsPerClient, Read: d, Write: d}); err != nil {
			t.Fatal(err)
		}
	}
	a := m.Result()
	for _, s := range []OperationSummary{a.Read, a.Write, a.Total} {
		for _, v := range []float64{s.IOPS, s.BytesPerSec, s.Latency.MeanNs, s.Latency.StddevNs} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite figure in %+v", s.Latency)
			}
		}
	}
	if want := uint64(2 * MaxClients * MaxCount); a.Total.IOs != want || a.Total.Latency.Count != want || a.Total.Histogram.Total() != want {
		t.Fatalf("sums overflowed: %d I/Os, %d samples, want %d", a.Total.IOs, a.Total.Latency.Count, want)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Fatal(err)
	}
}

func TestMergerBoundsTheErrorsItLists(t *testing.T) {
	m := NewMerger(0)
	for i := range 1000 {
		if err := m.Add(ClientStep{Client: i, Jobs: 1, Error: strings.Repeat("x", 4096)}); err != nil {
			t.Fatal(err)
		}
	}
	agg := m.Result()
	if agg.FailedClients != 1000 {
		t.Fatalf("%d failed clients counted, want 1000", agg.FailedClients)
	}
	errs := agg.Errors
	if len(errs) != MaxErrors+1 || errs[MaxErrors] != "… and 980 more clients' errors" {
		t.Fatalf("%d errors listed, the last %q", len(errs), errs[len(errs)-1])
	}
	if !strings.HasPrefix(errs[0], "client 0: xxx") || !strings.HasPrefix(errs[MaxErrors-1], "client 19: ") {
		t.Fatalf("first errors %q … %q", errs[0][:12], errs[MaxErrors-1][:12])
	}
}
