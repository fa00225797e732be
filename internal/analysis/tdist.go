package analysis

import "math"

// Student's t distribution, for the run-level regression test (runlevel.go):
// with a handful of baseline runs the spread of their figures is itself
// estimated from a handful of values, and the t distribution is what
// accounts for that; a normal quantile would call too much significant.
// Computed here rather than tabled so that any number of baseline runs has
// its exact p-value.

// StudentTCDF is P(T ≤ t) for Student's t distribution with df degrees of
// freedom (df > 0, not necessarily whole): ½·I_x(df/2, ½) with
// x = df/(df + t²) for t ≤ 0, and 1 minus that for t > 0, I being the
// regularized incomplete beta function. It is 0 at −∞ and 1 at +∞; NaN for
// a NaN t or a df that is not a positive number. df = 1 is the Cauchy
// distribution (½ + atan(t)/π); a large df approaches the standard normal.
func StudentTCDF(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || math.IsNaN(df) || df <= 0:
		return math.NaN()
	case math.IsInf(t, -1):
		return 0
	case math.IsInf(t, 1):
		return 1
	case math.IsInf(df, 1):
		return 0.5 * math.Erfc(-t/math.Sqrt2)
	}
	// x and 1 − x are both computed directly, without the cancellation of
	// 1 − x when t² is small against df or large.
	t2 := t * t
	x, y := df/(df+t2), t2/(df+t2)
	tail := 0.5 * regIncBeta(df/2, 0.5, x, y) // P(T ≤ −|t|)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 ≤ x ≤ 1, y = 1 − x passed in as computed by the caller.
// It is the continued fraction (Numerical Recipes' betacf, by the modified
// Lentz method) times the front factor x^a·y^b / (a·B(a, b)), on whichever
// of I_x(a, b) and 1 − I_y(b, a) converges fast: x below (a + 1)/(a + b + 2).
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(y))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, y)/b
}

// Limits of the continued fraction: it converges in O(√max(a, b))
// iterations, so 10,000 covers any df up to about 10⁷ (beyond that the
// distribution is the normal to double precision); tiny keeps Lentz's
// denominators off zero.
const (
	betaCFMaxIter = 10000
	betaCFEps     = 1e-15
	betaCFTiny    = 1e-300
)

// betaCF evaluates the continued fraction of I_x(a, b),
// 1/(1+ d₁/(1+ d₂/(1+ …))) with d_{2m+1} = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1))
// and d_{2m} = m(b−m)x / ((a+2m−1)(a+2m)), by the modified Lentz method.
func betaCF(a, b, x float64) float64 {
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < betaCFTiny {
		d = betaCFTiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= betaCFMaxIter; m++ {
		mf, m2 := float64(m), float64(2*m)
		// The even step.
		aa := mf * (b - mf) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < betaCFTiny {
			d = betaCFTiny
		}
		c = 1 + aa/c
		if math.Abs(c) < betaCFTiny {
			c = betaCFTiny
		}
		d = 1 / d
		h *= d * c
		// The odd step.
		aa = -(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < betaCFTiny {
			d = betaCFTiny
		}
		c = 1 + aa/c
		if math.Abs(c) < betaCFTiny {
			c = betaCFTiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < betaCFEps {
			break
		}
	}
	return h
}
