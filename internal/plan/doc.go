// Package plan turns a benchmark's load section into steps, divides each
// step's load over the fio jobs, and decides after every finished step what
// happens next. It is pure: no Kubernetes, no fio, no clock. The controller
// and the local runner both drive a benchmark through it.
//
// # Load modes
//
// A Load has exactly one mode:
//
//   - Rate: each step offers a total rate across ALL clients, in IOPS or MiB/s,
//     listed explicitly or generated from Start by adding Increment or
//     multiplying by FactorPercent/100 (rounded down, growing by at least 1)
//     while the value is <= Max. Max is a step only if the sequence hits it
//     exactly: it is not appended, so the spacing the user asked for holds.
//   - QueueDepth: each step sets the outstanding I/Os per client (listed, or
//     Start doubled up to Max), divided over the client's jobs; the workload's
//     IODepth is ignored. Synchronous engines are refused (their queue depth is
//     always 1 per job).
//   - Curve: like vdbench's curve, step 0 runs unthrottled to measure the
//     maximum, then one step per percentage (default 10, 20, …, 100) offers
//     floor(max × percent / 100), at least 1 (with Repeat, max is the mean
//     of the unthrottled runs).
//
// A load has at most MaxSteps (100) steps, a curve's unthrottled step
// and every repetition included.
//
// # Repetition
//
// Repeat (1..10, default 1) runs every planned step — a load level — that
// many times back to back, so that the spread between runs can be judged.
// Steps expands the plan: each run is an ordinary step with its own Index,
// and carries its Level (the planned step, from 0) and its Repetition
// (1..Repeat); both stay 0 when the load does not repeat. Levels × Repeat
// must not exceed MaxSteps. A curve repeats its unthrottled level too, and
// builds its throttled steps on the MEAN of those runs' achieved maxima.
// Stop rules judge every run on its own, as they judge any step.
//
// # Running unsteady steps again
//
// ExtendUntilSteady (2..10; 0 off) reruns a step whose outcome was judged
// not steady (StepOutcome.Steady, set by the caller from the step's
// timeline) at the same load, as a step of its own with Attempt counting
// the runs of its planned step, until a run is steady or ExtendUntilSteady
// runs have run. A run not judged (nil) is not rerun. Next walks the
// outcomes to find which planned step each is a run of; a curve's maximum
// takes each unthrottled planned step's last run. The run a rerun follows
// is superseded (Step.Supersedes). TotalSteps counts the most runs, levels
// × Repeat × ExtendUntilSteady, which must not exceed MaxSteps;
// PlannedSteps the runs planned once some have been rerun.
//
// # Dividing a step
//
// fio's rate_iops and rate limit each data direction separately
// (rate_iops=read,write), so Divide first splits a step's total into reads
// (floor(total × readPercent / 100)) and writes (the rest), then divides each
// direction over clients × jobs by integer division. The remainder goes one
// unit per job, clients first (client 0 job 0, client 1 job 0, …), and the
// write remainder continues where the read remainder stopped; so the sum over
// all jobs is the offered total exactly and client totals differ by at most 1.
//
// fio treats a rate of 0 as "no limit". A job whose share of a direction
// rounds down to 0 would therefore run unthrottled and silently wreck the
// step. Such loads are refused instead: Validate (for rate steps) and Divide
// (for every step, including curve steps, whose rates are known only at run
// time) require every job to get at least one I/O per second — 1 IOPS, or one
// block per second in MiBps mode — in every direction the workload does, and
// the error states the minimum total (see MinimumRate).
//
// # Stop rules and the next step
//
// Next decides the next step: given the load and the outcomes of the finished
// steps, it returns the next step or why the load stopped. It re-checks every
// outcome on every call, so its answer depends only on its inputs. Rules:
//
//   - Latency: stop after a step whose chosen statistic (mean, p50, p90, p99,
//     p99.9) for reads, writes or the worse of the two is strictly above the
//     limit; exactly at the limit does not stop. The curve's unthrottled step
//     is exempt: it exists to find the maximum, and its latency is the
//     saturated latency by construction, so applying the rule there would end
//     every curve before it starts.
//   - Saturation: stop after a throttled rate step (rate mode, or a curve step
//     after the first) that achieved less than SaturationPercent % of its
//     offered rate. Queue-depth steps offer no rate, so the rule is refused
//     there.
//
// The latency rule is checked before the saturation rule.
//
// # Validation
//
// Validate reports the first violated rule as a *workload.FieldError with a
// JSON-style path ("load.rate.steps[2]", "clients.jobsPerClient"), checking
// the topology, then the workload, then the load.
package plan
