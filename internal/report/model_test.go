package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
)

// operation is an operation's merged results: ios I/Os whose latencies
// are the multiples of base (mean base, p50 2×, p90 3×, … p99.99 7×).
func operation(ios uint64, base uint64) results.OperationSummary {
	if ios == 0 {
		return results.OperationSummary{}
	}
	return results.OperationSummary{IOPS: float64(ios) / 10, IOs: ios, Latency: results.LatencySummary{
		Count: ios, MinNs: base / 2, MeanNs: float64(base), P50Ns: 2 * base, P90Ns: 3 * base, P95Ns: 4 * base,
		P99Ns: 5 * base, P999Ns: 6 * base, P9999Ns: 7 * base, MaxNs: 8 * base,
	}}
}

// aggregate is a step's merged results: reads, writes (0 I/Os: none) and
// their total, with the write latencies above the read ones.
func aggregate(step int, reads, writes uint64) results.StepAggregate {
	return results.StepAggregate{Step: step, Read: operation(reads, 100_000), Write: operation(writes, 300_000), Total: operation(reads+writes, 150_000)}
}

func TestSelectedLatency(t *testing.T) {
	allMetrics := []string{analysis.MetricMean, analysis.MetricMin, analysis.MetricMax, analysis.MetricP50, analysis.MetricP90,
		analysis.MetricP95, analysis.MetricP99, analysis.MetricP999, analysis.MetricP9999}
	operations := []string{"", analysis.OperationRead, analysis.OperationWrite, analysis.OperationTotal, analysis.OperationWorst}
	for name, a := range map[string]results.StepAggregate{
		"reads and writes": aggregate(0, 1000, 250),
		"reads only":       aggregate(0, 1000, 0),
		"writes only":      aggregate(0, 0, 250),
		"no I/O":           aggregate(0, 0, 0),
	} {
		st := StepOf(plan.Step{}, time.Time{}, a, analysis.StepAnalysis{})
		for _, m := range allMetrics {
			for _, op := range operations {
				sel := analysis.LatencySelector{Metric: m, Operation: op}
				got, ok := st.selectedLatency(sel)
				want, wantOK := sel.Of(a)
				if !slices.Contains(shownMetrics, m) {
					// A figure a report does not hold is missing, not another one.
					wantOK = false
				}
				if ok != wantOK || (ok && got != time.Duration(want)) {
					t.Errorf("%s, %v: %v %v, want %v %v (as analysis selects it)", name, sel, got, ok, time.Duration(want), wantOK)
				}
			}
		}
	}
	if _, ok := (&Step{}).selectedLatency(analysis.LatencySelector{Operation: "both"}); ok {
		t.Error("latency of an unknown operation")
	}
}

func TestCheckSelector(t *testing.T) {
	for _, c := range []struct {
		sel     analysis.LatencySelector
		wantErr string
	}{
		{analysis.LatencySelector{}, ""},
		{analysis.LatencySelector{Metric: "p99.9", Operation: "worst"}, ""},
		{analysis.LatencySelector{Metric: "mean", Operation: "read"}, ""},
		{analysis.LatencySelector{Metric: "p95"}, `latency metric "p95" is not kept in reports: want one of mean, p50, p90, p99, p99.9`},
		{analysis.LatencySelector{Metric: "max", Operation: "read"}, `latency metric "max" is not kept in reports`},
		{analysis.LatencySelector{Metric: "p42"}, `unknown latency metric "p42": want one of mean, p50, p90, p99, p99.9`},
		{analysis.LatencySelector{Operation: "both"}, `unknown operation "both" (want one of read, write, total, worst, sync)`},
	} {
		err := CheckSelector(c.sel)
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("CheckSelector(%+v) = %v, want %q", c.sel, err, c.wantErr)
		}
	}
}

