package analysis

// Run-level regression verdicts: a run compared with several baseline runs.
//
// The per-second samples of one run are not independent draws: they share
// the run's conditions (time of day, neighbours, cache state, where the
// volume landed), so a run's figure moves from run to run by more than its
// seconds scatter around it. CompareRuns' per-second Mann–Whitney test
// sees that run-to-run variation as a highly significant difference: on
// real storage seven reruns of an unchanged volume came out with step p99s
// from −90 % to +417 % of the baseline's, each "certain", and three of
// them Regressed. Only several baseline runs show how far a run's figure
// moves when nothing changed, so that is what CompareWithRuns tests
// against.
//
// The model: a run's figure of a step (its IOPS or its p99, the median of
// its per-second samples) is the storage's true figure times a run factor
// exp(ε), ε ~ N(0, σ²) independently from run to run — ratios are what
// move, so the test is on the log scale. With k baseline runs' figures
// x₁…x_k and the current run's y, (ln y − mean ln x) / (s·√(1 + 1/k)) has
// Student's t distribution with k − 1 degrees of freedom when nothing
// changed (s the sample standard deviation of ln x): the prediction
// interval of one more run. Each test's p-value is exact under the model
// whatever σ is (conservative where s is raised to its floor, 0.005), and
// Holm's adjustment over the comparison's tests bounds the chance of any
// false alarm by the significance. The within-run scatter needs no model
// of its own: it moves a run's median, and that is part of what the
// baseline runs' spread measures.
//
// What k gives: k − 1 degrees of freedom for the spread. With k = 3 the t
// distribution's tails are wide (the 1 % quantile of T₂ is 7.0 standard
// errors, T₄'s 3.7), so only large, consistent changes come out
// significant: even against three identical baseline runs a 10 % IOPS drop
// has p = 0.0015, above the 0.01/8 Holm asks of the first of a 4-step
// run's 8 tests, while a 15 % drop (p = 0.0006) passes; with k = 5 the
// same drops have p = 0.00002 and 0.000004. With fewer than
// MinBaselineRuns = 3 runs the spread cannot be estimated usefully: IOPS
// falls back to the per-second test of CompareRuns and p99 is not judged —
// tail latency varies between runs of unchanged storage far more than one
// run's seconds show.
//
// Tail latency is heavier-tailed between runs than the model: on this
// machine's loop devices one of ten reruns of an unchanged volume moved a
// step's p99 54 % above five baseline runs that had stayed close, and a
// test of any rise called that a regression; with that fixed, another
// rerun came out 2.6 times above five close runs. So p99 is tested for a
// rise beyond its minimum effect (25 % by default): the null hypothesis
// is "p99 rose by no more than the minimum", and t is measured from the
// baseline's geometric mean raised by it; and its spread is taken as at
// least 0.25 on the log scale (minRunLogSDP99), whatever the baseline runs
// show. With five baseline runs that calls a p99 4.4 to 6 times higher
// Regressed (one of 2 to 4 tests), not 2.6 times: latency ceilings are what SLO objectives are
// for (spec.slo); the regression verdict on p99 is for gross changes. IOPS, which moves little between
// runs, is tested for any drop, and regressed only if the drop is also at
// least its minimum effect: that keeps the power to find a 15 % lower cap
// against three baseline runs.
//
// What is not judged, and why: the p99 of a step whose baseline latency was
// closed-loop (unthrottled, or saturated: achieved below offered), because
// latency there follows the queue depth the clients keep, not the storage's
// speed at a load; and the p99 of steps that offered different loads, as
// in CompareRuns. A current step that saturated where the baseline's did
// not is judged: its latency rising is the regression.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/storagebench/storagebench/internal/numfmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinBaselineRuns is the fewest baseline runs a run-level test is made
// with (CompareWithRuns): fewer leave the run-to-run spread to one degree
// of freedom or none.
const MinBaselineRuns = 3

// minRunLogSD floors the standard deviation of the baseline runs' log
// figures: 0.005, half a percent. Baseline runs with identical figures (an
// IOPS cap met exactly, a pinned baseline of copies) would otherwise make
// any difference at all infinitely significant; no storage repeats a
// figure closer than that.
const minRunLogSD = 0.005

