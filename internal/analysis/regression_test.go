package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// bruteForceLess is P(U ≤ u) for x against y without ties, by enumerating
// every way of giving n of the n + m ranks to x (all equally likely under
// the null hypothesis): an independent check of the dynamic programme. The
// observed U is counted from the pairs, not from ranks. It also returns
// P(U = u), the point mass the two one-sided p-values share.
func bruteForceLess(x, y []float64) (u, p, mass float64) {
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	n, total := len(x), len(x)+len(y)
	var le, eq, all float64
	for mask := uint32(0); mask < 1<<total; mask++ {
		if bits.OnesCount32(mask) != n {
			continue
		}
		rankSum := 0
		for r := range total {
			if mask&(1<<r) != 0 {
				rankSum += r + 1
			}
		}
		uu := float64(rankSum - n*(n+1)/2)
		all++
		if uu <= u {
			le++
		}
		if uu == u {
			eq++
		}
	}
	return u, le / all, eq / all
}

// distinct draws n+m distinct values in random order and splits them.
func distinct(rng *rand.Rand, n, m int) (x, y []float64) {
	v := rng.Perm(n + m)
	all := make([]float64, n+m)
	for i, k := range v {
		all[i] = float64(k)*1.5 + 0.25
	}
	return all[:n], all[n:]
}

func TestRegressionMannWhitneyExactMatchesEnumeration(t *testing.T) {
	sizes := [][2]int{{1, 1}, {1, 5}, {2, 3}, {3, 5}, {4, 4}, {5, 5}, {7, 4}, {6, 9}, {10, 1}, {10, 10}}
	rng := rand.New(rand.NewSource(7))
	for _, s := range sizes {
		for trial := range 3 {
			x, y := distinct(rng, s[0], s[1])
			wantU, wantP, mass := bruteForceLess(x, y)
			u, p := MannWhitneyLess(x, y)
			if u != wantU || math.Abs(p-wantP) > 1e-12 {
				t.Errorf("%d vs %d, trial %d: MannWhitneyLess = (%v, %v), enumeration (%v, %v)", s[0], s[1], trial, u, p, wantU, wantP)
			}
			// The two one-sided p-values overlap exactly in P(U = u).
			_, q := MannWhitneyLess(y, x)
			if math.Abs(p+q-(1+mass)) > 1e-12 {
				t.Errorf("%d vs %d, trial %d: p(x,y) + p(y,x) = %v, want 1 + P(U = u) = %v", s[0], s[1], trial, p+q, 1+mass)
			}
		}
	}
}

func TestRegressionMannWhitneyKnownValues(t *testing.T) {
	seq := func(from, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(from + i)
		}
		return out
	}
	cases := []struct {
		name  string
		x, y  []float64
		wantU float64
		wantP float64
		tol   float64
	}{
		// Textbook: one arrangement of C(10, 5) = 252 has x wholly below y.
		{"x below y, 5 and 5", seq(1, 5), seq(6, 5), 0, 1.0 / 252, 1e-15},
		{"x above y, 5 and 5", seq(6, 5), seq(1, 5), 25, 1, 1e-15},
		// Tables of U for n = m = 5: U = 0, 1, 2 have 1, 1, 2 arrangements,
		// P(U ≤ 2) = 4/252 = 0.0159.
		{"U = 2, 5 and 5", []float64{1, 2, 3, 6, 5}, []float64{4, 7, 8, 9, 10}, 2, 4.0 / 252, 1e-15},
		{"x below y, 3 and 4", seq(1, 3), seq(4, 4), 0, 1.0 / 35, 1e-15},
		// Ties force the normal approximation even for short samples.
		// Pooled: 1x 2x 2x 2y 3x 4y 5y 6y 7y; the three 2s share rank 3, so
		// R_x = 1 + 3 + 3 + 5 = 12, U = 12 − 4·5/2 = 2, μ = 10, ties
		// Σ(t³ − t) = 24, σ² = 20/12 · (10 − 24/72) = 16.1111, σ = 4.01386,
		// z = (2 − 10 + 0.5)/σ = −1.86852, Φ(z) = 0.03084 (table: Φ(−1.86)
		// = 0.03144, Φ(−1.87) = 0.03074, interpolated).
		{"ties, normal approximation", []float64{1, 2, 2, 3}, []float64{2, 4, 5, 6, 7}, 2, 0.030845, 1e-5},
		// 11 against 11 is past the exact table: U = 0, μ = 60.5,
		// σ² = 121 · 23/12 = 231.917, σ = 15.2288, z = −60/σ = −3.9399,
		// Φ(z) = 4.08e-5 (the exact value would be 1/705,432 = 1.4e-6).
		{"x below y, 11 and 11", seq(1, 11), seq(12, 11), 0, 4.0758e-5, 1e-8},
		{"all identical: no evidence", []float64{5, 5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, 36, 1, 0},
		{"empty x", nil, seq(1, 5), 0, 1, 0},
		{"only NaN in y", seq(1, 5), []float64{math.NaN()}, 0, 1, 0},
		// Non-finite values are dropped: the same as the first case.
		{"NaN and Inf dropped", []float64{1, math.NaN(), 2, 3, math.Inf(1), 4, 5}, []float64{math.Inf(-1), 6, 7, 8, 9, 10}, 0, 1.0 / 252, 1e-15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, y := slices.Clone(c.x), slices.Clone(c.y)
			u, p := MannWhitneyLess(x, y)
			if u != c.wantU || math.Abs(p-c.wantP) > c.tol {
				t.Errorf("MannWhitneyLess(%v, %v) = (%v, %v), want (%v, %v ± %v)", c.x, c.y, u, p, c.wantU, c.wantP, c.tol)
			}
			if !sameFloats(x, c.x) || !sameFloats(y, c.y) {
				t.Errorf("MannWhitneyLess modified its inputs: %v %v", x, y)
			}
		})
	}
}

