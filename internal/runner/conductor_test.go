package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
)

// The local conductor ends a run by the operator's rules (run.Decide),
// with no fio and no client process: the clients are files written here.
func TestConductorEndsByTheRunsRules(t *testing.T) {
	spec := run.Spec{Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{100}}, StepDuration: 5 * time.Second},
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1}}
	for _, tc := range []struct {
		name  string
		ready []protocol.Ready // reported before the run
		want  string
	}{
		{"a client that could not prepare says why", []protocol.Ready{{Client: 0}, {Client: 1, Error: "no space left"}},
			"client 1 could not prepare: no space left"},
		{"a client that never reports is not ready in time", []protocol.Ready{{Client: 0}},
			"1 of 2 clients were not ready 300ms after the benchmark was created (scheduling, image pull, layout and preconditioning): check the clients' output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := FileExchange{Dir: t.TempDir(), Poll: 10 * time.Millisecond}
			for _, r := range tc.ready {
				if err := x.ReportReady(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			c := &Conductor{Files: x, Spec: spec, ReadyTimeout: 300 * time.Millisecond}
			out, err := c.Run(context.Background())
			if err == nil || err.Error() != tc.want || out.Failure != tc.want {
				t.Fatalf("error %v (failure %q), want %q", err, out.Failure, tc.want)
			}
			// No client is left waiting: step 1's order is the final one.
			o, err := x.WaitOrder(context.Background(), 0)
			if err != nil || !o.Done || !strings.Contains(o.Reason, tc.want) {
				t.Fatalf("order %+v (%v), want the final order with the reason", o, err)
			}
		})
	}
}

// A result that cannot be read ends the run with the reason, and the
// results read before it are kept as the step's partial record.
func TestConductorKeepsWhatArrivedBeforeAnUnreadableResult(t *testing.T) {
	x := FileExchange{Dir: t.TempDir(), Poll: 10 * time.Millisecond}
	for i := range 2 {
		if err := x.ReportReady(context.Background(), protocol.Ready{Client: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Publish(context.Background(), results.ClientStep{Client: 0, Step: 0, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(x.resultPath(0, 1), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Conductor{Files: x, Spec: run.Spec{Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200}}, StepDuration: 5 * time.Second},
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1}}}
	out, err := c.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Fatalf("error %v, want the unreadable result's", err)
	}
	if len(out.Steps) != 1 || out.Steps[0].Aggregate.Clients != 1 {
		t.Fatalf("steps %+v, want step 1 recorded from client 0's result", out.Steps)
	}
	// Step 2's order, written ahead, and the one after it are final: no
	// client waits (step 1's stands, its clients ran it).
	for k := 1; k <= 2; k++ {
		if o, err := x.WaitOrder(context.Background(), k); err != nil || !o.Done {
			t.Fatalf("order %d: %+v (%v), want the final order", k, o, err)
		}
	}
}
