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
