package protocol

import (
	"testing"
	"time"
)

func TestFirstStepLead(t *testing.T) {
	lead := func(need time.Duration) time.Duration { return time.Duration(LeadFactor*float64(need)) + LeadMargin }
	seen := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	ready := func(startup, ago, uncertainty time.Duration) Ready {
		return Ready{FioStartup: startup, At: seen.Add(-ago), ClockOffsetUncertainty: uncertainty}
	}
	for _, tc := range []struct {
		name    string
		reports []Ready
		ceiling time.Duration
		want    time.Duration
	}{
		{"no reports: the ceiling", nil, time.Second, time.Second},
		{"one client: LeadFactor times its start-up and the report's delivery, and the margin",
			[]Ready{ready(100*ms, 20*ms, 0)}, time.Second, lead(100*ms + 20*ms + FanOutPerClient)},
		{"in numbers: 1.5 × (100 ms + 20 ms + 0.2 ms) + 50 ms",
			[]Ready{ready(100*ms, 20*ms, 0)}, time.Second, 230300 * time.Microsecond},
		{"the slowest start-up and the last report's delivery count",
			[]Ready{ready(80*ms, 900*ms, 0), ready(150*ms, 10*ms, 0), ready(60*ms, 30*ms, 0)}, time.Second,
			lead(150*ms + 10*ms + 3*FanOutPerClient)},
		{"the clocks' uncertainty is added to the delivery",
			[]Ready{ready(100*ms, 10*ms, 5*ms), ready(100*ms, 20*ms, 40*ms)}, time.Second,
			lead(100*ms + 10*ms + 40*ms + 2*FanOutPerClient)},
		{"a report from the conductor's future, beyond the clocks' uncertainty: the ceiling",
			[]Ready{ready(10*ms, -time.Second, 0)}, time.Second, time.Second},
		{"a report from the future within the uncertainty delivers in no time",
			[]Ready{ready(100*ms, -5*ms, 10*ms)}, time.Second, lead(100*ms + 10*ms + FanOutPerClient)},
		{"a report written in year 1: the ceiling, not an overflow",
			[]Ready{{FioStartup: 100 * ms, At: time.Time{}.Add(1)}}, time.Second, time.Second},
		{"a client whose clock offset was not measured: the ceiling",
			[]Ready{ready(100*ms, 10*ms, 0), {FioStartup: 100 * ms, At: seen, ClockOffsetError: "no Date header"}}, time.Second, time.Second},
		{"a hostile client's tiny start-up does not lower another's",
			[]Ready{ready(time.Nanosecond, 0, 0), ready(300*ms, 10*ms, 0)}, time.Second, lead(300*ms + 2*FanOutPerClient)},
		{"never below the least lead", []Ready{ready(ms, 0, 0)}, time.Second, MinStartLead},
		{"never above the ceiling", []Ready{ready(2*time.Second, 0, 0)}, time.Second, time.Second},
		{"a ceiling below the least lead is kept", []Ready{ready(ms, 0, 0)}, 50 * ms, 50 * ms},
		{"a client that did not measure its start-up: the ceiling",
			[]Ready{ready(100*ms, 10*ms, 0), {At: seen}}, time.Second, time.Second},
		{"a report without its time: the ceiling",
			[]Ready{{FioStartup: 100 * ms}}, 2 * time.Second, 2 * time.Second},
		{"fan-out grows with the clients",
			func() []Ready {
				r := make([]Ready, 1000)
				for i := range r {
					r[i] = ready(100*ms, 10*ms, 0)
				}
				return r
			}(), 2 * time.Second, lead(100*ms + 10*ms + 1000*FanOutPerClient)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FirstStepLead(tc.reports, seen, tc.ceiling); got != tc.want {
				t.Errorf("FirstStepLead = %s, want %s", got, tc.want)
			}
		})
	}
}
