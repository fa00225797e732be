package runner

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/workload"
)

// TestScaleOutLocalRun runs a scale-out sweep of three clients with real
// fio: one client, then all three, each at 100 IOPS. The client a step
// leaves out idles through it, says so, and is not in its figures; the
// step offers and achieves its clients' rate.
func TestScaleOutLocalRun(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "scaleout", Dir: t.TempDir(),
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20))}),
		Topology: plan.Topology{Clients: 3, JobsPerClient: 1},
		Load:     plan.Load{Clients: &plan.ClientSteps{Steps: []int32{1, 3}, PerClientIOPS: 100}, StepDuration: 5 * time.Second}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 {
		t.Fatalf("%d steps", len(out.Steps))
	}
	for i, want := range []struct{ clients, idle int }{{1, 2}, {3, 0}} {
		s := out.Steps[i]
		a := s.Aggregate
		offered := 100 * float64(want.clients)
		t.Logf("step %d: %d clients ran, %d idled, %.1f IOPS of %v offered, skew %s", i+1, a.Clients, a.IdleClients, a.Total.IOPS, offered, a.StartSkew)
		if a.Clients != want.clients || a.IdleClients != want.idle || a.Jobs != want.clients || s.Order.Step.ActiveClients != int32(want.clients) {
			t.Errorf("step %d: %d clients merged, %d idle, %d jobs; want %d, %d", i+1, a.Clients, a.IdleClients, a.Jobs, want.clients, want.idle)
		}
		if s.Order.Step.OfferedIOPS != int64(offered) || math.Abs(a.Total.IOPS-offered) > 0.02*offered {
			t.Errorf("step %d: %.1f IOPS achieved of %d offered", i+1, a.Total.IOPS, s.Order.Step.OfferedIOPS)
		}
	}
	if !out.Steps[1].Order.StartAt.After(out.Steps[0].Order.End().Add(-time.Millisecond)) {
		t.Errorf("step 2 starts at %s, before step 1's end %s", out.Steps[1].Order.StartAt, out.Steps[0].Order.End())
	}
}
