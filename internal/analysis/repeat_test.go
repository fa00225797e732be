package analysis

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

// The expected figures below are worked by hand from the textbook
// formulas, with t(0.975, df) from a printed table: s is the sample
// standard deviation, CV = 100 · s / mean, CI = mean ± t · s / √n.
func TestVariationOf(t *testing.T) {
	cases := []struct {
		name string
		xs   []float64
		want Variation
		ok   bool
	}{
		{"one value yields nothing", []float64{1000}, Variation{}, false},
		{"none", nil, Variation{}, false},
		{"11 values: beyond the t table", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Variation{}, false},
		{"not finite", []float64{1, math.NaN()}, Variation{}, false},
		// n = 2: mean 3, s = √2, CV 47.14 %, t(1) = 12.706: 3 ± 12.706.
		{"two runs", []float64{2, 4}, Variation{Mean: 3, CVPercent: 47.1404520791, CI95Low: -9.7062047362, CI95High: 15.7062047362}, true},
		// n = 3: mean 110, s = 10, CV 9.09 %, t(2) = 4.303: 110 ± 24.84.
		{"three runs", []float64{100, 110, 120}, Variation{Mean: 110, CVPercent: 9.0909090909, CI95Low: 85.1586228825, CI95High: 134.8413771175}, true},
		// n = 4 (p99 in ns): mean 1.05 ms, s = 129,099.4 ns, CV 12.30 %,
		// t(3) = 3.182: 1.05 ms ± 205.4 µs.
		{"four p99s", []float64{1_000_000, 1_200_000, 1_100_000, 900_000},
			Variation{Mean: 1_050_000, CVPercent: 12.2951852261, CI95Low: 844_573.9743241873, CI95High: 1_255_426.0256758127}, true},
		// n = 10: mean 5.5, s = 3.0277, CV 55.05 %, t(9) = 2.262: 5.5 ± 2.166.
		{"ten runs", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Variation{Mean: 5.5, CVPercent: 55.0481882563, CI95Low: 3.3341494103, CI95High: 7.6658505897}, true},
		{"identical runs", []float64{1000, 1000, 1000}, Variation{Mean: 1000, CI95Low: 1000, CI95High: 1000}, true},
		{"all zero: CV 0, not NaN", []float64{0, 0}, Variation{}, true},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := VariationOf(c.xs)
			if ok != c.ok {
				t.Fatalf("VariationOf(%v) ok = %v, want %v", c.xs, ok, c.ok)
			}
			if !near(got.Mean, c.want.Mean) || !near(got.CVPercent, c.want.CVPercent) ||
				!near(got.CI95Low, c.want.CI95Low) || !near(got.CI95High, c.want.CI95High) {
				t.Errorf("VariationOf(%v) = %+v, want %+v", c.xs, got, c.want)
			}
			if ok && (got.CI95Low > got.Mean || got.CI95High < got.Mean) {
				t.Errorf("the interval %+v does not contain the mean", got)
			}
		})
	}
}

func TestT975Table(t *testing.T) {
	// The printed table, to 3 decimals, and falling towards z = 1.96.
	printed := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262}
	for df, want := range printed {
		if got := T975(df + 1); math.Abs(got-want) > 0.0005 {
			t.Errorf("t(0.975, %d) = %v, want %v", df+1, got, want)
		}
	}
}

