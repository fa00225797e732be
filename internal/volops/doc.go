// Package volops turns the timings of a volume-operations benchmark into the
// figures it publishes, and checks its plan. A volume-operations benchmark
// runs steps of concurrency (1, 5, 10, 25, 50, say); in each step, for each
// chosen operation, it creates N objects at once (N = the step's
// concurrency) and times each one's transition. The controller records one
// Sample per object; this package summarises the samples per operation and
// step (Summarize), draws one Curve per operation with its knee and a
// linear fit, judges objectives (Evaluate), and checks a Plan. It is pure:
// no Kubernetes client, no API type, no clock, no I/O, deterministic.
//
// # Operations
//
// Each operation times one transition, from the request to its observed
// completion:
//
//   - provision: a claim is created → it is bound.
//   - attach: a client pod using a claim is scheduled → its volume is
//     mounted and its container has started.
//   - snapshot: a VolumeSnapshot is created → it is readyToUse.
//   - cloneFromSnapshot: a claim with a VolumeSnapshot as its data source is
//     created → it is bound.
//   - cloneFromVolume: a claim with another claim as its data source is
//     created → it is bound.
//   - expand: a bound claim's requested size is raised → its capacity
//     reaches it.
//   - delete: a bound claim's deletion is requested → its PersistentVolume
//     is gone.
//
// Operations returns them in this order, which is also the order of
// Result.Curves. Work that only prepares an operation (the claim an attach,
// a snapshot, an expand or a delete starts from, a clone step's source
// claim and snapshot) is not timed.
//
// # Samples and steps
//
// A sample is the Index-th (0-based) of the Concurrency objects of one
// operation created at once. Summarize groups the samples by operation and
// concurrency into steps and rejects, with an error naming the sample or
// step and wrapping one of the Err values: an unknown operation or outcome,
// a concurrency below 1, an index outside 0..concurrency−1, an End before
// its Start, two samples with the same index in one step, and a step whose
// sample count is not its concurrency. A step's latencies are over its
// succeeded samples (Duration = End − Start); failed and timed-out ones are
// counted, and the Reason of the one with the lowest index is kept.
//
// Percentiles are exact order statistics by the nearest-rank rule: of n
// succeeded durations sorted ascending, the q-quantile is the k-th smallest
// (1-based) with k = ⌈q·n⌉, computed in integers (⌈percent·n/100⌉) so that
// no floating-point error moves the rank. It is always one of the measured
// durations: p50 of 1, 2, 3, 4 is 2; p90 of ten values is the 9th, p99 of
// them the 10th. The mean is rounded to the nearest nanosecond. The rate,
// PerMinute, is the succeeded operations divided by the step's span, from
// its earliest Start to its latest End over all its samples, times 60; it
// is 0 when none succeeded (or the span is 0).
//
// # Curve, knee and fit
//
// An operation's Curve lists its steps in ascending concurrency. The knee
// and the fits use only the steps in which every sample succeeded: a step
// with failures or timeouts has lost its slowest objects, so its latencies
// are not evidence. The knee is the concurrency at which p50 latency
// against concurrency bends, by the project's knee rule (analysis.Knee:
// the point farthest below the chord of the normalised curve, kept only
// where the latency past it at least doubles and the curve climbs at least
// three times as steeply after it as before it); 0 when there is none.
//
// Fit is the ordinary least-squares line of each step's Max latency
// against its concurrency. Max, because a driver (or a controller behind
// it) that performs operations one at a time, each taking D, finishes N
// operations created at once at D, 2D, …, ND: the step's max is N·D, so
// the slope of max against concurrency is D, the time the bottleneck
// spends on one operation, and its intercept 0. The mean of that step is
// (N+1)·D/2 and grows by only D/2 (Curve.MeanSlope); a driver that works
// fully in parallel has slope 0. The 95 % confidence interval of the slope
// is Slope ∓ t(0.975, n−2) · s / √Σ(x − x̄)², with s² the residual sum of
// squares over n − 2 and t Student's quantile (analysis.T975). Points that lie exactly on a line give an
// interval of zero width. With 2 points the line passes through both and
// there are no degrees of freedom left, so the interval is undefined and
// given as zero width; R2 is 1. With fewer than 2 points there is no fit:
// Fit.Points says how many, every other field is 0. R2 is 1 − SSE/SST, and
// 1 when the points lie on a flat line.
//
// # Objectives
//
// An Objective bounds one latency figure (p50, p90, p99 or max) of one
// operation at every step up to a concurrency (0 = every step), and
// optionally sets a minimum rate. The steps are checked in ascending
// concurrency; the first that fails decides, and ObjectiveResult.Step and
// Observed name it (or the last step checked, when the objective is met).
// A step fails when any of its operations failed or timed out, whatever its
// latency, when its latency is above MaxLatency, or when its rate is below
// MinPerMinute; equal values pass. An operation that was not measured, or
// has no step in range, does not meet the objective.
//
// # Objects
//
// Plan.Objects bounds the objects a plan keeps alive at once: the
// operations run one after another, in each step in turn, and each one's
// objects are deleted before the next starts. Each operation creates, at
// concurrency N:
//
//	operation          per timed object     shared
//	provision          1 claim              —
//	attach             1 claim + 1 pod      —
//	snapshot           1 claim + 1 snapshot —
//	cloneFromSnapshot  1 claim              1 source claim + 1 VolumeSnapshot
//	cloneFromVolume    1 claim              1 source claim
//	expand             1 claim              —
//	delete             1 claim              —
//
// One operation at N keeps N × per-object + shared objects; Objects is
// the largest. Objects made by others for these (the
// PersistentVolumes, VolumeSnapshotContents) are not counted. Each
// operation brings its own source objects, so there is no dependency
// between operations: a clone from a snapshot needs no snapshot operation
// in the plan.
package volops
