package run

import (
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// recorded is step i of a fixed load, measured at its offered rate.
func recorded(t *testing.T, s Spec, i int) Step {
	t.Helper()
	o, err := Next(s, nil, nil, now, protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	o.Order.Index, o.Order.Step = i, plan.Steps(s.Load)[i]
	o.Order.Step.Index = i
	agg := results.StepAggregate{Step: i, Clients: 2, Total: results.OperationSummary{IOPS: float64(o.Order.Step.OfferedIOPS)}}
	return Record(o.Order, agg, "", analysis.SteadyOptions{})
}

// TestNext: the orders after the recorded steps, as both conductors write
// them: the first step and the one after it ahead; a step written ahead
// ordered as written; the final order once no step is left; a load that
// depends on results (a stop rule) never written ahead.
func TestNext(t *testing.T) {
	fixed := Spec{Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200, 300}}, StepDuration: 10 * time.Second},
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1}, Workload: workload.BaseSpec()}
	stopping := fixed
	stopping.Load.Stop = plan.StopRules{SaturationPercent: 90}

	first, err := Next(fixed, nil, nil, now, protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	if o := first.Order; o.Done || o.Index != 0 || o.Step.OfferedIOPS != 100 || !o.StartAt.Equal(now.Add(protocol.DefaultLeads.First)) {
		t.Fatalf("first order %+v: want step 0 at 100 IOPS, a first lead from now", o)
	}
	if a := first.Ahead; a == nil || a.Index != 1 || !a.StartAt.Equal(first.Order.End()) {
		t.Fatalf("ahead %+v: want step 1 from the instant step 0 ends", a)
	}

	// Step 0 recorded late: step 1, written ahead, keeps its start.
	second, err := Next(fixed, []Step{recorded(t, fixed, 0)}, &first.Order, now.Add(time.Minute), protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	if second.Order != *first.Ahead {
		t.Errorf("step 1 ordered %+v, want it as written ahead %+v", second.Order, *first.Ahead)
	}
	if a := second.Ahead; a == nil || a.Index != 2 {
		t.Errorf("ahead of step 1: %+v, want step 2", a)
	}

	last, err := Next(fixed, []Step{recorded(t, fixed, 0), recorded(t, fixed, 1), recorded(t, fixed, 2)}, second.Ahead, now, protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	if !last.Order.Done || last.Ahead != nil {
		t.Errorf("after every step: %+v, ahead %+v; want the final order, nothing ahead", last.Order, last.Ahead)
	}

	s, err := Next(stopping, nil, nil, now, protocol.DefaultLeads)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ahead != nil {
		t.Errorf("a load with a stop rule wrote step %d ahead: the step after depends on the results", s.Ahead.Index)
	}

	bad := fixed
	bad.Topology.JobsPerClient = 1000 // 100 IOPS over 2000 jobs: below one I/O per second per job
	if _, err := Next(bad, nil, nil, now, protocol.DefaultLeads); err == nil {
		t.Error("a step the plan cannot make was ordered")
	}
}

// TestRecord: a recorded step keeps the summaries, not the histograms, and
// is judged once; Kept drops what only a regression comparison reads.
func TestRecord(t *testing.T) {
	h := fio.Histogram{Bins: []fio.Bin{{Index: 600, Count: 5}}}
	tl := results.Timeline{Windows: []results.Window{{IOs: 5, Hist: h}, {IOs: 5, Hist: h}}}
	agg := results.StepAggregate{Step: 0, Total: results.OperationSummary{IOPS: 5, Histogram: h}, Timeline: tl}
	s := Record(protocol.StepOrder{Index: 0}, agg, "b-step-000", analysis.SteadyOptions{})
	if s.Aggregate.Total.Histogram.Total() != 0 || s.Aggregate.Timeline.Windows[0].Hist.Total() != 0 {
		t.Error("histograms kept in the record")
	}
	if !s.Timed || len(s.P99Ns) != 2 || s.Aggregate.Total.IOPS != 5 || s.Name != "b-step-000" {
		t.Errorf("record %+v: want timed, 2 p99 samples, the summary and the name", s)
	}
	if k := s.Kept(); k.Aggregate.Timeline.Windows != nil || k.P99Ns != nil || !k.Timed {
		t.Errorf("kept %+v: want no windows and no samples, the verdicts kept", k)
	}
	long := results.StepAggregate{Timeline: results.Timeline{Windows: make([]results.Window, results.MaxWindows+1)}}
	if s := Record(protocol.StepOrder{}, long, "", analysis.SteadyOptions{}); s.Timed {
		t.Error("a timeline longer than a conductor writes was judged")
	}
}
