package analysis

import "testing"

func TestKnee(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   int
	}{
		{"empty", nil, nil, -1},
		{"two points", []float64{1, 2}, []float64{1, 10}, -1},
		{"lengths differ", []float64{1, 2, 3, 4, 5}, []float64{1, 1.25, 2, 3.25}, -1},
		{"flat", []float64{1, 5, 10, 25, 50}, []float64{2, 2, 2, 2, 2}, -1},
		{"straight line", []float64{1, 5, 10, 25, 50}, []float64{1, 5, 10, 25, 50}, -1},
		{"parabola: bends by 3", []float64{1, 2, 3, 4, 5}, []float64{1, 1.25, 2, 3.25, 5}, 2},
		{
			"M/M/1 hockey stick",
			[]float64{0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95},
			[]float64{1.111, 1.429, 2, 3.333, 5, 10, 20},
			4,
		},
		{
			// The same hockey stick given out of order: the index still
			// points into the caller's slices.
			"unsorted input keeps the caller's index",
			[]float64{0.95, 0.1, 0.8, 0.3, 0.9, 0.5, 0.7},
			[]float64{20, 1.111, 5, 1.429, 10, 2, 3.333},
			2,
		},
		{
			"flat then a wall, by concurrency",
			[]float64{1, 5, 10, 25, 50},
			[]float64{1, 1, 1.1, 1.2, 9},
			3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Knee(tc.xs, tc.ys); got != tc.want {
				t.Errorf("Knee(%v, %v) = %d, want %d", tc.xs, tc.ys, got, tc.want)
			}
		})
	}
}
