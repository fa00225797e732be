package run

import (
	"fmt"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// Reasons of a run's data-integrity verdict (IntegrityOf).
const (
	ReasonVerified      = "Verified"
	ReasonDataCorrupted = protocol.DataCorrupted
	ReasonNotVerified   = "NotVerified"
	ReasonVerifying     = "Verifying"
)

// Integrity is what a verifying run's read-backs say: Judged once the run
// ended or a bad block was found; Intact then says whether every block
// written read back as written.
type Integrity struct {
	Judged, Intact  bool
	Reason, Message string
	// Total sums the steps' read-backs (the longest pass's duration
	// summed over steps); nil before any.
	Total *results.Verification
}

// IntegrityOf judges the recorded steps' read-backs of a run that
// verifies: a bad block is judged at once (DataCorrupted, the first
// step's message), a step without a read-back or with blocks left
// unread makes the ended run NotVerified, and otherwise the ended run is
// Verified.
func IntegrityOf(steps []Step, ended bool) Integrity {
	var total *results.Verification
	var missing []int
	var bad *results.StepAggregate
	for i := range steps {
		a := &steps[i].Aggregate
		v := a.Verification
		if v == nil || v.Clients < a.Clients {
			missing = append(missing, a.Step+1)
		}
		if v == nil {
			continue
		}
		if v.Bad() && bad == nil {
			bad = a
		}
		if total == nil {
			total = &results.Verification{}
		}
		mergeTotal(total, v)
	}
	switch {
	case bad != nil:
		return Integrity{Judged: true, Reason: ReasonDataCorrupted, Total: total,
			Message: fmt.Sprintf("step %d: %s", bad.Step+1, protocol.VerificationMessage(bad.Verification))}
	case !ended:
		return Integrity{Reason: ReasonVerifying, Total: total, Message: "the run is writing and reading back"}
	case len(missing) > 0:
		return Integrity{Judged: true, Reason: ReasonNotVerified, Total: total,
			Message: fmt.Sprintf("steps %v lack a client's read-back (a client without verification, or a step that failed)", missing)}
	case total == nil:
		return Integrity{Judged: true, Reason: ReasonNotVerified, Message: "no step was recorded, so nothing was read back"}
	case total.Unverified > 0:
		return Integrity{Judged: true, Reason: ReasonNotVerified, Total: total,
			Message: fmt.Sprintf("%d of %d blocks were not read back: %s", total.Unverified, total.Unverified+total.BlocksVerified, total.Error)}
	case total.Error != "":
		return Integrity{Judged: true, Reason: ReasonNotVerified, Total: total, Message: total.Error}
	}
	return Integrity{Judged: true, Intact: true, Reason: ReasonVerified, Total: total,
		Message: fmt.Sprintf("every block written read back as written: %d read-backs of blocks over %d steps, none bad", total.BlocksVerified, len(steps))}
}

// mergeTotal adds a step's read-back to the run's: as clients' are
// merged (results.Verification.Add), but the passes' durations summed:
// they ran one after another.
func mergeTotal(t, v *results.Verification) {
	d := t.Duration + v.Duration
	t.Add(v)
	t.Duration = d
}