// minRunLogSDP99 floors the standard deviation of the baseline runs' log
// p99s: 0.25, a run factor of about +28 % / −22 %. A handful of runs cannot show
// how far tail latency moves between runs of unchanged storage, because
// it moves little most nights and a lot on some: on this machine five
// baseline runs within 10 % of each other were followed by a run 2.6
// times higher with nothing changed, and plain fio's own p99 of one job
// ranged from 228 to 514 µs between rounds (a log spread of about 0.25).
// Below the floor a test would trust a calm week to predict every night.
const minRunLogSDP99 = 0.25

// CompareWithRuns compares the current run with k = len(baselines)
// baseline runs, each a run's steps as run.Samples gives them, matched to
// the current run's steps by Planned as CompareRuns matches them (the last
// of a run's steps with one Planned stands). Each current step gets an
// IOPS and a p99 test, in that order. The model and why are in the comment
// at the top of runlevel.go.
//
// A run's figure of a step is the median of its finite per-second samples.
// A baseline run is left out of a test when it lacks the step, has fewer
// than opts.MinSamples samples at it, or its figure is not positive (a log
// needs one); the current step with too few samples, or a negative
// figure, is not judged.
//
// With at least MinBaselineRuns baseline runs left, the test is run-level:
// m and s are the mean and sample standard deviation of the baseline
// runs' log figures, s floored at 0.005 (so that identical baseline
// figures do not make every difference infinitely significant), and
// t = (ln y − m) / (s·√(1 + 1/k)) for the current figure y; the p-value is
// P(T_{k−1} ≤ t) for IOPS (worse is lower). For p99 (worse is higher) the
// test is of a rise beyond the minimum effect, with s floored at 0.25:
// t = (ln y − m − ln(1 + MinP99RisePercent/100)) / (s·√(1 + 1/k)) and
// p = P(T_{k−1} ≥ t). The baseline figure reported (baselineMedian) is the
// geometric mean exp(m), the change is y/exp(m) − 1, and baselineRuns is k.
//
// With fewer (one or two runs), IOPS is judged as CompareRuns judges it,
// by the one-sided Mann–Whitney test of the current per-second samples
// against the baseline runs' pooled; p99 is not judged: tail latency
// varies between runs of unchanged storage more than one run's seconds
// show, and two runs do not show by how much.
//
// p99 is judged only when every baseline run the test rests on was
// open-loop at the step (StepSamples.ClosedLoop false and a rate offered)
// and offered the same load as the current step; a current step that
// saturated where the baseline's did not is judged.
//
// Holm's adjustment runs over every judged test of the comparison, and a
// test regressed when its adjusted p-value is below opts.Significance and
// the current figure moved from the reported baseline figure by at least
// the minimum effect in the worse direction. Invalid options take their
// defaults. The inputs are not modified.
func CompareWithRuns(baselines [][]StepSamples, current []StepSamples, opts RegressionOptions) RegressionResult {
	opts = opts.usable()
	runs := make([]map[int]*StepSamples, len(baselines))
	for r, run := range baselines {
		runs[r] = make(map[int]*StepSamples, len(run))
		for i := range run {
			runs[r][run[i].Planned] = &run[i]
		}
	}
	res := RegressionResult{Tests: make([]RegressionTest, 0, 2*len(current)), BaselineRuns: len(baselines)}
	for i := range current {
		cur := &current[i]
		steps := make([]*StepSamples, len(runs)) // each baseline run's step, nil when it has none
		for r, byPlanned := range runs {
			steps[r] = byPlanned[cur.Planned]
		}
		res.Tests = append(res.Tests, runLevelTest(cur, MetricIOPS, steps, opts), runLevelTest(cur, MetricP99, steps, opts))
	}
	res.adjust(opts)
	return res
}

// baselineFigure is one baseline run's step as a test uses it.
type baselineFigure struct {
	run    int // its index among the baseline runs
	step   *StepSamples
	sorted []float64 // its finite samples of the metric, sorted
	figure float64   // their median
}

