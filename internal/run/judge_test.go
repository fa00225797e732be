package run

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

func TestClientsEven(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	step := func(index int, cv float64, superseded bool) Step {
		s := Step{Order: protocol.StepOrder{Index: index}, Superseded: superseded}
		s.Aggregate.ClientIOPS = results.ClientSpread{MinIOPS: 900, MaxIOPS: 900 * (1 + cv/50), CVPercent: cv}
		return s
	}
	for _, tc := range []struct {
		name   string
		steps  []Step
		status string
		reason string
		msg    string
	}{
		{"even", []Step{step(0, 2, false), step(1, 10.4, false)}, True, ReasonEvenShare, "in each of 2 steps"},
		{"uneven, named", []Step{step(0, 2, false), step(1, 10.5, false), step(2, 30, false)}, False, ReasonUnevenShare,
			"2 of 3 steps shared unevenly (the clients' IOPS varied by a CV above 10 %): step 2 (CV 11 %: 900 to 1,089 IOPS), step 3 (CV 30 %"},
		{"a superseded step does not stand", []Step{step(0, 40, true), step(1, 3, false)}, True, ReasonEvenShare, "in each of 1 steps"},
		{"no step with the clients' IOPS", []Step{{}}, Unknown, ReasonNotMeasurable, "no step that stands"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ClientsEvenVerdict(tc.steps, at)
			if v.Status != tc.status || v.Reason != tc.reason || !strings.HasPrefix(v.Message, tc.msg) || !v.At.Equal(at) {
				t.Fatalf("%+v, want %s %s %q…", v, tc.status, tc.reason, tc.msg)
			}
		})
	}
}

func TestClientCPUVerdict(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	step := func(index int, cpu results.ClientCPU, superseded bool) Step {
		s := Step{Order: protocol.StepOrder{Index: index, StartAt: t0.Add(time.Duration(index) * time.Minute), Duration: 30 * time.Second}, Superseded: superseded}
		s.Aggregate.ClientCPU = cpu
		return s
	}
	idle := results.ClientCPU{Measured: 4, MaxBusyPercent: 12}
	busy := results.ClientCPU{Measured: 4, MaxBusyPercent: 87, Bound: []int{1, 3}, BoundCount: 2}
	throttled := results.ClientCPU{Measured: 4, MaxBusyPercent: 40, MaxThrottledPercent: 35, Bound: []int{0, 1, 2, 3}, BoundCount: 4}
	many := results.ClientCPU{Measured: 50, MaxBusyPercent: 99, Bound: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, BoundCount: 50}
	for _, tc := range []struct {
		name   string
		steps  []Step
		status string // "": no verdict
		reason string
		msg    []string
		atStep int // the step whose end stamps it: the first bound, or the first measured
	}{
		{"nothing measured", []Step{step(0, results.ClientCPU{}, false)}, "", "", nil, 0},
		{"headroom", []Step{step(0, idle, false), step(1, idle, false)}, False, ReasonClientCPUHeadroom,
			[]string{"in steps 1, 2, the busiest client's fio used 12 % of the CPU its jobs could use (bound 60 %)", "throttled in 0 % of its CFS periods (bound 1 %)"}, 0},
		{"busy clients named", []Step{step(0, idle, false), step(1, busy, false), step(2, idle, false)}, True, ReasonClientCPUBusy,
			[]string{"in step 2, clients 1, 3 were past a bound", "87 %", "clients.count"}, 1},
		{"throttled: raise the limit", []Step{step(0, busy, false), step(1, throttled, false)}, True, ReasonClientCPUThrottled,
			[]string{"in steps 1, 2, clients 0, 1, 2, 3 were past a bound", "35 % of its CFS periods", "clients.resources.limits.cpu"}, 0},
		{"a superseded step does not stand", []Step{step(0, busy, true), step(1, idle, false)}, False, ReasonClientCPUHeadroom, []string{"in step 2,"}, 1},
		{"many clients, the first 20 named", []Step{step(0, many, false)}, True, ReasonClientCPUBusy, []string{"clients 0, 1, 2,", "18, 19, and more (50 in the step with the most) were past"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ClientCPUVerdict(tc.steps)
			if tc.status == "" {
				if v != nil {
					t.Fatalf("%+v, want none", v)
				}
				return
			}
			if v == nil || v.Status != tc.status || v.Reason != tc.reason || !v.Valid() || !v.At.Equal(tc.steps[tc.atStep].Order.End()) {
				t.Fatalf("%+v, want %s %s at step %d's end", v, tc.status, tc.reason, tc.atStep+1)
			}
			for _, m := range tc.msg {
				if !strings.Contains(v.Message, m) {
					t.Errorf("message %q lacks %q", v.Message, m)
				}
			}
		})
	}
}
