package results

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/storagebench/storagebench/internal/fio"
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

// A scale-out step: the clients it leaves out report idle results, which
// are counted and not merged; an idle result from a client that runs the
// step, or a measured one from a client that does not, is refused, as is
// an idle result that carries figures.
func TestMergerRunningClients(t *testing.T) {
	measured := func(c int) ClientStep {
		return ClientStep{Client: c, Jobs: 1, Read: Operation{IOs: 10, IOPS: 1, Latency: fio.LatencyStats{Count: 10, MinNs: 1, MaxNs: 1, MeanNs: 1,
			Hist: fio.Histogram{Bins: []fio.Bin{{Index: 1, Count: 10}}}}}}
	}
	idle := func(c int) ClientStep { return ClientStep{Client: c, Idle: true} }
	m := NewMerger(0)
	m.Running(2)
	for _, c := range []ClientStep{measured(0), idle(3), measured(1), idle(2)} {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if agg := m.Result(); agg.Clients != 2 || agg.IdleClients != 2 || agg.Read.IOs != 20 {
		t.Fatalf("%d merged, %d idle, %d reads; want 2, 2, 20", agg.Clients, agg.IdleClients, agg.Read.IOs)
	}
	for name, tc := range map[string]struct {
		running int
		c       ClientStep
	}{
		"idle, but runs it":      {2, idle(1)},
		"measured, but left out": {2, measured(2)},
		"idle in a step all run": {0, idle(0)},
		"idle with figures":      {2, func() ClientStep { c := measured(3); c.Idle = true; return c }()},
	} {
		m := NewMerger(0)
		m.Running(tc.running)
		if err := m.Add(tc.c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