// metricSamples are the step's samples of the metric.
func metricSamples(s *StepSamples, metric RegressionMetric) []float64 {
	if metric == MetricIOPS {
		return s.IOPS
	}
	return s.P99Ns
}

// runLevelTest makes one step's test of one metric against the baseline
// runs' steps (one for each baseline run, nil for a run without it), all
// but the Holm adjustment and the verdict that depends on it.
func runLevelTest(cur *StepSamples, metric RegressionMetric, steps []*StepSamples, opts RegressionOptions) RegressionTest {
	c := finite(metricSamples(cur, metric))
	slices.Sort(c)
	t := RegressionTest{
		Planned: cur.Planned, Index: cur.Index, Label: cur.Label, Metric: metric,
		CurrentMedian: median(c), CurrentN: len(c),
		P: 1, PAdjusted: 1,
	}
	if math.IsInf(t.CurrentMedian, 0) {
		// The mean of the two middle samples overflowed (they lie at
		// float64's opposite ends): the upper one stands, so that the
		// result still marshals.
		t.CurrentMedian = c[len(c)/2]
	}
	given, missing := len(steps), 0
	var used []baselineFigure
	short, notPositive := 0, 0
	for r, s := range steps {
		if s == nil {
			missing++
			continue
		}
		b := finite(metricSamples(s, metric))
		if len(b) < opts.MinSamples {
			short++
			continue
		}
		slices.Sort(b)
		f := median(b)
		if !(f > 0) {
			notPositive++
			continue
		}
		used = append(used, baselineFigure{run: r, step: s, sorted: b, figure: f})
	}
	if missing == given {
		t.Reason = "no baseline step"
		if given > 1 {
			t.Reason = fmt.Sprintf("no baseline step (none of %d baseline runs has it)", given)
		}
		return t
	}
	k := len(used)
	t.BaselineRuns = k
	for _, u := range used {
		t.BaselineN += len(u.sorted)
	}
	// leftOut says which baseline runs the test does not rest on, and why.
	var leftOut []string
	if missing > 0 {
		leftOut = append(leftOut, fmt.Sprintf("%d without the step", missing))
	}
	if short > 0 {
		leftOut = append(leftOut, fmt.Sprintf("%d with too few samples (want at least %d)", short, opts.MinSamples))
	}
	if notPositive > 0 {
		leftOut = append(leftOut, fmt.Sprintf("%d whose median is not above zero", notPositive))
	}
	note := ""
	if len(leftOut) > 0 {
		note = fmt.Sprintf("%d of %d baseline runs left out: %s", given-k, given, strings.Join(leftOut, ", "))
	}

	// The baseline figure, for the report whether judged or not.
	var pooled []float64
	switch {
	case k >= MinBaselineRuns:
		logs := make([]float64, k)
		for i, u := range used {
			logs[i] = math.Log(u.figure)
		}
		m, _ := meanSD(logs)
		// A geometric mean lies between the least and the greatest
		// figure; the clamp keeps exp's rounding at float64's ends
		// from overflowing.
		lo := slices.MinFunc(used, func(a, b baselineFigure) int { return cmp.Compare(a.figure, b.figure) }).figure
		hi := slices.MaxFunc(used, func(a, b baselineFigure) int { return cmp.Compare(a.figure, b.figure) }).figure
		t.BaselineMedian = min(max(math.Exp(m), lo), hi)
	case k > 0:
		for _, u := range used {
			pooled = append(pooled, u.sorted...)
		}
		slices.Sort(pooled)
		t.BaselineMedian = median(pooled)
	}
	if k > 0 && len(c) > 0 && t.BaselineMedian > 0 {
		// y/b − 1, written as CompareRuns writes it.
		t.Change = (t.CurrentMedian - t.BaselineMedian) / t.BaselineMedian
	}

	switch {
	case math.IsInf(t.Change, 0) || math.IsNaN(t.Change) || math.IsInf(t.BaselineMedian, 0) || (k > 0 && !(t.BaselineMedian > 0)):
		t.Change = 0
		t.Reason = "the medians are out of range"
	case k == 0 && short > 0 && notPositive == 0:
		t.Reason = fmt.Sprintf("too few samples (no baseline run has %d at the step; %d current)", opts.MinSamples, len(c))
	case k == 0:
		t.Reason = "no baseline run can be used: " + note
	case len(c) < opts.MinSamples:
		t.Reason = fmt.Sprintf("too few samples (%d current; want at least %d)", len(c), opts.MinSamples)
	case t.CurrentMedian < 0:
		// Neither IOPS nor latencies are negative: bad input.
		t.Reason = "current median is negative"
	case metric == MetricP99 && closedLoopIn(used) >= 0:
		t.Reason = "closed-loop latency in the baseline: at saturation or without a rate limit latency follows the queue depth"
		if given > 1 {
			t.Reason += fmt.Sprintf(" (baseline run %d of %d)", used[closedLoopIn(used)].run+1, given)
		}
	case metric == MetricP99 && otherLoadIn(used, cur) >= 0:
		other := used[otherLoadIn(used, cur)].step
		t.Reason = fmt.Sprintf("the baseline step offered %s, this one %s: latencies at different loads are not compared",
			numfmt.Count(other.Offered), numfmt.Count(cur.Offered))
	case metric == MetricP99 && k < MinBaselineRuns:
		t.Reason = fmt.Sprintf("p99 needs at least %d baseline runs: tail latency varies between runs of unchanged storage more than one run's seconds show (%d given)",
			MinBaselineRuns, k)
		if note != "" {
			t.Reason += "; " + note
		}
	case k < MinBaselineRuns:
		// IOPS on one or two runs: the per-second test, as CompareRuns.
		t.Judged = true
		_, t.P = MannWhitneyLess(c, pooled)
		t.Reason = fmt.Sprintf("judged on the per-second samples of %s: a run-level test needs at least %d baseline runs", pooledRuns(k), MinBaselineRuns)
		if note != "" {
			t.Reason += "; " + note
		}
	default:
		t.Judged = true
		t.P = runLevelP(used, t.CurrentMedian, metric, opts)
		t.Reason = note
	}
	return t
}

