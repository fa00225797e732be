// Package results holds what a client runner publishes for each step (its
// fio json+ results, merged per direction) and merges all clients' results
// of a step exactly: rates summed, latency percentiles read from the summed
// histogram bins with fio's rule (never averaged), means count-weighted,
// deviations pooled. It validates results from runners that may not be
// trusted. Both the operator and the local runner use it, so it must depend
// only on internal/fio and the standard library: no Kubernetes clients.
package results
