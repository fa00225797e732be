package report

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestClientBoundMarksAndSummary(t *testing.T) {
	check := Step{Index: 1, Unthrottled: true, ClientBoundCheck: true}
	if m := check.Marks(); !slices.Equal(m, []string{"2× outstanding I/O"}) {
		t.Errorf("check marks %v", m)
	}
	full := Step{Index: 2, OfferedIOPS: 4500, Saturated: true, QueueFull: true, ClosedLoop: true}
	if m := full.Marks(); !slices.Equal(m, []string{"saturated", "queue full", "closed-loop"}) {
		t.Errorf("queue-full marks %v", m)
	}
	for _, tc := range []struct {
		bound bool
		want  string
	}{{true, "CLIENT-BOUND: MoreOutstandingIOGained: x"}, {false, "maximum is the storage's: MoreOutstandingIODidNotGain: x"}} {
		r := &Run{Name: "c", Unit: UnitIOPS, Steps: []Step{{Index: 0, Unthrottled: true, AchievedIOPS: 1}, check}}
		r.ClientBound, r.ClientBoundTrue = strings.SplitN(tc.want, ": ", 2)[1], tc.bound
		if l := r.SummaryLines(); !slices.Contains(l, tc.want) {
			t.Errorf("summary %q lacks %q", l, tc.want)
		}
	}
}

func TestCurveSeriesLeavesOutTheClientBoundCheck(t *testing.T) {
	op := func(ms float64) *OperationFigures {
		return &OperationFigures{IOPS: 1, Latency: Latency{Mean: time.Duration(ms * float64(time.Millisecond))}}
	}
	r := &Run{Unit: UnitIOPS, Steps: []Step{
		{Index: 0, Unthrottled: true, AchievedIOPS: 100, Read: op(1)},
		{Index: 1, Unthrottled: true, ClientBoundCheck: true, AchievedIOPS: 100, Read: op(8)},
		{Index: 2, OfferedIOPS: 50, AchievedIOPS: 50, Read: op(0.5)},
	}}
	s := r.CurveSeries("mean")
	if len(s) != 1 || len(s[0].Points) != 2 || s[0].Points[0].Index != 0 || s[0].Points[1].Index != 2 {
		t.Fatalf("curve %+v, want steps 1 and 3 only", s)
	}
}

// The clients' CPU: a step past a bound is marked with how many clients
// were; the summary says so when it bounded the figures, and is silent on
// headroom (status has it).
func TestClientCPUMarkAndSummary(t *testing.T) {
	if m := (&Step{Index: 0, CPUBoundClients: 2}).Marks(); !slices.Equal(m, []string{"client CPU (2)"}) {
		t.Errorf("marks %v", m)
	}
	for _, tc := range []struct {
		bound bool
		want  string
	}{{true, "CLIENT CPU-BOUND: ClientCPUThrottled: in step 1, clients 0, 1 were past a bound"}, {false, ""}} {
		r := &Run{Name: "c", Unit: UnitIOPS, Steps: []Step{{Index: 0, AchievedIOPS: 1}}}
		r.ClientCPU, r.ClientCPUTrue = "ClientCPUThrottled: in step 1, clients 0, 1 were past a bound", tc.bound
		l := r.SummaryLines()
		if tc.want != "" && !slices.Contains(l, tc.want) {
			t.Errorf("summary %q lacks %q", l, tc.want)
		}
		if !tc.bound && slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "CPU") }) {
			t.Errorf("headroom in the summary: %q", l)
		}
	}
}