func TestSeriesJSON(t *testing.T) {
	steps := []Step{
		StepOf(plan.Step{Index: 0}, time.Time{}, aggregate(0, 1000, 250), analysis.StepAnalysis{}),
		StepOf(plan.Step{Index: 1}, time.Time{}, aggregate(1, 2000, 500), analysis.StepAnalysis{Knee: true}),
	}
	r := &Run{Unit: UnitIOPS, Target: analysis.DefaultTargetSelector, Steps: steps}
	s := r.CurveSeries("p99")
	if len(s) != 2 || s[0].Name != "read p99" || s[1].Selector != (analysis.LatencySelector{Metric: "p99", Operation: "write"}) {
		t.Fatalf("series %+v", s)
	}
	b, err := json.Marshal(s[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"read p99","selector":{"metric":"p99","operation":"read"},"points":[{"index":0,"load":125,"latencyMs":0.5},{"index":1,"load":250,"latencyMs":0.5,"knee":true}]}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	var back Series
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Name != s[0].Name || back.Selector != s[0].Selector || len(back.Points) != 2 || back.Points[1] != s[0].Points[1] {
		t.Errorf("round trip %+v, want %+v", back, s[0])
	}
	if b, err := json.Marshal(SelectorJSON(r.Target)); err != nil || string(b) != `{"metric":"mean","operation":"total"}` {
		t.Errorf("target selector JSON %s %v", b, err)
	}
}

func TestUnitNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 1041.46: "1,041.5", 999.94: "999.9", 1234567.8: "1,234,567.8"} {
		if got := UnitMiBps.Number(v); got != want {
			t.Errorf("UnitMiBps.Number(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestMarks(t *testing.T) {
	for _, c := range []struct {
		s    Step
		want string
	}{
		{Step{}, ""},
		{Step{Saturated: true, ClosedLoop: true, NotSteady: true, Stall: 3 * time.Second}, "saturated,closed-loop,not steady,stall 3s"},
		{Step{Knee: true, Interrupted: true, Errors: []string{"x"}}, "knee,interrupted,failed"},
		{Step{Overflow: 1200}, "1,200 I/Os ≥ 17 s"},
		{Step{ClientCVPercent: analysis.UnevenClientsPercent + 0.4}, ""}, // status rounds it to 10
		{Step{ClientCVPercent: 23.4}, "uneven clients (CV 23 %)"},
		{Step{Verify: &ReadBack{Verified: 4000}}, "4,000 blocks read back intact"},
		{Step{Verify: &ReadBack{Verified: 4000, Bad: 5}}, "5 of 4,000 blocks NOT AS WRITTEN"},
		{Step{Verify: &ReadBack{Verified: 10, Unread: 3990}}, "10 blocks read back intact, 3,990 not read"},
	} {
		if got := strings.Join(c.s.Marks(), ","); got != c.want {
			t.Errorf("Marks() = %q, want %q", got, c.want)
		}
	}
}

func TestStepOfJudgesTheTimeline(t *testing.T) {
	tl := results.Timeline{WindowSeconds: 1, Idle: []results.Span{{StartMs: 2000, EndMs: 4000}}}
	for k, n := range []uint64{100, 100, 0, 0, 100, 200, 200, 200, 200, 200} {
		w := results.Window{StartMs: uint64(k) * 1000, IOs: n, IOPS: float64(n)}
		if n > 0 {
			w.Hist = fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(100), Count: n}}}
		}
		tl.Windows = append(tl.Windows, w)
	}
	st := StepOf(plan.Step{}, time.Time{}, results.StepAggregate{Timeline: tl}, analysis.StepAnalysis{})
	if !st.NotSteady || st.Stall != 2*time.Second {
		t.Fatalf("StepOf: not steady %v, stall %s; want true, 2s", st.NotSteady, st.Stall)
	}
}

func TestIntegrityLine(t *testing.T) {
	for _, c := range []struct {
		r    Run
		want string
	}{
		{Run{Integrity: "Verified: every block written read back as written", IntegrityTrue: true},
			"data read back as written: Verified: every block written read back as written"},
		{Run{Integrity: "DataCorrupted: step 2: 5 of 3,000 blocks read back wrong"},
			"DATA NOT AS WRITTEN: DataCorrupted: step 2: 5 of 3,000 blocks read back wrong"},
		{Run{Integrity: "Verifying: the run is writing and reading back"}, "data integrity: Verifying: the run is writing and reading back"},
		{Run{Integrity: "NotVerified: 4 of 10 blocks were not read back"}, "data integrity: NotVerified: 4 of 10 blocks were not read back"},
	} {
		if got := c.r.SummaryLines(); !slices.Contains(got, c.want) {
			t.Errorf("SummaryLines() = %q, want a line %q", got, c.want)
		}
	}
	if got := strings.Join((&Run{}).SummaryLines(), "\n"); strings.Contains(got, "WRITTEN") || strings.Contains(got, "written") {
		t.Errorf("a run that does not verify says %q", got)
	}
}
