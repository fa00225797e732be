package fio

import (
	"bytes"
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIntervalsAddUpToTheReport runs real fio with a status document every
// second, a ramp, two jobs and mixed reads and writes: the ramp's documents
// are left out, the 4 s measurement has an interval per tick, and the
// intervals add up, bin by bin, to the jobs' final report.
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
	if res.TimelineErr != nil || len(res.Intervals) < 4 || len(res.Intervals) > 6 {
		t.Fatalf("%d intervals (%v), want one a second of 4 s", len(res.Intervals), res.TimelineErr)
	}
	var end uint64
	for _, iv := range res.Intervals {
		if iv.StartMs != end || iv.EndMs < iv.StartMs {
			t.Fatalf("interval %d..%d ms does not follow %d ms", iv.StartMs, iv.EndMs, end)
		}
		end = iv.EndMs
	}
	for _, op := range []struct {
		name string
		of   func(Interval) IntervalOp
		fin  func(JobResult) DirResult
	}{
		{"read", func(iv Interval) IntervalOp { return iv.Read }, func(j JobResult) DirResult { return j.Read }},
		{"write", func(iv Interval) IntervalOp { return iv.Write }, func(j JobResult) DirResult { return j.Write }},
	} {
		var got, want Accumulator
		var ios, bytes, wantIOs, wantBytes uint64
		for _, iv := range res.Intervals {
			got.Add(op.of(iv).Hist)
			ios += op.of(iv).IOs
			bytes += op.of(iv).Bytes
		}
		for _, j := range res.Output.Jobs {
			want.Add(op.fin(j).Latency.Hist)
			wantIOs += op.fin(j).Latency.Count
			wantBytes += op.fin(j).Bytes
		}
		if ios != wantIOs || bytes != wantBytes || ios == 0 {
			t.Errorf("%s: intervals hold %d I/Os and %d bytes, the report %d and %d", op.name, ios, bytes, wantIOs, wantBytes)
		}
		if !reflect.DeepEqual(got.Histogram().Bins, want.Histogram().Bins) {
			t.Errorf("%s: the intervals' bins do not add up to the report's", op.name)
		}
	}
}

// TestTimelineOfAnInterruptedRun stops fio mid-run, as a runner does when
// its pod is deleted: fio writes "terminating on signal 15" between its
// documents, and the partial report and its timeline are still read.
func TestTimelineOfAnInterruptedRun(t *testing.T) {
	e := requireFio(t)
	e.Timeline = true
	r := Run{Name: "stopped", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
		Runtime: 30 * time.Second, Seed: 8, Jobs: []Job{{IODepth: 1, ReadIOPS: 200}}}
	job, err := Render(r, Layout{Directory: t.TempDir(), BytesPerJob: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
	defer cancel()
	res, err := e.Run(ctx, r.Name, job)
	if err != nil {
		t.Fatalf("an interrupted run lost its report: %v", err)
	}
	if !res.Interrupted || res.TimelineErr != nil || len(res.Intervals) < 2 {
		t.Fatalf("interrupted %v, %d intervals, timeline error %v", res.Interrupted, len(res.Intervals), res.TimelineErr)
	}
	var ios uint64
	for _, iv := range res.Intervals {
		ios += iv.IOs()
	}
	if ios != res.Output.Jobs[0].Read.Latency.Count || ios == 0 {
		t.Fatalf("intervals hold %d I/Os, the partial report %d", ios, res.Output.Jobs[0].Read.Latency.Count)
	}
}

func statusDoc(runtime, ios, n uint64, bin string) string {
	itoa := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return `{"fio version":"fio-3.33","jobs":[{"jobname":"j","job_runtime":` + itoa(runtime) +
		`,"read":{"total_ios":` + itoa(ios) + `,"io_bytes":0,"clat_ns":{"N":` + itoa(n) + `,"bins":{` + bin + `}}},` +
		`"write":{"total_ios":0,"io_bytes":0,"clat_ns":{"N":0}}}]}` + "\n"
}

func TestIntervalsOfRacingDocuments(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		want   [][3]uint64 // start, end, I/Os
	}{
		{"cumulative", statusDoc(1000, 2, 2, `"100":2`) + statusDoc(2000, 3, 3, `"100":3`), [][3]uint64{{0, 1000, 2}, {1000, 2000, 1}}},
		{"N behind its bins counts the bins", statusDoc(1000, 2, 1, `"100":2`) + statusDoc(2000, 3, 3, `"100":3`), [][3]uint64{{0, 1000, 2}, {1000, 2000, 1}}},
		{"ramp documents left out", statusDoc(900, 5, 0, ``) + statusDoc(1000, 2, 2, `"100":2`), [][3]uint64{{0, 1000, 2}}},
		// The end of the ramp: a document pairs the ramp's clock (1809 ms)
		// with reset counters; the next one's clock goes back. The counts
		// are kept, folded into the next interval.
		{"clock back at the end of the ramp", statusDoc(1809, 1, 1, `"100":1`) + statusDoc(1015, 3, 3, `"100":3`) + statusDoc(2015, 5, 5, `"100":5`),
			[][3]uint64{{0, 1015, 3}, {1015, 2015, 2}}},
		// Ticks before the job started (no ramp, a long layout): no I/O,
		// then the clock goes back when the job starts.
		{"ticks before the start", statusDoc(1003, 0, 0, ``) + statusDoc(2004, 0, 0, ``) + statusDoc(713, 2, 2, `"100":2`) + statusDoc(1713, 4, 4, `"100":4`),
			[][3]uint64{{0, 713, 2}, {713, 1713, 2}}},
		{"counters reset start over", statusDoc(1000, 3, 3, `"100":3`) + statusDoc(2000, 1, 1, `"100":1`), [][3]uint64{{0, 1000, 3}, {1000, 2000, 1}}},
		{"text between documents", statusDoc(1000, 2, 2, `"100":2`) + "fio: terminating on signal 15\n" + statusDoc(1400, 3, 3, `"100":3`),
			[][3]uint64{{0, 1000, 2}, {1000, 1400, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ivs, err := Intervals(strings.NewReader(c.stream))
			if err != nil {
				t.Fatal(err)
			}
			var got [][3]uint64
			for _, iv := range ivs {
				got = append(got, [3]uint64{iv.StartMs, iv.EndMs, iv.IOs()})
				if iv.Read.Hist.Total() != iv.Read.IOs {
					t.Errorf("interval %v: bins hold %d", got[len(got)-1], iv.Read.Hist.Total())
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("intervals %v, want %v", got, c.want)
			}
		})
	}
	out, _, err := Parse([]byte(statusDoc(1000, 2, 2, `"100":2`) + "fio: terminating on signal 15\n" + statusDoc(1400, 3, 3, `"100":3`)))
	if err != nil || out.Jobs[0].Read.Latency.Count != 3 {
		t.Fatalf("Parse must take the last document of a stream: %+v, %v", out, err)
	}
	if _, err := Intervals(bytes.NewReader([]byte("{\n  \"jobs\": [\n"))); err == nil {
		t.Fatal("a document cut short was accepted")
	}
}
