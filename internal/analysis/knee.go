package analysis

import "sort"

// kneeMinDistance is the smallest normalised distance below the chord that
// counts as a knee. It only absorbs floating-point noise: a curve whose
// points all lie on the chord (a straight line) has no knee.
const kneeMinDistance = 1e-9

// kneeMinRise is how much higher than the curve's lowest latency its
// highest-throughput point must be for the curve to have a knee at all. Real
// runs at low load wobble by tens of percent (caches, timer slack); without
// this rule a flat, noisy curve would get a "knee" at its deepest dip.
const kneeMinRise = 1.5

// curvePoint is one point of the ops–latency curve; index refers back to the
// caller's slice.
type curvePoint struct {
	x, y  float64
	index int
}

// kneeIndex returns the index field of the knee point, or -1 when the curve
// has none. See the package documentation for the method: points sorted by x
// (input order kept for ties), x and y normalised to [0, 1], chord from the
// first to the last sorted point, knee = the interior point farthest below
// the chord (vertical distance in normalised units; ties go to the lower x).
// Fewer than three points, a curve with no x or no y extent, or no point
// strictly below the chord give no knee.
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
	if !(xMax > xMin) || !(yMax > yMin) || p[n-1].y < kneeMinRise*yMin {
		return -1
	}
	xn := func(x float64) float64 { return (x - xMin) / (xMax - xMin) }
	yn := func(y float64) float64 { return (y - yMin) / (yMax - yMin) }
	y0, y1 := yn(p[0].y), yn(p[n-1].y)
	best, bestD := -1, kneeMinDistance
	for _, q := range p[1 : n-1] {
		chord := y0 + (y1-y0)*xn(q.x)
		if d := chord - yn(q.y); d > bestD {
			best, bestD = q.index, d
		}
	}
	return best
}
