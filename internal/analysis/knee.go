package analysis

import (
	"math"
	"sort"
)

// kneeMinDistance is the smallest normalised distance below the chord that
// counts as a knee. It only absorbs floating-point noise: a curve whose
// points all lie on the chord (a straight line) has no knee.
const kneeMinDistance = 1e-9

// kneeMinRise is how far the curve must rise beyond its knee: somewhere
// past the knee the latency reaches at least twice the curve's lowest. A
// single queue's response time doubles when its server is half busy (M/M/1:
// R = S / (1 − ρ)); below that, waiting is smaller than service, and the
// wobble of real runs at low load (caches, timer slack: tens of percent)
// would otherwise give a flat, noisy curve a "knee" at its deepest dip.
const kneeMinRise = 2.0

// kneeMinBend is how much more steeply the curve must climb after the knee
// than before it (slopes of the normalised curve from the first point to
// the knee and from the knee to the last point): a straight line bends by
// 1, a parabola y = x² by exactly 3 at its chord knee, y = x^1.5 by 1.9, a
// hockey stick by far more.
const kneeMinBend = 3.0

// curvePoint is one point of the ops–latency curve; index refers back to the
// caller's slice.
type curvePoint struct {
	x, y  float64
	index int
}

// kneeIndex returns the index field of the knee point, or -1 when the curve
// has none. See the package documentation for the method: points sorted by x
// (input order kept for ties), x and y normalised to [0, 1], chord from the
// first to the last sorted point, candidate = the interior point farthest
// below the chord (vertical distance in normalised units; ties go to the
// lower x). The candidate is the knee only where the curve bends there: the
// latency past it rises to kneeMinRise × the curve's lowest, and the curve
// climbs kneeMinBend times as steeply after it as before it. Fewer than
// three points, a curve with no x or no y extent, or no point strictly
// below the chord give no knee.
func kneeIndex(points []curvePoint) int {
	n := len(points)
	if n < 3 {
		return -1
	}
	p := make([]curvePoint, n)
	copy(p, points)
	sort.SliceStable(p, func(i, j int) bool { return p[i].x < p[j].x })
	xMin, xMax := p[0].x, p[n-1].x
	yMin, yMax := p[0].y, p[0].y
	for _, q := range p[1:] {
		yMin, yMax = min(yMin, q.y), max(yMax, q.y)
	}
	if !(xMax > xMin) || !(yMax > yMin) {
		return -1
	}
	xn := func(x float64) float64 { return (x - xMin) / (xMax - xMin) }
	yn := func(y float64) float64 { return (y - yMin) / (yMax - yMin) }
	y0, y1 := yn(p[0].y), yn(p[n-1].y)
	best, bestD := -1, kneeMinDistance
	for i := 1; i < n-1; i++ {
		chord := y0 + (y1-y0)*xn(p[i].x)
		if d := chord - yn(p[i].y); d > bestD {
			best, bestD = i, d
		}
	}
	if best < 0 || !bends(p, best, yMin, xn, yn) {
		return -1
	}
	return p[best].index
}

// bends reports whether the sorted curve p bends at its point k: the
// latency after k reaches kneeMinRise × the lowest (yMin), and the slope
// from k to the last point is at least kneeMinBend × the slope from the
// first point to k (a slope over no x extent is infinite when the curve
// rose, else 0).
func bends(p []curvePoint, k int, yMin float64, xn, yn func(float64) float64) bool {
	peak := p[k+1].y
	for _, q := range p[k+2:] {
		peak = max(peak, q.y)
	}
	if peak < kneeMinRise*yMin {
		return false
	}
	slope := func(a, b curvePoint) float64 {
		dy, dx := yn(b.y)-yn(a.y), xn(b.x)-xn(a.x)
		switch {
		case dx > 0:
			return dy / dx
		case dy > 0:
			return math.Inf(1)
		default:
			return 0
		}
	}
	after := slope(p[k], p[len(p)-1])
	return after > 0 && after >= kneeMinBend*max(slope(p[0], p[k]), 0)
}

// Knee returns the index into xs and ys of the knee of the curve whose
// points are (xs[i], ys[i]), by the rule kneeIndex applies (see the package
// documentation), or -1 when the curve has none. Slices of different
// lengths have no knee.
func Knee(xs, ys []float64) int {
	if len(xs) != len(ys) {
		return -1
	}
	points := make([]curvePoint, len(xs))
	for i := range xs {
		points[i] = curvePoint{x: xs[i], y: ys[i], index: i}
	}
	return kneeIndex(points)
}
