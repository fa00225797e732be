package volops

import (
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
)

// Curve is one operation's steps and what they show.
type Curve struct {
	Operation Operation
	// Steps are in ascending concurrency. The knee and the fits are
	// computed over the steps in which every sample succeeded (Fit.Points
	// of them); a step with a failed or timed-out object is not evidence.
	Steps []StepSummary
	// Knee is the concurrency at which the p50 latency against concurrency
	// bends (the project's knee rule, analysis.Knee); 0 when it has none.
	Knee int
	// Fit is the least-squares line of the steps' Max latency against
	// concurrency: its slope is the time a serialising driver takes per
	// operation.
	Fit Fit
	// MeanSlope is the least-squares slope of the steps' Mean latency
	// against concurrency (half of Fit.Slope for a serialising driver); 0
	// with fewer than 2 points.
	MeanSlope time.Duration
}

// Fit is an ordinary least-squares line y = Intercept + Slope·concurrency.
// Durations are rounded to the nearest nanosecond.
type Fit struct {
	// Slope is the latency added per unit of concurrency.
	Slope, Intercept time.Duration
	// SlopeLow and SlopeHigh bound the 95 % confidence interval of Slope,
	// Slope ∓ t(0.975, n − 2) · s / √Sxx (s² = residual sum of squares /
	// (n − 2), Sxx = Σ(x − x̄)²). With exactly 2 points the line passes
	// through both and there is no degree of freedom left: the interval
	// is undefined and given as zero width (SlopeLow = SlopeHigh = Slope).
	SlopeLow, SlopeHigh time.Duration
	// R2 is the coefficient of determination, 1 − SSE/SST; 1 when the
	// points lie exactly on the line (a flat one included).
	R2 float64
	// Points is the number of points fitted. With fewer than 2 there is
	// no fit and every other field is 0.
	Points int
}

// CurveOf is op's curve over steps, which are in ascending concurrency
// (steps recorded one at a time and summarised again).
func CurveOf(op Operation, steps []StepSummary) Curve {
	c := Curve{Operation: op, Steps: steps}
	c.analyse()
	return c
}

// analyse fills the knee and the fits from c.Steps.
func (c *Curve) analyse() {
	var xs, p50s, maxes, means []float64
	for _, s := range c.Steps {
		if s.Succeeded != s.Count {
			continue
		}
		xs = append(xs, float64(s.Concurrency))
		p50s = append(p50s, float64(s.P50))
		maxes = append(maxes, float64(s.Max))
		means = append(means, float64(s.Mean))
	}
	if k := analysis.Knee(xs, p50s); k >= 0 {
		c.Knee = int(xs[k])
	}
	c.Fit = fitLine(xs, maxes)
	c.MeanSlope = fitLine(xs, means).Slope
}

// fitLine fits ys (nanoseconds) against xs, which are distinct.
func fitLine(xs, ys []float64) Fit {
	n := len(xs)
	if n < 2 {
		return Fit{Points: n}
	}
	var xm, ym float64
	for i := range xs {
		xm += xs[i]
		ym += ys[i]
	}
	xm /= float64(n)
	ym /= float64(n)
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-xm, ys[i]-ym
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	slope := sxy / sxx
	intercept := ym - slope*xm
	var sse float64
	for i := range xs {
		e := ys[i] - (intercept + slope*xs[i])
		sse += e * e
	}
	f := Fit{Slope: ns(slope), Intercept: ns(intercept), R2: 1, Points: n}
	if syy > 0 {
		f.R2 = max(1-sse/syy, 0)
	}
	half := time.Duration(0)
	if n > 2 {
		half = ns(analysis.T975(n-2) * math.Sqrt(sse/float64(n-2)/sxx))
	}
	f.SlopeLow, f.SlopeHigh = f.Slope-half, f.Slope+half
	return f
}

// ns rounds nanoseconds to a Duration.
func ns(v float64) time.Duration { return time.Duration(math.Round(v)) }
