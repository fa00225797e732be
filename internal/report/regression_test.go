package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/analysis"
)

// seconds are n per-second samples around v, spread by ±spread in a fixed
// pattern, so that two runs' samples differ without being random.
func seconds(n int, v, spread float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v + spread*float64(i%7-3)/3
	}
	return out
}

func TestRegressionComparison(t *testing.T) {
	base := []analysis.StepSamples{
		{Planned: 0, Index: 0, Label: "1000 IOPS offered", IOPS: seconds(30, 1000, 10), P99Ns: seconds(30, 400_000, 20_000)},
		{Planned: 1, Index: 1, Label: "2000 IOPS offered", IOPS: seconds(30, 2000, 20), P99Ns: seconds(30, 800_000, 40_000)},
	}
	slow := []analysis.StepSamples{
		base[0],
		// Step 2 ran twice: its second run (index 2) is compared with the
		// baseline's planned step 1, and dropped 30 % with p99 doubled.
		{Planned: 1, Index: 2, Label: "2000 IOPS offered", IOPS: seconds(30, 1400, 20), P99Ns: seconds(30, 1_600_000, 40_000)},
		{Planned: 2, Index: 3, Label: "3000 IOPS offered", IOPS: seconds(3, 3000, 0), P99Ns: seconds(3, 1_000_000, 0)},
	}
	opts := analysis.RegressionOptions{}.WithDefaults()
	c := RegressionComparison{Baseline: "oltp-monday", Current: "oltp-tuesday", Options: opts, Result: analysis.CompareRuns(base, slow, opts)}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"step  load               metric  baseline median  current median    change  adjusted p  verdict\n",
		"   1  1000 IOPS offered  IOPS              1,000           1,000    +0.0 %           1  NotRegressed\n",
		"   1  1000 IOPS offered  p99              400 µs          400 µs    +0.0 %           1  NotRegressed\n",
		"   3  2000 IOPS offered  IOPS              2,000           1,400   -30.0 %     5.4e-11  Regressed\n",
		"   3  2000 IOPS offered  p99              800 µs          1.6 ms  +100.0 %     5.4e-11  Regressed\n",
		"   4  3000 IOPS offered  IOPS                              3,000                        NotJudged: no baseline step\n",
		"   4  3000 IOPS offered  p99                                1 ms                        NotJudged: no baseline step\n",
		// Of two tests equally significant, the larger change is the worst.
		"\nRegressed: step 3 (2000 IOPS offered): p99 800 µs → 1.6 ms (+100.0 %), p = 5.4e-11; 2 of 4 tests regressed against oltp-monday (significance 0.01, at least 10 % fewer IOPS or 25 % higher p99)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "higher p99)\n") {
		t.Error("the verdict is not the last line")
	}

	// The same runs, judged with larger minimum effects: not regressed.
	lenient := analysis.RegressionOptions{MinIOPSDropPercent: 40, MinP99RisePercent: 150}.WithDefaults()
	c = RegressionComparison{Baseline: "oltp-monday", Current: "oltp-tuesday", Options: lenient, Result: analysis.CompareRuns(base, slow, lenient)}
	if got, want := c.Verdict(), "Not regressed: none of 4 tests on 2 steps regressed against oltp-monday (significance 0.01, at least 40 % fewer IOPS or 150 % higher p99)"; got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}
	// Nothing to judge: too few seconds on every step.
	short := []analysis.StepSamples{{Planned: 0, Index: 0, IOPS: seconds(3, 1000, 0), P99Ns: seconds(3, 1, 0)}}
	c = RegressionComparison{Baseline: "ConfigMap/oltp-golden", Current: "oltp-tuesday", Options: opts, Result: analysis.CompareRuns(short, short, opts)}
	if got, want := c.Verdict(), "Not judged: no test against ConfigMap/oltp-golden could be judged (5 per-second samples a side needed): step 1: IOPS not judged: too few samples (3 baseline, 3 current; want at least 5)"; got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}
	tbl := c.Table()
	if got := tbl.Rows[0][7]; got != "NotJudged: too few samples (3 baseline, 3 current; want at least 5)" {
		t.Errorf("verdict cell %q", got)
	}

	// JSON: the names, the options and the result, which reads back.
	c = RegressionComparison{Baseline: "oltp-monday", Current: "oltp-tuesday", Options: opts, Result: analysis.CompareRuns(base, slow, opts)}
	b.Reset()
	if err := c.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back RegressionComparison
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Baseline != "oltp-monday" || back.Current != "oltp-tuesday" || back.Options != opts || !back.Result.Regressed || len(back.Result.Tests) != 6 {
		t.Errorf("JSON read back as %+v", back)
	}
	if !strings.Contains(b.String(), `"baseline": "oltp-monday"`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("JSON:\n%s", b.String())
	}
}
