package protocol

import "time"

// The first step's lead, derived from what the clients measured rather
// than fixed: every client must see the order and have fio's jobs ready
// before the instant, and no more time than that is waited.
const (
	// MinStartLead is the least lead FirstStepLead gives.
	MinStartLead = 100 * time.Millisecond
	// LeadMargin is added to LeadFactor times the slowest client's need.
	LeadMargin = 50 * time.Millisecond
	// LeadFactor is how many times the slowest client's measured need the
	// lead leaves it: fio's start-up was measured on the same node with
	// the same fio moments before, and varies with the node's load.
	LeadFactor = 1.5
	// FanOutPerClient is what one more watcher adds to the time an order
	// takes to reach every client: the API server sends one event to each
	// client's watch. A provision, not a measurement: the reports show
	// how long one write took to reach one watcher (the conductor's).
	FanOutPerClient = 200 * time.Microsecond
)

// FirstStepLead is how far ahead of now the first step's instant is set
// when every client is ready: LeadFactor times the slowest client's need
// plus LeadMargin, within [MinStartLead, ceiling]. A client needs its fio
// start-up (Ready.FioStartup) after the order reaches it; the order
// takes as long to reach it as the last ready report took to reach the
// conductor (seen less its At, plus the clocks' uncertainty), and
// FanOutPerClient more for every client. The ceiling (the conductor's
// setting, DefaultStartLead by default) is the lead when a report does
// not say what the rule needs or cannot be believed: a runner from before
// it, one that could not measure its start-up or its clock's offset, or a
// report written after it was seen (beyond the clocks' uncertainty). The
// reports are the clients' word: a client can shorten the lead by no more
// than the last report's delivery (it cannot lower another client's
// start-up, the largest counts), and lengthen it up to the ceiling.
func FirstStepLead(reports []Ready, seen time.Time, ceiling time.Duration) time.Duration {
	if len(reports) == 0 {
		return ceiling
	}
	var startup, uncertainty time.Duration
	var last time.Time
	for _, r := range reports {
		if r.FioStartup <= 0 || r.At.IsZero() || r.ClockOffsetError != "" {
			return ceiling
		}
		startup = max(startup, r.FioStartup)
		uncertainty = max(uncertainty, r.ClockOffsetUncertainty)
		if r.At.After(last) {
			last = r.At
		}
	}
	delivery := seen.Sub(last)
	if delivery < -uncertainty {
		return ceiling
	}
	// Each part is bounded before they are added and scaled: a report's
	// time far in the past must not overflow the sum.
	need := startup + min(max(delivery, 0)+uncertainty, ceiling) + time.Duration(len(reports))*FanOutPerClient
	if need >= ceiling {
		return ceiling
	}
	lead := time.Duration(LeadFactor*float64(need)) + LeadMargin
	return min(max(lead, MinStartLead), ceiling)
}
