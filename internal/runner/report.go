package runner

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
)

// Analyze runs the curve analysis over a conducted run.
func Analyze(out *Outcome, opts analysis.Options, slos []analysis.Objective) (analysis.Result, error) {
	in := make([]analysis.StepInput, len(out.Steps))
	for i, s := range out.Steps {
		in[i] = analysis.StepInput{Aggregate: s.Aggregate, OfferedIOPS: s.Step.OfferedIOPS, OfferedBytesPerSec: s.Step.OfferedBytesPerSec}
	}
	return analysis.Analyze(in, opts, slos)
}

// WriteReport prints the per-step table, as the published reports lay it
// out, and the run's summary.
func WriteReport(w io.Writer, out *Outcome, res analysis.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\toffered\tread IOPS\twrite IOPS\tMiB/s\tread mean\tread p99\twrite mean\twrite p99\tskew\t\t")
	for i, s := range out.Steps {
		a := s.Aggregate
		var flags []string
		if i < len(res.Steps) {
			if res.Steps[i].Saturated {
				flags = append(flags, "saturated")
			}
			if res.Steps[i].Knee {
				flags = append(flags, "knee")
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", i+1, offered(s.Step),
			analysis.FormatCount(a.Read.IOPS), analysis.FormatCount(a.Write.IOPS), a.Total.BytesPerSec/(1<<20),
			lat(a.Read.Latency, "mean"), lat(a.Read.Latency, "p99"),
			lat(a.Write.Latency, "mean"), lat(a.Write.Latency, "p99"),
			a.StartSkew.Round(100_000), strings.Join(flags, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sum := res.Summary
	fmt.Fprintf(w, "\npeak: %s IOPS (step %d), %.1f MiB/s (step %d), latency at peak %s\n",
		analysis.FormatCount(sum.PeakIOPS), sum.PeakIOPSStep+1, sum.PeakBytesPerSec/(1<<20), sum.PeakBytesStep+1, analysis.FormatLatency(sum.LatencyAtPeakNs))
	if sum.AtTarget != nil {
		fmt.Fprintf(w, "performance at the latency target: %s IOPS at %s (step %d)\n",
			analysis.FormatCount(sum.AtTarget.IOPS), analysis.FormatLatency(sum.AtTarget.LatencyNs), sum.AtTarget.Step+1)
	} else {
		fmt.Fprintln(w, "performance at the latency target: no step was at or below the target")
	}
	if sum.KneeStep >= 0 {
		fmt.Fprintf(w, "knee: step %d\n", sum.KneeStep+1)
	}
	for _, s := range res.SLOs {
		fmt.Fprintf(w, "SLO %s: %s — %s\n", s.Name, s.Verdict, s.Reason)
	}
	if out.Stop != nil {
		fmt.Fprintf(w, "ended: %s\n", out.Stop.Message)
	}
	if out.Failure != "" {
		fmt.Fprintf(w, "FAILED: %s\n", out.Failure)
	}
	return nil
}

func offered(s plan.Step) string {
	switch {
	case s.OfferedIOPS > 0:
		return analysis.FormatCount(float64(s.OfferedIOPS)) + " IOPS"
	case s.OfferedBytesPerSec > 0:
		return fmt.Sprintf("%.0f MiB/s", float64(s.OfferedBytesPerSec)/(1<<20))
	case s.QueueDepthPerClient > 0:
		return fmt.Sprintf("QD %d", s.QueueDepthPerClient)
	default:
		return "max"
	}
}

func lat(s results.LatencySummary, metric string) string {
	ns, ok := s.Metric(metric)
	if !ok {
		return "-"
	}
	return analysis.FormatLatency(ns)
}
