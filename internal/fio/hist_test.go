package fio

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBinIndexValueRoundTrip(t *testing.T) {
	prev := uint64(0)
	for i := range PlatNR {
		v := BinValue(i)
		if i > 0 && v <= prev {
			t.Fatalf("bin values not strictly increasing at %d: %d after %d", i, v, prev)
		}
		prev = v
		got, err := BinIndex(v)
		if err != nil || got != i {
			t.Fatalf("BinIndex(BinValue(%d)=%d) = %d, %v", i, v, got, err)
		}
	}
}

func TestBinValues(t *testing.T) {
	cases := []struct {
		idx  int
		want uint64
	}{
		{0, 0}, {127, 127}, {128, 129}, {129, 131}, {191, 255}, {192, 258}, {256, 516},
		// Last bin: group 28, error bits 27: 2^33 + 63.5 * 2^27.
		{PlatNR - 1, 1<<33 + 127<<26},
	}
	for _, c := range cases {
		if got := BinValue(c.idx); got != c.want {
			t.Errorf("BinValue(%d) = %d, want %d", c.idx, got, c.want)
		}
	}
}

func TestBinIndexRejectsForeignValues(t *testing.T) {
	for _, v := range []uint64{128, 130, 256, 1 << 40} {
		if _, err := BinIndex(v); err == nil {
			t.Errorf("BinIndex(%d) accepted a value that is not a bin's reported value", v)
		}
	}
}

func TestValueToIndexCoversRanges(t *testing.T) {
	// Every latency maps to the bin whose range contains it.
	for _, v := range []uint64{0, 1, 127, 128, 129, 130, 255, 256, 1000, 999_999, 1 << 30, 1 << 34} {
		idx := valueToIndex(v)
		if idx < PlatNR-1 && idx >= 2*platVal {
			lo := BinValue(idx) - (BinValue(idx+1)-BinValue(idx))/2
			hi := BinValue(idx) + (BinValue(idx+1)-BinValue(idx))/2
			if v < lo || v >= hi {
				t.Errorf("value %d mapped to bin %d [%d,%d)", v, idx, lo, hi)
			}
		}
	}
}

func hist(pairs ...uint64) Histogram {
	var h Histogram
	for i := 0; i < len(pairs); i += 2 {
		idx, err := BinIndex(pairs[i])
		if err != nil {
			panic(err)
		}
		h.Bins = append(h.Bins, Bin{Index: idx, Count: pairs[i+1]})
	}
	h.Bins = normalize(h.Bins)
	return h
}

func TestPercentiles(t *testing.T) {
	cases := []struct {
		name string
		h    Histogram
		ps   []float64
		want []uint64
	}{
		{"empty", Histogram{}, []float64{50, 99}, []uint64{0, 0}},
		{"single bin", hist(100, 7), []float64{1, 50, 100}, []uint64{100, 100, 100}},
		// 10 samples: p50 needs cumulative >= 5.
		{"boundary at p50", hist(10, 5, 20, 5), []float64{50, 50.1, 90}, []uint64{10, 20, 20}},
		// 1000 samples: fio's long double threshold for 99.9 is slightly
		// above 999, so the 999th sample is not enough.
		{"99.9 of 1000 needs the 1000th sample", hist(10, 999, 20, 1), []float64{99.9}, []uint64{20}},
		// 1,400 samples: fio's build computes 60 × (1400 × 0.01) = 840
		// exactly, so the 840th sample is enough (the source's order of
		// operations would ask for the 841st).
		{"p60 of 1400 takes the 840th sample", hist(10, 840, 20, 560), []float64{60}, []uint64{10}},
		{"unordered request", hist(10, 90, 20, 10), []float64{99, 50}, []uint64{20, 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.h.Percentiles(c.ps); !slices.Equal(got, c.want) {
				t.Errorf("Percentiles(%v) = %v, want %v", c.ps, got, c.want)
			}
		})
	}
}

func TestThresholdUsesFioArithmetic(t *testing.T) {
	// In float64, 99.9/100*1000 rounds to 999 exactly or below; in fio's long
	// double it stays above 999.
	th := Threshold(99.9, 1000)
	if th.Cmp(big.NewFloat(999)) <= 0 {
		t.Fatalf("threshold %v, want > 999", th)
	}
	if Threshold(50, 10).Cmp(Threshold(50, 10)) != 0 {
		t.Fatal("threshold not deterministic")
	}
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	h := hist(10, 3, 1032, 2, BinValue(1800), 9)
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Bins, h.Bins) {
		t.Fatalf("round trip %s: got %v want %v", data, back.Bins, h.Bins)
	}
	if err := json.Unmarshal([]byte(`[[130,1]]`), &back); err == nil {
		t.Fatal("a non-bin latency was accepted")
	}
}

func TestAccumulatorEqualsPooledSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var acc Accumulator
	var all []uint64
	for range 7 {
		var h Histogram
		for range 50 {
			idx := rng.IntN(PlatNR)
			c := uint64(rng.IntN(100) + 1)
			h.Bins = append(h.Bins, Bin{Index: idx, Count: c})
			for range c {
				all = append(all, BinValue(idx))
			}
		}
		h.Bins = normalize(h.Bins)
		acc.Add(h)
	}
	slices.Sort(all)
	ps := PercentileValues
	got := acc.Percentiles(ps)
	want := ReferencePercentiles(all, ps)
	if !slices.Equal(got, want) {
		t.Fatalf("merged %v, reference %v", got, want)
	}
	if acc.Total() != uint64(len(all)) {
		t.Fatalf("total %d, want %d", acc.Total(), len(all))
	}
}

func TestOverflow(t *testing.T) {
	if got := IndexOf(OverflowFloorNs); got != PlatNR-1 {
		t.Fatalf("IndexOf(OverflowFloorNs=%d) = %d, want the last bin %d", OverflowFloorNs, got, PlatNR-1)
	}
	if got := IndexOf(OverflowFloorNs - 1); got != PlatNR-2 {
		t.Fatalf("IndexOf(OverflowFloorNs-1) = %d, want %d", got, PlatNR-2)
	}
	if OverflowFloorNs < 17_000_000_000 || OverflowFloorNs > 17_100_000_000 {
		t.Fatalf("OverflowFloorNs = %d, want about 17.05 s", OverflowFloorNs)
	}
	var a Accumulator
	a.Add(hist(100, 5, BinValue(PlatNR-2), 2, BinValue(PlatNR-1), 3))
	if got := a.Overflow(); got != 3 {
		t.Fatalf("Overflow() = %d, want 3", got)
	}
}

func TestMerge(t *testing.T) {
	a, b := hist(10, 1, 20, 2, 40, 4), hist(5, 7, 20, 3, 50, 1)
	got := Merge(a, b)
	var acc Accumulator
	acc.Add(a)
	acc.Add(b)
	if !slices.Equal(got.Bins, acc.Histogram().Bins) {
		t.Fatalf("Merge = %v, want %v", got.Bins, acc.Histogram().Bins)
	}
	if got := Merge(Histogram{}, b); !slices.Equal(got.Bins, b.Bins) {
		t.Fatalf("Merge with an empty histogram = %v", got.Bins)
	}
}
