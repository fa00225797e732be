package plan

import (
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/workload"
)

func TestValidate(t *testing.T) {
	minute := time.Minute
	ok := topo(6, 8) // 48 jobs
	rw := wl(80)
	tests := []struct {
		name      string
		l         Load
		t         Topology
		w         workload.Spec
		wantField string
		wantIn    string
	}{
		// topology and workload
		{"valid rate", rateLoad(1000, 2000), ok, rw, "", ""},
		{"clients 0", rateLoad(1000), topo(0, 1), rw, "clients.count", "between 1 and 1000"},
		{"clients 1001", rateLoad(1000), topo(1001, 1), rw, "clients.count", ""},
		{"clients 1000", rateLoad(100000), topo(1000, 1), rw, "", ""},
		{"jobs 0", rateLoad(1000), topo(1, 0), rw, "clients.jobsPerClient", "between 1 and 64"},
		{"jobs 65", rateLoad(1000), topo(1, 65), rw, "clients.jobsPerClient", ""},
		{"jobs 64", rateLoad(1000), topo(1, 64), rw, "", ""},
		{"invalid workload", rateLoad(1000), ok, wlBS(80, 3000), "workload.blockSizeBytes", ""},
		{"working set below one block per job", rateLoad(1000), ok, func() workload.Spec {
			w := wlBS(80, 1<<20)
			w.WorkingSetBytesPerClient = 7 << 20 // 8 jobs × 1 MiB blocks need 8 MiB
			return w
		}(), "workload.workingSetBytesPerClient", "at least one block per fio job: 8 jobs per client"},
		{"working set of exactly one block per job", rateLoad(1000), ok, func() workload.Spec {
			w := wlBS(80, 1<<20)
			w.WorkingSetBytesPerClient = 8 << 20
			return w
		}(), "", ""},

		// mode
		{"no mode", Load{StepDuration: minute}, ok, rw, "load", "load: none is not allowed: must set exactly one of rate, queueDepth, curve or clients"},
		{"two modes", Load{Rate: &RateSteps{Steps: []int64{1000}}, Curve: &CurveSpec{}, StepDuration: minute}, ok, rw,
			"load", "rate and curve is not allowed"},
		{"three modes", Load{Rate: &RateSteps{Steps: []int64{1000}}, QueueDepth: &QueueDepthSteps{Start: 8, Max: 8}, Curve: &CurveSpec{}, StepDuration: minute}, ok, rw,
			"load", "rate and queueDepth and curve"},

		// rate, listed
		{"rate unit bad", Load{Rate: &RateSteps{Unit: "ops", Steps: []int64{1000}}, StepDuration: minute}, ok, rw, "load.rate.unit", `"ops"`},
		{"rate step 0", rateLoad(0), ok, rw, "load.rate.steps[0]", "greater than 0"},
		{"rate step negative", rateLoad(1000, -5), ok, rw, "load.rate.steps[1]", "greater than 0"},
		{"rate not increasing", rateLoad(1000, 2000, 2000), ok, rw, "load.rate.steps[2]", "greater than the previous step (2000)"},
		{"rate decreasing", rateLoad(1000, 3000, 2000), ok, rw, "load.rate.steps[2]", ""},
		{"rate above max", rateLoad(1 << 41), ok, rw, "load.rate.steps[0]", "at most"},
		{"rate 101 steps", Load{Rate: &RateSteps{Steps: seq(101, 1000)}, StepDuration: minute}, ok, rw, "load.rate.steps", "101 steps is not allowed"},
		{"rate 100 steps", Load{Rate: &RateSteps{Steps: seq(100, 1000)}, StepDuration: minute}, ok, rw, "", ""},
		{"rate listed with start", Load{Rate: &RateSteps{Steps: []int64{1000}, Start: 5}, StepDuration: minute}, ok, rw, "load.rate.start", "must be 0 when steps are listed"},
		{"rate listed with factor", Load{Rate: &RateSteps{Steps: []int64{1000}, FactorPercent: 200}, StepDuration: minute}, ok, rw, "load.rate.factorPercent", ""},
		{"rate listed with max", Load{Rate: &RateSteps{Steps: []int64{1000}, Max: 5}, StepDuration: minute}, ok, rw, "load.rate.max", ""},
		// 48 jobs at 80 % reads: reads floor(T*0.8) >= 48 -> T >= 60; writes ceil(T*0.2) >= 48 -> T >= 236.
		{"rate below minimum", rateLoad(235), ok, rw, "load.rate.steps[0]",
			"load.rate.steps[0]: 235 is not allowed: must be at least 236 IOPS: each of the 48 fio jobs (6 clients × 8 jobs) needs at least 1 read IOPS and 1 write IOPS at 80 % reads, and fio treats a rate of 0 as unlimited"},
		{"rate at minimum", rateLoad(236), ok, rw, "", ""},
		{"rate read-only minimum", rateLoad(47), ok, wl(100), "load.rate.steps[0]", "at least 48 IOPS: each of the 48 fio jobs (6 clients × 8 jobs) needs at least 1 read IOPS,"},
		{"rate read-only at minimum", rateLoad(48), ok, wl(100), "", ""},
		{"rate write-only minimum", rateLoad(47), ok, wl(0), "load.rate.steps[0]", "1 write IOPS,"},
		{"rate MiBps minimum", Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{2}}, StepDuration: minute}, ok, wlBS(50, 64<<10), "load.rate.steps[0]",
			"must be at least 6 MiBps: each of the 48 fio jobs (6 clients × 8 jobs) needs at least 65536 B/s (one block per second) of reads and of writes at 50 % reads"},
		{"rate MiBps at minimum", Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{6}}, StepDuration: minute}, ok, wlBS(50, 64<<10), "", ""},

		// rate, generated
		{"gen valid increment", Load{Rate: &RateSteps{Start: 1000, Increment: 1000, Max: 10000}, StepDuration: minute}, ok, rw, "", ""},
		{"gen valid factor", Load{Rate: &RateSteps{Start: 1000, FactorPercent: 200, Max: 64000}, StepDuration: minute}, ok, rw, "", ""},
		{"gen start 0", Load{Rate: &RateSteps{Increment: 1000, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.start", "greater than 0 (or list steps)"},
		{"gen no increment or factor", Load{Rate: &RateSteps{Start: 1000, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.increment", "exactly one of increment or factorPercent"},
		{"gen both increment and factor", Load{Rate: &RateSteps{Start: 1000, Increment: 5, FactorPercent: 200, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.factorPercent", "exactly one"},
		{"gen negative increment", Load{Rate: &RateSteps{Start: 1000, Increment: -5, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.increment", "greater than 0"},
		{"gen factor 100", Load{Rate: &RateSteps{Start: 1000, FactorPercent: 100, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.factorPercent", "between 101"},
		{"gen factor 10001", Load{Rate: &RateSteps{Start: 1000, FactorPercent: 10001, Max: 10000}, StepDuration: minute}, ok, rw, "load.rate.factorPercent", ""},
		{"gen max below start", Load{Rate: &RateSteps{Start: 1000, Increment: 1, Max: 999}, StepDuration: minute}, ok, rw, "load.rate.max", "at least start (1000)"},
		{"gen 100 steps", Load{Rate: &RateSteps{Start: 1000, Increment: 1, Max: 1099}, StepDuration: minute}, ok, rw, "", ""},
		{"gen 101 steps", Load{Rate: &RateSteps{Start: 1000, Increment: 1, Max: 1100}, StepDuration: minute}, ok, rw, "load.rate.max", "at most 100 generated steps"},
		{"gen start below minimum", Load{Rate: &RateSteps{Start: 100, Increment: 100, Max: 1000}, StepDuration: minute}, ok, rw, "load.rate.start", "at least 236 IOPS"},

		// queue depth
		{"qd valid", Load{QueueDepth: &QueueDepthSteps{Start: 8, Max: 64}, StepDuration: minute}, ok, rw, "", ""},
		{"qd listed valid", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{8, 9, 4096}}, StepDuration: minute}, ok, rw, "", ""},
		{"qd below jobs", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{7, 16}}, StepDuration: minute}, ok, rw, "load.queueDepth.steps[0]", "at least jobsPerClient (8)"},
		{"qd above 4096", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{8, 4097}}, StepDuration: minute}, ok, rw, "load.queueDepth.steps[1]", "at most 4096"},
		{"qd not increasing", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{16, 16}}, StepDuration: minute}, ok, rw, "load.queueDepth.steps[1]", "greater than the previous step (16)"},
		{"qd listed with start", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{16}, Start: 1}, StepDuration: minute}, ok, rw, "load.queueDepth.start", ""},
		{"qd listed with max", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{16}, Max: 1}, StepDuration: minute}, ok, rw, "load.queueDepth.max", ""},
		{"qd 101 steps", Load{QueueDepth: &QueueDepthSteps{Steps: seq32(101, 8)}, StepDuration: minute}, ok, rw, "load.queueDepth.steps", "at most 100"},
		{"qd start 0", Load{QueueDepth: &QueueDepthSteps{Max: 64}, StepDuration: minute}, ok, rw, "load.queueDepth.start", "greater than 0"},
		{"qd start below jobs", Load{QueueDepth: &QueueDepthSteps{Start: 4, Max: 64}, StepDuration: minute}, ok, rw, "load.queueDepth.start", "at least jobsPerClient"},
		{"qd max below start", Load{QueueDepth: &QueueDepthSteps{Start: 16, Max: 8}, StepDuration: minute}, ok, rw, "load.queueDepth.max", "at least start (16)"},
		{"qd max above 4096", Load{QueueDepth: &QueueDepthSteps{Start: 16, Max: 8192}, StepDuration: minute}, ok, rw, "load.queueDepth.max", "at most 4096"},
		{"qd sync engine", Load{QueueDepth: &QueueDepthSteps{Start: 8, Max: 64}, StepDuration: minute}, ok,
			func() workload.Spec { s := wl(80); s.IOEngine, s.IODepth = workload.PSync, 1; return s }(),
			"workload.ioEngine", "with queue-depth steps"},

		// curve
		{"curve default", Load{Curve: &CurveSpec{}, StepDuration: minute}, ok, rw, "", ""},
		{"curve MiBps", Load{Curve: &CurveSpec{Unit: MiBps, Percents: []int32{1, 100}}, StepDuration: minute}, ok, rw, "", ""},
		{"curve unit bad", Load{Curve: &CurveSpec{Unit: "x"}, StepDuration: minute}, ok, rw, "load.curve.unit", ""},
		{"curve percent 0", Load{Curve: &CurveSpec{Percents: []int32{0, 50}}, StepDuration: minute}, ok, rw, "load.curve.percents[0]", "between 1 and 100"},
		{"curve percent 101", Load{Curve: &CurveSpec{Percents: []int32{50, 101}}, StepDuration: minute}, ok, rw, "load.curve.percents[1]", ""},
		{"curve not increasing", Load{Curve: &CurveSpec{Percents: []int32{50, 50}}, StepDuration: minute}, ok, rw, "load.curve.percents[1]", "strictly increasing"},
		{"curve 99 percents", Load{Curve: &CurveSpec{Percents: seq32(99, 1)}, StepDuration: minute}, ok, rw, "", ""},
		{"curve 100 percents", Load{Curve: &CurveSpec{Percents: seq32(100, 1)}, StepDuration: minute}, ok, rw, "load.curve.percents", "at most 99"},
		{"curve 99 percents and the client-bound check", Load{Curve: &CurveSpec{Percents: seq32(99, 1), ClientBoundCheck: true}, StepDuration: minute},
			ok, rw, "load.curve.percents", "at most 98 (with the unthrottled step and the client-bound check"},

		// repeat: every run is a step, so levels × repeat ≤ 100
		{"repeat 0 means once", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Repeat: 0}, ok, rw, "", ""},
		{"repeat 10", Load{Rate: &RateSteps{Steps: seq(10, 1000)}, StepDuration: minute, Repeat: 10}, ok, rw, "", ""},
		{"repeat 11", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Repeat: 11}, ok, rw, "load.repeat",
			"load.repeat: 11 is not allowed: must be between 1 and 10"},
		{"repeat negative", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Repeat: -1}, ok, rw, "load.repeat", "between 1 and 10"},
		{"repeat: 50 listed steps × 2 = 100 runs", Load{Rate: &RateSteps{Steps: seq(50, 1000)}, StepDuration: minute, Repeat: 2}, ok, rw, "", ""},
		{"repeat: 51 listed steps × 2 = 102 runs", Load{Rate: &RateSteps{Steps: seq(51, 1000)}, StepDuration: minute, Repeat: 2}, ok, rw, "load.repeat",
			"load.repeat: 2 is not allowed: must leave at most 100 steps in all: 51 planned steps × 2 runs each = 102 runs"},
		{"repeat: generated by factor × 10", Load{Rate: &RateSteps{Start: 1000, FactorPercent: 101, Max: 1200}, StepDuration: minute, Repeat: 10}, ok, rw,
			"load.repeat", "20 planned steps × 10 runs each = 200 runs"},
		{"repeat: queue depth 8..4096 doubling (13 levels) × 8", Load{QueueDepth: &QueueDepthSteps{Start: 1, Max: 4096}, StepDuration: minute, Repeat: 8}, topo(6, 1), rw,
			"load.repeat", "13 planned steps × 8 runs each = 104 runs"},
		{"repeat: queue depth 8..4096 × 10 = 100", Load{QueueDepth: &QueueDepthSteps{Start: 8, Max: 4096}, StepDuration: minute, Repeat: 10}, ok, rw, "", ""},
		{"repeat: default curve × 9 = 99 runs", Load{Curve: &CurveSpec{}, StepDuration: minute, Repeat: 9}, ok, rw, "", ""},
		{"repeat: default curve × 10 = 110 runs, the unthrottled level counted", Load{Curve: &CurveSpec{}, StepDuration: minute, Repeat: 10}, ok, rw,
			"load.repeat", "11 planned steps × 10 runs each = 110 runs"},
		// extendUntilSteady: the most runs count as steps too
		{"extend: 10 levels × 10 runs", Load{Rate: &RateSteps{Steps: seq(10, 1000)}, StepDuration: minute, ExtendUntilSteady: 10}, ok, rw, "", ""},
		{"extend: 11 runs", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, ExtendUntilSteady: 11}, ok, rw,
			"load.extendUntilSteady.maxRuns", "must be between 2 and 10"},
		{"extend: 5 levels × repeat 5 × 5 runs = 125", Load{Rate: &RateSteps{Steps: seq(5, 1000)}, StepDuration: minute, Repeat: 5, ExtendUntilSteady: 5}, ok, rw,
			"load.extendUntilSteady.maxRuns", "25 planned steps × at most 5 runs until steady = 125 runs"},
		{"extend: default curve × 9 runs = 99", Load{Curve: &CurveSpec{}, StepDuration: minute, ExtendUntilSteady: 9}, ok, rw, "", ""},

		// durations
		{"duration 5s", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: 5 * time.Second}, ok, rw, "", ""},
		{"duration 4.9s", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: 4900 * time.Millisecond}, ok, rw, "load.stepDuration", "4.9s is not allowed: must be between 5s and 24h"},
		{"duration 24h", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: 24 * time.Hour}, ok, rw, "", ""},
		{"duration 25h", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: 25 * time.Hour}, ok, rw, "load.stepDuration", ""},
		{"ramp negative", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, RampTime: -time.Second}, ok, rw, "load.rampTime", ""},
		{"ramp equal", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, RampTime: minute}, ok, rw, "load.rampTime", "shorter than stepDuration (1m0s)"},
		{"ramp just below", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, RampTime: minute - time.Nanosecond}, ok, rw, "", ""},

		// arrivals
		{"poisson rate", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Arrivals: Poisson}, ok, rw, "", ""},
		{"poisson curve", Load{Curve: &CurveSpec{}, StepDuration: minute, Arrivals: Poisson}, ok, rw, "", ""},
		{"poisson queue depth", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{64}}, StepDuration: minute, Arrivals: Poisson}, ok, rw, "load.arrivals", "needs an offered rate"},
		{"uniform queue depth", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{64}}, StepDuration: minute, Arrivals: Uniform}, ok, rw, "", ""},
		{"unknown arrivals", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Arrivals: "Bursty"}, ok, rw, "load.arrivals", "must be Uniform or Poisson"},

		// stop rules
		{"stall limit an hour", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Stop: StopRules{MaxStallSeconds: 3600}}, ok, rw, "", ""},
		{"stall limit over an hour", Load{Rate: &RateSteps{Steps: []int64{1000}}, StepDuration: minute, Stop: StopRules{MaxStallSeconds: 3601}}, ok, rw, "load.stop.maxStall", "3600 s"},
		{"stop valid", withStop(rateLoad(1000), &LatencyStop{P99, Worst, 2000}, 90), ok, rw, "", ""},
		{"stop metric bad", withStop(rateLoad(1000), &LatencyStop{"p95", Read, 2000}, 0), ok, rw, "load.stop.latency.metric", `"p95"`},
		{"stop direction bad", withStop(rateLoad(1000), &LatencyStop{P99, "both", 2000}, 0), ok, rw, "load.stop.latency.operation", ""},
		{"stop read on write-only", withStop(rateLoad(1000), &LatencyStop{P99, Read, 2000}, 0), ok, wl(0), "load.stop.latency.operation", "does no reads"},
		{"stop write on read-only", withStop(rateLoad(1000), &LatencyStop{P99, Write, 2000}, 0), ok, wl(100), "load.stop.latency.operation", "does no writes"},
		{"stop sync without sync calls", withStop(rateLoad(1000), &LatencyStop{P99, Sync, 2000}, 0), ok, wl(0), "load.stop.latency.operation", "makes no sync calls"},
		{"stop sync on a log", withStop(rateLoad(1000), &LatencyStop{P99, Sync, 2000}, 0), ok, synced(), "", ""},
		{"stop worst on read-only", withStop(rateLoad(1000), &LatencyStop{P999, Worst, 2000}, 0), ok, wl(100), "", ""},
		{"stop limit 0", withStop(rateLoad(1000), &LatencyStop{Mean, Read, 0}, 0), ok, rw, "load.stop.latency.limitMicroseconds", "greater than 0"},
		{"stop limit huge", withStop(rateLoad(1000), &LatencyStop{Mean, Read, 3_600_000_001}, 0), ok, rw, "load.stop.latency.limitMicroseconds", ""},
		{"saturation 100", withStop(rateLoad(1000), nil, 100), ok, rw, "", ""},
		{"saturation 101", withStop(rateLoad(1000), nil, 101), ok, rw, "load.stop.saturationPercent", "between 0 (off) and 100"},
		{"saturation negative", withStop(rateLoad(1000), nil, -1), ok, rw, "load.stop.saturationPercent", ""},
		{"saturation with qd", withStop(Load{QueueDepth: &QueueDepthSteps{Start: 8, Max: 64}, StepDuration: minute}, nil, 90), ok, rw,
			"load.stop.saturationPercent", "queue-depth steps offer none"},
		{"saturation with curve", withStop(Load{Curve: &CurveSpec{}, StepDuration: minute}, nil, 90), ok, rw, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFieldError(t, Validate(tt.l, tt.t, tt.w), tt.wantField, tt.wantIn)
		})
	}
}

