package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
)

// RegressionComparison is a run compared with its baseline runs, as
// `kubectl storagebench compare NAME --baseline BASE[,BASE…]` prints it:
// the operator's statistical verdict (analysis.CompareWithRuns), step by
// step. It is also the command's JSON document.
type RegressionComparison struct {
	// Baseline names what the run was compared with, as the operator's
	// verdict names it: StorageBenchmark/<name> for each baseline
	// benchmark (the first three, then how many more), or
	// ConfigMap/<name> for a pinned baseline.
	Baseline string `json:"baseline"`
	// Runs name the baseline runs in the order the tests' reasons number
	// them ("baseline run 2 of 5"): the benchmarks' names, or the sources
	// a pinned baseline records for its runs.
	Runs []string `json:"runs,omitempty"`
	// Current is the compared run's name.
	Current string `json:"current"`
	// Options are the options the verdict was made with, defaults
	// applied.
	Options analysis.RegressionOptions `json:"options"`
	Result  analysis.RegressionResult  `json:"result"`
}

// Table has a row per test, in the run's step order, IOPS before p99:
// the step (from 1) and its load, the metric, how many baseline runs the
// test rests on, the baseline's figure (with three runs or more the
// geometric mean of the runs' medians, else the median of their pooled
// per-second samples) and the current median, their change, the
// Holm-adjusted p-value and the verdict, with the reason for a test that
// was not judged. The notes on judged tests are Notes'.
func (c *RegressionComparison) Table() Table {
	t := Table{
		Header:  []string{"step", "load", "metric", "baseline runs", "baseline median", "current median", "change", "adjusted p", "verdict"},
		Numeric: []bool{true, false, false, true, true, true, true, true, false},
	}
	for _, x := range c.Result.Tests {
		base, cur := medians(x)
		runs, change, p := "", "", ""
		if x.BaselineRuns > 0 {
			runs = strconv.Itoa(x.BaselineRuns)
		}
		if x.BaselineN > 0 && x.CurrentN > 0 && x.BaselineMedian > 0 {
			change = numfmt.SignedPercent(100*x.Change, 1)
		}
		verdict := "NotJudged: " + x.Reason
		if x.Judged {
			p = strconv.FormatFloat(x.PAdjusted, 'g', 2, 64)
			verdict = "NotRegressed"
			if x.Regressed {
				verdict = "Regressed"
			}
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(x.Index + 1), x.Label, metricTitle(x.Metric), runs, base, cur, change, p, verdict})
	}
	return t
}

// medians renders a test's medians, IOPS as counts and p99 as latencies,
// each blank for a side without samples.
func medians(x analysis.RegressionTest) (base, cur string) {
	if x.Metric == analysis.MetricIOPS {
		cur, base = numfmt.Pair(x.CurrentMedian, x.BaselineMedian, 0)
	} else {
		cur, base = numfmt.LatencyPair(wholeNanos(x.CurrentMedian), wholeNanos(x.BaselineMedian))
	}
	if x.BaselineN == 0 {
		base = ""
	}
	if x.CurrentN == 0 {
		cur = ""
	}
	return base, cur
}

// metricTitle is the metric as RegressionTest.String names it.
func metricTitle(m analysis.RegressionMetric) string {
	if m == analysis.MetricIOPS {
		return "IOPS"
	}
	return string(m)
}

// wholeNanos rounds a latency median, in ns, to whole nanoseconds.
func wholeNanos(v float64) uint64 { return uint64(math.Round(max(v, 0))) }

// Verdict is the comparison in one line, in the words of the operator's
// Regressed condition: "Regressed: <the worst test>; k of n tests
// regressed against 5 baseline runs of …", "Not regressed: none of n
// tests on m steps regressed …", or "Not judged: …" when no test could be
// made.
func (c *RegressionComparison) Verdict() string {
	outcome, msg := c.Result.Verdict(c.Baseline, c.Options)
	return map[analysis.RegressionOutcome]string{analysis.OutcomeRegressed: "Regressed: ",
		analysis.OutcomeNotRegressed: "Not regressed: ", analysis.OutcomeNotJudged: "Not judged: "}[outcome] + msg
}

// Notes are the notes on judged tests, one line for each distinct note
// with the tests it is on: that a test fell back to the per-second samples
// (fewer than three baseline runs), or which baseline runs it left out, as
// "Note (IOPS of steps 1–8): judged on the per-second samples of 1
// baseline run: …". A not judged test's reason is in its row instead.
func (c *RegressionComparison) Notes() []string {
	type group struct {
		note  string
		steps map[analysis.RegressionMetric][]int
	}
	var groups []*group
	byNote := map[string]*group{}
	for _, x := range c.Result.Tests {
		if !x.Judged || x.Reason == "" {
			continue
		}
		g := byNote[x.Reason]
		if g == nil {
			g = &group{note: x.Reason, steps: map[analysis.RegressionMetric][]int{}}
			byNote[x.Reason] = g
			groups = append(groups, g)
		}
		g.steps[x.Metric] = append(g.steps[x.Metric], x.Index+1)
	}
	var out []string
	for _, g := range groups {
		var on []string
		for _, m := range []analysis.RegressionMetric{analysis.MetricIOPS, analysis.MetricP99} {
			if steps := g.steps[m]; len(steps) > 0 {
				word := "steps"
				if len(steps) == 1 {
					word = "step"
				}
				on = append(on, fmt.Sprintf("%s of %s %s", metricTitle(m), word, stepRanges(steps)))
			}
		}
		out = append(out, fmt.Sprintf("Note (%s): %s", strings.Join(on, "; "), g.note))
	}
	return out
}

// stepRanges writes ascending step numbers with runs of consecutive ones
// as ranges: "1–3, 5, 7–8".
func stepRanges(steps []int) string {
	var parts []string
	for i := 0; i < len(steps); {
		j := i
		for j+1 < len(steps) && steps[j+1] == steps[j]+1 {
			j++
		}
		switch j {
		case i:
			parts = append(parts, strconv.Itoa(steps[i]))
		case i + 1:
			parts = append(parts, strconv.Itoa(steps[i]), strconv.Itoa(steps[j]))
		default:
			parts = append(parts, strconv.Itoa(steps[i])+"–"+strconv.Itoa(steps[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the table, the notes on judged tests, then the verdict
// as the last line.
func (c *RegressionComparison) WriteText(w io.Writer) error {
	t := c.Table()
	if err := t.Text(w); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, n := range c.Notes() {
		b.WriteString(SafeLine(n) + "\n")
	}
	b.WriteString(SafeLine(c.Verdict()) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the comparison as JSON, indented, with a final
// newline. The options and the result are analysis' types as they marshal
// ("tests", "pAdjusted" …): the same as the operator records as the
// Regressed verdict's detail (the plan ConfigMap's storagebench.io/verdicts).
func (c *RegressionComparison) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
