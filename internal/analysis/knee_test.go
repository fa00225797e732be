package analysis

import (
	"testing"

	"github.com/storagebench/storagebench/internal/results"
)

// curve builds points with index = position.
func curve(xy ...float64) []curvePoint {
	p := make([]curvePoint, 0, len(xy)/2)
	for i := 0; i+1 < len(xy); i += 2 {
		p = append(p, curvePoint{x: xy[i], y: xy[i+1], index: i / 2})
	}
	return p
}

func TestKneeIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []curvePoint
		want int
	}{
		{"empty", nil, -1},
		{"one point", curve(1000, 1), -1},
		{"two points", curve(1000, 1, 2000, 10), -1},
		{
			// Measured on a local disk: latency dips and recovers, never rises.
			"flat noisy curve has no knee",
			curve(300, 85.8, 600, 70.1, 1200, 60, 2400, 62.5),
			-1,
		},
		{
			"rise just under 2x is still flat",
			curve(100, 1.0, 200, 1.0, 300, 1.99),
			-1,
		},
		{
			"rise of 2x counts",
			curve(100, 1.0, 200, 1.0, 300, 2.0),
			1,
		},
		{
			// A spike to 2.5x at low load, then ×1.6 at most past the
			// candidate: the rise that counts is the one after the knee.
			"the rise is counted past the knee only",
			curve(0, 1, 0.1, 2.5, 0.2, 1, 0.5, 1.05, 1, 1.6),
			-1,
		},
		{
			// A fresh machine's demo: mean latency between 80 and 137 µs
			// (×1.7) at 2,000–16,000 IOPS, far below any target.
			"a rise of 1.7x far below the target is no knee",
			curve(2000, 80, 4000, 95, 8000, 82, 16000, 137),
			-1,
		},
		{
			// y = x² bends by exactly 3 at its chord knee x = 0.5.
			"parabola: bends by 3, a knee",
			curve(1, 1, 2, 1.25, 3, 2, 4, 3.25, 5, 5),
			2,
		},
		{
			// y = 1 + x^1.5 over x in [0, 1]: doubles, but bends by 1.9.
			"gently convex (x^1.5): no knee",
			curve(0, 1, 0.2, 1.0894, 0.4, 1.2530, 0.6, 1.4648, 0.8, 1.7155, 1, 2),
			-1,
		},
		{
			// M/M/1 at utilisations 0.1…0.95: R = 1 / (1 − ρ).
			"queueing hockey stick: knee where waiting takes over",
			curve(0.1, 1.111, 0.3, 1.429, 0.5, 2, 0.7, 3.333, 0.8, 5, 0.9, 10, 0.95, 20),
			4,
		},
		{
			"linear from a floor: no knee",
			curve(1000, 100, 2000, 200, 3000, 300, 4000, 400, 5000, 500),
			-1,
		},
		{
			"flat then explosive: knee at the last flat-ish point",
			curve(10000, 0.50, 20000, 0.52, 30000, 0.55, 40000, 0.60, 45000, 3.0, 46000, 12.0),
			3,
		},
		{
			"three points, convex",
			curve(10000, 1, 20000, 1.1, 21000, 10),
			1,
		},
		{
			"knee found regardless of input order (sorted by x)",
			curve(45000, 3.0, 10000, 0.50, 46000, 12.0, 30000, 0.55, 20000, 0.52, 40000, 0.60),
			5,
		},
		{"linear: no knee", curve(10000, 1, 20000, 2, 30000, 3, 40000, 4, 50000, 5), -1},
		{"linear with awkward numbers: no knee", curve(1234.5, 0.7, 2469, 1.4, 3703.5, 2.1, 4938, 2.8), -1},
		{"concave: no knee", curve(10000, 1, 20000, 8, 30000, 9, 40000, 9.5), -1},
		{"flat latency: no knee", curve(10000, 1, 20000, 1, 30000, 1), -1},
		{"no throughput extent: no knee", curve(10000, 1, 10000, 2, 10000, 8), -1},
		{
			// Outstanding-I/O steps past saturation deliver a little less
			// while latency keeps climbing: the overloaded point sorts
			// before the peak and lies above the chord; the knee stays at
			// the last point before the climb.
			"throughput falls back past saturation",
			curve(10000, 0.5, 20000, 0.6, 30000, 0.8, 32000, 4, 31000, 9),
			2,
		},
		{
			"flat run: the last flat point is farthest below the chord",
			curve(0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 10, 10),
			4,
		},
		{
			// Normalised: (0.25, 0) and (0.5, 0.25) are both 0.25 below
			// the chord y = x.
			"equal distances: the lower x wins",
			curve(0, 0, 1, 0, 2, 1, 4, 4),
			1,
		},
		{
			"tie in x keeps input order",
			curve(0, 0, 5, 0, 5, 0, 10, 10),
			1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kneeIndex(tc.pts); got != tc.want {
				t.Errorf("kneeIndex = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAnalyzeKnee(t *testing.T) {
	flatThenExplosive := []results.StepAggregate{
		reads(1, 10000, 500*us),
		reads(2, 20000, 520*us),
		reads(3, 30000, 550*us),
		reads(4, 40000, 600*us),
		reads(5, 45000, 3*ms),
		reads(6, 46000, 12*ms),
	}
	withFailed := append([]results.StepAggregate(nil), flatThenExplosive...)
	// The knee step fails: without it, 45,000 IOPS at 3 ms is the point
	// farthest below the chord to 46,000 IOPS at 12 ms.
	withFailed[3] = failed(withFailed[3])
	onlyTwoLeft := []results.StepAggregate{
		reads(1, 10000, 500*us), failed(reads(2, 20000, 520*us)), reads(3, 46000, 12*ms),
	}
	noLatency := []results.StepAggregate{
		reads(1, 10000, 500*us), reads(2, 20000, 520*us), reads(3, 40000, 600*us), reads(4, 46000, 12*ms),
	}
	for _, tc := range []struct {
		name string
		in   []results.StepAggregate
		opts Options
		want int // KneeStep
	}{
		{"flat then explosive", flatThenExplosive, Options{}, 4},
		{"a failed step is never the knee", withFailed, Options{}, 5},
		{"failed steps do not count as points", onlyTwoLeft, Options{}, -1},
		{"bytes axis", flatThenExplosive, Options{Throughput: ThroughputBytes}, 4},
		{"steps without the selected direction are not points", noLatency, Options{TargetSelector: LatencySelector{"p99", "write"}}, -1},
		{"linear", []results.StepAggregate{reads(1, 1000, 1*ms), reads(2, 2000, 2*ms), reads(3, 3000, 3*ms)}, Options{}, -1},
		{"empty", nil, Options{}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(unthrottled(tc.in...), tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.KneeStep != tc.want {
				t.Errorf("KneeStep = %d, want %d", res.Summary.KneeStep, tc.want)
			}
			knees := 0
			for _, s := range res.Steps {
				if s.Knee {
					knees++
					if s.Step != tc.want {
						t.Errorf("step %d flagged as knee, want %d", s.Step, tc.want)
					}
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.want < 0]; knees != want {
				t.Errorf("%d steps flagged as knee, want %d", knees, want)
			}
		})
	}
}

// TestKneeOfRecordedRuns: the rule on curves this project measured, with the
// figures its reports printed (read and write IOPS and mean latency per
// step; the knee's y is the mean over all I/O).
func TestKneeOfRecordedRuns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []results.StepAggregate
		want  int // KneeStep
	}{
		{
			// README: the demo on one node, 2,000–16,000 IOPS. The mean
			// rises to 89 µs at step 3 and falls back to 63 µs.
			"demo, one node: no knee",
			[]results.StepAggregate{
				mixed(1, 1600, 32200, 400, 64000), mixed(2, 3200, 39300, 800, 88100),
				mixed(3, 6400, 74600, 1600, 149*us), mixed(4, 12799, 55400, 3200, 95*us),
			},
			-1,
		},
		{
			// docs/local-cluster.md: the demo on three nodes of the
			// 2-core machine. The mean holds at 208–303 µs, then doubles
			// (253 → 523 µs) as the load doubles: a bend (×2.5 rise, ×4.6
			// steeper), at step 3.
			"demo, three nodes: knee where the mean doubles",
			[]results.StepAggregate{
				mixed(1, 1600, 183*us, 400, 308*us), mixed(2, 3197, 285*us, 799, 374*us),
				mixed(3, 6393, 243*us, 1598, 295*us), mixed(4, 12794, 509*us, 3199, 579*us),
			},
			3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(unthrottled(tc.steps...), Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.KneeStep != tc.want {
				t.Errorf("KneeStep = %d, want %d", res.Summary.KneeStep, tc.want)
			}
		})
	}
}
