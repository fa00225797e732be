package analysis

import (
	"math"
	"testing"
)

// Quantiles from the published tables to 6 or 7 decimals (an error of half
// the last decimal moves the CDF by the density times 5e-7, inside the
// tolerances), closed forms, and a few values computed with mpmath.
func TestStudentTCDFKnownQuantiles(t *testing.T) {
	cases := []struct {
		name   string
		t, df  float64
		want   float64
		tol    float64
		relErr bool // tol is relative to want
	}{
		{name: "df 2, 1 %", t: -6.964557, df: 2, want: 0.01, tol: 1e-7},
		{name: "df 4, 5 %", t: -2.131847, df: 4, want: 0.05, tol: 1e-7},
		{name: "df 10, 95 %", t: 1.812461, df: 10, want: 0.95, tol: 1e-7},
		{name: "df 30, 1 %", t: -2.457262, df: 30, want: 0.01, tol: 1e-7},
		{name: "df 1 is Cauchy", t: -1, df: 1, want: 0.25, tol: 1e-15},
		{name: "df 1, far tail", t: -1e6, df: 1, want: 1 / (math.Pi * 1e6), tol: 1e-9, relErr: true},
		{name: "df 2, 0.1 %", t: -22.32712, df: 2, want: 0.001, tol: 1e-7},
		{name: "df 4, 0.1 %", t: -7.173182, df: 4, want: 0.001, tol: 1e-8},
		{name: "df 9, 99.5 %", t: 3.249836, df: 9, want: 0.995, tol: 1e-7},
		{name: "zero is the median", t: 0, df: 3, want: 0.5, tol: 0},
		{name: "large df is the normal", t: 1.959964, df: 1e6, want: 0.975, tol: 1e-6},
		{name: "large df, lower tail", t: -2.326348, df: 1e6, want: 0.01, tol: 1e-6},
		{name: "infinite df is the normal", t: -1.644854, df: math.Inf(1), want: 0.05, tol: 1e-7},
		// Computed with mpmath's betainc at 30 digits.
		{name: "half a degree of freedom", t: -1, df: 0.5, want: 0.301121610841322077, tol: 1e-14},
		{name: "df 4.5, far tail", t: -40, df: 4.5, want: 3.22478260646049908e-7, tol: 1e-12, relErr: true},
		{name: "df 100,000, 3 below", t: -3, df: 1e5, want: 0.00135023044203235960, tol: 1e-10, relErr: true},
		{name: "−∞", t: math.Inf(-1), df: 4, want: 0, tol: 0},
		{name: "+∞", t: math.Inf(1), df: 4, want: 1, tol: 0},
		{name: "far below", t: -1e300, df: 4, want: 0, tol: 1e-300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := StudentTCDF(c.t, c.df)
			tol := c.tol
			if c.relErr {
				tol *= c.want
			}
			if !(math.Abs(got-c.want) <= tol) {
				t.Errorf("StudentTCDF(%v, %v) = %.12g, want %.12g ± %g", c.t, c.df, got, c.want, tol)
			}
		})
	}
}

// The repeat table's t(0.975, df) are quantiles too: the two tables, made
// independently, agree.
func TestStudentTCDFMatchesRepeatTable(t *testing.T) {
	for df := 1; df < MaxRuns; df++ {
		if got := StudentTCDF(t975[df], float64(df)); math.Abs(got-0.975) > 1e-10 {
			t.Errorf("StudentTCDF(t975[%d] = %v) = %.12g, want 0.975", df, t975[df], got)
		}
	}
}

// Closed forms for df 1, 2 and 3 over a grid of t, symmetry for any df,
// monotonicity in t, and invalid arguments.
func TestStudentTCDFClosedFormsAndShape(t *testing.T) {
	closed := map[float64]func(float64) float64{
		1: func(x float64) float64 { return 0.5 + math.Atan(x)/math.Pi },
		2: func(x float64) float64 { return 0.5 * (1 + x/math.Sqrt(x*x+2)) },
		3: func(x float64) float64 {
			return 0.5 + (x/(math.Sqrt(3)*(1+x*x/3))+math.Atan(x/math.Sqrt(3)))/math.Pi
		},
	}
	for df, f := range closed {
		for x := -50.0; x <= 50; x += 0.25 {
			got, want := StudentTCDF(x, df), f(x)
			if math.Abs(got-want) > 1e-12*max(1, want) && math.Abs(got-want) > 1e-13 {
				t.Errorf("df %v: StudentTCDF(%v) = %.15g, closed form %.15g", df, x, got, want)
			}
		}
	}
	for _, df := range []float64{0.5, 1, 2, 3, 4.5, 7, 19, 100, 1e5} {
		prev := -1.0
		for x := -40.0; x <= 40; x += 0.125 {
			p := StudentTCDF(x, df)
			if math.Abs(p+StudentTCDF(-x, df)-1) > 1e-14 {
				t.Errorf("df %v: P(T ≤ %v) + P(T ≤ %v) = %v, want 1", df, x, -x, p+StudentTCDF(-x, df))
			}
			if p < prev || p < 0 || p > 1 {
				t.Errorf("df %v: P(T ≤ %v) = %v after %v: not a CDF", df, x, p, prev)
			}
			prev = p
		}
	}
	for _, c := range [][2]float64{{math.NaN(), 3}, {1, 0}, {1, -2}, {1, math.NaN()}} {
		if got := StudentTCDF(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("StudentTCDF(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
}
