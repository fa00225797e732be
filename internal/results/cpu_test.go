package results

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestCPUBounds(t *testing.T) {
	const s = 1_000_000 // µs
	for _, tc := range []struct {
		name                string
		c                   CPU
		busy, throttled     float64
		bound, measuredWant bool
	}{
		{"not measured", CPU{}, 0, 0, false, false},
		{"one job, idle", CPU{FioUs: 2 * s, RunUs: 20 * s, AvailableMilli: 1000}, 10, 0, false, true},
		{"one job at the busy bound", CPU{FioUs: 12 * s, RunUs: 20 * s, AvailableMilli: 1000}, 60, 0, false, true},
		{"one job past it", CPU{FioUs: 12*s + 1000, RunUs: 20 * s, AvailableMilli: 1000}, 60.005, 0, true, true},
		{"four jobs on two CPUs, 1.3 of them used", CPU{FioUs: 26 * s, RunUs: 20 * s, AvailableMilli: 2000}, 65, 0, true, true},
		{"a limit of 100m, 0.05 CPU used", CPU{FioUs: s, RunUs: 20 * s, AvailableMilli: 100}, 50, 0, false, true},
		{"throttled in 1 % of periods", CPU{FioUs: s, RunUs: 20 * s, AvailableMilli: 100, Periods: 200, ThrottledPeriods: 2}, 50, 1, false, true},
		{"throttled in 1.5 %", CPU{FioUs: s, RunUs: 20 * s, AvailableMilli: 100, Periods: 200, ThrottledPeriods: 3}, 50, 1.5, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.BusyPercent(); got < tc.busy-1e-9 || got > tc.busy+1e-9 {
				t.Errorf("busy %v %%, want %v", got, tc.busy)
			}
			if got := tc.c.ThrottledPercent(); got != tc.throttled {
				t.Errorf("throttled %v %%, want %v", got, tc.throttled)
			}
			if tc.c.Bound() != tc.bound || tc.c.Measured() != tc.measuredWant {
				t.Errorf("bound %v measured %v, want %v %v", tc.c.Bound(), tc.c.Measured(), tc.bound, tc.measuredWant)
			}
		})
	}
}

// The step's clients' CPU: the maxima, and the bound clients' lowest
// indices whatever order they are merged in, with their count.
func TestClientCPUMerge(t *testing.T) {
	bound := CPU{FioUs: 9, RunUs: 10, AvailableMilli: 1000}                                       // 90 % busy
	throttled := CPU{FioUs: 1, RunUs: 10, AvailableMilli: 1000, Periods: 10, ThrottledPeriods: 5} // 50 %
	idle := CPU{FioUs: 1, RunUs: 10, AvailableMilli: 1000}
	var clients []ClientStep
	for i := range 60 {
		c := ClientStep{Client: i, CPU: idle}
		switch {
		case i%3 == 0:
			c.CPU = bound
		case i == 7:
			c.CPU = throttled
		case i == 8:
			c.CPU = CPU{} // did not measure
		}
		clients = append(clients, c)
	}
	want := ClientCPU{Measured: 59, MaxBusyPercent: 90, MaxThrottledPercent: 50, BoundCount: 21}
	want.Bound = append(want.Bound, 0, 3, 6, 7)
	for i := 9; len(want.Bound) < MaxErrors; i += 3 {
		want.Bound = append(want.Bound, i)
	}
	for round := range 3 {
		rand.Shuffle(len(clients), func(i, j int) { clients[i], clients[j] = clients[j], clients[i] })
		got := Aggregate(0, clients).ClientCPU
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %+v, want %+v", round, got, want)
		}
	}
	if got := Aggregate(0, []ClientStep{{}}).ClientCPU; !reflect.DeepEqual(got, ClientCPU{}) {
		t.Fatalf("no client measured: %+v, want zero", got)
	}
}

func TestClientStepValidateCPU(t *testing.T) {
	for _, c := range []CPU{{Periods: 1, ThrottledPeriods: 2}, {AvailableMilli: MaxJobsPerClient*1000 + 1}} {
		if err := (ClientStep{CPU: c}).Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
