// Package protocol is the lockstep protocol between a benchmark's conductor
// (the operator, or `runner local`) and its client runners: the messages
// they exchange (the client plan, each step's order, the ready report) and
// the decisions both conductors share (the next order from the recorded
// steps, when a recorded step ends the run, the default leads and
// timeouts). It is transport-free: internal/exchange carries the messages
// through ConfigMaps, internal/runner through files. It must not depend on
// Kubernetes.
package protocol
