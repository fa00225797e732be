// Package fio renders fio job files from typed fields and parses fio's json+
// output, including its completion-latency histogram.
//
// # The histogram
//
// fio records every completion latency in a log-linear histogram of PlatNR
// bins: latencies below 128 ns get a bin each, and above that every power of
// two is cut into 64 equal bins, so a bin is never wider than 1/64 of its
// value (about 1.6 %). With --output-format=json+ fio prints the non-empty
// bins as "bins": {"<latency ns>": count}, where the latency is the middle of
// the bin. fio's own percentiles are computed from the same bins: for
// percentile p over N samples it walks the bins in ascending order and
// reports the first bin whose cumulative count reaches p/100 × N, evaluated
// in long double in the order fio's optimised build evaluates it.
// Accumulator.Percentiles applies exactly that rule (see Threshold), so a percentile computed here from one job's bins equals, value
// for value, the one fio printed; the tests prove it against the real fio
// binary.
//
// # Why bins are summed and percentiles never averaged
//
// A percentile is a property of a distribution, not of its parts. Two
// clients, one doing 9,000 I/Os at 0.5 ms and one doing 1,000 I/Os at 10 ms,
// have p99 latencies of 0.5 ms and 10 ms; the average, 5.25 ms, is a latency
// no I/O had and hides that the combined p99 is 10 ms (more than 1 % of all
// I/Os took 10 ms). Averaging also ignores how many I/Os each client did, and
// the maximum of per-client p99s overstates the tail whenever one client is
// slow but small. Because every client's histogram uses the same bins, adding
// the counts bin by bin yields the histogram of all I/Os together, and a
// percentile read from that sum is the exact percentile (at fio's bin
// resolution) of every I/O in the step. The mean is the count-weighted mean,
// min and max are exact, and the standard deviation is the pooled one.
package fio
