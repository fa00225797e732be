package fio

import (
	"math/big"
)

// ReferencePercentiles computes percentiles the plain way, from a sorted
// list of every sample: the k-th smallest sample, where k is the smallest
// integer with k ≥ p/100 × N (p taken as the exact value of the float64).
// It shares no code with Accumulator and exists to check it.
func ReferencePercentiles(sorted []uint64, ps []float64) []uint64 {
	out := make([]uint64, len(ps))
	n := int64(len(sorted))
	if n == 0 {
		return out
	}
	for i, p := range ps {
		r := new(big.Rat).SetFloat64(p)
		r.Mul(r, big.NewRat(n, 100))
		// k = ceil(r)
		k := new(big.Int).Quo(r.Num(), r.Denom())
		if new(big.Rat).SetInt(k).Cmp(r) < 0 {
			k.Add(k, big.NewInt(1))
		}
		idx := k.Int64() - 1
		if idx < 0 {
			idx = 0
		}
		if idx >= n {
			idx = n - 1
		}
		out[i] = sorted[idx]
	}
	return out
}
