package figure

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/report"
)

// The md and html reports of a repeated load carry the repeatability table;
// those of a load that does not repeat do not.
func TestReportsShowRepeatability(t *testing.T) {
	run := func(repeated bool) *report.Run {
		r := &report.Run{Name: "rep", Phase: "Completed", Unit: report.UnitIOPS, StepsPlanned: 2,
			Target: analysis.LatencySelector{Metric: analysis.MetricMean, Operation: analysis.OperationRead}}
		for k := range 2 {
			r.Steps = append(r.Steps, report.Step{Index: k, OfferedIOPS: 1000, AchievedIOPS: 1000,
				Read: &report.OperationFigures{IOPS: 1000, Latency: report.Latency{Mean: time.Millisecond, P99: 2 * time.Millisecond}}})
		}
		if repeated {
			r.Repeat = 2
			r.Steps[0].Repetition, r.Steps[1].Repetition = 1, 2
			r.Repeatability = []report.Repeatability{{Level: 0, OfferedIOPS: 1000, Runs: 2,
				IOPS: report.Spread{Mean: 1000, CVPercent: 3, CI95Low: 731, CI95High: 1269},
				P99:  &report.LatencySpread{Mean: 2 * time.Millisecond, CVPercent: 7, CI95Low: time.Millisecond, CI95High: 3 * time.Millisecond}}}
		}
		return r
	}
	for _, f := range []report.Format{report.FormatMarkdown, report.FormatHTML} {
		for _, repeated := range []bool{false, true} {
			var b bytes.Buffer
			if err := Render(&b, run(repeated), f, report.Options{ImageRef: "x.png"}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if got := strings.Contains(out, "Repeatability (p99: the "); got != repeated {
				t.Errorf("%s, repeated %v: repeatability heading present %v", f, repeated, got)
			}
			if repeated && !strings.Contains(out, "731 – 1,269") {
				t.Errorf("%s: the IOPS confidence interval is missing:\n%s", f, out)
			}
		}
	}
}
