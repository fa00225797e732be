// Package report renders benchmark runs for people: step and list tables,
// status and live progress lines, comparisons, ops–latency plots (gonum/plot)
// and Markdown, HTML, SVG, PNG and JSON reports. It works on a Run, built
// from a StorageBenchmark (FromAPI, after Decode reads saved YAML or JSON)
// for `kubectl storagebench`, or from a local run by internal/runner. It
// takes values and returns bytes: it must not depend on Kubernetes clients
// or a cluster (reading and watching benchmarks is cmd/kubectl-storagebench's
// job).
package report
