// Package numfmt formats the numbers storagebench prints — counts, rates,
// MiB/s, latencies, sizes and percentages — one way everywhere: comma
// thousands separators ("41,230"), a space before the unit ("850 µs",
// "97 %"), latencies with three significant digits in the largest unit that
// keeps them at or above 1.
//
// Every human-facing figure (the kubectl plugin, status and condition
// messages, stop reasons, the local runner's table) goes through this
// package; it depends on nothing but the standard library, so that any
// package may use it.
package numfmt

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// MiB is the number of bytes in a mebibyte; MiB/s figures are bytes per
// second divided by it.
const MiB = 1 << 20

// Group inserts commas into a string of digits: "1234567" => "1,234,567".
func Group(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Count renders a count or rate rounded to the nearest integer with comma
// thousands separators: 41230.4 => "41,230".
func Count(v float64) string { return Decimals(v, 0) }

// Decimals renders v with at most maxDecimals fraction digits, trailing
// zeros dropped, and comma thousands separators: Decimals(1041.50, 2) =>
// "1,041.5". A value that rounds to zero has no sign.
func Decimals(v float64, maxDecimals int) string { return number(v, maxDecimals, true, true) }

// Fixed renders v with exactly decimals fraction digits and comma thousands
// separators: Fixed(1041.42, 1) => "1,041.4", Fixed(0, 1) => "0.0".
func Fixed(v float64, decimals int) string { return number(v, decimals, false, true) }

// Plain renders v with at most maxDecimals fraction digits, trailing zeros
// dropped, without thousands separators: for figures that echo a spec's
// own value ("1280 MiB/s offered").
func Plain(v float64, maxDecimals int) string { return number(v, maxDecimals, true, false) }

// MiBps renders bytes per second in MiB/s with one decimal, without the
// unit: 1092016128 => "1,041.4". Tables and summaries print bandwidth this
// way.
func MiBps(bytesPerSec float64) string { return Fixed(bytesPerSec/MiB, 1) }

// number renders v with decimals fraction digits (trailing zeros dropped
// when trim), thousands separators when group, and no sign on a value that
// rounds to zero ("-0" reads oddly). NaN and infinities print as strconv
// prints them.
func number(v float64, decimals int, trim, group bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return digits(strconv.FormatFloat(v, 'f', max(decimals, 0), 64), trim, group)
}

// digits tidies a decimal number as strconv prints it: trailing fraction
// zeros dropped when trim, the integer part grouped when group, the sign of
// a zero dropped.
func digits(s string, trim, group bool) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if trim {
		frac = strings.TrimRight(frac, "0")
	}
	var b strings.Builder
	if neg && strings.Trim(intPart+frac, "0") != "" {
		b.WriteByte('-')
	}
	if group {
		b.WriteString(Group(intPart))
	} else {
		b.WriteString(intPart)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Pair renders v and ref (as Decimals does) with the fewest fraction
// digits, starting at minDecimals, that keep them visibly different when
// they differ, so that a message never reads "40,000 IOPS < 40,000 IOPS".
// After three more digits it falls back to v's shortest exact form.
func Pair(v, ref float64, minDecimals int) (string, string) {
	a, b := Decimals(v, minDecimals), Decimals(ref, minDecimals)
	for d := minDecimals + 1; a == b && v != ref && d <= minDecimals+3; d++ {
		a, b = Decimals(v, d), Decimals(ref, d)
	}
	if a == b && v != ref && !math.IsNaN(v) && !math.IsInf(v, 0) {
		a = digits(strconv.FormatFloat(v, 'f', -1, 64), true, true)
	}
	return a, b
}

// Quotient renders v/unit rounded half up to at most decimals (0 to 6)
// fraction digits, trailing zeros dropped, with comma thousands separators.
// It is exact for every int64 (no float rounding); v is clamped at 0 and
// unit must be positive. Quotient(6553600, MiB, 2) => "6.25".
func Quotient(v, unit int64, decimals int) string {
	v = max(v, 0)
	decimals = min(max(decimals, 0), 6)
	pow := uint64(1)
	for range decimals {
		pow *= 10
	}
	q, r := uint64(v/unit), uint64(v%unit)
	// (r × pow + unit/2) / unit, in 128 bits: r < unit, so the quotient is
	// at most pow.
	hi, lo := bits.Mul64(r, pow)
	lo, carry := bits.Add64(lo, uint64(unit)/2, 0)
	frac, _ := bits.Div64(hi+carry, lo, uint64(unit))
	if frac == pow {
		q, frac = q+1, 0
	}
	s := Group(strconv.FormatUint(q, 10))
	if frac == 0 {
		return s
	}
	f := strconv.FormatUint(frac, 10)
	f = strings.Repeat("0", decimals-len(f)) + f
	return s + "." + strings.TrimRight(f, "0")
}

// Size renders bytes in binary units, with one decimal when not whole:
// 8192 => "8 KiB", 1610612736 => "1.5 GiB".
func Size(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

// Percent renders a percentage with decimals fraction digits (as Fixed)
// and the unit after a space: Percent(97.2, 0) => "97 %".
func Percent(v float64, decimals int) string { return Fixed(v, decimals) + " %" }

// SignedPercent is Percent with an explicit sign, for changes: "+12.3 %",
// "-4.0 %"; a change that rounds to zero is "+0.0 %".
func SignedPercent(v float64, decimals int) string {
	s := Percent(v, decimals)
	if !strings.HasPrefix(s, "-") && !math.IsNaN(v) && !strings.HasPrefix(s, "+") {
		s = "+" + s
	}
	return s
}

var latencyUnits = []struct {
	div  float64
	name string
}{
	{1, "ns"},
	{1e3, "µs"},
	{1e6, "ms"},
	{1e9, "s"},
}

// Latency renders a latency in nanoseconds with three significant digits
// in the largest unit that keeps the value at or above 1: 850 => "850 ns",
// 850000 => "850 µs", 1840000 => "1.84 ms", 2100000000 => "2.1 s".
// Trailing zeros are dropped ("2 ms", not "2.00 ms").
func Latency(ns uint64) string { return LatencySig(ns, 3) }

// Duration is Latency of a time.Duration; a negative one prints as 0 ns.
func Duration(d time.Duration) string { return Latency(uint64(max(d, 0))) }

// LatencySig renders ns with sig significant digits (at least the whole
// integer part) in the largest unit in which the value is at least 1.
func LatencySig(ns uint64, sig int) string {
	if ns < 1000 {
		return strconv.FormatUint(ns, 10) + " ns"
	}
	u := 1
	for u+1 < len(latencyUnits) && float64(ns) >= latencyUnits[u+1].div {
		u++
	}
	s, r := roundSig(float64(ns)/latencyUnits[u].div, sig)
	if r >= 1000 && u+1 < len(latencyUnits) {
		// 999.96 µs rounds to "1000 µs": say "1 ms" instead.
		u++
		s, _ = roundSig(float64(ns)/latencyUnits[u].div, sig)
	}
	return s + " " + latencyUnits[u].name
}

// roundSig formats x (> 0) with sig significant digits, trailing zeros
// dropped, and returns the rounded value too.
func roundSig(x float64, sig int) (string, float64) {
	digits := int(math.Floor(math.Log10(x))) + 1
	dec := max(sig-digits, 0)
	s := strconv.FormatFloat(x, 'f', dec, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return Decimals(r, dec), r
}

// LatencyPair renders two latencies with the fewest significant digits (at
// least 3) that keep them visibly different when they differ: 2001000 and
// 2000000 => "2.001 ms", "2 ms".
func LatencyPair(ns, ref uint64) (string, string) {
	a, b := LatencySig(ns, 3), LatencySig(ref, 3)
	for sig := 4; a == b && ns != ref && sig <= 20; sig++ {
		a, b = LatencySig(ns, sig), LatencySig(ref, sig)
	}
	return a, b
}
