package controllers

import (
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
)

// TestClocksJudged: the clocks are judged as every client became ready,
// the first step's start less the lead its order records, or the
// configured lead for an order from before the record, whatever the
// configured lead is now.
func TestClocksJudged(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)
	start := time.Date(2026, 11, 29, 12, 0, 10, 600e6, time.UTC)
	r := &Reconciler{StartLead: 3 * time.Second, Now: func() time.Time { return now }}
	derived := protocol.StepOrder{Index: 0, StartAt: start, Lead: 700 * time.Millisecond}
	legacy := protocol.StepOrder{Index: 0, StartAt: start}
	for _, tc := range []struct {
		name string
		obs  observed
		want time.Time
	}{
		{"a recorded first step's own lead", observed{steps: []run.Step{{Order: derived}}}, start.Add(-700 * time.Millisecond).Truncate(time.Second)},
		{"a recorded first step from before the record: the configured lead", observed{steps: []run.Step{{Order: legacy}}}, start.Add(-3 * time.Second).Truncate(time.Second)},
		{"the first step ordered, not yet recorded", observed{order: derived, ordered: true}, start.Add(-700 * time.Millisecond).Truncate(time.Second)},
		{"nothing ordered yet: now", observed{}, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.clocksJudged(&tc.obs); !got.Equal(tc.want) {
				t.Errorf("clocksJudged = %s, want %s", got, tc.want)
			}
		})
	}
}
