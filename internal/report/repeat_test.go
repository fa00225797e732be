package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/workload"
)

// repeatedRun is a finished run of 2 rate levels × 3 runs whose second
// level varied above a 5 % limit in p99.
func repeatedRun() *Run {
	stable, unstable := true, false
	r := &Run{Name: "rep", Phase: "Completed", Unit: UnitIOPS, Repeat: 3, StepsPlanned: 6,
		Target: analysis.LatencySelector{Metric: analysis.MetricMean, Operation: analysis.OperationRead},
		Repeatability: []Repeatability{
			{Level: 0, OfferedIOPS: 1000, Runs: 3, IOPS: Spread{Mean: 1000, CVPercent: 1, CI95Low: 990, CI95High: 1010},
				P99: &LatencySpread{Mean: time.Millisecond, CVPercent: 2, CI95Low: 950 * time.Microsecond, CI95High: 1050 * time.Microsecond}, Stable: &stable},
			{Level: 1, OfferedIOPS: 2000, Runs: 3, IOPS: Spread{Mean: 2000, CVPercent: 5, CI95Low: 1752, CI95High: 2248},
				P99: &LatencySpread{Mean: 1100 * time.Microsecond, CVPercent: 9, CI95Low: 851586 * time.Nanosecond, CI95High: 1348414 * time.Nanosecond}, Stable: &unstable},
		},
		Unstable: "VariationAboveLimit: runs vary more than the 5 % limit",
	}
	for k := range 6 {
		r.Steps = append(r.Steps, Step{Index: k, Repetition: k%3 + 1, OfferedIOPS: int64(1000 * (k/3 + 1)), AchievedIOPS: 1000,
			Read: &OperationFigures{IOPS: 1000, Latency: Latency{Mean: time.Millisecond, P99: 2 * time.Millisecond}}})
	}
	return r
}

func TestStepTableRunColumn(t *testing.T) {
	r := repeatedRun()
	tb := r.StepTable()
	if tb.Header[1] != "run" || !tb.Numeric[1] || len(tb.Numeric) != len(tb.Header) {
		t.Fatalf("header %q numeric %v, want a run column second", tb.Header, tb.Numeric)
	}
	var runs []string
	for _, row := range tb.Rows {
		runs = append(runs, row[1])
		if len(row) != len(tb.Header) {
			t.Errorf("row %q has %d cells for %d columns", row, len(row), len(tb.Header))
		}
	}
	if want := []string{"1/3", "2/3", "3/3", "1/3", "2/3", "3/3"}; !slices.Equal(runs, want) {
		t.Errorf("runs %q, want %q", runs, want)
	}
	// Without repetition the table is as it always was.
	r.Repeat = 0
	for i := range r.Steps {
		r.Steps[i].Repetition = 0
	}
	if tb := r.StepTable(); slices.Contains(tb.Header, "run") || len(tb.Rows[0]) != 11 {
		t.Errorf("a load that does not repeat has a run column: %q", tb.Header)
	}
}

func TestRepeatabilityTable(t *testing.T) {
	tb := repeatedRun().RepeatabilityTable()
	want := [][]string{
		{"1", "1,000 IOPS", "3", "1,000", "1 %", "990 – 1,010", "1 ms", "2 %", "950 µs – 1.05 ms", ""},
		{"2", "2,000 IOPS", "3", "2,000", "5 %", "1,752 – 2,248", "1.1 ms", "9 %", "852 µs – 1.35 ms", "unstable"},
	}
	if len(tb.Rows) != len(want) {
		t.Fatalf("rows %q", tb.Rows)
	}
	for i := range want {
		if !slices.Equal(tb.Rows[i], want[i]) {
			t.Errorf("row %d\n got %q\nwant %q", i, tb.Rows[i], want[i])
		}
	}
	noP99 := repeatedRun()
	noP99.Repeatability[0].P99 = nil
	if row := noP99.RepeatabilityTable().Rows[0]; row[6] != "-" || row[8] != "-" {
		t.Errorf("a level without p99: %q", row)
	}
	if rows := (&Run{}).RepeatabilityTable().Rows; len(rows) != 0 {
		t.Errorf("rows without repeated levels: %q", rows)
	}
}

