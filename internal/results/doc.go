// Package results holds what a client runner publishes for each step (its
// fio json+ results, merged per direction) and merges all clients' results
// of a step exactly: rates summed, latency percentiles read from the summed
// histogram bins with fio's rule (never averaged), means count-weighted,
// deviations pooled. It validates results from runners that may not be
// trusted. Both the operator and the local runner use it, so it must depend
// only on internal/fio and the standard library: no Kubernetes clients.
//
// A Timeline is a step second by second: TimelineOf folds a client's fio
// status intervals (fio.Intervals) into seconds, and MergeTimelines adds
// clients' seconds bin by bin, so each merged second's percentiles are exact
// over every I/O completed in it. The operator does not collect timelines
// yet; the analysis of steady state and stalls (internal/analysis) reads
// them.
package results
