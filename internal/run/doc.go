// Package run is the core's model of a run: a recorded step (Step) and
// the decision of what is ordered after the steps recorded so far (Next).
// The operator's reconciler and the runner's local conductor both record
// steps as Steps and order the next one with Next, so the planner, the
// analysis and the two conductors share one step type and one sequence of
// ordering (the planner's next step, a step written ahead kept as
// written, the step after written ahead when it does not depend on this
// one's results).
//
// It is pure: no Kubernetes client, no API type. The wire encoding of a
// step (internal/exchange, internal/results) and the API's StepStatus are
// its two edges.
package run
