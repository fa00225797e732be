package report

import (
	"strings"
	"testing"
	"time"
)

// opsRun is a serial driver's run, 1 s per operation: provision at 1 and
// 2 at once with a knee at 2, snapshot at 1 and 2 with a failure at 2.
func opsRun() *OperationsRun {
	at := time.Date(2025, 6, 12, 14, 0, 0, 0, time.UTC)
	lat := func(p50, maxd time.Duration) *OperationLatency {
		return &OperationLatency{Min: p50, Mean: (p50 + maxd) / 2, P50: p50, P90: maxd, P99: maxd, Max: maxd}
	}
	return &OperationsRun{
		Name: "serial", Namespace: "ops", Created: at.Add(-time.Minute), Class: "fast", SnapshotClass: "snaps", Provisioner: "csi.example.com",
		Size: "1Gi", VolumeMode: "Filesystem", AccessMode: "ReadWriteOnce",
		Phase: "Complete", State: StateComplete, Message: "4 operation steps timed",
		Operations: []string{"provision", "snapshot"}, Concurrency: []int{1, 2},
		Started: at, Ended: at.Add(90 * time.Second),
		Curves: []OperationCurve{
			{Operation: "provision", Knee: 2, PerOperation: &FittedDuration{Value: 1010 * time.Millisecond, Low: 1010 * time.Millisecond, High: 1010 * time.Millisecond, Steps: 2},
				Steps: []OperationStep{
					{Concurrency: 1, Succeeded: 1, Latency: lat(1070*time.Millisecond, 1070*time.Millisecond), Span: 1070 * time.Millisecond, PerMinute: "56.07"},
					{Concurrency: 2, Succeeded: 2, Latency: lat(1080*time.Millisecond, 2080*time.Millisecond), Span: 2080 * time.Millisecond, PerMinute: "1234.5"},
				}},
			{Operation: "snapshot",
				Steps: []OperationStep{
					{Concurrency: 1, Succeeded: 1, Latency: lat(1800*time.Millisecond, 1800*time.Millisecond), Span: 1800 * time.Millisecond, PerMinute: "33.33"},
					{Concurrency: 2, Failed: 1, TimedOut: 1, Span: time.Minute, Reason: "snapshot \x1b[2Jfailed"},
				}},
		},
	}
}

func TestOperationsStepTable(t *testing.T) {
	r := opsRun()
	for _, c := range []struct {
		curve int
		rows  [][]string
	}{
		{0, [][]string{
			{"1", "1", "0", "0", "1.07 s", "1.07 s", "1.07 s", "1.07 s", "56.07", "", ""},
			{"2", "2", "0", "0", "1.08 s", "2.08 s", "2.08 s", "2.08 s", "1,234.5", "knee", ""},
		}},
		// No latency without a succeeded operation; the first failure's
		// reason, as it is (Table.Text escapes it).
		{1, [][]string{
			{"1", "1", "0", "0", "1.8 s", "1.8 s", "1.8 s", "1.8 s", "33.33", "", ""},
			{"2", "0", "1", "1", "-", "-", "-", "-", "-", "failures", "snapshot \x1b[2Jfailed"},
		}},
	} {
		tb := r.Curves[c.curve].StepTable()
		if len(tb.Header) != 11 || tb.Header[0] != "at once" || tb.Header[10] != "reason" {
			t.Fatalf("header %q", tb.Header)
		}
		if len(tb.Rows) != len(c.rows) {
			t.Fatalf("%s: %d rows, want %d", r.Curves[c.curve].Operation, len(tb.Rows), len(c.rows))
		}
		for i := range c.rows {
			if strings.Join(tb.Rows[i], "|") != strings.Join(c.rows[i], "|") {
				t.Errorf("%s row %d:\n got %q\nwant %q", r.Curves[c.curve].Operation, i, tb.Rows[i], c.rows[i])
			}
		}
	}
}

func TestOperationsSlopeLine(t *testing.T) {
	for _, c := range []struct {
		curve OperationCurve
		line  string
		short string
	}{
		{OperationCurve{Operation: "provision", Knee: 4, PerOperation: &FittedDuration{Value: 1027 * time.Millisecond, Low: 784 * time.Millisecond, High: 1270 * time.Millisecond, Steps: 3}},
			"provision: 1.03 s per operation (95 % CI 784 ms – 1.27 s), fitted over 3 steps; knee at 4 at once",
			"1.03 s/op (95 % CI 784 ms – 1.27 s)"},
		// Two steps: the interval has no width and is not printed.
		{OperationCurve{Operation: "snapshot", PerOperation: &FittedDuration{Value: 1700 * time.Millisecond, Low: 1700 * time.Millisecond, High: 1700 * time.Millisecond, Steps: 2}},
			"snapshot: 1.7 s per operation, fitted over 2 steps; no knee", "1.7 s/op"},
		{OperationCurve{Operation: "delete\nforged"},
			`delete\nforged: no time per operation (fewer than 2 steps without failures); no knee`, ""},
	} {
		if got := c.curve.SlopeLine(); got != c.line {
			t.Errorf("SlopeLine:\n got %q\nwant %q", got, c.line)
		}
		if got := c.curve.PerOperation.ShortSlope(); got != c.short {
			t.Errorf("ShortSlope: got %q, want %q", got, c.short)
		}
	}
}

