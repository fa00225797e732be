package analysis

import (
	"math"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/results"

	"gonum.org/v1/gonum/stat/distuv"
)

// MaxRuns is the most runs of one level a variation is computed over:
// load.repeat's maximum.
const MaxRuns = 10

// T975 is Student's t quantile t(0.975, df): the factor of a two-sided
// 95 % confidence interval (of a mean of df+1 values; of a fitted slope
// with df = points − 2).
func T975(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// Variation is the spread of one figure over a level's runs.
type Variation struct {
	// Mean is the runs' arithmetic mean.
	Mean float64
	// CVPercent is the coefficient of variation: the sample standard
	// deviation (n − 1 in the denominator) as a percentage of the mean; 0
	// when the mean is 0.
	CVPercent float64
	// CI95Low and CI95High bound the 95 % confidence interval of the mean,
	// mean ± t(0.975, n − 1) · s / √n (Student's t: the runs are few and
	// their spread is estimated from them). Low may be below 0 when the
	// spread is wide.
	CI95Low, CI95High float64
}

// VariationOf is the spread of xs; ok is false for fewer than 2 or more
// than MaxRuns values, or a value that is not finite.
func VariationOf(xs []float64) (v Variation, ok bool) {
	n := len(xs)
	if n < 2 || n > MaxRuns {
		return Variation{}, false
	}
	var sum float64
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Variation{}, false
		}
		sum += x
	}
	mean := sum / float64(n)
	var ss float64 // two passes: no cancellation between large, close values
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := T975(n-1) * sd / math.Sqrt(float64(n))
	v = Variation{Mean: mean, CI95Low: mean - half, CI95High: mean + half}
	if mean != 0 {
		v.CVPercent = 100 * sd / math.Abs(mean)
	}
	return v, true
}

// LevelRun is one finished run of a load level: a step of a repeated load.
type LevelRun struct {
	// Level is the planned step the run repeats (plan.Step.Level).
	Level int
	// Aggregate is the run's result over all clients.
	Aggregate results.StepAggregate
}

// LevelVariation is the spread of one level's runs: achieved IOPS and the
// p99 latency of the operation the analysis judges latency on.
type LevelVariation struct {
	Level int
	// Steps are the step numbers (Aggregate.Step) of the runs the figures
	// are over, in input order; len(Steps) is the number of runs.
	Steps []int
	// IOPS is the spread of the runs' achieved IOPS (reads and writes).
	IOPS Variation
	// P99 is the spread of their Latency figure (a p99) in nanoseconds;
	// HasP99 is false when a run had no I/O in the selected operation.
	P99     Variation
	HasP99  bool
	Latency LatencySelector
}

// Runs is the number of runs the figures are over.
func (v LevelVariation) Runs() int { return len(v.Steps) }

// VariationSelector is the latency whose spread over runs is judged: the
// p99 of the operation the analysis judges latency on (TargetSelector's).
func (o Options) VariationSelector() LatencySelector {
	return LatencySelector{Metric: MetricP99, Operation: o.TargetSelector.WithDefaults().Operation}
}

// Repeatability groups runs by level, levels in the order they first
// appear, and returns the spread of every level with at least 2 runs that
// succeeded (a failed run, one with errors, is not evidence; an interrupted
// one is, as everywhere in the analysis). The latency is sel's figure
// (Options.VariationSelector). Levels with more than MaxRuns runs are left
// out: the load never plans them.
func Repeatability(runs []LevelRun, sel LatencySelector) []LevelVariation {
	type level struct {
		steps      []int
		iops, p99s []float64
		p99ok      bool
	}
	var order []int
	byLevel := map[int]*level{}
	for i := range runs {
		r := &runs[i]
		if len(r.Aggregate.Errors) > 0 {
			continue
		}
		lv := byLevel[r.Level]
		if lv == nil {
			lv = &level{p99ok: true}
			byLevel[r.Level] = lv
			order = append(order, r.Level)
		}
		lv.steps = append(lv.steps, r.Aggregate.Step)
		lv.iops = append(lv.iops, r.Aggregate.Total.IOPS)
		ns, ok := sel.Of(r.Aggregate)
		lv.p99ok = lv.p99ok && ok
		lv.p99s = append(lv.p99s, float64(ns))
	}
	var out []LevelVariation
	for _, l := range order {
		lv := byLevel[l]
		iops, ok := VariationOf(lv.iops)
		if !ok {
			continue
		}
		v := LevelVariation{Level: l, Steps: lv.steps, IOPS: iops, Latency: sel.WithDefaults()}
		if lv.p99ok {
			v.P99, v.HasP99 = VariationOf(lv.p99s)
		}
		out = append(out, v)
	}
	return out
}

// Over names the figures of v whose coefficient of variation is strictly
// above limitPercent, with the CV as a person reads it ("IOPS CV 12.3 %",
// "p99 read latency CV 10.04 %": more digits where rounding would hide that
// it is above the limit); none when limitPercent is 0 (no limit).
func (v LevelVariation) Over(limitPercent float64) []string {
	if limitPercent <= 0 {
		return nil
	}
	var out []string
	check := func(name string, cv float64) {
		if cv > limitPercent {
			got, _ := numfmt.Pair(cv, limitPercent, 1)
			out = append(out, name+" CV "+got+" %")
		}
	}
	check("IOPS", v.IOPS.CVPercent)
	if v.HasP99 {
		check(v.Latency.String(), v.P99.CVPercent)
	}
	return out
}

// Stable reports whether no figure of v varies by more than limitPercent.
func (v LevelVariation) Stable(limitPercent float64) bool { return len(v.Over(limitPercent)) == 0 }
