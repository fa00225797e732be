package controllers

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
)

// BenchmarkStepRecordKept reports the live heap one step record costs the
// memo of a running benchmark (bytes-per-record), as recordOf makes it and
// kept keeps it: the manager's heap grows by this for every recorded step
// of every running benchmark, and by nothing for ended ones
// (docs/security.md, "Memory under load"). An hour-long step's timeline
// of 3,600 windows with their histograms goes in; its verdicts stay. The
// worst case is what validation lets through: the most idle spans and
// client errors of the longest length.
func BenchmarkStepRecordKept(b *testing.B) {
	for _, c := range []struct {
		name   string
		agg    func() results.StepAggregate
		budget int // bytes a record may cost
	}{
		{"hour-long-step", func() results.StepAggregate { return hourLongStep(8, 0) }, 4 << 10},
		{"worst-case", func() results.StepAggregate { return hourLongStep(results.MaxWindows, results.MaxErrors) }, 256 << 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			const n = 200
			steady := analysis.SteadyOptions{}.WithDefaults()
			for range b.N {
				before := liveHeap()
				kept := make([]run.Step, n)
				for i := range kept {
					// Each step's aggregate is garbage once its record is made.
					kept[i] = run.Record(protocol.StepOrder{Index: i}, c.agg(), fmt.Sprintf("bench-step-%03d", i), steady).Kept()
				}
				per := float64(liveHeap()-before) / n
				runtime.KeepAlive(kept)
				b.ReportMetric(per, "bytes-per-record")
				if per > float64(c.budget) {
					b.Fatalf("a kept step record costs %.0f bytes, over its budget of %d", per, c.budget)
				}
			}
		})
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// hourLongStep is a step aggregate of an hour's 1-second windows, each
// with a latency histogram of 40 bins, with idle spans and client errors
// of 4 KiB.
func hourLongStep(idle, clientErrors int) results.StepAggregate {
	hist := func(n int) fio.Histogram {
		h := fio.Histogram{Bins: make([]fio.Bin, n)}
		for i := range h.Bins {
			h.Bins[i] = fio.Bin{Index: 200 + i, Count: uint64(i + 1)}
		}
		return h
	}
	agg := results.StepAggregate{Clients: 4, Jobs: 8, Timeline: results.Timeline{WindowSeconds: 1}}
	for _, o := range []*results.OperationSummary{&agg.Read, &agg.Write, &agg.Total} {
		*o = results.OperationSummary{IOPS: 1000, IOs: 3600000, Histogram: hist(400)}
	}
	for k := range 3600 {
		agg.Timeline.Windows = append(agg.Timeline.Windows, results.Window{StartMs: uint64(k) * 1000, IOs: 1000, IOPS: 1000, Hist: hist(40)})
	}
	for k := range idle {
		agg.Timeline.Idle = append(agg.Timeline.Idle, results.Span{StartMs: uint64(k) * 800, EndMs: uint64(k)*800 + 600})
	}
	for k := range clientErrors {
		agg.Errors = append(agg.Errors, fmt.Sprintf("client %d: %s", k, strings.Repeat("e", 4<<10)))
	}
	return agg
}
