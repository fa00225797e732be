package volops

import (
	"math"
	"testing"
	"time"
)

// TestSerialAndParallelDrivers builds the two drivers of the package
// documentation over the ladder 1, 5, 10, 25, 50 with D = 2 s.
func TestSerialAndParallelDrivers(t *testing.T) {
	const d = 2 * time.Second
	for _, tc := range []struct {
		name      string
		step      func(Operation, int, time.Duration) []Sample
		p50       func(n int) time.Duration
		max       func(n int) time.Duration
		slope     time.Duration
		meanSlope time.Duration
		intercept time.Duration
	}{
		{
			// One at a time: the k-th of N finishes at k·D.
			name:      "serial driver: slope of max is D",
			step:      serial,
			p50:       func(n int) time.Duration { return time.Duration(ceilDiv(n, 2)) * d },
			max:       func(n int) time.Duration { return time.Duration(n) * d },
			slope:     d,
			meanSlope: d / 2,
		},
		{
			name:      "parallel driver: slope 0",
			step:      parallel,
			p50:       func(int) time.Duration { return d },
			max:       func(int) time.Duration { return d },
			intercept: d,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var samples []Sample
			for _, n := range steps {
				samples = append(samples, tc.step(CloneFromSnapshot, n, d)...)
			}
			r, err := Summarize(samples)
			if err != nil {
				t.Fatal(err)
			}
			c, ok := r.Curve(CloneFromSnapshot)
			if !ok || len(c.Steps) != len(steps) {
				t.Fatalf("curve = %+v, want %d steps", c, len(steps))
			}
			for i, n := range steps {
				s := c.Steps[i]
				if s.Concurrency != n || s.P50 != tc.p50(n) || s.Max != tc.max(n) {
					t.Errorf("step %d: concurrency %d, p50 %v, max %v; want %d, %v, %v",
						i, s.Concurrency, s.P50, s.Max, n, tc.p50(n), tc.max(n))
				}
				// N operations over the step's span, which is its max.
				if want := float64(n) / tc.max(n).Minutes(); math.Abs(s.PerMinute-want) > 1e-9 {
					t.Errorf("step %d: %v per minute, want %v", n, s.PerMinute, want)
				}
			}
			want := Fit{Slope: tc.slope, Intercept: tc.intercept, SlopeLow: tc.slope, SlopeHigh: tc.slope, R2: 1, Points: len(steps)}
			if c.Fit != want {
				t.Errorf("fit = %+v, want %+v", c.Fit, want)
			}
			if c.MeanSlope != tc.meanSlope {
				t.Errorf("mean slope = %v, want %v", c.MeanSlope, tc.meanSlope)
			}
			if c.Knee != 0 {
				t.Errorf("knee at %d, want none", c.Knee)
			}
		})
	}
}

func TestCurveKnee(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    int
		points  int
	}{
		{
			// Parallel up to 10, then a wall: the knee is the last flat step.
			"flat, then a wall",
			concat(parallel(Provision, 1, s), parallel(Provision, 5, s), parallel(Provision, 10, 1100*time.Millisecond),
				parallel(Provision, 25, 1200*time.Millisecond), parallel(Provision, 50, 9*s)),
			25, 5,
		},
		{
			// The wall's step had a timeout: it is not evidence, and what
			// is left is flat.
			"a step with a timeout is left out",
			concat(parallel(Provision, 1, s), parallel(Provision, 5, s), parallel(Provision, 10, 1100*time.Millisecond),
				parallel(Provision, 25, 1200*time.Millisecond), with(parallel(Provision, 50, 9*s), 3, TimedOut, "not bound in 5m")),
			0, 4,
		},
		{
			"two steps: no knee",
			concat(parallel(Provision, 1, s), parallel(Provision, 50, 9*s)),
			0, 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Summarize(tc.samples)
			if err != nil {
				t.Fatal(err)
			}
			c := r.Curves[0]
			if c.Knee != tc.want || c.Fit.Points != tc.points {
				t.Errorf("knee %d over %d points, want %d over %d", c.Knee, c.Fit.Points, tc.want, tc.points)
			}
		})
	}
}

func TestFitLine(t *testing.T) {
	const sec = float64(time.Second)
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   Fit
	}{
		{"no points", nil, nil, Fit{}},
		{"one point: no fit", []float64{5}, []float64{sec}, Fit{Points: 1}},
		{
			"two points: through both, zero width",
			[]float64{1, 5}, []float64{sec, 3 * sec},
			Fit{Slope: 500 * time.Millisecond, Intercept: 500 * time.Millisecond,
				SlopeLow: 500 * time.Millisecond, SlopeHigh: 500 * time.Millisecond, R2: 1, Points: 2},
		},
		{
			// x̄ = ȳ = 2.5, Sxx = Syy = 5, Sxy = 4: slope 0.8, intercept
			// 0.5, SSE 1.8, s² = 0.9, half width t(0.975, 2)·√(0.9/5) =
			// 4.302653 × 0.424264… s, R² = 1 − 1.8/5.
			"scattered: interval from t with n − 2 degrees of freedom",
			[]float64{1, 2, 3, 4}, []float64{sec, 3 * sec, 2 * sec, 4 * sec},
			Fit{Slope: 800 * time.Millisecond, Intercept: 500 * time.Millisecond,
				SlopeLow: 800*time.Millisecond - 1825460953, SlopeHigh: 800*time.Millisecond + 1825460953, // t(0.975, 2) · √0.18
				R2: 0.64, Points: 4},
		},
		{
			"falling line, awkward numbers",
			[]float64{3, 7, 11}, []float64{1e9 - 3*333333, 1e9 - 7*333333, 1e9 - 11*333333},
			Fit{Slope: -333333, Intercept: time.Second, SlopeLow: -333333, SlopeHigh: -333333, R2: 1, Points: 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitLine(tc.xs, tc.ys)
			if math.Abs(got.R2-tc.want.R2) > 1e-12 {
				t.Errorf("R2 = %v, want %v", got.R2, tc.want.R2)
			}
			got.R2, tc.want.R2 = 0, 0
			if got != tc.want {
				t.Errorf("fitLine = %+v, want %+v", got, tc.want)
			}
		})
	}
}
