package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// Regression defaults. A 1 % chance, over the whole comparison, of calling
// noise a regression; and minimum effects below which a difference is not
// worth a verdict even when it is certain: with thirty or more seconds a
// step, a drop of a few percent is highly significant, yet is within what a
// healthy system moves between runs, and tail latency moves more than IOPS.
const (
	DefaultRegressionSignificance = 0.01
	DefaultMinIOPSDropPercent     = 10
	DefaultMinP99RisePercent      = 25
	DefaultRegressionMinSamples   = 5
)

// exactMaxN is the longest sample MannWhitneyLess computes the exact p-value
// for. Up to C(20, 10) = 184,756 arrangements the table is small and the
// normal approximation is at its worst (off by half for 5 against 5); beyond
// it the approximation is good.
const exactMaxN = 10

// RegressionOptions set the regression verdict; zero fields take the
// defaults.
type RegressionOptions struct {
	// Significance is the family-wise error rate over all tests of one
	// comparison: Holm–Bonferroni adjusted p-values are compared with it.
	// Valid: more than 0 and at most 0.2.
	Significance float64 `json:"significance"`
	// MinIOPSDropPercent: a step's IOPS regressed only if its median fell
	// by at least this percentage of the baseline's median. Valid: more
	// than 0 and less than 100.
	MinIOPSDropPercent float64 `json:"minIOPSDropPercent"`
	// MinP99RisePercent: a step's p99 regressed only if its median rose by
	// at least this percentage of the baseline's median. Valid: more than
	// 0 and at most 1000.
	MinP99RisePercent float64 `json:"minP99RisePercent"`
	// MinSamples: with fewer finite per-second samples than this on either
	// side, a test is not judged; in CompareWithRuns a baseline run with
	// fewer at a step is left out of that step's tests. Valid: 3..1000.
	MinSamples int `json:"minSamples"`
}

// WithDefaults returns o with every zero field set to its default.
func (o RegressionOptions) WithDefaults() RegressionOptions {
	if o.Significance == 0 {
		o.Significance = DefaultRegressionSignificance
	}
	if o.MinIOPSDropPercent == 0 {
		o.MinIOPSDropPercent = DefaultMinIOPSDropPercent
	}
	if o.MinP99RisePercent == 0 {
		o.MinP99RisePercent = DefaultMinP99RisePercent
	}
	if o.MinSamples == 0 {
		o.MinSamples = DefaultRegressionMinSamples
	}
	return o
}

