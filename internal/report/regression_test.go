package report

import (
	"encoding/json"
	"reflect"
	"strconv"
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

// stepsAt are a run's steps at the given IOPS and p99 (ns) per planned
// step: step i offered 1000·(i+1) IOPS, for 30 seconds spread by 1 % in a
// fixed pattern.
func stepsAt(iops, p99 []float64) []analysis.StepSamples {
	var out []analysis.StepSamples
	for i := range iops {
		offered := 1000 * float64(i+1)
		out = append(out, analysis.StepSamples{Planned: i, Index: i, Label: strconv.Itoa(int(offered)) + " IOPS offered", Offered: offered,
			IOPS: seconds(30, iops[i], iops[i]/100), P99Ns: seconds(30, p99[i], p99[i]/100)})
	}
	return out
}

func TestRegressionComparison(t *testing.T) {
	// Three baseline runs whose figures move by a few percent from run to
	// run, as unchanged storage does.
	bases := [][]analysis.StepSamples{
		stepsAt([]float64{1000, 2000}, []float64{400_000, 800_000}),
		stepsAt([]float64{1020, 1960}, []float64{420_000, 780_000}),
		stepsAt([]float64{990, 2030}, []float64{390_000, 830_000}),
	}
	slow := []analysis.StepSamples{
		bases[0][0],
		// Step 2 ran twice: its second run (index 2) is compared with the
		// baselines' planned step 1, and dropped 30 % with p99 doubled.
		{Planned: 1, Index: 2, Label: "2000 IOPS offered", Offered: 2000, IOPS: seconds(30, 1400, 20), P99Ns: seconds(30, 1_600_000, 40_000)},
		{Planned: 2, Index: 3, Label: "3000 IOPS offered", Offered: 3000, IOPS: seconds(3, 3000, 0), P99Ns: seconds(3, 1_000_000, 0)},
	}
	opts := analysis.RegressionOptions{}.WithDefaults()
	c := RegressionComparison{Baseline: "StorageBenchmark/oltp-1, StorageBenchmark/oltp-2, StorageBenchmark/oltp-3", Runs: []string{"oltp-1", "oltp-2", "oltp-3"},
		Current: "oltp-tuesday", Options: opts, Result: analysis.CompareWithRuns(bases, slow, opts)}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"step  load               metric  baseline runs  baseline median  current median   change  adjusted p  verdict\n",
		// The baseline figure is the geometric mean of the runs' medians.
		"   1  1000 IOPS offered  IOPS                3            1,003           1,000   -0.3 %        0.87  NotRegressed\n",
		"   1  1000 IOPS offered  p99                 3           403 µs          400 µs   -0.8 %        0.87  NotRegressed\n",
		"   3  2000 IOPS offered  IOPS                3            1,996           1,400  -29.9 %      0.0065  Regressed\n",
		// p99 doubled: within what three runs allow tail latency.
		"   3  2000 IOPS offered  p99                 3           803 µs          1.6 ms  +99.2 %        0.37  NotRegressed\n",
		"   4  3000 IOPS offered  IOPS                                             3,000                       NotJudged: no baseline step (none of 3 baseline runs has it)\n",
		"   4  3000 IOPS offered  p99                                               1 ms                       NotJudged: no baseline step (none of 3 baseline runs has it)\n",
		"\nRegressed: step 3 (2000 IOPS offered): IOPS 1,996 → 1,400 (-29.9 %), p = 0.0065; 1 of 4 tests regressed against 3 baseline runs of StorageBenchmark/oltp-1, StorageBenchmark/oltp-2, StorageBenchmark/oltp-3 (significance 0.01, at least 10 % fewer IOPS or 25 % higher p99)\n",
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
	c.Options, c.Result = lenient, analysis.CompareWithRuns(bases, slow, lenient)
	if got, want := c.Verdict(), "Not regressed: none of 4 tests on 2 steps regressed against 3 baseline runs of StorageBenchmark/oltp-1, StorageBenchmark/oltp-2, StorageBenchmark/oltp-3 (significance 0.01, at least 40 % fewer IOPS or 150 % higher p99)"; got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}

	// One baseline run: IOPS is judged on the per-second samples, and a
	// note under the table says so, once; p99 is not judged, and the row
	// says why.
	one := RegressionComparison{Baseline: "StorageBenchmark/oltp-1", Current: "oltp-tuesday", Options: opts, Result: analysis.CompareWithRuns(bases[:1], slow, opts)}
	tbl := one.Table()
	if got := tbl.Rows[2][8]; got != "Regressed" {
		t.Errorf("step 3's IOPS with one baseline run: verdict cell %q, want Regressed", got)
	}
	if got, want := one.Notes(), []string{"Note (IOPS of steps 1, 3): judged on the per-second samples of 1 baseline run: a run-level test needs at least 3 baseline runs"}; !reflect.DeepEqual(got, want) {
		t.Errorf("notes\n got %q\nwant %q", got, want)
	}
	b.Reset()
	if err := one.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "\n\nNote (IOPS of steps 1, 3): judged on the per-second samples of 1 baseline run: a run-level test needs at least 3 baseline runs\nRegressed: step 3 (2000 IOPS offered): IOPS"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks the note before the verdict %q:\n%s", want, b.String())
	}
	if got, want := tbl.Rows[3][8], "NotJudged: p99 needs at least 3 baseline runs: tail latency varies between runs of unchanged storage more than one run's seconds show (1 given)"; got != want {
		t.Errorf("step 3's p99 with one baseline run: verdict cell %q, want %q", got, want)
	}
	if got := tbl.Rows[2][3]; got != "1" {
		t.Errorf("baseline runs cell %q, want 1", got)
	}
	if got, want := one.Verdict(), "against 1 baseline run of StorageBenchmark/oltp-1 "; !strings.Contains(got, want) {
		t.Errorf("verdict %q lacks %q", got, want)
	}

	// Nothing to judge: too few seconds on every step.
	short := []analysis.StepSamples{{Planned: 0, Index: 0, Offered: 1000, IOPS: seconds(3, 1000, 0), P99Ns: seconds(3, 1, 0)}}
	c = RegressionComparison{Baseline: "ConfigMap/oltp-golden", Current: "oltp-tuesday", Options: opts,
		Result: analysis.CompareWithRuns([][]analysis.StepSamples{short, short, short}, short, opts)}
	if got, want := c.Verdict(), "Not judged: no test against 3 baseline runs of ConfigMap/oltp-golden could be judged (5 per-second samples a side needed): step 1: IOPS not judged: too few samples (no baseline run has 5 at the step; 3 current)"; got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}
	tbl = c.Table()
	if got := tbl.Rows[0][8]; got != "NotJudged: too few samples (no baseline run has 5 at the step; 3 current)" {
		t.Errorf("verdict cell %q", got)
	}

	// JSON: the names, the runs, the options and the result, which reads
	// back.
	c = RegressionComparison{Baseline: "ConfigMap/oltp-golden", Runs: []string{"live/oltp-1", "live/oltp-2", "live/oltp-3"}, Current: "oltp-tuesday", Options: opts,
		Result: analysis.CompareWithRuns(bases, slow, opts)}
	b.Reset()
	if err := c.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back RegressionComparison
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Baseline != "ConfigMap/oltp-golden" || back.Current != "oltp-tuesday" || back.Options != opts || !back.Result.Regressed || len(back.Result.Tests) != 6 ||
		back.Result.BaselineRuns != 3 || !reflect.DeepEqual(back.Runs, c.Runs) {
		t.Errorf("JSON read back as %+v", back)
	}
	if !strings.Contains(b.String(), `"baseline": "ConfigMap/oltp-golden"`) || !strings.Contains(b.String(), `"baselineRuns": 3`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("JSON:\n%s", b.String())
	}
}

func TestStepRanges(t *testing.T) {
	for _, c := range []struct {
		steps []int
		want  string
	}{
		{[]int{3}, "3"},
		{[]int{1, 2}, "1, 2"},
		{[]int{1, 2, 3, 5, 7, 8, 9, 10}, "1–3, 5, 7–10"},
	} {
		if got := stepRanges(c.steps); got != c.want {
			t.Errorf("%v: %q, want %q", c.steps, got, c.want)
		}
	}
}
