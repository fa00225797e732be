package analysis

import (
	"math"
	"strconv"
	"strings"
)

// mib is the number of bytes in a mebibyte; MiB/s figures are bytes per second
// divided by it.
const mib = 1 << 20

// FormatCount renders a count or rate rounded to the nearest integer with
// comma thousands separators: 41230.4 => "41,230".
func FormatCount(v float64) string {
	return formatDecimals(v, 0)
}

// FormatLatency renders a latency in nanoseconds with three significant
// digits in the largest unit that keeps the value at or above 1:
// 850 => "850 ns", 850000 => "850 µs", 1840000 => "1.84 ms",
// 2100000000 => "2.1 s". Trailing zeros are dropped ("2 ms", not "2.00 ms").
func FormatLatency(ns uint64) string {
	return formatLatencySig(ns, 3)
}

// GroupThousands inserts commas into a string of digits: "1234567" =>
// "1,234,567".
func GroupThousands(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatDecimals renders v with at most decimals fraction digits (trailing
// zeros dropped) and comma thousands separators in the integer part.
func formatDecimals(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac {
		frac = strings.TrimRight(frac, "0")
	}
	var b strings.Builder
	// A value that rounds to zero is printed without a sign ("-0" reads oddly).
	if neg && strings.Trim(intPart+frac, "0") != "" {
		b.WriteByte('-')
	}
	b.WriteString(GroupThousands(intPart))
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// formatPair renders v and ref with the fewest fraction digits (starting at
// minDecimals, at most 3 more) that keep them visibly different when they
// differ, so a reason never reads "40,000 IOPS < 40,000 IOPS".
func formatPair(v, ref float64, minDecimals int) (string, string) {
	a, b := formatDecimals(v, minDecimals), formatDecimals(ref, minDecimals)
	for d := minDecimals + 1; a == b && v != ref && d <= minDecimals+3; d++ {
		a, b = formatDecimals(v, d), formatDecimals(ref, d)
	}
	return a, b
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

// formatLatencySig renders ns with sig significant digits (at least the whole
// integer part) in the largest unit in which the value is at least 1.
func formatLatencySig(ns uint64, sig int) string {
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
	return formatDecimals(r, dec), r
}

// formatLatencyPair renders two latencies with the fewest significant digits
// (at least 3) that keep them visibly different when they differ.
func formatLatencyPair(ns, ref uint64) (string, string) {
	a, b := formatLatencySig(ns, 3), formatLatencySig(ref, 3)
	for sig := 4; a == b && ns != ref && sig <= 12; sig++ {
		a, b = formatLatencySig(ns, sig), formatLatencySig(ref, sig)
	}
	return a, b
}