func TestRepeatabilityInSummaryAndStatus(t *testing.T) {
	r := repeatedRun()
	lines := strings.Join(r.SummaryLines(), "\n")
	for _, want := range []string{
		"repeatability: 2 levels of 3 runs; largest coefficient of variation: IOPS 5 % (level 2), p99 read latency 9 % (level 2)",
		"UNSTABLE VariationAboveLimit: runs vary more than the 5 % limit",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("summary\n%s\nlacks %q", lines, want)
		}
	}
	var out bytes.Buffer
	if err := r.WriteStatus(&out, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"repeatability of each level's runs (p99: the p99 read latency; CI: 95 % confidence interval", "IOPS 95 % CI", "852 µs – 1.35 ms", "unstable"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status\n%s\nlacks %q", out.String(), want)
		}
	}
	plain := &Run{Name: "once", Phase: "Completed"}
	if l := plain.RepeatabilityLine(); l != "" {
		t.Errorf("a run without repetition: %q", l)
	}
	out.Reset()
	if err := plain.WriteStatus(&out, time.Now()); err != nil || strings.Contains(out.String(), "repeatab") {
		t.Errorf("status without repetition mentions it: %s (%v)", out.String(), err)
	}
}

// TestStepTableSyncColumns: a workload's sync calls get their rate and
// p99/p99.9 columns before the marks; a step without them shows "-".
func TestStepTableSyncColumns(t *testing.T) {
	r := &Run{Name: "log", Phase: "Completed", Unit: UnitIOPS, StepsPlanned: 2}
	for k := range 2 {
		s := Step{Index: k, OfferedIOPS: int64(100 * (k + 1)), AchievedIOPS: float64(100 * (k + 1)),
			Write: &OperationFigures{IOPS: float64(100 * (k + 1)), Latency: Latency{Mean: time.Millisecond, P99: 2 * time.Millisecond}}}
		if k == 0 {
			s.Sync = &OperationFigures{IOPS: 100, Latency: Latency{P99: 7 * time.Millisecond, P999: 12 * time.Millisecond}}
		}
		r.Steps = append(r.Steps, s)
	}
	tb := r.StepTable()
	at := slices.Index(tb.Header, "syncs/s")
	if at < 0 || tb.Header[at+1] != "sync p99" || tb.Header[at+2] != "sync p99.9" || at+3 != len(tb.Header)-1 {
		t.Fatalf("header %q, want the sync columns before the marks", tb.Header)
	}
	if got := tb.Rows[0][at : at+3]; !slices.Equal(got, []string{"100", "7 ms", "12 ms"}) {
		t.Errorf("step 1's sync cells %q", got)
	}
	if got := tb.Rows[1][at : at+3]; !slices.Equal(got, []string{"-", "-", "-"}) {
		t.Errorf("step 2's sync cells %q, want none", got)
	}
}

// TestWorkloadLineSaysHowWritesAreMadeDurable: a log's report says its
// fdatasync after each write, a deduped workload its repeated buffers.
func TestWorkloadLineSaysHowWritesAreMadeDurable(t *testing.T) {
	p, _ := workload.Lookup("db-log")
	w := p.Spec
	r := &Run{Profile: "db-log", Workload: &w}
	if got, want := r.WorkloadLine(), "db-log: 8 KiB, 0 % reads, sequential, iodepth 1, sync, 1 GiB per client, fdatasync after each write; 1 clients × 1 jobs"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	w.Sync, w.SyncEvery, w.DedupePercent = workload.Fsync, 32, 25
	if got := r.WorkloadLine(); !strings.HasSuffix(got, "25 % repeated buffers, fsync after every 32 writes; 1 clients × 1 jobs") {
		t.Errorf("got %q", got)
	}
	w.Sync, w.SyncEvery, w.DedupePercent = workload.DSync, 0, 0
	if got := r.WorkloadLine(); !strings.HasSuffix(got, "per client, O_DSYNC writes; 1 clients × 1 jobs") {
		t.Errorf("got %q", got)
	}
}
