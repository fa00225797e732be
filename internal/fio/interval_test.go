package fio

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestIntervalsAddUpToTheReport runs real fio with a status document every
// second, a ramp and mixed reads and writes: the ramp's snapshot is left
// out, every second of the 4 s measurement has its interval, and the
// intervals add up, bin by bin, to fio's final report.
func TestIntervalsAddUpToTheReport(t *testing.T) {
	e := requireFio(t)
	e.Timeline = true
	r := Run{Name: "timeline", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 70, Random: true,
		Runtime: 4 * time.Second, Ramp: 1500 * time.Millisecond, Seed: 3,
		Jobs: []Job{{IODepth: 1, ReadIOPS: 140, WriteIOPS: 60}, {IODepth: 1, ReadIOPS: 70, WriteIOPS: 30}}}
	job, err := Render(r, Layout{Directory: t.TempDir(), BytesPerJob: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), r.Name, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) != len(res.Output.Jobs) {
		t.Fatalf("intervals for %d jobs, report has %d", len(res.Intervals), len(res.Output.Jobs))
	}
	for _, j := range res.Output.Jobs {
		ivs := res.Intervals[j.Name]
		seconds := map[int]bool{}
		var end uint64
		for _, iv := range ivs {
			if iv.StartMs != end || iv.EndMs < iv.StartMs {
				t.Fatalf("%s: interval %d..%d ms does not follow %d ms", j.Name, iv.StartMs, iv.EndMs, end)
			}
			end = iv.EndMs
			seconds[Second(iv.EndMs)] = true
		}
		if end != j.RuntimeMs {
			t.Errorf("%s: intervals end at %d ms, the report's runtime is %d ms", j.Name, end, j.RuntimeMs)
		}
		if want := map[int]bool{0: true, 1: true, 2: true, 3: true}; !reflect.DeepEqual(seconds, want) {
			t.Errorf("%s: intervals cover seconds %v, want 0..3", j.Name, seconds)
		}
		for _, op := range []struct {
			name  string
			final DirResult
			of    func(Interval) IntervalOp
		}{
			{"read", j.Read, func(iv Interval) IntervalOp { return iv.Read }},
			{"write", j.Write, func(iv Interval) IntervalOp { return iv.Write }},
		} {
			var a Accumulator
			var ios, bytes uint64
			for _, iv := range ivs {
				a.Add(op.of(iv).Hist)
				ios += op.of(iv).IOs
				bytes += op.of(iv).Bytes
			}
			if ios != op.final.Latency.Count || bytes != op.final.Bytes || ios == 0 {
				t.Errorf("%s %s: intervals hold %d I/Os and %d bytes, the report %d and %d",
					j.Name, op.name, ios, bytes, op.final.Latency.Count, op.final.Bytes)
			}
			if got := a.Histogram(); !reflect.DeepEqual(got.Bins, op.final.Latency.Hist.Bins) {
				t.Errorf("%s %s: the intervals' bins do not add up to the report's", j.Name, op.name)
			}
		}
	}
}

func TestIntervalsRefuseNonCumulativeSnapshots(t *testing.T) {
	doc := func(runtime, n uint64, bin string) string {
		return `{"fio version":"fio-3.33","jobs":[{"jobname":"j","job_runtime":` + itoa(runtime) +
			`,"read":{"total_ios":` + itoa(n) + `,"io_bytes":0,"clat_ns":{"N":` + itoa(n) + `,"bins":{` + bin + `}}},` +
			`"write":{"total_ios":0,"io_bytes":0,"clat_ns":{"N":0}}}]}` + "\n"
	}
	ok := doc(1000, 2, `"100":2`) + doc(2000, 3, `"100":3`)
	ivs, err := Intervals([]byte(ok))
	if err != nil || len(ivs["j"]) != 2 || ivs["j"][1].Read.IOs != 1 {
		t.Fatalf("Intervals = %+v, %v", ivs, err)
	}
	out, _, err := Parse([]byte(ok))
	if err != nil || out.Jobs[0].Read.Latency.Count != 3 {
		t.Fatalf("Parse read the first document of a stream, not the last: %+v, %v", out, err)
	}
	for name, stream := range map[string]string{
		"a bin went down": doc(1000, 2, `"100":2`) + doc(2000, 2, `"100":1,"200":1`),
		"time went back":  doc(2000, 2, `"100":2`) + doc(1000, 3, `"100":3`),
	} {
		if _, err := Intervals([]byte(stream)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A ramp snapshot (I/Os without latencies) starts the series over.
	ramp := `{"jobs":[{"jobname":"j","job_runtime":900,"read":{"total_ios":5,"clat_ns":{"N":0}},"write":{"clat_ns":{"N":0}}}]}` + "\n"
	// A snapshot whose N lags its bins by an I/O being recorded counts
	// the bins.
	racing := doc(1000, 1, `"100":2`) + doc(2000, 3, `"100":3`)
	if ivs, err := Intervals([]byte(racing)); err != nil || ivs["j"][0].Read.IOs != 2 || ivs["j"][1].Read.IOs != 1 {
		t.Fatalf("a snapshot with N behind its bins: %+v, %v", ivs, err)
	}
	ivs, err = Intervals([]byte(ramp + ok))
	if err != nil || len(ivs["j"]) != 2 || ivs["j"][0].StartMs != 0 || ivs["j"][0].Read.IOs != 2 {
		t.Fatalf("after a ramp snapshot: %+v, %v", ivs, err)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