// RegressionOptionsOf are the options of spec.regression's fields, with
// the defaults for those left out: significance is the API's decimal
// string ("" for the default), the minimum effects whole percentages (0 for
// the default). The operator and the plugin both call it, so that they
// reach the same verdict on the same runs.
func RegressionOptionsOf(significance string, minIOPSDropPercent, minP99RisePercent int32) (RegressionOptions, error) {
	o := RegressionOptions{MinIOPSDropPercent: float64(minIOPSDropPercent), MinP99RisePercent: float64(minP99RisePercent)}
	if significance != "" {
		v, err := strconv.ParseFloat(significance, 64)
		if err != nil {
			return o, fmt.Errorf("significance %q is not a decimal fraction", significance)
		}
		if !(v > 0) {
			// Zero is the field's "unset" in RegressionOptions: a written
			// zero must be refused here, not turned into the default.
			return o, fmt.Errorf("%w: Significance must be more than 0 and at most 0.2, got %q", ErrInvalidOptions, significance)
		}
		o.Significance = v
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	return o.WithDefaults(), nil
}

// Validate checks o after applying the defaults; the error wraps
// ErrInvalidOptions and names the field and its valid range.
func (o RegressionOptions) Validate() error {
	o = o.WithDefaults()
	// NaN fails every comparison, so it is tested for explicitly.
	if v := o.Significance; math.IsNaN(v) || v <= 0 || v > 0.2 {
		return fmt.Errorf("%w: Significance must be more than 0 and at most 0.2, got %v", ErrInvalidOptions, v)
	}
	if v := o.MinIOPSDropPercent; math.IsNaN(v) || v <= 0 || v >= 100 {
		return fmt.Errorf("%w: MinIOPSDropPercent must be more than 0 and less than 100, got %v", ErrInvalidOptions, v)
	}
	if v := o.MinP99RisePercent; math.IsNaN(v) || v <= 0 || v > 1000 {
		return fmt.Errorf("%w: MinP99RisePercent must be more than 0 and at most 1000, got %v", ErrInvalidOptions, v)
	}
	if o.MinSamples < 3 || o.MinSamples > 1000 {
		return fmt.Errorf("%w: MinSamples must be in 3..1000, got %d", ErrInvalidOptions, o.MinSamples)
	}
	return nil
}

// usable is o with the defaults and every invalid field replaced by its
// default, so that CompareRuns, which returns no error, still gives a
// well-defined verdict (a NaN significance would otherwise flag nothing,
// silently). Callers are expected to Validate first.
func (o RegressionOptions) usable() RegressionOptions {
	o = o.WithDefaults()
	d := RegressionOptions{}.WithDefaults()
	if (RegressionOptions{Significance: o.Significance}).Validate() != nil {
		o.Significance = d.Significance
	}
	if (RegressionOptions{MinIOPSDropPercent: o.MinIOPSDropPercent}).Validate() != nil {
		o.MinIOPSDropPercent = d.MinIOPSDropPercent
	}
	if (RegressionOptions{MinP99RisePercent: o.MinP99RisePercent}).Validate() != nil {
		o.MinP99RisePercent = d.MinP99RisePercent
	}
	if (RegressionOptions{MinSamples: o.MinSamples}).Validate() != nil {
		o.MinSamples = d.MinSamples
	}
	return o
}

// StepSamples are one step's per-second samples of one run.
type StepSamples struct {
	// Planned is the planned step index both runs share: the key a current
	// step is matched with its baseline step by.
	Planned int `json:"planned"`
	// Index is the step's index in its own run (from 0), reruns counted,
	// so it differs from Planned once a step was run again; it is carried
	// into the current run's tests, for messages ("step Index+1") and
	// status, and never used for matching.
	Index int `json:"index"`
	// Label names the step in messages, e.g. "2000 IOPS offered".
	Label string `json:"label,omitempty"`
	// Offered is the load the step offered: IOPS, or bytes per second of
	// a bandwidth step; 0 for a step that offered no rate (unthrottled, a
	// queue depth). Latencies are compared only between steps that offered
	// the same load: a curve's steps offer percentages of their own run's
	// maximum, and a faster run's higher load has higher latencies.
	Offered float64 `json:"offered,omitempty"`
	// IOPS has one value a second.
	IOPS []float64 `json:"iops"`
	// P99Ns is the p99 completion latency, in ns, of each second with I/O
	// (a second without any has no p99, so it may be shorter than IOPS).
	P99Ns []float64 `json:"p99Ns"`
	// ClosedLoop (closedLoop): the step's latency was closed-loop — it
	// offered no rate (unthrottled, a queue depth) or it saturated
	// (achieved less than it offered). Its latency then follows the queue
	// depth the clients keep rather than the storage's speed at a load,
	// and CompareWithRuns does not judge p99 against such a baseline step.
	// A step that offered 0 is closed-loop whatever this says (a pinned
	// baseline written before the field existed has it false; a saturated
	// step in such a baseline cannot be told).
	ClosedLoop bool `json:"closedLoop,omitempty"`
}

// closedLoop reports whether the step's latency was closed-loop
// (StepSamples.ClosedLoop).
func (s *StepSamples) closedLoop() bool { return s.ClosedLoop || s.Offered == 0 }

// RegressionMetric is the figure a RegressionTest compares.
type RegressionMetric string

// The metrics compared. MetricP99 is not declared here: the latency
// selector's MetricP99 (selector.go) is the untyped constant "p99", so it
// serves as a RegressionMetric as well — one name, one spelling, for the
// p99 wherever the package speaks of it.
const (
	MetricIOPS RegressionMetric = "iops"
)

// title is the metric as messages name it.
func (m RegressionMetric) title() string {
	switch m {
	case MetricIOPS:
		return "IOPS"
	case MetricP99:
		return "p99"
	}
	return string(m)
}

// RegressionTest is one metric of one step compared.
type RegressionTest struct {
	// Planned, Index and Label are the current step's.
	Planned int              `json:"planned"`
	Index   int              `json:"index"`
	Label   string           `json:"label,omitempty"`
	Metric  RegressionMetric `json:"metric"`
	// BaselineMedian and CurrentMedian are the medians of the finite
	// samples (0 for a side without any); BaselineN and CurrentN count
	// those samples. In a run-level test of CompareWithRuns
	// (baselineRuns at least MinBaselineRuns) baselineMedian is the
	// geometric mean of the baseline runs' medians, the figure the current
	// median is tested against, and baselineN counts the samples of those
	// runs; when CompareWithRuns falls back to the per-second test it is
	// the median of the runs' samples pooled.
	BaselineMedian float64 `json:"baselineMedian"`
	CurrentMedian  float64 `json:"currentMedian"`
	BaselineN      int     `json:"baselineN"`
	CurrentN       int     `json:"currentN"`
	// BaselineRuns is, for a test of CompareWithRuns, the number of
	// baseline runs the test rests on: those with the step and enough
	// samples at it. With at least MinBaselineRuns the test is run-level;
	// with fewer, IOPS is judged on the per-second samples and p99 is not
	// judged. 0 (left out of JSON) for CompareRuns' tests.
	BaselineRuns int `json:"baselineRuns,omitempty"`
	// Change is (current − baseline) / baseline median, signed: −0.25 means
	// it fell by 25 %. It is 0 when a side has no samples or the baseline
	// median is not positive.
	Change float64 `json:"change"`
	// P is the one-sided p-value in the direction of "worse" (fewer IOPS,
	// higher p99): the Mann–Whitney test's of the per-second samples, or
	// in a run-level test of CompareWithRuns the prediction test's of the
	// run's median among the baseline runs'. PAdjusted is Holm's
	// adjustment of it over all judged tests of the comparison. Both are 1
	// when not judged.
	P         float64 `json:"p"`
	PAdjusted float64 `json:"pAdjusted"`
	// Judged is false when the test could not be made; Reason then says
	// why (too few samples, no baseline step, baseline median not
	// positive, different offered loads; with CompareWithRuns also
	// closed-loop latency in the baseline and too few baseline runs for
	// p99). A judged test of CompareWithRuns may have a Reason too: a note
	// on baseline runs left out of it, or that it fell back to the
	// per-second test.
	Judged bool   `json:"judged"`
	Reason string `json:"reason,omitempty"`
	// Regressed: Judged, PAdjusted below the significance and the change at
	// least the minimum effect in the worse direction.
	Regressed bool `json:"regressed"`
}

// String renders the test for people: "step 2 (rate 2,000 IOPS): IOPS 1,998
// → 1,502 (-24.8 %), p = 3.1e-06", latencies in the unit that suits them
// ("p99 850 µs → 1.7 ms (+100.0 %), p = 0.0002"), or "step 2 (…): p99 not
// judged: <reason>". The p printed is the adjusted one: the figure compared
// with the significance.
func (t RegressionTest) String() string {
	head := "step " + strconv.Itoa(t.Index+1)
	if t.Label != "" {
		head += " (" + t.Label + ")"
	}
	name := t.Metric.title()
	if !t.Judged {
		return head + ": " + name + " not judged: " + t.Reason
	}
	var base, cur string
	if t.Metric == MetricIOPS {
		cur, base = numfmt.Pair(t.CurrentMedian, t.BaselineMedian, 0)
	} else {
		cur, base = numfmt.LatencyPair(nanoseconds(t.CurrentMedian), nanoseconds(t.BaselineMedian))
	}
	return fmt.Sprintf("%s: %s %s → %s (%s), p = %s", head, name, base, cur,
		numfmt.SignedPercent(100*t.Change, 1), strconv.FormatFloat(t.PAdjusted, 'g', 2, 64))
}

// nanoseconds rounds a latency median to whole ns for numfmt.
func nanoseconds(v float64) uint64 { return uint64(math.Round(max(v, 0))) }

// RegressionResult is a whole comparison of a run with its baseline.
type RegressionResult struct {
	// Tests are in current-step order, IOPS before p99 for each step.
	Tests []RegressionTest `json:"tests"`
	// Regressed is true when any test regressed.
	Regressed bool `json:"regressed"`
	// BaselineRuns is the number of baseline runs CompareWithRuns was
	// given, which Verdict names; 0 (left out of JSON) for CompareRuns,
	// whose baseline is one run.
	BaselineRuns int `json:"baselineRuns,omitempty"`
}

// Worst returns the regressed test with the smallest adjusted p-value (on a
// tie the largest |Change|, then the first); ok is false when none
// regressed.
func (r RegressionResult) Worst() (RegressionTest, bool) {
	best := -1
	for i := range r.Tests {
		t := &r.Tests[i]
		if !t.Regressed {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := &r.Tests[best]
		if t.PAdjusted < b.PAdjusted || (t.PAdjusted == b.PAdjusted && math.Abs(t.Change) > math.Abs(b.Change)) {
			best = i
		}
	}
	if best < 0 {
		return RegressionTest{}, false
	}
	return r.Tests[best], true
}

// adjust makes the verdicts: Holm's adjustment over every judged test, and
// Regressed where the adjusted p-value is below the significance and the
// change is at least the minimum effect in the worse direction.
func (r *RegressionResult) adjust(opts RegressionOptions) {
	var judged []int
	var ps []float64
	for i := range r.Tests {
		if r.Tests[i].Judged {
			judged = append(judged, i)
			ps = append(ps, r.Tests[i].P)
		}
	}
	for k, adj := range holm(ps) {
		t := &r.Tests[judged[k]]
		t.PAdjusted = adj
		t.Regressed = adj < opts.Significance && t.largeEnough(opts)
		r.Regressed = r.Regressed || t.Regressed
	}
}

// compareMetric makes one step's test of one metric, all but the Holm
// adjustment and the verdict that depends on it.
func compareMetric(step *StepSamples, metric RegressionMetric, hasBase bool, baseline, current []float64, opts RegressionOptions) RegressionTest {
	b, c := finite(baseline), finite(current)
	slices.Sort(b)
	slices.Sort(c)
	t := RegressionTest{
		Planned: step.Planned, Index: step.Index, Label: step.Label, Metric: metric,
		BaselineMedian: median(b), CurrentMedian: median(c),
		BaselineN: len(b), CurrentN: len(c),
		P: 1, PAdjusted: 1,
	}
	if len(b) > 0 && len(c) > 0 && t.BaselineMedian > 0 {
		t.Change = (t.CurrentMedian - t.BaselineMedian) / t.BaselineMedian
	}
	switch {
	case math.IsInf(t.Change, 0) || math.IsNaN(t.Change):
		// Samples at the ends of float64 (a pinned baseline is a
		// tenant's): no change to speak of, and none JSON can carry.
		t.Change = 0
		t.Reason = "the medians are out of range"
	case !hasBase:
		t.Reason = "no baseline step"
	case len(b) < opts.MinSamples || len(c) < opts.MinSamples:
		t.Reason = fmt.Sprintf("too few samples (%d baseline, %d current; want at least %d)", len(b), len(c), opts.MinSamples)
	case t.BaselineMedian == 0:
		// No relative change is defined, and a zero IOPS baseline cannot
		// fall.
		t.Reason = "baseline median is zero"
	case t.BaselineMedian < 0:
		// Neither IOPS nor latencies are negative: bad input, whose
		// "worse" direction would be inverted.
		t.Reason = "baseline median is negative"
	default:
		t.Judged = true
		if metric == MetricIOPS {
			_, t.P = MannWhitneyLess(c, b)
		} else {
			_, t.P = MannWhitneyLess(b, c)
		}
	}
	return t
}

// largeEnough reports whether the medians moved by at least the minimum
// effect in the worse direction. It compares without dividing (the baseline
// median is positive) so that a change of exactly the minimum counts.
func (t *RegressionTest) largeEnough(o RegressionOptions) bool {
	d := t.CurrentMedian - t.BaselineMedian
	if t.Metric == MetricIOPS {
		return -d*100 >= o.MinIOPSDropPercent*t.BaselineMedian
	}
	return d*100 >= o.MinP99RisePercent*t.BaselineMedian
}

// finite returns a new slice of the finite values of xs: a NaN has no rank
// and an infinity is a broken sample, not a very fast or slow second.
func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// median of sorted values: the middle one, or the mean of the two middle
// ones for an even count; 0 for none.
func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	a, b := sorted[n/2-1], sorted[n/2]
	return a + (b-a)/2 // a mean that cannot overflow
}

// sameLoad reports whether two steps offered the same load, within 1 %
// (a rate split over clients and jobs is rounded per job).
func sameLoad(a, b float64) bool {
	return math.Abs(a-b) <= 0.01*max(a, b)
}

// holm returns Holm's step-down adjustment of the p-values, in their order:
// with the m p-values sorted ascending, the i-th adjusted one is
// max over j ≤ i of min(1, (m − j + 1) · p_(j)). Comparing the adjusted
// values with α rejects exactly what Holm's procedure rejects at
// family-wise error rate α; the running maximum keeps them in the order of
// the raw ones.
func holm(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order { // rank = j − 1
		running = max(running, min(1, float64(m-rank)*ps[i]))
		adj[i] = running
	}
	return adj
}

// MannWhitneyLess is the one-sided Mann–Whitney U test of "x tends to be
// smaller than y". U (for x) counts the pairs (x_i, y_j) with x_i > y_j,
// a tie counting one half: 0 when every x is below every y, len(x)·len(y)
// when every x is above. The p-value is P(U ≤ u) when x and y come from one
// distribution. With no ties among the pooled values and both samples at
// most 10 long it is exact, from the distribution of U counted by dynamic
// programming; otherwise it is the normal approximation with the tie
// correction of the variance and a continuity correction, and 1 when every
// value is the same (no variance: no evidence). Non-finite values are
// dropped first; with an empty sample the result is U = 0, p = 1. The
// inputs are not modified.
func MannWhitneyLess(x, y []float64) (u, p float64) {
	x, y = finite(x), finite(y)
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 0, 1
	}
	type value struct {
		v   float64
		inX bool
	}
	pool := make([]value, 0, n+m)
	for _, v := range x {
		pool = append(pool, value{v, true})
	}
	for _, v := range y {
		pool = append(pool, value{v, false})
	}
	slices.SortFunc(pool, func(a, b value) int { return cmp.Compare(a.v, b.v) })

	// Rank sum of x with mid-ranks for ties, and Σ(t³ − t) over the tie
	// groups for the variance.
	var rankSumX, ties float64
	for i := 0; i < len(pool); {
		j := i + 1
		for j < len(pool) && pool[j].v == pool[i].v {
			j++
		}
		mid := float64(i+1+j) / 2 // the mean of ranks i+1..j
		for _, v := range pool[i:j] {
			if v.inX {
				rankSumX += mid
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	nf, mf := float64(n), float64(m)
	u = rankSumX - nf*(nf+1)/2

	if ties == 0 && n <= exactMaxN && m <= exactMaxN {
		return u, exactLessP(n, m, int(math.Round(u)))
	}
	total := nf + mf
	variance := nf * mf / 12 * ((total + 1) - ties/(total*(total-1)))
	if variance <= 0 {
		return u, 1
	}
	// P(U ≤ u) of a discrete U is P(normal ≤ u + ½).
	z := (u - nf*mf/2 + 0.5) / math.Sqrt(variance)
	return u, min(1, 0.5*math.Erfc(-z/math.Sqrt2))
}

// exactLessP is P(U ≤ k) for samples of n and m values without ties, every
// arrangement of the pooled ranks equally likely. f[i][j][u] counts the
// arrangements of i x's and j y's whose U is u: the largest of the i + j
// values is either an x, above all j y's (adding j to U), or a y (adding
// nothing), so f(i, j, u) = f(i−1, j, u−j) + f(i, j−1, u). The counts (at
// most C(20, 10)) are exact in float64.
func exactLessP(n, m, k int) float64 {
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for u := range f[i][j] {
				if u >= j { // u − j ≤ (i−1)·j: always within f[i−1][j]
					f[i][j][u] += f[i-1][j][u-j]
				}
				if u < len(f[i][j-1]) {
					f[i][j][u] += f[i][j-1][u]
				}
			}
		}
	}
	var le, all float64
	for u, c := range f[n][m] {
		all += c
		if u <= k {
			le += c
		}
	}
	return le / all
}

// RegressionOutcome is a whole comparison's outcome.
type RegressionOutcome string

// Comparison outcomes.
const (
	OutcomeRegressed    RegressionOutcome = "Regressed"
	OutcomeNotRegressed RegressionOutcome = "NotRegressed"
	OutcomeNotJudged    RegressionOutcome = "NotJudged"
)

// Verdict sums the comparison with baseline (a name, for the sentence) up:
// its outcome and one sentence that says it — the worst test and how many
// regressed, how many tests on how many steps did not, or why none could
// be judged. The operator's Regressed condition and the plugin's compare
// both say it in these words. A result of CompareWithRuns names how many
// runs the baseline had ("against 5 baseline runs of ConfigMap/golden");
// CompareRuns' sentences are as they always were.
func (r RegressionResult) Verdict(baseline string, o RegressionOptions) (RegressionOutcome, string) {
	if r.BaselineRuns > 0 {
		runs := "runs"
		if r.BaselineRuns == 1 {
			runs = "run"
		}
		baseline = fmt.Sprintf("%d baseline %s of %s", r.BaselineRuns, runs, baseline)
	}
	judged, regressed, steps := 0, 0, map[int]bool{}
	for _, t := range r.Tests {
		if t.Judged {
			judged++
			steps[t.Index] = true
		}
		if t.Regressed {
			regressed++
		}
	}
	o = o.WithDefaults()
	limits := fmt.Sprintf("significance %s, at least %s %% fewer IOPS or %s %% higher p99",
		strconv.FormatFloat(o.Significance, 'g', -1, 64), numfmt.Decimals(o.MinIOPSDropPercent, 1), numfmt.Decimals(o.MinP99RisePercent, 1))
	switch worst, ok := r.Worst(); {
	case ok:
		return OutcomeRegressed, fmt.Sprintf("%s; %d of %d tests regressed against %s (%s)", worst, regressed, judged, baseline, limits)
	case judged == 0:
		why := "no step to compare"
		if len(r.Tests) > 0 {
			why = r.Tests[0].String()
		}
		return OutcomeNotJudged, fmt.Sprintf("no test against %s could be judged (%d per-second samples a side needed): %s", baseline, o.MinSamples, why)
	}
	return OutcomeNotRegressed, fmt.Sprintf("none of %d tests on %d steps regressed against %s (%s)", judged, len(steps), baseline, limits)
}
