package run

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/results"
)

// The verdicts the core judges from a run's steps alone. Each is nil when
// there is nothing to judge yet (or no longer: the steps it rested on were
// superseded), and is stamped with the end of a step it rests on, so a
// status rebuilt from the records carries the same time as one that lived
// through the run. The operator names the condition each one sets.

// Reasons of the verdicts judged here.
const (
	ReasonSteady              = "Steady"
	ReasonNotSteady           = "NotSteady"
	ReasonVariationAboveLimit = "VariationAboveLimit"
	ReasonVariationWithin     = "VariationWithinLimit"
	ReasonClientBound         = "MoreOutstandingIOGained"
	ReasonStorageBound        = "MoreOutstandingIODidNotGain"
	ReasonEvenShare           = "EvenShare"
	ReasonUnevenShare         = "UnevenShare"
	ReasonNotMeasurable       = "NotMeasurable"
	ReasonClientCPUBusy       = "ClientCPUBusy"
	ReasonClientCPUThrottled  = "ClientCPUThrottled"
	ReasonClientCPUHeadroom   = "ClientCPUHeadroom"
)

// SteadyVerdict says whether every judged step that stands held its IOPS
// within the steady-state limits o (each step judged once, when recorded:
// Step.Steady), naming the steps that did not.
func SteadyVerdict(steps []Step, o analysis.SteadyOptions) *Verdict {
	var unsteady []string
	var at time.Time
	judged := false
	for _, rec := range steps {
		st := rec.Steady
		if !st.Judged || rec.Superseded { // a superseded step's rerun stands for it
			continue
		}
		if !judged || (!st.Steady && len(unsteady) == 0) {
			at = rec.Order.End()
		}
		judged = true
		if !st.Steady {
			unsteady = append(unsteady, fmt.Sprintf("step %d (IOPS range %s %%, slope %s %%)", rec.Order.Index+1,
				numfmt.Count(math.Round(st.RangePercent)), numfmt.Count(math.Round(st.SlopePercent))))
		}
	}
	if !judged {
		return nil
	}
	o = o.WithDefaults()
	if len(unsteady) == 0 {
		v := Judged("", true, ReasonSteady, fmt.Sprintf("every judged step held its IOPS within %s %% (range) and %s %% (slope) over %d rounds",
			numfmt.Count(o.RangePercent), numfmt.Count(o.SlopePercent), o.Rounds), at)
		return &v
	}
	v := Judged("", false, ReasonNotSteady, fmt.Sprintf("not in steady state (limits %s %% range, %s %% slope): %s",
		numfmt.Count(o.RangePercent), numfmt.Count(o.SlopePercent), strings.Join(unsteady, "; ")), at)
	return &v
}

// ClientBoundVerdict is a curve's client-bound check (analysis'
// ClientBound) in words: whether more I/O in flight raised the maximum,
// with the figures in the throughput's unit.
func ClientBoundVerdict(cb *analysis.ClientBound, steps []Step, throughput string) *Verdict {
	if cb == nil {
		return nil
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
		StepList(cb.CheckSteps), rate(cb.Check), rate(cb.Maximum), StepList(cb.MaximumSteps))
	gain := numfmt.SignedPercent(cb.GainPercent, 1)
	if cb.Bound {
		v := Judged("", true, ReasonClientBound, fmt.Sprintf("%s, %s: the maximum is the clients', not the storage's; raise workload.ioDepth, clients.jobsPerClient or clients.count",
			compared, gain), at)
		return &v
	}
	v := Judged("", false, ReasonStorageBound, fmt.Sprintf("%s, %s (at most %d %%): more I/O in flight did not raise the maximum",
		compared, gain, analysis.ClientBoundGainPercent), at)
	return &v
}

