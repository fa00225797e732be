package controllers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/run"
)

// setClientBound projects a curve's client-bound check into the
// ClientBound condition (absent until the check ran). Informational, like
// SteadyState: it never ends the run. Stamped with the end of the latest
// step it compares, so a rebuilt status carries the same time.
func setClientBound(b *v1alpha1.StorageBenchmark, cb *analysis.ClientBound, steps []run.Step, throughput string) {
	if cb == nil {
		// No verdict (yet, or no longer: its steps were superseded).
		meta.RemoveStatusCondition(&b.Status.Conditions, v1alpha1.ConditionClientBound)
		return
	}
	var at time.Time
	for _, k := range append(cb.MaximumSteps, cb.CheckSteps...) {
		if e := endOf(steps, k); e.After(at) {
			at = e
		}
	}
	rate := func(v float64) string { return numfmt.Count(v) + " IOPS" }
	if throughput == analysis.ThroughputBytes {
		rate = func(v float64) string { return numfmt.MiBps(v) + " MiB/s" }
	}
	compared := fmt.Sprintf("the unthrottled step at twice the outstanding I/O (%s) achieved %s against the maximum's %s (%s)",
		stepList(cb.CheckSteps), rate(cb.Check), rate(cb.Maximum), stepList(cb.MaximumSteps))
	gain := numfmt.SignedPercent(cb.GainPercent, 1)
	if cb.Bound {
		setCondition(b, v1alpha1.ConditionClientBound, true, ReasonClientBound, at,
			fmt.Sprintf("%s, %s: the maximum is the clients', not the storage's; raise workload.ioDepth, clients.jobsPerClient or clients.count",
				compared, gain))
		return
	}
	setCondition(b, v1alpha1.ConditionClientBound, false, ReasonStorageBound, at,
		fmt.Sprintf("%s, %s (at most %d %%): more I/O in flight did not raise the maximum", compared, gain, analysis.ClientBoundGainPercent))
}

// stepList names steps for messages, numbered from 1: "step 2", "steps 3, 4".
func stepList(steps []int) string {
	names := make([]string, len(steps))
	for i, k := range steps {
		names[i] = fmt.Sprint(k + 1)
	}
	if len(steps) == 1 {
		return "step " + names[0]
	}
	return "steps " + strings.Join(names, ", ")
}
