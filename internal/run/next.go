package run

import (
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// Spec is what ordering a run's steps needs of its benchmark: the load
// stepped, the clients and their fio jobs, and the workload.
type Spec struct {
	Load     plan.Load
	Topology plan.Topology
	Workload workload.Spec
	// Verify: the clients read back what the run wrote after each step
	// (protocol.ClientPlan.Verify), so no step is ordered ahead.
	Verify bool
}

// Orders is what follows the recorded steps: Order, the next step or the
// final order (Done), with Stop when a stop rule ended the run; and Ahead,
// the step after Order written ahead to start the instant it ends, when it
// does not depend on Order's results.
type Orders struct {
	Order protocol.StepOrder
	Ahead *protocol.StepOrder
	Stop  *plan.StopReason
}

// Next decides the orders after the recorded steps, at now: the planner's
// next step from their exact results and steady-state verdicts (or the
// end); a step written ahead as the one before it (prev, nil before the
// first) ran is ordered as written, since its clients may have started
// it; and the step after is written ahead when it can be. A step the plan
// cannot make is an error.
func Next(s Spec, steps []Step, prev *protocol.StepOrder, now time.Time, leads protocol.Leads) (Orders, error) {
	recorded := make([]results.StepAggregate, len(steps))
	steady := make([]analysis.SteadyState, len(steps))
	for i, st := range steps {
		recorded[i], steady[i] = st.Aggregate, st.Steady
	}
	order, stop, err := protocol.NextJudged(s.Load, s.Topology, s.Workload, recorded, steady, now, leads)
	if err != nil {
		return Orders{}, err
	}
	if s.Verify {
		// Never ordered ahead (each step waits for the read-back of the
		// one before): nothing to promote, and the next step starts a
		// lead after now.
		if !order.Done {
			order.VerifyWithin = protocol.VerifyAllowance(order.Ramp + order.Duration)
		}
		return Orders{Order: order, Stop: stop}, nil
	}
	if prev != nil {
		order = protocol.Promote(s.Load, s.Topology, s.Workload, *prev, order)
	}
	o := Orders{Order: order, Stop: stop}
	if a, ok := protocol.Ahead(s.Load, s.Topology, s.Workload, order); ok {
		o.Ahead = &a
	}
	return o, nil
}
