package plan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/workload"
)

func wl(read int32) workload.Spec {
	s := workload.BaseSpec()
	s.ReadPercent = read
	return s
}

// synced is a database log's workload: writes, fdatasync after each.
func synced() workload.Spec {
	p, _ := workload.Lookup("db-log")
	return p.Spec
}

func wlBS(read int32, bs int64) workload.Spec {
	s := wl(read)
	s.BlockSizeBytes = bs
	return s
}

func topo(c, j int32) Topology { return Topology{Clients: c, JobsPerClient: j} }

func rateLoad(steps ...int64) Load {
	return Load{Rate: &RateSteps{Steps: steps}, StepDuration: time.Minute}
}

// checkFieldError fails unless err is a *workload.FieldError on wantField
// whose message contains wantIn; wantField "" means err must be nil.
func checkFieldError(t *testing.T, err error, wantField, wantIn string) {
	t.Helper()
	if wantField == "" {
		if err != nil {
			t.Fatalf("error = %v, want nil", err)
		}
		return
	}
	var fe *workload.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v, want *workload.FieldError on %s", err, wantField)
	}
	if fe.Field != wantField {
		t.Errorf("Field = %q, want %q (%v)", fe.Field, wantField, err)
	}
	if !strings.Contains(err.Error(), wantIn) {
		t.Errorf("message %q does not contain %q", err, wantIn)
	}
}
