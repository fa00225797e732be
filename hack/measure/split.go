package main

import (
	"time"
)

// runTimes are the instants of one run the split is made from, all on
// this machine's clock (the cluster runs here): the create call, the
// first claim seen, every claim Bound, every client pod scheduled and
// Running, every client ready, each step's first fio launch and last end,
// and Complete seen True.
type runTimes struct {
	start, firstClaim, bound, scheduled, running, ready, complete time.Time
	// fioStart and fioEnd per step, in order.
	fioStart, fioEnd []time.Time
	// stepIO is what each step should take: its ramp and its duration.
	stepIO time.Duration
}

// overheadSplit divides a run's wall time, create call → Complete, into
// who spent it. The parts add up to the wall time.
type overheadSplit struct {
	// Storage: the first claim seen → every claim Bound (the provisioner
	// and the volume binder).
	StorageSeconds float64 `json:"storageSeconds"`
	// Kubelet: every pod scheduled and every claim bound → every pod
	// Running (volume attach and mount, sandbox, image, container start).
	KubeletSeconds float64 `json:"kubeletSeconds"`
	// Clients: every pod Running → every client ready (the runner lays out
	// its files and preconditions them: the workload's own work).
	ClientsSeconds float64 `json:"clientsSeconds"`
	// Steps: the steps' ramps and durations, and FioOverrunSeconds, how
	// much longer than that the steps took from the first fio launch to
	// the last end, the gaps between them aside (fio's start-up and exit,
	// less the overlap of steps ordered ahead).
	StepsSeconds      float64 `json:"stepsSeconds"`
	FioOverrunSeconds float64 `json:"fioOverrunSeconds"`
	// Operator: the rest, which is the operator's own (and the API
	// server's and the watches' in between): OperatorCreate, the create
	// call → the first claim; OperatorPods, every claim bound → every pod
	// scheduled when the pods came later; OperatorLead, every client ready
	// → step 1's first fio; OperatorGaps, the time between one step's last
	// fio end and the next step's first fio launch, summed; OperatorTail,
	// the last step's end → Complete.
	OperatorSeconds       float64 `json:"operatorSeconds"`
	OperatorCreateSeconds float64 `json:"operatorCreateSeconds"`
	OperatorPodsSeconds   float64 `json:"operatorPodsSeconds"`
	OperatorLeadSeconds   float64 `json:"operatorLeadSeconds"`
	OperatorGapsSeconds   float64 `json:"operatorGapsSeconds"`
	OperatorTailSeconds   float64 `json:"operatorTailSeconds"`
}

// splitOf splits one run's wall time. No part is negative: of milestones
// seen out of order (pods scheduled before their claims bound), the later
// part takes the overlap. The parts add up to the wall time when the
// milestones are in order and the steps took at least their ramps and
// durations.
func splitOf(t runTimes) overheadSplit {
	span := func(from, to time.Time) time.Duration { return max(to.Sub(from), 0) }
	create, pods := span(t.start, t.firstClaim), span(t.bound, t.scheduled)
	podsFrom := t.bound
	if t.scheduled.After(podsFrom) {
		podsFrom = t.scheduled
	}
	// Steps ordered ahead may overlap by a little (a client's next step
	// begins as its last ended): fio's overrun is what the steps' span has
	// beyond their ramps and durations and the gaps between them.
	var gaps, overrun, lead, tail time.Duration
	for k := 1; k < len(t.fioStart); k++ {
		gaps += span(t.fioEnd[k-1], t.fioStart[k])
	}
	if n := len(t.fioStart); n > 0 {
		overrun = max(span(t.fioStart[0], t.fioEnd[n-1])-gaps-time.Duration(n)*t.stepIO, 0)
		lead, tail = span(t.ready, t.fioStart[0]), span(t.fioEnd[n-1], t.complete)
	}
	return overheadSplit{
		StorageSeconds:        seconds(span(t.firstClaim, t.bound)),
		KubeletSeconds:        seconds(span(podsFrom, t.running)),
		ClientsSeconds:        seconds(span(t.running, t.ready)),
		StepsSeconds:          seconds(time.Duration(len(t.fioStart)) * t.stepIO),
		FioOverrunSeconds:     seconds(overrun),
		OperatorSeconds:       seconds(create + pods + lead + gaps + tail),
		OperatorCreateSeconds: seconds(create),
		OperatorPodsSeconds:   seconds(pods),
		OperatorLeadSeconds:   seconds(lead),
		OperatorGapsSeconds:   seconds(gaps),
		OperatorTailSeconds:   seconds(tail),
	}
}

// operatorGoal is the most the operator's own part of a run may take: 1 s
// per run and 10 ms per step.
func operatorGoal(steps int) float64 { return 1 + 0.01*float64(steps) }