// Repeatability is how much the runs of each repeated load level varied
// (load.repeat; analysis.Repeatability), and, with a limit
// (analysis.maxVariationPercent), the verdict on it: stamped with the end
// of the run after which it last changed.
func Repeatability(steps []Step, o analysis.Options) ([]analysis.LevelVariation, *Verdict) {
	runs := make([]analysis.LevelRun, 0, len(steps))
	for _, s := range steps {
		if s.Order.Step.Repetition == 0 || s.Superseded { // not repeated; or its rerun stands for it
			continue
		}
		runs = append(runs, analysis.LevelRun{Level: s.Order.Step.Level, Aggregate: s.Aggregate})
	}
	sel := o.VariationSelector()
	levels := analysis.Repeatability(runs, sel)
	if o.MaxVariationPercent <= 0 || len(levels) == 0 {
		return levels, nil
	}
	msgs, unstable := unstableLevels(levels, o.MaxVariationPercent, steps)
	// The verdict changed after the earliest run from which on it has been
	// what it is now.
	var at time.Time
	for k := len(runs); k >= 1; k-- {
		judged := analysis.Repeatability(runs[:k], sel)
		if len(judged) == 0 {
			break
		}
		if _, u := unstableLevels(judged, o.MaxVariationPercent, steps); u != unstable {
			break
		}
		at = endOf(steps, runs[k-1].Aggregate.Step)
	}
	limit := numfmt.Count(o.MaxVariationPercent)
	if unstable {
		v := Judged("", true, ReasonVariationAboveLimit, fmt.Sprintf("runs vary more than the %s %% limit (coefficient of variation): %s",
			limit, strings.Join(msgs, "; ")), at)
		return levels, &v
	}
	v := Judged("", false, ReasonVariationWithin, fmt.Sprintf("the runs of every repeated level (%d) vary within the %s %% limit in IOPS and %s (coefficient of variation)",
		len(levels), limit, sel), at)
	return levels, &v
}

// unstableLevels names the levels whose runs vary more than limit, with
// the figures that do: "level 2 (2000 IOPS offered, 3 runs): IOPS CV
// 12.3 % above the limit".
func unstableLevels(levels []analysis.LevelVariation, limit float64, steps []Step) ([]string, bool) {
	var out []string
	for _, v := range levels {
		over := v.Over(limit)
		if len(over) == 0 {
			continue
		}
		load := ""
		if s := StepAt(steps, v.Steps[0]); s != nil {
			load = s.Order.Step.Load() + ", "
		}
		out = append(out, fmt.Sprintf("level %d (%s%d runs): %s", v.Level+1, load, v.Runs(), strings.Join(over, ", ")))
	}
	return out, len(out) > 0
}

// ClientsEvenVerdict says how evenly the clients shared the storage in
// the steps that stand (analysis.Uneven), naming the steps where they did
// not, with the idlest and busiest client.
func ClientsEvenVerdict(steps []Step, at time.Time) Verdict {
	var uneven []string
	judged := 0
	for _, s := range steps {
		c := s.Aggregate.ClientIOPS
		if s.Superseded || c == (results.ClientSpread{}) {
			continue
		}
		judged++
		if analysis.Uneven(c.CVPercent) {
			uneven = append(uneven, fmt.Sprintf("step %d (CV %.0f %%: %s to %s IOPS)", s.Order.Index+1, math.Round(c.CVPercent),
				numfmt.Count(c.MinIOPS), numfmt.Count(c.MaxIOPS)))
		}
	}
	switch {
	case judged == 0:
		return Verdict{Status: Unknown, Reason: ReasonNotMeasurable, Message: "no step that stands has the clients' IOPS", At: at}
	case len(uneven) == 0:
		return Judged("", true, ReasonEvenShare,
			fmt.Sprintf("in each of %d steps the clients' IOPS varied by a CV of at most %d %%", judged, analysis.UnevenClientsPercent), at)
	}
	return Judged("", false, ReasonUnevenShare,
		fmt.Sprintf("%d of %d steps shared unevenly (the clients' IOPS varied by a CV above %d %%): %s; an unthrottled step says the storage or the clients' nodes served them unequally, a rate step that some could not keep up",
			len(uneven), judged, analysis.UnevenClientsPercent, strings.Join(uneven, ", ")), at)
}

