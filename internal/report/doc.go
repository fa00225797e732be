// Package report renders benchmark runs for people: step and list tables
// (as text, Markdown or HTML), status and live progress lines, comparisons,
// and the ops–latency series that package figure draws. It works on a Run, built from a StorageBenchmark by package
// apireport for `kubectl storagebench`, or from a local run (StepOf,
// SummaryOf, SLOsOf) by internal/runner. It takes values and returns bytes:
// it must not depend on Kubernetes clients or a cluster (reading and
// watching benchmarks is cmd/kubectl-storagebench's job), nor on the API
// types (apireport adapts them), so that the runner does not link them.
package report
