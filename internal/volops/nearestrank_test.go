package volops

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	s := func(secs ...int) []time.Duration {
		out := make([]time.Duration, len(secs))
		for i, v := range secs {
			out[i] = time.Duration(v) * time.Second
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name    string
		sorted  []time.Duration
		percent int
		want    time.Duration
	}{
		{"one", s(7), 50, 7 * time.Second},
		{"two: the first (k = ceil(2/2) = 1)", s(1, 9), 50, time.Second},
		{"three: the second", s(1, 2, 9), 50, 2 * time.Second},
		{"four: the second", s(1, 2, 3, 9), 50, 2 * time.Second},
		{"five: the third", s(1, 2, 3, 4, 9), 50, 3 * time.Second},
		{"p100 is the max", s(1, 2, 3), 100, 3 * time.Second},
		{"p1 of few is the min", s(1, 2, 3), 1, time.Second},
		{"p99 of 100 is the 99th", s(hundred...), 99, 99 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NearestRank(tc.sorted, tc.percent); got != tc.want {
				t.Errorf("NearestRank(%v, %d) = %s, want %s", tc.sorted, tc.percent, got, tc.want)
			}
		})
	}
}
