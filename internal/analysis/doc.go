// Package analysis turns a run's per-step aggregates into the numbers a
// storage characterisation reports (docs/METHODOLOGY.md §1 steps 4–6): per
// step offered versus achieved load and a saturation flag, the knee of the
// ops–latency curve, the peak, "performance @ latency target", and verdicts
// on service-level objectives. It is pure: no I/O, no clock, deterministic.
//
// # Inputs and conventions
//
// Each StepInput is one step's results.StepAggregate (already summed over
// clients) plus the load that was offered: OfferedIOPS or
// OfferedBytesPerSec, both 0 for an unthrottled step (outstanding-I/O
// steps). Achieved throughput is always the step's Total (reads plus
// writes, all clients). Step numbers in the output are Aggregate.Step.
//
// A failed step (Aggregate.Errors non-empty) is reported in Result.Steps with
// Failed set, but it is never evidence: it is never saturated, never the
// knee, never the peak or the at-target step, and objectives ignore it. An
// interrupted step without errors counts: its numbers are what fio measured.
// A superseded step (StepInput.Superseded: a run judged not steady that was
// run again) is not evidence either: the run after it stands for the
// planned step.
//
// # Latency selectors
//
// A LatencySelector picks a metric ("mean", "min", "max", "p50", "p90",
// "p95", "p99", "p99.9", "p99.99") of an operation ("read", "write", "total"
// = all I/O pooled, "worst" = the higher of read and write among the
// operations that have samples). Empty fields mean "mean" and "total". A
// selector finds nothing when its operation has no samples (a read-only step
// has no write latency); such steps are skipped wherever that latency is
// needed.
//
// # Options and defaults
//
//   - LatencyTarget: 1 ms.
//   - TargetSelector: mean over all I/O. The published "performance @ 1 ms"
//     figures are average response times, so the mean — not a percentile —
//     is the default; choose e.g. p99 for a tail-latency view.
//   - SaturationPercent: 90. A throttled step is saturated when it achieved
//     less than 90 % of what was offered, in the offered unit (IOPS when
//     OfferedIOPS > 0, else bytes per second). Exactly 90 % is not
//     saturated. Unthrottled steps have no offered rate and are never
//     flagged by this rule.
//   - Throughput: "iops". The x axis of the curve (for the knee) and the
//     quantity "performance @ target" maximises; "bytes" uses bytes per
//     second instead.
//
// # Summary
//
// Peak IOPS and peak bytes per second are the highest achieved totals of a
// successful step (the earliest step on a tie; -1 as the step when no step
// moved any data). LatencyAtPeakNs is the TargetSelector latency at the
// peak-IOPS step. "Performance @ latency target" (Summary.AtTarget) is the
// step with the highest achieved throughput whose selected latency is at or
// below the target — equal counts — on a tie the lower latency, then the
// earlier step; nil when no step qualifies.
//
// # Knee
//
// The curve has one point per successful step with a selected latency:
// x = achieved throughput, y = TargetSelector latency. The knee is found with
// a Kneedle-style chord method:
//
//  1. sort the points by x (input order is kept for equal x);
//  2. normalise x and y to [0, 1] over the curve's extent;
//  3. draw the chord from the first to the last sorted point;
//  4. the candidate is the interior point with the largest vertical
//     distance BELOW the chord (on a tie, the lower x);
//  5. it is the knee only where the curve bends there: past it, the
//     latency rises to at least twice the curve's lowest, and the curve
//     climbs at least three times as steeply from it to the last point as
//     from the first point to it (slopes of the normalised curve).
//
// For the usual convex curve — latency flat while the storage keeps up,
// then exploding — the chord runs above the flat part and the point farthest
// below it is the last flat-ish point, where the curve departs:
//
//	latency (normalised)
//	1 |                                  * last point
//	  |                               .' |
//	  |                            .'    |
//	  |                  chord  .'       |
//	  |                      .'          | latency explodes
//	  |                   .'        ^    |
//	  |                .'   largest |    |
//	  |             .'     distance |    |
//	  |          .'     below chord |    |
//	  |       .'                    v    |
//	0 *-------*-------*-------*-----*---'
//	  0                           knee   1   achieved IOPS (normalised)
//
// Because x and y are normalised by constants, the vertical distance ranks
// the points exactly as the perpendicular distance would. There is no knee
// when the curve has fewer than 3 points, no extent in x or y (all points at
// one throughput, or flat latency), or no point strictly below the chord: a
// straight line (all points on the chord, up to 1e-9 of floating-point
// noise) and a concave curve (latency rising fast, then levelling) have
// none. Step 5 is what a storage engineer means by a knee. The rise: a
// single queue's response time doubles when its server is half busy (M/M/1,
// R = S / (1 − ρ)); below twice the lowest latency, waiting is shorter than
// service, and real runs at low load wobble by tens of percent, so a flat,
// noisy curve (80–137 µs on a fresh machine's demo) must not get a knee at
// its deepest dip. The bend: a straight line bends by 1, y = x^1.5 by 1.9,
// a parabola by exactly 3 (a knee), a hockey stick by far more.
//
// # Objectives
//
// Each Objective sets exactly one kind; ValidateObjective rejects no kind,
// several kinds, invalid selectors and non-positive thresholds. IOPS and
// MiB/s (1 MiB = 2^20 bytes) are step totals.
//
//   - LatencyAtLoad ("p99 read latency ≤ 2 ms at ≥ 40,000 IOPS"): Met when
//     some step with achieved IOPS ≥ MinIOPS has its selected latency ≤
//     MaxLatency (the reason names the highest such load). NotMet when steps
//     reached the load and were measured but all were slower (the reason
//     names the step with the lowest latency). NotMeasurable when no step
//     reached MinIOPS (the reason states the peak) or none of those that did
//     has samples for the selector.
//   - PeakIOPS / PeakMiBps: the peak ≥ the threshold; NotMeasurable when no
//     step succeeded.
//   - IOPSAtLatency / MiBpsAtLatency ("IOPS at 1 ms ≥ Y"): the highest
//     throughput among steps whose selected latency is ≤ MaxLatency must be ≥
//     the threshold; NotMet when no step is at or below MaxLatency;
//     NotMeasurable when no step has samples for the selector's operation.
//
// Latency comparisons are "at or below" (≤): a latency exactly equal to the
// limit passes, and so does a throughput exactly equal to a minimum.
// Result.AllSLOsMet is true iff there is at least one objective and every
// verdict is Met.
//
// Reasons are for humans: counts with thousands separators (internal/numfmt),
// latencies in the largest fitting unit with three significant digits
// (numfmt.Latency), more digits only when needed to tell a value from the
// threshold it is compared with.
//
// # Steady state and stalls
//
// Steady judges a step's timeline (results.Timeline) by SNIA PTS's rule:
// the seconds are cut into rounds (5 by default), and the step is steady when
// the rounds' mean IOPS range within 20 % of their average and their
// least-squares line moves by at most 10 % of it across the rounds.
// LongestStall finds the longest run of seconds without a completion and the
// p99.9 latency of the seconds around it.
//
// # Repeatability
//
// A repeated load runs each level n times (plan's Repeat). Repeatability
// groups the runs by level and, for every level with at least 2 successful
// runs, gives the spread of the achieved IOPS and of the p99 latency of the
// operation the analysis judges latency on (Options.VariationSelector):
// the mean, the coefficient of variation (sample standard deviation, n − 1,
// as a percentage of the mean) and the 95 % confidence interval of the mean
// with Student's t, mean ± t(0.975, n − 1) · s / √n, t from a table for
// n − 1 = 1..9 (so at most MaxRuns = 10 runs). A level is stable when
// neither CV is strictly above Options.MaxVariationPercent.
package analysis
