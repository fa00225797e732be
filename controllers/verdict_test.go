package controllers

import (
	"testing"

	"github.com/storagebench/storagebench/internal/protocol"
)

// Every recorded verdict is complete, has a condition of its own, and is
// listed among the conditions; one recorded with the final order shows
// only once the run completed.
func TestRecordedVerdicts(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range recordedVerdicts {
		if k.condition == "" || k.wanted == nil || k.due == nil || k.judge == nil || (k.legacy == "") != (k.fromLegacy == nil) {
			t.Errorf("verdict %q: a part is missing", k.condition)
		}
		if seen[k.condition] {
			t.Errorf("two verdicts set %s", k.condition)
		}
		seen[k.condition] = true
		if rank(k.condition) == len(conditionOrder) {
			t.Errorf("%s is not in conditionOrder", k.condition)
		}
		if final := (protocol.StepOrder{Done: true}); k.due(final) != k.completeOnly {
			t.Errorf("%s: due with the final order %v, shown only once complete %v", k.condition, k.due(final), k.completeOnly)
		}
	}
}
