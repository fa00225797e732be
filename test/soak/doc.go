// Package soak leaves the storagebench manager alone for weeks of
// simulated time on a real control plane, and shows that it can be: every
// scheduled time produces exactly one run, no run fails that should not,
// history stays within its limits, the manager's heap and API requests
// per simulated hour stay flat, and a quiet tenant's steps are not slowed
// down by a noisy one, while the manager is restarted every simulated day,
// replaced by a new build once, and a hostile tenant forges runs and
// replaces step records throughout.
//
// # Entry points
//
//	make soak                      # SOAK_DAYS=30 by default
//	SOAK_DAYS=3 go test -run '^$' -bench Soak -benchtime 1x -timeout 4h ./test/soak/
//	go test -run TestSoakShort -v -timeout 15m ./test/soak/
//
// BenchmarkSoak runs SOAK_DAYS simulated days (default 30), prints the
// checks and the figures as tables, and writes them to
// _work/soak/result.json (logs, samples and the manager binaries in
// _work/soak/run/). It asserts nothing about time or memory; a failed
// correctness check fails it. TestSoakShort runs one simulated day of the
// same workload (the same schedules, a restart and the build switch while
// a 100-step benchmark runs, one noisy period, the hostile tenant),
// asserts the correctness checks only and prints the figures
// (_work/soak/short.json, logs in _work/soak/short/). On a 2-core machine
// shared with other test runs the short test takes about 4–4.5 minutes
// and a simulated day of the benchmark 4 to 5 minutes (10 days took 39
// minutes, 3 days 15; 30 days: about 2 to 2.5 hours): the clock stands
// still while the system works, and the API server, CPU-bound, sets the
// pace. SOAK_FACTOR changes the clock's
// factor of both. Neither needs root privileges: the harness needs them
// for its Kubelet (mount namespaces) and for Block volumes (loop devices),
// and the soak starts no Kubelet and provisions Filesystem volumes only
// (directories). Both need `make k8s-binaries` (the binaries are cached in
// the home directory of the user who built them).
//
// # The control plane
//
// test/harness with Options.NoKubelet: etcd, kube-apiserver, real
// kube-controller-managers and the harness's Provisioner. Client Jobs
// really create pods, which stay Pending (no node exists): the manager
// watches Jobs, ConfigMaps and claims, not pods, to conduct a run.
// Trimmed runs' children are really deleted by the garbage collector,
// claims really provisioned, bound, released and deleted. No admission
// policy is installed: the manager's own defences are what the hostile
// tenant meets.
//
// The controllers the workload keeps busy (Jobs, the garbage collector,
// volume binding and protection, the pod garbage collector) run in a
// second kube-controller-manager of the soak's own (controllers_test.go)
// with --kube-api-qps 400: a controller manager's API clients are
// rate-limited in real time (20 requests a second per controller by
// default), which the simulated time outpaces several hundredfold; with
// the default the garbage collector fell behind by more than a simulated
// day within three, and the trimmed runs' children it had not deleted
// yet piled up in the manager's cache (its live heap grew 10 MiB a
// simulated day), which a real cluster's never holds. The soak counts
// these orphans every 30 s (the series' last column).
//
// # The manager
//
// test/soak/manager (package main: manager.New as cmd/manager
// builds it), built twice by the soak with different
// -ldflags "-X main.build=…", is the manager process, with a run key
// shared by every process of the soak (controllers.NewRunKey), plain-HTTP
// metrics on a loopback port, and its leads and timeouts in simulated
// time, sized so that real latencies always fit: step start leads 30 s,
// result grace 6 h, ready and claim bind timeouts 48 h. It is restarted
// (SIGTERM, wait for exit, start, wait until it writes its ready file once
// its caches synced) at every simulated midnight; from the middle of the
// soak (a single day: the second of its two restarts, at 8 h and 16 h) the
// second build is started instead, while the 100-step benchmarks run. The
// process samples its live heap after GC (/gc/heap/live:bytes) and its
// heap objects every 250 ms, and once per simulated hour and when it stops
// its API requests so far (rest_client_requests_total, as its metrics
// endpoint serves it) and its step records
// (storagebench_manager_step_records), into a samples file.
//
// # The simulated clock
//
// test/soak/simclock: simulated time = min(cap, base + (real − realBase) ×
// factor), with its parameters in a one-page file every process maps
// (MAP_SHARED) and reads at every Now under a sequence lock, so the driver
// and the managers always agree on the time exactly; real is
// CLOCK_MONOTONIC. The clock starts at the real time, paused, before the
// schedules are created (their creationTimestamp agrees with it). The
// manager's Clock.Wait(d) is d / factor (the last non-zero factor while
// paused), and at least 20 ms real while the clock stands still, so a
// reconciler waiting for a simulated instant does not spin meanwhile.
//
// The clock is run by a governor (governor_test.go) from items, each
// working from a simulated instant on (zero: now) until it changes: the
// clock runs at the factor (SOAK_FACTOR, default 4,000: a simulated day
// in 22 s of running clock) while no item works, stands still while one
// does, and never passes the earliest instant an item waits for (its cap).
// So every instant the soak cares about is reached exactly, and the work
// it starts is done before time goes on, however slow the machine:
//
//   - a runner works from its Job's creation until its ready report is
//     written and it has its first order, from its step's end (ramp and
//     duration after the step's start, on the simulated clock) until it
//     has published the result (Publish waits, for a step ordered ahead,
//     until the step before it is recorded) and holds its next order or
//     the done order;
//   - a benchmark works from its creation until all its runners started,
//     and from the moment all its runners ended until status says the run
//     ended;
//   - a schedule works from a second after its next time that has no run
//     (and was not squatted, below) until the manager created that run;
//     while one of its runs is going (concurrencyPolicy Forbid holds the
//     time), the clock stops instead a second before the time after,
//     which would otherwise replace the held one;
//   - the timetable works at each of its events (restarts, long
//     benchmarks, noisy periods, the hostile tenant's rounds) until done;
//     the soak's end stops the clock for good.
//
// An item working for more than 3 minutes real is reported stuck and no
// longer holds the clock (a finding: the short test fails on it); a clock
// that stands for 30 s says what holds it.
//
// # The runners
//
// Goroutines of the driver play every client Job of every namespace (an
// informer on Jobs labelled role=client), speaking the real protocol
// through internal/exchange.Client, as cmd/runner does: LoadPlan, a ready
// report (clock offset 0: they share the conductor's clock), then for
// each order a wait on the simulated clock until its start, ramp and
// duration have passed (never a precomputed real sleep), and Publish of a
// result made from a real fio json+ result (internal/results/testdata,
// 2 jobs, oltp): its histograms scaled to one second are each second of
// the step, a timeline window per simulated second, coarsened to the
// client's budget as the runner does (results.Timeline.Fit), read and
// write totals adding up to the windows exactly.
//
// # The workload
//
//   - 20 schedules in 4 team namespaces: per namespace one every 10
//     minutes and four hourly (on the hour); templates of 1–2 clients × 2
//     jobs on a shared volume, 1–3 rate steps of 1–2 minutes, ramps of 0
//     or 5 s, a third comparing with their 3 previous runs
//     (regression.baseline.previousRun.runs 3); history limits 3/1, 2/1 or
//     5/2 (successful/failed). 960 runs a simulated day.
//   - Two 100-step benchmarks of 1-hour rate steps: the quiet tenant's (2
//     clients, from 30 minutes in; a latency stop rule no step reaches, so
//     each order follows the record of the step before, and its step
//     overhead is measured), and tenant-b's (3 clients, orders written
//     ahead, from half a day before the build switch, so it runs across
//     it).
//   - The noisy tenant: at 3 h and 13 h of every other day (a single
//     day: at 3 h), 20 benchmarks × 10 clients × 6 steps of 30 minutes at
//     once, deleted by the tenant once they all ended.
//   - The hostile tenant, with its own hourly schedule: every 2 simulated
//     hours two forged runs of it (its label, a controller reference to
//     its UID, made-up token and signature, scheduled times in 2099 and in
//     2001) and a squat of its next run name 20+ minutes ahead (a forged
//     run under that name, or a plain benchmark); every 4 hours a
//     benchmark of its own whose first step record it replaces, once
//     recorded, six times (deleted and created again with ~0.9 MB of
//     valid JSON and a controller reference carrying the benchmark's UID).
//     It deletes its own forgeries after two rounds, squats an hour after
//     their time, targets 8 hours after they were made.
//
// # Checks and figures
//
//   - Every scheduled time of every schedule in (its creation, the end]
//     produced exactly one run (run creations seen by an informer, names
//     <schedule>-<Unix minutes> compared with the cron times of
//     internal/schedule; controlled by the schedule, the scheduled-time
//     annotation agreeing). Squatted times produce none, and a squatter is
//     never taken for a run.
//   - No run failed that should not: only the hostile tenant's record
//     targets may fail, with ExchangeObjectLost; any other failure is
//     listed with its reason.
//   - History within its limits at every check: status.history at every
//     update of a schedule has at most successful + failed + 1 rows; every
//     5 s, the runs kept are within each limit (a run over one at two
//     checks in a row is reported: the schedule trims in the reconcile a
//     run's end wakes).
//   - The hostile tenant's benchmarks never counted in a schedule's
//     status (history, active, lastScheduleTime), never deleted but by the
//     tenant.
//   - The build switch happened while a 100-step benchmark ran; no runner
//     error, nothing stuck.
//   - Per simulated day (per 2 simulated hours for a soak under 3 days):
//     the manager's live heap (mean, max), heap objects, API requests per
//     simulated hour and step records held (max), with each series'
//     least-squares slope per simulated day and the ratio of its last
//     third's mean to its first third's.
//   - The quiet tenant's step overhead, the real time from its last
//     client's publish of step k to the last client's receipt of order
//     k+1 (the clock stands still meanwhile), split by whether the noisy
//     tenant was working: median and 95th percentile, and their ratios.
//   - Restarts, the build switch (and the long benchmarks' steps then),
//     simulated days, real duration, how long runs took to set up, what
//     the clock stood still for, and the API server's own request counts.
package soak