// runLevelP is the one-sided p-value of the current figure y among the
// baseline runs' (at least two, all positive): the prediction test of
// CompareWithRuns on the log scale. For p99 the null hypothesis is that
// the figure rose by no more than the minimum effect (opts.
// MinP99RisePercent): the test is of a rise beyond it, not of any rise.
// A y of 0 has ln y = −∞: t = −∞, so an IOPS of 0 is as low as IOPS gets
// (p = 0) and a p99 of 0 is not higher (p = 1).
func runLevelP(used []baselineFigure, y float64, metric RegressionMetric, opts RegressionOptions) float64 {
	k := len(used)
	logs := make([]float64, k)
	for i, u := range used {
		logs[i] = math.Log(u.figure)
	}
	m, s := meanSD(logs)
	s = max(s, minRunLogSD)
	if metric == MetricP99 {
		m += math.Log1p(opts.MinP99RisePercent / 100)
		s = max(s, minRunLogSDP99)
	}
	t := (math.Log(y) - m) / (s * math.Sqrt(1+1/float64(k)))
	if metric != MetricIOPS {
		t = -t // P(T ≥ t) = P(T ≤ −t): the distribution is symmetric
	}
	p := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.CDF(t)
	if math.IsNaN(p) {
		return 1 // no evidence
	}
	return p
}

// meanSD is the mean and sample standard deviation (n − 1) of xs, in two
// passes; the deviation is 0 for fewer than two values.
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// closedLoopIn is the index of the first baseline run whose step's latency
// was closed-loop, or −1.
func closedLoopIn(used []baselineFigure) int {
	return slices.IndexFunc(used, func(u baselineFigure) bool { return u.step.closedLoop() })
}

// otherLoadIn is the index of the first baseline run whose step offered
// another load than cur, or −1.
func otherLoadIn(used []baselineFigure, cur *StepSamples) int {
	return slices.IndexFunc(used, func(u baselineFigure) bool { return !sameLoad(u.step.Offered, cur.Offered) })
}

// pooledRuns names the baseline runs a per-second test pooled.
func pooledRuns(k int) string {
	if k == 1 {
		return "1 baseline run"
	}
	return fmt.Sprintf("%d baseline runs, pooled", k)
}