func TestRepeatability(t *testing.T) {
	p99Read := LatencySelector{Metric: MetricP99, Operation: OperationRead}
	cases := []struct {
		name   string
		runs   []LevelRun
		sel    LatencySelector
		levels []int
		steps  [][]int
		iops   []float64 // each level's mean IOPS
		p99    []float64 // each level's mean p99 (NaN: none)
		p99CV  []float64
	}{
		{name: "no runs", runs: nil, sel: p99Read},
		{name: "one run per level yields nothing", sel: p99Read,
			runs: []LevelRun{{0, reads(0, 1000, ms)}, {1, reads(1, 2000, ms)}}},
		{name: "two levels of three runs", sel: p99Read,
			runs: []LevelRun{{0, reads(0, 1000, ms)}, {0, reads(1, 1100, 2*ms)}, {0, reads(2, 1200, 3*ms)},
				{1, reads(3, 2000, ms)}, {1, reads(4, 2000, ms)}, {1, reads(5, 2000, ms)}},
			levels: []int{0, 1}, steps: [][]int{{0, 1, 2}, {3, 4, 5}},
			iops: []float64{1100, 2000}, p99: []float64{float64(2 * ms), float64(ms)},
			p99CV: []float64{50, 0}}, // s = 1 ms of a mean of 2 ms
		{name: "a level cut short by a stop rule: 2 of 3 runs count", sel: p99Read,
			runs:   []LevelRun{{0, reads(0, 1000, ms)}, {0, reads(1, 1000, ms)}, {0, reads(2, 1000, ms)}, {1, reads(3, 2000, ms)}, {1, reads(4, 2200, ms)}},
			levels: []int{0, 1}, steps: [][]int{{0, 1, 2}, {3, 4}}, iops: []float64{1000, 2100}, p99: []float64{float64(ms), float64(ms)}, p99CV: []float64{0, 0}},
		{name: "a failed run is not evidence", sel: p99Read,
			runs:   []LevelRun{{0, reads(0, 1000, ms)}, {0, failed(reads(1, 10, ms))}, {0, reads(2, 1200, ms)}},
			levels: []int{0}, steps: [][]int{{0, 2}}, iops: []float64{1100}, p99: []float64{float64(ms)}, p99CV: []float64{0}},
		{name: "no reads: IOPS spread without a p99", sel: p99Read,
			runs:   []LevelRun{{0, writes(0, 1000, ms)}, {0, writes(1, 1000, ms)}},
			levels: []int{0}, steps: [][]int{{0, 1}}, iops: []float64{1000}, p99: []float64{math.NaN()}, p99CV: []float64{math.NaN()}},
		{name: "worst: the higher of read and write p99 of each run", sel: LatencySelector{Metric: MetricP99, Operation: OperationWorst},
			runs:   []LevelRun{{0, mixed(0, 800, ms, 200, 3*ms)}, {0, mixed(1, 800, 5*ms, 200, 3*ms)}},
			levels: []int{0}, steps: [][]int{{0, 1}}, iops: []float64{1000}, p99: []float64{float64(4 * ms)}, p99CV: []float64{100 * math.Sqrt2 / 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Repeatability(c.runs, c.sel)
			if len(got) != len(c.levels) {
				t.Fatalf("Repeatability = %+v, want levels %v", got, c.levels)
			}
			for i, v := range got {
				if v.Level != c.levels[i] || !slices.Equal(v.Steps, c.steps[i]) || v.Runs() != len(c.steps[i]) {
					t.Errorf("level %d: %+v, want level %d over steps %v", i, v, c.levels[i], c.steps[i])
				}
				if math.Abs(v.IOPS.Mean-c.iops[i]) > 1e-9 {
					t.Errorf("level %d: mean IOPS %v, want %v", i, v.IOPS.Mean, c.iops[i])
				}
				if math.IsNaN(c.p99[i]) {
					if v.HasP99 {
						t.Errorf("level %d: a p99 %+v without samples", i, v.P99)
					}
					continue
				}
				if !v.HasP99 || math.Abs(v.P99.Mean-c.p99[i]) > 1e-6 || math.Abs(v.P99.CVPercent-c.p99CV[i]) > 1e-9 {
					t.Errorf("level %d: p99 %+v (has %v), want mean %v CV %v", i, v.P99, v.HasP99, c.p99[i], c.p99CV[i])
				}
			}
		})
	}
}

func TestLevelVariationOver(t *testing.T) {
	v := LevelVariation{IOPS: Variation{CVPercent: 12.34}, P99: Variation{CVPercent: 10.004}, HasP99: true,
		Latency: LatencySelector{Metric: MetricP99, Operation: OperationRead}}
	cases := []struct {
		limit  float64
		want   []string
		stable bool
	}{
		{0, nil, true}, // no limit
		{20, nil, true},
		{12.34, nil, true}, // at the limit is not above it
		{12, []string{"IOPS CV 12.3 %"}, false},
		{10, []string{"IOPS CV 12.3 %", "p99 read latency CV 10.004 %"}, false},
	}
	for _, c := range cases {
		if got := v.Over(c.limit); !reflect.DeepEqual(got, c.want) || v.Stable(c.limit) != c.stable {
			t.Errorf("Over(%v) = %q, Stable %v; want %q, %v", c.limit, got, v.Stable(c.limit), c.want, c.stable)
		}
	}
	noP99 := v
	noP99.HasP99 = false
	if got := noP99.Over(10); !reflect.DeepEqual(got, []string{"IOPS CV 12.3 %"}) {
		t.Errorf("without a p99: Over = %q", got)
	}
}

func TestOptionsMaxVariationPercent(t *testing.T) {
	for _, c := range []struct {
		v  float64
		ok bool
	}{{0, true}, {1, true}, {100, true}, {-1, false}, {100.5, false}, {math.NaN(), false}} {
		err := Options{MaxVariationPercent: c.v}.Validate()
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
			t.Errorf("MaxVariationPercent %v: Validate = %v", c.v, err)
		}
	}
	if got := (Options{TargetSelector: LatencySelector{Operation: OperationWrite}}).VariationSelector(); got != (LatencySelector{MetricP99, OperationWrite}) {
		t.Errorf("VariationSelector = %+v", got)
	}
	if got := (Options{}).VariationSelector(); got != (LatencySelector{MetricP99, OperationTotal}) {
		t.Errorf("default VariationSelector = %+v", got)
	}
}
