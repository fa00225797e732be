package runner

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/workload"
)

// synthetic is a three-step local run at 1,000, 2,000 and 3,000 IOPS
// offered, 80 % reads of 8 KiB, whose third step saturated; its read mean
// latency doubles from 200 µs with each step (a knee at step 2) and the
// write p99 is three times the read's.
func synthetic(t *testing.T) (*Local, *Outcome) {
	t.Helper()
	lat := func(meanUs float64, p99Us uint64, ios uint64) results.LatencySummary {
		return results.LatencySummary{Count: ios, MeanNs: meanUs * 1000, P50Ns: uint64(meanUs * 900), P90Ns: p99Us * 700, P99Ns: p99Us * 1000, P999Ns: p99Us * 1500, MaxNs: p99Us * 2000}
	}
	dir := func(iops, meanUs float64, p99Us uint64) results.OperationSummary {
		ios := uint64(iops * 10)
		return results.OperationSummary{IOPS: iops, BytesPerSec: iops * 8192, IOs: ios, Bytes: ios * 8192, Latency: lat(meanUs, p99Us, ios)}
	}
	l := &Local{Name: "local", Profile: "oltp",
		Workload: workload.Spec{BlockSizeBytes: 8192, ReadPercent: 80, Pattern: workload.Random, IODepth: 16, IOEngine: workload.LibAIO, Direct: true, WorkingSetBytesPerClient: 64 << 20},
		Load:     plan.Load{Rate: &plan.RateSteps{Steps: []int64{1000, 2000, 3000}}, StepDuration: 10 * time.Second, RampTime: 2 * time.Second},
		Topology: plan.Topology{Clients: 3, JobsPerClient: 2}}
	start := time.Date(2025, 6, 3, 9, 0, 0, 0, time.UTC)
	out := &Outcome{Stop: &plan.StopReason{Kind: plan.StopSaturated, Step: 2,
		Message: "step 3/3 (3000 IOPS offered): achieved 2,400 IOPS, below 90 % of the offered rate"}}
	for i, achieved := range []float64{1000, 2000, 2400} {
		m := uint64(1) << i
		r, w := dir(achieved*0.8, 200*float64(m), 400*m), dir(achieved*0.2, 300*float64(m), 1200*m)
		total := results.OperationSummary{IOPS: r.IOPS + w.IOPS, BytesPerSec: r.BytesPerSec + w.BytesPerSec, IOs: r.IOs + w.IOs,
			Latency: lat(220*float64(m), 1200*m, r.IOs+w.IOs)}
		out.Steps = append(out.Steps, run.Step{
			Order: protocol.StepOrder{Index: i, Step: plan.Step{Index: i, OfferedIOPS: int64(1000 * (i + 1))},
				StartAt: start.Add(time.Duration(i) * 12 * time.Second)},
			Aggregate: results.StepAggregate{Step: i, Clients: 3, Jobs: 6, Read: r, Write: w, Total: total,
				StartSkew: time.Duration(i+1) * 340 * time.Microsecond},
		})
	}
	return l, out
}

func TestWriteReport(t *testing.T) {
	l, out := synthetic(t)
	opts := analysis.Options{LatencyTarget: 500 * time.Microsecond}
	v, err := l.View(out, nil, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	started := out.Steps[0].Order.StartAt.Add(-time.Minute)
	var b bytes.Buffer
	if err := l.WriteReport(&b, out, nil, opts, v, started, started.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	// The step table and summary are internal/report's, as `kubectl
	// storagebench status` prints them.
	for _, want := range []string{
		"Name:      local\n",
		"Status:    Completed\n",
		"Workload:  oltp: 8 KiB, 80 % reads, random, iodepth 16, libaio, direct, 64 MiB per client; 3 clients × 2 jobs\n",
		"Load:      3/3 steps of 10s (+2s ramp), rate in IOPS\n",
		"Run:       started 2025-06-03T08:59:00Z, ended 2025-06-03T09:01:00Z (2m)\n",
		"step     offered  read IOPS  write IOPS  MiB/s  read mean  read p99  write mean  write p99   skew\n",
		"   1  1,000 IOPS        800         200    7.8     200 µs    400 µs      300 µs     1.2 ms  300µs\n",
		"   2  2,000 IOPS      1,600         400   15.6     400 µs    800 µs      600 µs     2.4 ms  700µs  knee\n",
		"   3  3,000 IOPS      1,920         480   18.8     800 µs    1.6 ms      1.2 ms     4.8 ms    1ms  saturated,closed-loop\n",
		"peak: 2,400 IOPS (step 3), 18.8 MiB/s (step 3), mean latency at peak 880 µs, p99 at peak 4.8 ms\n",
		"performance at the latency target (mean latency ≤ 500 µs): 2,000 IOPS (15.6 MiB/s) at 440 µs (step 2)\n",
		"knee: step 2 at 2,000 IOPS\n",
		"ended: step 3/3 (3000 IOPS offered): achieved 2,400 IOPS, below 90 % of the offered rate\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "FAILED") || strings.Contains(got, "Storage:") {
		t.Errorf("report of a completed local run:\n%s", got)
	}
}

func TestReportOfAFailedRun(t *testing.T) {
	l, out := synthetic(t)
	out.Steps, out.Stop = out.Steps[:1], nil
	out.Failure = "client 2: fio: No space left on device"
	runErr := errors.New(out.Failure)
	v, err := l.View(out, runErr, analysis.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(out, runErr, analysis.Options{}, v, time.Time{}, time.Time{})
	if r.Phase != "Failed" || len(r.Steps) != 1 || r.StepsPlanned != 3 {
		t.Fatalf("run %+v", r)
	}
	var b bytes.Buffer
	if err := r.WriteStatus(&b, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Status:    Failed\n", "Load:      1/3 steps of 10s", "FAILED: client 2: fio: No space left on device\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	interrupted := l.Report(out, ErrInterrupted, analysis.Options{}, v, time.Time{}, time.Time{})
	if interrupted.Phase != "Interrupted" {
		t.Errorf("phase %q, want Interrupted", interrupted.Phase)
	}
}
