package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
)

// TestPlannedLayout: the layout worked out from the plan is the one the
// runner lays out on a real directory, for every kind of Filesystem
// volume; a dry run's job files name the files the runner's would.
func TestPlannedLayout(t *testing.T) {
	for _, v := range []protocol.Volume{{}, {Shared: true}, {Subdir: "storagebench-b-0123abcd"}, {Shared: true, Subdir: "storagebench-b-0123abcd"}} {
		v.Path = t.TempDir()
		r := spaceRunner(t, v, 3, 2, 10<<20+3*8192)
		r.Plan.Client, r.statfs = 2, roomy
		got, err := r.layout()
		if err != nil {
			t.Fatal(err)
		}
		if want := PlannedLayout(r.Plan); got != want {
			t.Errorf("%+v: the runner lays out %+v, PlannedLayout says %+v", v, got, want)
		}
	}
}

// TestStepJobFile: a client's job file carries its share of the step as
// plan.Divide makes it, job by job.
func TestStepJobFile(t *testing.T) {
	r := spaceRunner(t, protocol.Volume{Path: "/data"}, 3, 2, 10<<20)
	r.Plan.Client = 1
	order := protocol.StepOrder{Index: 0, Step: plan.Step{OfferedIOPS: 1000}, Duration: 30 * time.Second}
	job, err := StepJobFile(r.Plan, order)
	if err != nil {
		t.Fatal(err)
	}
	loads, err := plan.Divide(order.Step, r.Plan.Topology, r.Plan.Workload)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range loads[1] {
		if want := fmt.Sprintf("rate_iops=%d,%d", l.ReadIOPS, l.WriteIOPS); !strings.Contains(job, want) {
			t.Errorf("job file lacks %q:\n%s", want, job)
		}
	}
	if !strings.Contains(job, "filename=/data/job1.dat") || !strings.Contains(job, "runtime=30000ms") {
		t.Errorf("job file:\n%s", job)
	}
}
