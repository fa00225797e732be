package analysis

import (
	"math"
	"testing"
)

func TestFormatCount(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{999.5, "1,000"},
		{1000, "1,000"},
		{41230.4, "41,230"},
		{160000, "160,000"},
		{1234567.6, "1,234,568"},
		{-1234, "-1,234"},
		{-0.4, "0"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
	} {
		if got := FormatCount(tc.in); got != tc.want {
			t.Errorf("FormatCount(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatLatency(t *testing.T) {
	for _, tc := range []struct {
		ns   uint64
		want string
	}{
		{0, "0 ns"},
		{850, "850 ns"},
		{999, "999 ns"},
		{1000, "1 µs"},
		{1500, "1.5 µs"},
		{85260, "85.3 µs"},
		{850000, "850 µs"},
		{999400, "999 µs"},
		{999600, "1 ms"},
		{1000000, "1 ms"},
		{1840000, "1.84 ms"},
		{2000000, "2 ms"},
		{12345678, "12.3 ms"},
		{184000000, "184 ms"},
		{999999999, "1 s"},
		{2100000000, "2.1 s"},
		{3600 * 1000000000, "3,600 s"},
	} {
		if got := FormatLatency(tc.ns); got != tc.want {
			t.Errorf("FormatLatency(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestFormatPair(t *testing.T) {
	for _, tc := range []struct {
		v, ref       float64
		dec          int
		wantV, wantR string
	}{
		{41230, 40000, 0, "41,230", "40,000"},
		{40000, 40000, 0, "40,000", "40,000"},
		{39999.6, 40000, 0, "39,999.6", "40,000"},
		{39999.996, 40000, 0, "39,999.996", "40,000"},
		{87.84, 100, 1, "87.8", "100"},
	} {
		v, r := formatPair(tc.v, tc.ref, tc.dec)
		if v != tc.wantV || r != tc.wantR {
			t.Errorf("formatPair(%v, %v, %d) = %q, %q; want %q, %q", tc.v, tc.ref, tc.dec, v, r, tc.wantV, tc.wantR)
		}
	}
}

func TestFormatLatencyPair(t *testing.T) {
	for _, tc := range []struct {
		ns, ref      uint64
		wantV, wantR string
	}{
		{1840000, 2000000, "1.84 ms", "2 ms"},
		{2000000, 2000000, "2 ms", "2 ms"},
		{2001000, 2000000, "2.001 ms", "2 ms"},
		{2000001, 2000000, "2.000001 ms", "2 ms"},
		{999999, 1000000, "999.999 µs", "1 ms"},
	} {
		v, r := formatLatencyPair(tc.ns, tc.ref)
		if v != tc.wantV || r != tc.wantR {
			t.Errorf("formatLatencyPair(%d, %d) = %q, %q; want %q, %q", tc.ns, tc.ref, v, r, tc.wantV, tc.wantR)
		}
	}
}