func TestRegressionMannWhitneyAsymptoticSymmetry(t *testing.T) {
	// Continuous draws of 30: the normal path. With the continuity
	// correction the two one-sided p-values overlap by
	// Φ(a + h) − Φ(a − h) ≤ 2h·φ(0) with h = ½/σ, σ² = 30·30·61/12.
	rng := rand.New(rand.NewSource(3))
	sigma := math.Sqrt(30 * 30 * 61 / 12.0)
	for trial := range 20 {
		x, y := normals(rng, 30, 100, 0.1), normals(rng, 30, 100+float64(trial), 0.1)
		_, p := MannWhitneyLess(x, y)
		_, q := MannWhitneyLess(y, x)
		if over := p + q - 1; over < -1e-12 || over > 1/sigma*0.3990 {
			t.Errorf("trial %d: p(x,y) + p(y,x) = %v, want in [1, 1 + %v]", trial, p+q, 0.399/sigma)
		}
		if trial > 10 && p > 0.5 {
			// y's mean is well above x's: x tends to be smaller.
			t.Errorf("trial %d: x drawn below y, yet p = %v", trial, p)
		}
	}
}

// Worked by hand: p = (0.01, 0.04, 0.03, 0.005), m = 4, sorted 0.005,
// 0.01, 0.03, 0.04: 4·0.005 = 0.02; 3·0.01 = 0.03; 2·0.03 = 0.06;
// 1·0.04 = 0.04, raised to 0.06 by the running maximum.
func TestRegressionHolm(t *testing.T) {
	cases := []struct {
		name string
		ps   []float64
		want []float64
	}{
		{"hand-worked", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{"one test: unchanged", []float64{0.2}, []float64{0.2}},
		{"capped at 1", []float64{0.6, 0.9}, []float64{1, 1}},
		{"running maximum", []float64{0.5, 0.3}, []float64{0.6, 0.6}},
		{"ties", []float64{0.02, 0.02, 0.5}, []float64{0.06, 0.06, 0.5}},
		{"none", nil, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := holm(c.ps)
			if len(got) != len(c.want) {
				t.Fatalf("holm(%v) = %v, want %v", c.ps, got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Errorf("holm(%v) = %v, want %v", c.ps, got, c.want)
					break
				}
			}
		})
	}
}

// normals draws n values of mean·(1 + sdFrac·N(0, 1)).
func normals(rng *rand.Rand, n int, mean, sdFrac float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + sdFrac*rng.NormFloat64())
	}
	return out
}

// sameFloats compares bit for bit, so that NaNs compare equal.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// step draws a step of 30 seconds: IOPS with 5 % noise, p99 with 10 %.
func step(rng *rand.Rand, planned int, iops, p99Ns float64) StepSamples {
	return StepSamples{Planned: planned, Label: "step label", IOPS: normals(rng, 30, iops, 0.05), P99Ns: normals(rng, 30, p99Ns, 0.10)}
}

type wantTest struct {
	planned   int
	metric    RegressionMetric
	judged    bool
	regressed bool
	reason    string // a substring of Reason when not judged
}

func TestRegressionCompareRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	const ms = 1e6
	// Each case draws its samples once, before the table runs.
	base3 := []StepSamples{step(rng, 0, 1000, ms), step(rng, 1, 2000, 2*ms), step(rng, 2, 3000, 4*ms)}
	drop25 := []StepSamples{step(rng, 0, 1000, ms), step(rng, 1, 1500, 2*ms), step(rng, 2, 3000, 4*ms)}

	// A 5 % drop with 0.5 % noise: certain, but below the 10 % minimum.
	quiet := func(planned int, iops float64) StepSamples {
		return StepSamples{Planned: planned, IOPS: normals(rng, 30, iops, 0.005), P99Ns: normals(rng, 30, ms, 0.005)}
	}
	small, smallCur := []StepSamples{quiet(0, 1000)}, []StepSamples{quiet(0, 950)}

	three := []StepSamples{{Planned: 0, IOPS: []float64{1000, 1001, 999}, P99Ns: []float64{ms, 1.01 * ms, 0.99 * ms}}}
	threeCur := []StepSamples{{Planned: 0, IOPS: []float64{100, 101, 99}, P99Ns: []float64{5 * ms, 5.1 * ms, 4.9 * ms}}}

	p99Base, p99Cur := []StepSamples{step(rng, 0, 1000, ms)}, []StepSamples{step(rng, 0, 1000, 2*ms)}

	missBase := []StepSamples{step(rng, 0, 1000, ms)}
	missCur := []StepSamples{step(rng, 0, 1000, ms), step(rng, 5, 1000, ms)}

	nanBase := step(rng, 0, 1000, ms)
	nanBase.IOPS = append(nanBase.IOPS, math.NaN(), math.Inf(1), math.Inf(-1))
	nanCur := step(rng, 0, 750, ms)
	nanCur.IOPS = append([]float64{math.NaN(), math.NaN()}, nanCur.IOPS...)
	nanCur.P99Ns = append(nanCur.P99Ns, math.NaN())

	zeroBase := step(rng, 0, 1000, ms)
	zeroBase.IOPS = make([]float64, 30)

	// The baseline ran step 0 twice; the second run, at 2,000 IOPS, stands.
	dupBase := []StepSamples{step(rng, 0, 1500, ms), step(rng, 0, 2000, ms)}
	dupCur := []StepSamples{step(rng, 0, 1500, ms)}

	reordered := []StepSamples{step(rng, 2, 3000, 4*ms), step(rng, 0, 1000, ms)}
	reordered[0].Index, reordered[1].Index = 7, 3

	cases := []struct {
		name              string
		baseline, current []StepSamples
		opts              RegressionOptions
		want              []wantTest
		regressed         bool
		check             func(t *testing.T, r RegressionResult)
	}{
		{name: "25 % IOPS drop flags that step and metric only", baseline: base3, current: drop25, regressed: true,
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""},
				{1, MetricIOPS, true, true, ""}, {1, MetricP99, true, false, ""},
				{2, MetricIOPS, true, false, ""}, {2, MetricP99, true, false, ""}},
			check: func(t *testing.T, r RegressionResult) {
				w, ok := r.Worst()
				if !ok || w.Planned != 1 || w.Metric != MetricIOPS {
					t.Errorf("Worst() = %+v, %v, want step 1's IOPS", w, ok)
				}
				if math.Abs(w.Change+0.25) > 0.05 || w.PAdjusted > 1e-6 || w.P > w.PAdjusted {
					t.Errorf("step 1 IOPS: change %v, p %v, adjusted %v; want about −0.25 and tiny", w.Change, w.P, w.PAdjusted)
				}
				if w.BaselineN != 30 || w.CurrentN != 30 {
					t.Errorf("sample counts %d, %d, want 30, 30", w.BaselineN, w.CurrentN)
				}
			}},
		{name: "invalid options take the defaults", baseline: base3, current: drop25, regressed: true,
			opts: RegressionOptions{Significance: math.NaN(), MinSamples: 1},
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""},
				{1, MetricIOPS, true, true, ""}, {1, MetricP99, true, false, ""},
				{2, MetricIOPS, true, false, ""}, {2, MetricP99, true, false, ""}}},
		{name: "5 % drop, highly significant, below the minimum effect", baseline: small, current: smallCur,
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""}},
			check: func(t *testing.T, r RegressionResult) {
				if p := r.Tests[0].PAdjusted; p > 1e-6 {
					t.Errorf("IOPS adjusted p = %v, want the drop highly significant", p)
				}
			}},
		{name: "5 % drop with a 4 % minimum is a regression", baseline: small, current: smallCur,
			opts: RegressionOptions{MinIOPSDropPercent: 4}, regressed: true,
			want: []wantTest{{0, MetricIOPS, true, true, ""}, {0, MetricP99, true, false, ""}}},
		{name: "big drop with 3 samples is not judged", baseline: three, current: threeCur,
			want: []wantTest{{0, MetricIOPS, false, false, "too few samples (3 baseline, 3 current; want at least 5)"},
				{0, MetricP99, false, false, "too few samples"}},
			check: func(t *testing.T, r RegressionResult) {
				if c := r.Tests[0].Change; math.Abs(c+0.9) > 1e-12 {
					t.Errorf("change %v, want −0.9 reported even when not judged", c)
				}
			}},
		// 3 against 3 can at best reach p = 1/C(6, 3) = 0.05: honest, not
		// significant at 0.01.
		{name: "3 samples allowed: judged, cannot reach significance", baseline: three, current: threeCur,
			opts: RegressionOptions{MinSamples: 3},
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""}},
			check: func(t *testing.T, r RegressionResult) {
				for _, x := range r.Tests {
					if math.Abs(x.P-0.05) > 1e-15 || math.Abs(x.PAdjusted-0.1) > 1e-15 {
						t.Errorf("%s: p %v, adjusted %v, want 0.05 and 0.1", x.Metric, x.P, x.PAdjusted)
					}
				}
			}},
		{name: "p99 doubled", baseline: p99Base, current: p99Cur, regressed: true,
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, true, ""}},
			check: func(t *testing.T, r RegressionResult) {
				if c := r.Tests[1].Change; math.Abs(c-1) > 0.15 {
					t.Errorf("p99 change %v, want about +1", c)
				}
			}},
		{name: "baseline step missing", baseline: missBase, current: missCur,
			want: []wantTest{{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""},
				{5, MetricIOPS, false, false, "no baseline step"}, {5, MetricP99, false, false, "no baseline step"}},
			check: func(t *testing.T, r RegressionResult) {
				// Holm counts the judged tests only: m = 2.
				adj := holm([]float64{r.Tests[0].P, r.Tests[1].P})
				if r.Tests[0].PAdjusted != adj[0] || r.Tests[1].PAdjusted != adj[1] {
					t.Errorf("adjusted %v, %v, want %v", r.Tests[0].PAdjusted, r.Tests[1].PAdjusted, adj)
				}
				if x := r.Tests[2]; x.P != 1 || x.PAdjusted != 1 || x.BaselineN != 0 || x.CurrentN != 30 || x.Change != 0 {
					t.Errorf("unjudged test %+v, want p 1, no baseline, 30 current samples, no change", x)
				}
			}},
		{name: "NaN and Inf dropped", baseline: []StepSamples{nanBase}, current: []StepSamples{nanCur}, regressed: true,
			want: []wantTest{{0, MetricIOPS, true, true, ""}, {0, MetricP99, true, false, ""}},
			check: func(t *testing.T, r RegressionResult) {
				x := r.Tests[0]
				if x.BaselineN != 30 || x.CurrentN != 30 || r.Tests[1].CurrentN != 30 {
					t.Errorf("counted %d, %d, %d samples, want the 30 finite ones", x.BaselineN, x.CurrentN, r.Tests[1].CurrentN)
				}
				if math.IsNaN(x.BaselineMedian) || math.IsNaN(x.CurrentMedian) || math.IsNaN(x.P) {
					t.Errorf("NaN leaked: %+v", x)
				}
			}},
		{name: "baseline median zero", baseline: []StepSamples{zeroBase}, current: []StepSamples{step(rng, 0, 1000, ms)},
			want: []wantTest{{0, MetricIOPS, false, false, "baseline median is zero"}, {0, MetricP99, true, false, ""}}},
		{name: "the last baseline run of a planned step stands", baseline: dupBase, current: dupCur, regressed: true,
			want: []wantTest{{0, MetricIOPS, true, true, ""}, {0, MetricP99, true, false, ""}}},
		{name: "current-step order", baseline: base3, current: reordered,
			want: []wantTest{{2, MetricIOPS, true, false, ""}, {2, MetricP99, true, false, ""},
				{0, MetricIOPS, true, false, ""}, {0, MetricP99, true, false, ""}},
			check: func(t *testing.T, r RegressionResult) {
				if _, ok := r.Worst(); ok {
					t.Error("Worst() found a regression in a run without one")
				}
				// Index is the current step's, carried through.
				if r.Tests[0].Index != 7 || r.Tests[1].Index != 7 || r.Tests[2].Index != 3 || r.Tests[3].Index != 3 {
					t.Errorf("indexes %d %d %d %d, want 7 7 3 3", r.Tests[0].Index, r.Tests[1].Index, r.Tests[2].Index, r.Tests[3].Index)
				}
			}},
		{name: "no steps", want: []wantTest{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := cloneSteps(c.baseline, c.current)
			r := CompareRuns(c.baseline, c.current, c.opts)
			if !slices.EqualFunc(before, append(slices.Clone(c.baseline), c.current...), sameStep) {
				t.Error("CompareRuns modified its inputs")
			}
			if r.Regressed != c.regressed {
				t.Errorf("Regressed = %v, want %v", r.Regressed, c.regressed)
			}
			if len(r.Tests) != len(c.want) {
				t.Fatalf("%d tests, want %d: %v", len(r.Tests), len(c.want), r.Tests)
			}
			for i, w := range c.want {
				g := r.Tests[i]
				if g.Planned != w.planned || g.Metric != w.metric || g.Judged != w.judged || g.Regressed != w.regressed {
					t.Errorf("test %d = step %d %s judged %v regressed %v (%v), want step %d %s judged %v regressed %v",
						i, g.Planned, g.Metric, g.Judged, g.Regressed, g, w.planned, w.metric, w.judged, w.regressed)
				}
				if !w.judged && !strings.Contains(g.Reason, w.reason) {
					t.Errorf("test %d reason %q, want it to contain %q", i, g.Reason, w.reason)
				}
				if g.Judged && (g.P < 0 || g.P > 1 || g.PAdjusted < g.P || g.PAdjusted > 1) {
					t.Errorf("test %d: p %v, adjusted %v out of order or range", i, g.P, g.PAdjusted)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func cloneSteps(lists ...[]StepSamples) []StepSamples {
	var out []StepSamples
	for _, l := range lists {
		for _, s := range l {
			s.IOPS, s.P99Ns = slices.Clone(s.IOPS), slices.Clone(s.P99Ns)
			out = append(out, s)
		}
	}
	return out
}

func sameStep(a, b StepSamples) bool {
	return a.Planned == b.Planned && a.Index == b.Index && a.Label == b.Label && sameFloats(a.IOPS, b.IOPS) && sameFloats(a.P99Ns, b.P99Ns)
}

// Two runs drawn from one distribution: with the minimum effects all but
// switched off, Holm over the step's two tests keeps the chance of a false
// regression at or below the significance; with the default minimum effects
// a false regression needs a median to move by 10 % (IOPS, 5 % noise) or
// 25 % (p99, 10 % noise) by chance, many standard errors, so there is none.
func TestRegressionFalsePositiveRate(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	tiny := RegressionOptions{MinIOPSDropPercent: 0.001, MinP99RisePercent: 0.001}
	const trials = 2000
	var flaggedTiny, flaggedDefault int
	for range trials {
		base := []StepSamples{step(rng, 0, 1000, 2e6)}
		cur := []StepSamples{step(rng, 0, 1000, 2e6)}
		if CompareRuns(base, cur, tiny).Regressed {
			flaggedTiny++
		}
		if CompareRuns(base, cur, RegressionOptions{}).Regressed {
			flaggedDefault++
		}
	}
	rate := float64(flaggedTiny) / trials
	t.Logf("false-positive rate with tiny minimum effects: %v (%d of %d)", rate, flaggedTiny, trials)
	if rate > 0.02 {
		t.Errorf("false-positive rate %v, want at most the significance 0.01 plus a margin (0.02)", rate)
	}
	// A test that never flags would pass the bound trivially: at α = 0.01
	// some of 2,000 noise comparisons must come out significant.
	if flaggedTiny == 0 {
		t.Error("no comparison flagged with tiny minimum effects: the test has no power at all")
	}
	if flaggedDefault != 0 {
		t.Errorf("%d of %d noise comparisons flagged with the defaults, want none", flaggedDefault, trials)
	}
}

func TestRegressionPower(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const trials = 500
	detected := 0
	for range trials {
		base := []StepSamples{step(rng, 0, 1000, 2e6)}
		cur := []StepSamples{step(rng, 0, 800, 2e6)}
		r := CompareRuns(base, cur, RegressionOptions{})
		if r.Tests[0].Metric == MetricIOPS && r.Tests[0].Regressed {
			detected++
		}
	}
	if detected < trials*99/100 {
		t.Errorf("a 20 %% IOPS drop detected in %d of %d trials, want at least 99 %%", detected, trials)
	}
}

func TestRegressionOptionsWithDefaults(t *testing.T) {
	got := RegressionOptions{}.WithDefaults()
	want := RegressionOptions{Significance: 0.01, MinIOPSDropPercent: 10, MinP99RisePercent: 25, MinSamples: 5}
	if got != want {
		t.Errorf("zero options with defaults = %+v, want %+v", got, want)
	}
	set := RegressionOptions{Significance: 0.05, MinIOPSDropPercent: 3, MinP99RisePercent: 50, MinSamples: 10}
	if got := set.WithDefaults(); got != set {
		t.Errorf("set options changed by WithDefaults: %+v, want %+v", got, set)
	}
}

func TestRegressionOptionsValidate(t *testing.T) {
	cases := []struct {
		name  string
		opts  RegressionOptions
		field string // empty: valid
		rng   string
	}{
		{name: "zero value: the defaults", opts: RegressionOptions{}},
		{name: "significance tiny", opts: RegressionOptions{Significance: 1e-9}},
		{name: "significance at most 0.2", opts: RegressionOptions{Significance: 0.2}},
		{name: "significance above 0.2", opts: RegressionOptions{Significance: 0.2000001}, field: "Significance", rng: "more than 0 and at most 0.2"},
		{name: "significance negative", opts: RegressionOptions{Significance: -0.01}, field: "Significance", rng: "more than 0 and at most 0.2"},
		{name: "significance NaN", opts: RegressionOptions{Significance: math.NaN()}, field: "Significance", rng: "more than 0 and at most 0.2"},
		{name: "significance Inf", opts: RegressionOptions{Significance: math.Inf(1)}, field: "Significance", rng: "more than 0 and at most 0.2"},
		{name: "IOPS drop tiny", opts: RegressionOptions{MinIOPSDropPercent: 0.001}},
		{name: "IOPS drop below 100", opts: RegressionOptions{MinIOPSDropPercent: 99.999}},
		{name: "IOPS drop 100", opts: RegressionOptions{MinIOPSDropPercent: 100}, field: "MinIOPSDropPercent", rng: "more than 0 and less than 100"},
		{name: "IOPS drop negative", opts: RegressionOptions{MinIOPSDropPercent: -1}, field: "MinIOPSDropPercent", rng: "more than 0 and less than 100"},
		{name: "IOPS drop NaN", opts: RegressionOptions{MinIOPSDropPercent: math.NaN()}, field: "MinIOPSDropPercent", rng: "more than 0 and less than 100"},
		{name: "p99 rise tiny", opts: RegressionOptions{MinP99RisePercent: 0.001}},
		{name: "p99 rise 1000", opts: RegressionOptions{MinP99RisePercent: 1000}},
		{name: "p99 rise above 1000", opts: RegressionOptions{MinP99RisePercent: 1000.01}, field: "MinP99RisePercent", rng: "more than 0 and at most 1000"},
		{name: "p99 rise negative", opts: RegressionOptions{MinP99RisePercent: -5}, field: "MinP99RisePercent", rng: "more than 0 and at most 1000"},
		{name: "p99 rise NaN", opts: RegressionOptions{MinP99RisePercent: math.NaN()}, field: "MinP99RisePercent", rng: "more than 0 and at most 1000"},
		{name: "3 samples", opts: RegressionOptions{MinSamples: 3}},
		{name: "1000 samples", opts: RegressionOptions{MinSamples: 1000}},
		{name: "2 samples", opts: RegressionOptions{MinSamples: 2}, field: "MinSamples", rng: "3..1000"},
		{name: "1001 samples", opts: RegressionOptions{MinSamples: 1001}, field: "MinSamples", rng: "3..1000"},
		{name: "negative samples", opts: RegressionOptions{MinSamples: -1}, field: "MinSamples", rng: "3..1000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.opts.Validate()
			if c.field == "" {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", c.opts, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("Validate(%+v) = %v, want ErrInvalidOptions", c.opts, err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.field) || !strings.Contains(msg, c.rng) {
				t.Errorf("Validate(%+v) = %q, want it to name %s and %q", c.opts, msg, c.field, c.rng)
			}
		})
	}
}

func TestRegressionOptionsOf(t *testing.T) {
	defaults := RegressionOptions{}.WithDefaults()
	cases := []struct {
		name         string
		significance string
		drop, rise   int32
		want         RegressionOptions
		err          string // empty: valid
	}{
		{name: "nothing set: the defaults", want: defaults},
		{name: "every field set", significance: "0.05", drop: 20, rise: 50,
			want: RegressionOptions{Significance: 0.05, MinIOPSDropPercent: 20, MinP99RisePercent: 50, MinSamples: defaults.MinSamples}},
		{name: "only the p99 rise", rise: 50,
			want: RegressionOptions{Significance: defaults.Significance, MinIOPSDropPercent: defaults.MinIOPSDropPercent, MinP99RisePercent: 50, MinSamples: defaults.MinSamples}},
		{name: "significance at its bound", significance: "0.2",
			want: RegressionOptions{Significance: 0.2, MinIOPSDropPercent: defaults.MinIOPSDropPercent, MinP99RisePercent: defaults.MinP99RisePercent, MinSamples: defaults.MinSamples}},
		{name: "a percentage is no decimal fraction", significance: "1%", err: `significance "1%" is not a decimal fraction`},
		{name: "significance out of range", significance: "0.5", err: "Significance must be more than 0 and at most 0.2, got 0.5"},
		{name: "significance zero", significance: "0.0", err: "Significance must be more than 0"},
		{name: "IOPS drop 100 %", drop: 100, err: "MinIOPSDropPercent must be more than 0 and less than 100"},
		{name: "p99 rise past 1000 %", rise: 1001, err: "MinP99RisePercent must be more than 0 and at most 1000"},
		{name: "negative drop", drop: -1, err: "MinIOPSDropPercent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RegressionOptionsOf(c.significance, c.drop, c.rise)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("RegressionOptionsOf(%q, %d, %d) = %+v, %v; want an error containing %q", c.significance, c.drop, c.rise, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("RegressionOptionsOf(%q, %d, %d) = %+v, %v; want %+v", c.significance, c.drop, c.rise, got, err, c.want)
			}
		})
	}
}

func TestRegressionTestString(t *testing.T) {
	cases := []struct {
		name string
		test RegressionTest
		want []string
		not  []string
	}{
		{"regressed IOPS", RegressionTest{Planned: 2, Index: 1, Label: "rate 2,000 IOPS", Metric: MetricIOPS,
			BaselineMedian: 1998, CurrentMedian: 1502, Change: (1502.0 - 1998) / 1998,
			P: 1e-7, PAdjusted: 3.1e-6, Judged: true, Regressed: true},
			[]string{"step 2 (rate 2,000 IOPS): ", "IOPS 1,998 → 1,502", "(-24.8 %)", "p = 3.1e-06"}, nil},
		{"p99 in µs and ms", RegressionTest{Planned: 0, Index: 0, Label: "depth 16", Metric: MetricP99,
			BaselineMedian: 850_000, CurrentMedian: 1_700_000, Change: 1, P: 1e-4, PAdjusted: 2e-4, Judged: true, Regressed: true},
			[]string{"step 1 (depth 16): ", "p99 850 µs → 1.7 ms", "(+100.0 %)", "p = 0.0002"}, []string{"ns"}},
		{"close p99s told apart", RegressionTest{Planned: 1, Index: 0, Metric: MetricP99,
			BaselineMedian: 2_000_000, CurrentMedian: 2_001_000, Change: 0.0005, P: 0.4, PAdjusted: 0.8, Judged: true},
			[]string{"step 1: p99 2 ms → 2.001 ms", "(+0.1 %)", "p = 0.8"}, []string{"()"}},
		{"not judged", RegressionTest{Planned: 4, Index: 3, Label: "rate 8,000 IOPS", Metric: MetricP99, Reason: "no baseline step", P: 1, PAdjusted: 1},
			[]string{"step 4 (rate 8,000 IOPS): p99 not judged: no baseline step"}, []string{"p ="}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.test.String()
			for _, w := range c.want {
				if !strings.Contains(s, w) {
					t.Errorf("String() = %q, want it to contain %q", s, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(s, n) {
					t.Errorf("String() = %q, want no %q", s, n)
				}
			}
		})
	}
}

func TestRegressionResultWorst(t *testing.T) {
	reg := func(planned int, padj, change float64) RegressionTest {
		return RegressionTest{Planned: planned, Metric: MetricIOPS, Judged: true, Regressed: true, PAdjusted: padj, Change: change}
	}
	cases := []struct {
		name    string
		tests   []RegressionTest
		planned int
		ok      bool
	}{
		{"none", nil, 0, false},
		{"none regressed", []RegressionTest{{Planned: 1, Judged: true, PAdjusted: 1e-9}}, 0, false},
		{"smallest adjusted p", []RegressionTest{reg(1, 1e-3, -0.5), reg(2, 1e-6, -0.2), {Planned: 3, PAdjusted: 1e-12}}, 2, true},
		{"tie: largest |change|", []RegressionTest{reg(1, 1e-6, -0.2), reg(2, 1e-6, 0.9), reg(3, 1e-6, -0.3)}, 2, true},
		{"full tie: the first", []RegressionTest{reg(1, 1e-6, -0.2), reg(2, 1e-6, 0.2)}, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, ok := RegressionResult{Tests: c.tests}.Worst()
			if ok != c.ok || (ok && w.Planned != c.planned) {
				t.Errorf("Worst() = step %d, %v; want step %d, %v", w.Planned, ok, c.planned, c.ok)
			}
		})
	}
}

// TestRegressionLoadsAndRanges: latencies at different offered loads are
// not compared (a curve's steps offer percentages of each run's own
// maximum), and medians beyond float64's range are not judged and still
// marshal.
func TestRegressionLoadsAndRanges(t *testing.T) {
	flat := func(v float64) []float64 {
		out := make([]float64, 10)
		for i := range out {
			out[i] = v + float64(i)
		}
		return out
	}
	base := []StepSamples{{Planned: 0, Offered: 5000, IOPS: flat(5000), P99Ns: flat(1e5)}}
	cur := []StepSamples{{Planned: 0, Offered: 4000, IOPS: flat(4000), P99Ns: flat(9e5)}}
	res := CompareRuns(base, cur, RegressionOptions{})
	if len(res.Tests) != 2 || !res.Tests[0].Regressed || res.Tests[1].Judged {
		t.Fatalf("tests %+v: want IOPS regressed and p99 not judged", res.Tests)
	}
	if !strings.Contains(res.Tests[1].Reason, "offered 5,000, this one 4,000") {
		t.Errorf("reason %q", res.Tests[1].Reason)
	}
	cur[0].Offered = 5040 // within 1 %: the same load
	if res := CompareRuns(base, cur, RegressionOptions{}); !res.Tests[1].Judged || !res.Tests[1].Regressed {
		t.Errorf("p99 at the same load: %+v", res.Tests[1])
	}

	huge := []StepSamples{{Planned: 0, IOPS: []float64{1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308}, P99Ns: flat(1)}}
	tiny := []StepSamples{{Planned: 0, IOPS: flat(1), P99Ns: []float64{5e-324, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324}}}
	res = CompareRuns(tiny, huge, RegressionOptions{})
	for _, x := range res.Tests {
		if math.IsInf(x.BaselineMedian, 0) || math.IsInf(x.CurrentMedian, 0) || math.IsInf(x.Change, 0) || math.IsNaN(x.Change) {
			t.Errorf("%s: medians %v, %v, change %v: want finite", x.Metric, x.BaselineMedian, x.CurrentMedian, x.Change)
		}
	}
	if res.Tests[1].Judged || res.Tests[1].Reason != "the medians are out of range" {
		t.Errorf("p99 from 5e-324 to 1: %+v", res.Tests[1])
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("the result does not marshal: %v", err)
	}
}

// CompareRuns is the comparison the operator made before it judged runs
// against several baseline runs (CompareWithRuns): one baseline run, every
// metric by the per-second Mann–Whitney test. The tests keep it to pin the
// machinery CompareWithRuns still uses with fewer than 3 baseline runs, and
// to show, on the same simulated data, the false alarms it gave.
//
// It compares each current step with the baseline step of the same
// Planned index (when the baseline ran a planned step more than once, its
// last run stands, as a run again supersedes the earlier one), metric by
// metric: IOPS regressed when the current samples tend to be smaller, p99
// when they tend to be larger, by the one-sided Mann–Whitney test
// (MannWhitneyLess) of the finite samples. Every test of the comparison
// shares one error budget: Holm's step-down adjustment keeps the chance of
// flagging any regression in noise at or below Significance however many
// steps there are. A significant test is a regression only when the medians
// moved by at least the minimum effect, so that a certain but harmless
// difference is not flagged. Invalid options take their defaults (see
// RegressionOptions.Validate). The inputs are not modified.
//
// The per-second samples of one run are not independent: they share that
// run's conditions, so the test takes the difference between any two runs
// for significant, and on storage whose tail latency moves from run to run
// it flags p99 "regressions" of unchanged storage. CompareWithRuns, against
// several baseline runs, models that run-to-run variation.
func CompareRuns(baseline, current []StepSamples, opts RegressionOptions) RegressionResult {
	opts = opts.usable()
	byPlanned := make(map[int]*StepSamples, len(baseline))
	for i := range baseline {
		byPlanned[baseline[i].Planned] = &baseline[i]
	}
	res := RegressionResult{Tests: make([]RegressionTest, 0, 2*len(current))}
	for i := range current {
		cur := &current[i]
		base := byPlanned[cur.Planned]
		var baseIOPS, baseP99 []float64
		if base != nil {
			baseIOPS, baseP99 = base.IOPS, base.P99Ns
		}
		p99 := compareMetric(cur, MetricP99, base != nil, baseP99, cur.P99Ns, opts)
		if base != nil && p99.Judged && !sameLoad(base.Offered, cur.Offered) {
			p99.Judged, p99.P = false, 1
			p99.Reason = fmt.Sprintf("the baseline step offered %s, this one %s: latencies at different loads are not compared",
				numfmt.Count(base.Offered), numfmt.Count(cur.Offered))
		}
		res.Tests = append(res.Tests, compareMetric(cur, MetricIOPS, base != nil, baseIOPS, cur.IOPS, opts), p99)
	}
	res.adjust(opts)
	return res
}
