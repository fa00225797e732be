package apireport_test

import (
	"testing"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// TestBaselineConstantsMatchOperator: the plugin repeats the operator's
// pinned-baseline label and key rather than link the operator; a baseline
// it writes must be one the operator reads.
func TestBaselineConstantsMatchOperator(t *testing.T) {
	if apireport.LabelBaseline != controllers.LabelBaseline || apireport.KeyBaseline != controllers.KeyBaseline {
		t.Errorf("plugin %s/%s, operator %s/%s", apireport.LabelBaseline, apireport.KeyBaseline, controllers.LabelBaseline, controllers.KeyBaseline)
	}
}