// StepAt is the record of step k, or nil: steps are recorded in order
// from 0, so step k's is steps[k].
func StepAt(steps []Step, k int) *Step {
	if k < 0 || k >= len(steps) {
		return nil
	}
	return &steps[k]
}

// endOf is when step k's measurement ended (zero when not recorded).
func endOf(steps []Step, k int) time.Time {
	if s := StepAt(steps, k); s != nil {
		return s.Order.End()
	}
	return time.Time{}
}

// StepList names steps for messages, numbered from 1: "step 2", "steps 3, 4".
func StepList(steps []int) string {
	names := make([]string, len(steps))
	for i, k := range steps {
		names[i] = fmt.Sprint(k + 1)
	}
	if len(steps) == 1 {
		return "step " + names[0]
	}
	return "steps " + strings.Join(names, ", ")
}

// ClientCPUVerdict says whether the clients measured their own CPU as much
// as the storage in the steps that stand: a client past a bound
// (results.CPU.Bound) in any of them makes it True, naming the steps, the
// clients (the first results.MaxErrors of each step) and what to raise. Nil
// when no client reported its CPU. It is stamped with the end of the step
// that made it what it is (the first bound step, or else the first
// measured one), as a status that lived through the run shows it.
func ClientCPUVerdict(steps []Step) *Verdict {
	var bound, measured []int
	var clients []int
	var busy, throttled float64
	count := 0
	var at time.Time
	for k, rec := range steps {
		c := rec.Aggregate.ClientCPU
		if rec.Superseded || c.Measured == 0 {
			continue
		}
		measured = append(measured, k)
		busy, throttled = max(busy, c.MaxBusyPercent), max(throttled, c.MaxThrottledPercent)
		if len(measured) == 1 {
			at = rec.Order.End() // False since the first measured step…
		}
		if c.BoundCount == 0 {
			continue
		}
		if len(bound) == 0 {
			at = rec.Order.End() // …True since the first bound one
		}
		bound = append(bound, k)
		count = max(count, c.BoundCount)
		for _, i := range c.Bound {
			if !slices.Contains(clients, i) {
				clients = append(clients, i)
			}
		}
	}
	if len(measured) == 0 {
		return nil
	}
	figures := fmt.Sprintf("the busiest client's fio used %s %% of the CPU its jobs could use (bound %d %%), the most throttled container was throttled in %s %% of its CFS periods (bound %d %%)",
		numfmt.Count(math.Round(busy)), results.CPUBusyBoundPercent, numfmt.Count(math.Round(throttled*10)/10), results.CPUThrottledBoundPercent)
	if len(bound) == 0 {
		v := Judged("", false, ReasonClientCPUHeadroom, fmt.Sprintf("in %s, %s: the clients' CPU did not bound the figures", StepList(measured), figures), at)
		return &v
	}
	slices.Sort(clients)
	names := make([]string, 0, len(clients)+1)
	for _, i := range clients[:min(len(clients), results.MaxErrors)] {
		names = append(names, fmt.Sprint(i))
	}
	if count > len(names) || len(clients) > len(names) {
		names = append(names, fmt.Sprintf("and more (%d in the step with the most)", count))
	}
	reason, raise := ReasonClientCPUBusy, "give the clients more CPU (clients.resources: the CPU request, or a CPU limit above what fio uses) or spread the load over more clients (clients.count)"
	if throttled > results.CPUThrottledBoundPercent {
		reason, raise = ReasonClientCPUThrottled, "raise the clients' CPU limit (clients.resources.limits.cpu) or remove it"
	}
	who := "client " + names[0] + " was"
	if len(names) > 1 {
		who = "clients " + strings.Join(names, ", ") + " were"
	}
	v := Judged("", true, reason, fmt.Sprintf("in %s, %s past a bound; %s: %s", StepList(bound), who, figures, raise), at)
	return &v
}
