package runner

import (
	"fmt"
	"path/filepath"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
)

// StepJobFile is the fio job file client p.Client runs for order, as the
// runner makes it: its share of the step (plan.Divide, through stepOf)
// rendered by fio.Render, on the files the runner lays out on p's volume
// (PlannedLayout). Nothing is read or written: it is for a dry run
// (`kubectl storagebench plan`). p carries the Client and Seed a runner
// sets (exchange.Client.LoadPlan). What exists only once the run does is
// left out: the wait for the step's instant (exec_prerun) and, when the
// run verifies, the writes' pattern and I/O logs.
func StepJobFile(p protocol.ClientPlan, order protocol.StepOrder) (string, error) {
	r := &Runner{Plan: p}
	s, err := r.stepOf(order)
	if err != nil {
		return "", err
	}
	job, err := fio.Render(s.run, PlannedLayout(p))
	if err != nil {
		return "", fmt.Errorf("step %d: %w", order.Index, err)
	}
	return job, nil
}

// PlannedLayout is where client p.Client's jobs do their I/O on a volume
// that passes the runner's checks: what Runner.layout returns, worked out
// from the plan alone (each job's working set, rounded down to whole
// blocks; the client's directory or device range).
func PlannedLayout(p protocol.ClientPlan) fio.Layout {
	jobs := int64(p.Topology.JobsPerClient)
	bs := p.Workload.BlockSizeBytes
	perJob := p.Workload.WorkingSetBytesPerClient / jobs / bs * bs
	v := p.Volume
	if v.Block {
		l := fio.Layout{Device: v.Path, BytesPerJob: perJob}
		if v.Shared {
			l.BaseOffset = int64(p.Client) * jobs * perJob
		}
		return l
	}
	dir := v.Path
	if v.Subdir != "" {
		dir = filepath.Join(dir, v.Subdir)
	}
	if v.Shared {
		dir = filepath.Join(dir, fmt.Sprintf("client-%03d", p.Client))
	}
	return fio.Layout{Directory: dir, BytesPerJob: perJob}
}
