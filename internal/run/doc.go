// Package run is the core's model of a run: a recorded step (Step) and
// the decision of what is ordered after the steps recorded so far (Next).
// The operator's reconciler and the runner's local conductor both record
// steps as Steps and order the next one with Next, so the planner, the
// analysis and the two conductors share one step type and one sequence of
// ordering (the planner's next step, a step written ahead kept as
// written, the step after written ahead when it does not depend on this
// one's results).
//
// It also decides, per pass over a running run, whether it ends and why,
// or what it does next (Decide, over an Observation: claims bound, each
// client's readiness, latest result, Job and node, the steps and the
// order), so the rules that end a run, their order and their deadlines
// live here. The operator reads its API objects into an Observation, the
// local conductor its exchange directory; both drive Decide and Next. The verdicts on a run's
// steps (judge.go), the verdicts recorded with its orders (Verdicts), and
// the View its status is written from are here too.
//
// It is pure: no Kubernetes client, no API type. The wire encoding of a
// step (internal/exchange, internal/results) and the API's StepStatus are
// its two edges.
package run