// TestValidateMinimumMatchesDivide checks that Validate accepts exactly the
// rate steps Divide can split without a zero share.
func TestValidateMinimumMatchesDivide(t *testing.T) {
	for _, tp := range []Topology{topo(1, 1), topo(3, 7), topo(6, 8), topo(13, 5)} {
		for _, r := range []int32{0, 1, 33, 50, 80, 99, 100} {
			for _, unit := range []RateUnit{IOPS, MiBps} {
				w := wlBS(r, 64<<10)
				m := MinimumRate(unit, tp, w)
				for _, v := range []int64{m - 1, m} {
					if v <= 0 {
						continue
					}
					l := Load{Rate: &RateSteps{Unit: unit, Steps: []int64{v}}, StepDuration: time.Minute}
					verr := Validate(l, tp, w)
					_, derr := Divide(Steps(l)[0], tp, w)
					if (verr == nil) != (v == m) || (derr == nil) != (v == m) {
						t.Errorf("%v %d%% %s rate %d (minimum %d): Validate = %v, Divide = %v", tp, r, unit, v, m, verr, derr)
					}
				}
			}
		}
	}
}

func withStop(l Load, ls *LatencyStop, sat int32) Load {
	l.Stop = StopRules{Latency: ls, SaturationPercent: sat}
	return l
}

func seq(n int, start int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = start + int64(i)
	}
	return out
}

func seq32(n int, start int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = start + int32(i)
	}
	return out
}
