// Package apireport is package report's adapter from the API: it reads
// saved StorageBenchmarks (Decode), builds a report.Run of one (FromAPI) and
// offers the entry points `kubectl storagebench` calls with
// StorageBenchmarks (WriteStatus, ListTable, ProgressOf, Compare) and the
// JSON report of one (Document). It is apart from package report so that
// the runner, which prints local runs through package report, does not
// link api/v1alpha1.
package apireport
