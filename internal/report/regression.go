package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
)

// RegressionComparison is a run compared with a baseline, as `kubectl
// storagebench compare NAME --baseline BASE` prints it: the operator's
// statistical verdict (analysis.CompareRuns), step by step. It is also the
// command's JSON document.
type RegressionComparison struct {
	// Baseline names what the run was compared with: a benchmark's name,
	// or ConfigMap/<name> for a pinned baseline.
	Baseline string `json:"baseline"`
	// Current is the compared run's name.
	Current string `json:"current"`
	// Options are the options the verdict was made with, defaults
	// applied.
	Options analysis.RegressionOptions `json:"options"`
	Result  analysis.RegressionResult  `json:"result"`
}

// Table has a row per test, in the run's step order, IOPS before p99:
// the step (from 1) and its load, the metric, the medians of the
// per-second samples, their change, the Holm-adjusted p-value and the
// verdict, with the reason for a test that was not judged.
func (c *RegressionComparison) Table() Table {
	t := Table{
		Header:  []string{"step", "load", "metric", "baseline median", "current median", "change", "adjusted p", "verdict"},
		Numeric: []bool{true, false, false, true, true, true, true, false},
	}
	for _, x := range c.Result.Tests {
		base, cur := medians(x)
		change, p := "", ""
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
		t.Rows = append(t.Rows, []string{strconv.Itoa(x.Index + 1), x.Label, metricTitle(x.Metric), base, cur, change, p, verdict})
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
// regressed …", "Not regressed: none of n tests on m steps regressed …",
// or "Not judged: …" when no test could be made.
func (c *RegressionComparison) Verdict() string {
	outcome, msg := c.Result.Verdict(c.Baseline, c.Options)
	return map[analysis.RegressionOutcome]string{analysis.OutcomeRegressed: "Regressed: ",
		analysis.OutcomeNotRegressed: "Not regressed: ", analysis.OutcomeNotJudged: "Not judged: "}[outcome] + msg
}

// WriteText writes the table, then the verdict as the last line.
func (c *RegressionComparison) WriteText(w io.Writer) error {
	t := c.Table()
	if err := t.Text(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", c.Verdict())
	return err
}

// WriteJSON writes the comparison as JSON, indented, with a final
// newline. The options and the result are analysis' types as they marshal
// ("tests", "pAdjusted" …): the same as the operator records in its
// storagebench.io/regression annotation.
func (c *RegressionComparison) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
