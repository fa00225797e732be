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
			"rise just under 1.5x is still flat",
			curve(100, 1.0, 200, 1.0, 300, 1.49),
			-1,
		},
		{
			"rise of 1.5x counts",
			curve(100, 1.0, 200, 1.0, 300, 1.5),
			1,
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