func TestOperationsListTable(t *testing.T) {
	now := time.Date(2025, 6, 12, 15, 0, 0, 0, time.UTC)
	done := opsRun()
	running := opsRun()
	running.Name, running.Phase, running.State, running.Progress, running.SLOReason = "live", "Running", StateRunning, "step 2 of 2 (2 at once): snapshot", ""
	running.Created = time.Time{}
	done.SLOReason = "AllMet"
	tb := OperationsListTable([]*OperationsRun{done, running}, now, false)
	want := [][]string{
		{"serial", "Complete", "fast", "4/4", "AllMet", "61m"},
		{"live", "Running", "fast", "step 2 of 2 (2 at once): snapshot", "", "<unknown>"},
	}
	if strings.Join(tb.Header, " ") != "NAME STATUS CLASS STEP SLO AGE" {
		t.Errorf("header %q", tb.Header)
	}
	for i := range want {
		if strings.Join(tb.Rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d:\n got %q\nwant %q", i, tb.Rows[i], want[i])
		}
	}
	// Recorded counts the steps status holds, of those the spec plans.
	done.Curves[1].Steps = done.Curves[1].Steps[:1]
	tb = OperationsListTable([]*OperationsRun{done}, now, true)
	if tb.Header[0] != "NAMESPACE" || tb.Rows[0][0] != "ops" || tb.Rows[0][4] != "3/4" {
		t.Errorf("with namespace: %q %q", tb.Header, tb.Rows[0])
	}
}

func TestOperationsWriteStatus(t *testing.T) {
	r := opsRun()
	r.Objectives = []SLO{{Name: "bind-2s", Verdict: "Met", Message: "p99 1.07 s ≤ 2 s"}}
	r.SLOStatus, r.SLOReason = "True", "AllMet"
	r.Notes = []OperationNote{{Reason: "FlexClone", Operations: []string{"cloneFromSnapshot"}, Message: "clones share blocks"}}
	var b strings.Builder
	if err := r.WriteStatus(&b, r.Ended.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"Name:        serial\n",
		"Status:      Complete — 4 operation steps timed\n",
		"Storage:     fast (csi.example.com): snapshot class snaps, 1Gi claims, Filesystem, ReadWriteOnce\n",
		"Operations:  provision, snapshot at 1, 2 at once; 4/4 operation steps recorded\n",
		"Run:         started 2025-06-12T14:00:00Z, ended 2025-06-12T14:01:30Z (90s)\n",
		"\nprovision\nat once  succeeded  failed  timed out     p50     p90     p99     max  per minute        reason\n",
		"      2          2       0          0  1.08 s  2.08 s  2.08 s  2.08 s     1,234.5  knee\n",
		`failures  snapshot \x1b[2Jfailed`,
		"\nprovision: 1.01 s per operation, fitted over 2 steps; knee at 2 at once\n",
		"SLO bind-2s: Met — p99 1.07 s ≤ 2 s\nSLOs: AllMet (SLOMet True)\nnote FlexClone (cloneFromSnapshot): clones share blocks\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("status lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Step:") || strings.Contains(out, "FAILED") || strings.ContainsRune(out, 0x1b) {
		t.Errorf("a complete run's status has a step under way, a failure, or an ESC:\n%s", out)
	}

	// A run under way says which step, in which stage, for how long; a
	// failed one why.
	r = opsRun()
	r.Phase, r.State, r.Message, r.Ended = "Running", StateRunning, "timing the storage's operations", time.Time{}
	r.Progress = "step 2 of 2 (2 at once): snapshot"
	r.Current = &OperationsCurrent{Operation: "snapshot", Concurrency: 2, Stage: "Timing", Since: r.Started.Add(time.Minute), Attempt: 2}
	b.Reset()
	if err := r.WriteStatus(&b, r.Started.Add(time.Minute+12*time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Step:        step 2 of 2 (2 at once): snapshot: Timing for 12s (attempt 2)\n", "Run:         started 2025-06-12T14:00:00Z (72s ago)\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("running status lacks %q:\n%s", w, b.String())
		}
	}
	r.Phase, r.State, r.Message, r.Current = "ClearingTimedOut", StateFailed, "volumes left", nil
	if l := r.SummaryLines(); l[len(l)-1] != "FAILED: ClearingTimedOut: volumes left" {
		t.Errorf("failed run's last summary line %q", l[len(l)-1])
	}
	if l := (&OperationsRun{}).SummaryLines(); len(l) != 1 || l[0] != "no operation step recorded yet" {
		t.Errorf("empty run's summary %q", l)
	}
}
