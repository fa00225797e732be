package numfmt

import (
	"math"
	"testing"
	"time"
)

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{"": "", "7": "7", "999": "999", "1000": "1,000", "1234567": "1,234,567", "123456": "123,456"} {
		if got := Group(in); got != want {
			t.Errorf("Group(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
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
		{math.Inf(-1), "-Inf"},
	} {
		if got := Count(tc.in); got != tc.want {
			t.Errorf("Count(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecimalsFixedPlain(t *testing.T) {
	for _, tc := range []struct {
		v                   float64
		dec                 int
		decimals, fixed, pl string
	}{
		{0, 1, "0", "0.0", "0"},
		{1041.42, 1, "1,041.4", "1,041.4", "1041.4"},
		{1041.46, 1, "1,041.5", "1,041.5", "1041.5"},
		{999.94, 1, "999.9", "999.9", "999.9"},
		{999.96, 1, "1,000", "1,000.0", "1000"},
		{1234567.8, 1, "1,234,567.8", "1,234,567.8", "1234567.8"},
		{2.5, 2, "2.5", "2.50", "2.5"},
		{1280, 1, "1,280", "1,280.0", "1280"},
		{-1234.56, 1, "-1,234.6", "-1,234.6", "-1234.6"},
		{-0.04, 1, "0", "0.0", "0"},
		{12.5, 0, "12", "12", "12"}, // strconv rounds half to even
		{66780, -1, "66,780", "66,780", "66780"},
		{math.NaN(), 1, "NaN", "NaN", "NaN"},
	} {
		if got := Decimals(tc.v, tc.dec); got != tc.decimals {
			t.Errorf("Decimals(%v, %d) = %q, want %q", tc.v, tc.dec, got, tc.decimals)
		}
		if got := Fixed(tc.v, tc.dec); got != tc.fixed {
			t.Errorf("Fixed(%v, %d) = %q, want %q", tc.v, tc.dec, got, tc.fixed)
		}
		if got := Plain(tc.v, tc.dec); got != tc.pl {
			t.Errorf("Plain(%v, %d) = %q, want %q", tc.v, tc.dec, got, tc.pl)
		}
	}
}

func TestMiBps(t *testing.T) {
	for _, tc := range []struct {
		bytesPerSec float64
		want        string
	}{
		{0, "0.0"},
		{MiB, "1.0"},
		{1041.42 * MiB, "1,041.4"},
		{483.1 * MiB, "483.1"},
		{1 << 40, "1,048,576.0"},
	} {
		if got := MiBps(tc.bytesPerSec); got != tc.want {
			t.Errorf("MiBps(%v) = %q, want %q", tc.bytesPerSec, got, tc.want)
		}
	}
}

func TestPair(t *testing.T) {
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
		// A stop reason's achieved rate never looks at or above its threshold.
		{899.99, 900, 0, "899.99", "900"},
		{449.4, 450, 0, "449", "450"},
		{1041.46, 1152, 1, "1,041.5", "1,152"},
		// Closer than three more digits show: the exact value.
		{899.9999999, 900, 0, "899.9999999", "900"},
	} {
		v, r := Pair(tc.v, tc.ref, tc.dec)
		if v != tc.wantV || r != tc.wantR {
			t.Errorf("Pair(%v, %v, %d) = %q, %q; want %q, %q", tc.v, tc.ref, tc.dec, v, r, tc.wantV, tc.wantR)
		}
	}
}

func TestQuotient(t *testing.T) {
	const gib, tib = 1 << 30, 1 << 40
	for _, tc := range []struct {
		v, unit int64
		dec     int
		want    string
	}{
		{6_553_600, MiB, 2, "6.25"},
		{1500 << 20, MiB, 2, "1,500"},
		{1_048_575, MiB, 2, "1"},
		{0, MiB, 2, "0"},
		{-7, MiB, 2, "0"},
		{1_234_567 << 20, MiB, 2, "1,234,567"},
		{1<<20 + 1<<19, MiB, 2, "1.5"},
		{MiB / 8, MiB, 2, "0.13"}, // 0.125: half up, unlike strconv's half to even
		{MiB / 8, MiB, 3, "0.125"},
		{MiB / 8, MiB, 0, "0"},
		{100 * gib, gib, 2, "100"},
		{1536 * gib, tib, 2, "1.5"},
		{gib / 2, gib, 2, "0.5"},
		{math.MaxInt64, math.MaxInt64, 2, "1"},
		{math.MaxInt64, 3, 6, "3,074,457,345,618,258,602.333333"},
		{math.MaxInt64 - 1, math.MaxInt64, 6, "1"},
		{1, 3, 9, "0.333333"}, // at most 6 decimals
	} {
		if got := Quotient(tc.v, tc.unit, tc.dec); got != tc.want {
			t.Errorf("Quotient(%d, %d, %d) = %q, want %q", tc.v, tc.unit, tc.dec, got, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 512: "512 B", 8192: "8 KiB", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 32 << 30: "32 GiB", 5 << 50: "5 PiB"} {
		if got := Size(in); got != want {
			t.Errorf("Size(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		v          float64
		dec        int
		pct, delta string
	}{
		{97, 0, "97 %", "+97 %"},
		{44.4, 0, "44 %", "+44 %"},
		{100, 0, "100 %", "+100 %"},
		{10, 1, "10.0 %", "+10.0 %"},
		{-93.33, 1, "-93.3 %", "-93.3 %"},
		{140.06, 1, "140.1 %", "+140.1 %"},
		{-0.04, 1, "0.0 %", "+0.0 %"},
		{12345.6, 0, "12,346 %", "+12,346 %"},
	} {
		if got := Percent(tc.v, tc.dec); got != tc.pct {
			t.Errorf("Percent(%v, %d) = %q, want %q", tc.v, tc.dec, got, tc.pct)
		}
		if got := SignedPercent(tc.v, tc.dec); got != tc.delta {
			t.Errorf("SignedPercent(%v, %d) = %q, want %q", tc.v, tc.dec, got, tc.delta)
		}
	}
}

func TestLatency(t *testing.T) {
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
		{2310000, "2.31 ms"},
		{12345678, "12.3 ms"},
		{184000000, "184 ms"},
		{999999999, "1 s"},
		{2100000000, "2.1 s"},
		{3600 * 1000000000, "3,600 s"},
	} {
		if got := Latency(tc.ns); got != tc.want {
			t.Errorf("Latency(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "0 ns", 831 * time.Microsecond: "831 µs", 24100 * time.Microsecond: "24.1 ms"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLatencyPair(t *testing.T) {
	for _, tc := range []struct {
		ns, ref      uint64
		wantV, wantR string
	}{
		{1840000, 2000000, "1.84 ms", "2 ms"},
		{2000000, 2000000, "2 ms", "2 ms"},
		{2001000, 2000000, "2.001 ms", "2 ms"},
		{2000001, 2000000, "2.000001 ms", "2 ms"},
		{999999, 1000000, "999.999 µs", "1 ms"},
		{500001, 500000, "500.001 µs", "500 µs"},
		{10000001, 10000000, "10.000001 ms", "10 ms"},
		{2310000, 2000000, "2.31 ms", "2 ms"},
	} {
		v, r := LatencyPair(tc.ns, tc.ref)
		if v != tc.wantV || r != tc.wantR {
			t.Errorf("LatencyPair(%d, %d) = %q, %q; want %q, %q", tc.ns, tc.ref, v, r, tc.wantV, tc.wantR)
		}
	}
}
