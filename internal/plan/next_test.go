package plan

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/results"
)

func lat(p99Ns uint64) *results.LatencySummary {
	return &results.LatencySummary{Count: 1, MeanNs: float64(p99Ns / 4), P50Ns: p99Ns / 3, P90Ns: p99Ns / 2, P99Ns: p99Ns, P999Ns: p99Ns * 2}
}

// out is an outcome that achieved iops IOPS (and 1 MiB/s per 16 IOPS) with
// the given p99 read and write latencies (0 = no latencies in that direction).
// withSync gives an outcome sync calls of p99 syncP99.
func withSync(o StepOutcome, syncP99 uint64) StepOutcome {
	o.Sync = lat(syncP99)
	return o
}

func out(i int, iops float64, readP99, writeP99 uint64) StepOutcome {
	o := StepOutcome{Index: i, AchievedIOPS: iops, AchievedBytesPerSec: iops * 65536}
	if readP99 > 0 {
		o.Read = lat(readP99)
	}
	if writeP99 > 0 {
		o.Write = lat(writeP99)
	}
	return o
}

func TestNext(t *testing.T) {
	const ms = 1_000_000
	rate := rateLoad(1000, 2000, 3000)
	qd := Load{QueueDepth: &QueueDepthSteps{Start: 16, Max: 64}, StepDuration: time.Minute}
	curve := Load{Curve: &CurveSpec{Percents: []int32{10, 50, 100}}, StepDuration: time.Minute}
	curveMiB := Load{Curve: &CurveSpec{Unit: MiBps, Percents: []int32{25, 100}}, StepDuration: time.Minute}
	rateMiB := Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{100, 200}}, StepDuration: time.Minute}
	p99read2ms := &LatencyStop{P99, Read, 2000}

	tests := []nextCase{
		// rate mode
		{name: "rate first", l: rate, wantNext: &Step{Index: 0, OfferedIOPS: 1000}},
		{name: "rate second", l: rate, done: []StepOutcome{out(0, 1000, ms, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "rate completed", l: rate, done: []StepOutcome{out(0, 1000, ms, ms), out(1, 2000, ms, ms), out(2, 3000, ms, ms)},
			wantStop: StopCompleted, stopStep: 2, wantMsg: "all 3 steps completed"},
		{name: "rate MiBps", l: rateMiB, done: []StepOutcome{out(0, 1600, ms, 0)}, wantNext: &Step{Index: 1, OfferedBytesPerSec: 200 << 20}},

		// queue-depth mode
		{name: "qd first", l: qd, wantNext: &Step{Index: 0, QueueDepthPerClient: 16}},
		{name: "qd last", l: qd, done: []StepOutcome{out(0, 1, ms, ms), out(1, 1, ms, ms)}, wantNext: &Step{Index: 2, QueueDepthPerClient: 64}},
		{name: "qd completed", l: qd, done: []StepOutcome{out(0, 1, ms, ms), out(1, 1, ms, ms), out(2, 1, ms, ms)}, wantStop: StopCompleted, stopStep: 2},
		{name: "qd latency stop", l: withStop(qd, &LatencyStop{P99, Write, 10_000}, 0),
			done:     []StepOutcome{out(0, 1, ms, 5*ms), out(1, 1, ms, 10*ms+1)},
			wantStop: StopLatencyLimit, stopStep: 1, wantMsg: "step 2/3 (queue depth 32 per client): p99 write latency 10.000001 ms exceeded the 10 ms limit"},

		// a log's sync calls: over the limit stops; a step without a call
		// (fewer writes than syncEvery) does not
		{name: "sync latency stop", l: withStop(rate, &LatencyStop{P99, Sync, 10_000}, 0),
			done:     []StepOutcome{withSync(out(0, 1000, 0, ms), 5*ms), withSync(out(1, 2000, 0, ms), 12*ms)},
			wantStop: StopLatencyLimit, stopStep: 1, wantMsg: "step 2/3 (2000 IOPS offered): p99 sync latency 12 ms exceeded the 10 ms limit"},
		{name: "a step without sync calls goes on", l: withStop(rate, &LatencyStop{P99, Sync, 10_000}, 0),
			done: []StepOutcome{out(0, 1000, 0, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},

		// curve mode
		{name: "curve first is unthrottled", l: curve, wantNext: &Step{Index: 0, Unthrottled: true}},
		{name: "curve 10 % of max", l: curve, done: []StepOutcome{out(0, 45678.9, ms, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 4567, PercentOfMax: 10}},
		{name: "curve 100 % of max", l: curve, done: []StepOutcome{out(0, 45678.9, ms, ms), out(1, 4567, ms, ms), out(2, 22839, ms, ms)},
			wantNext: &Step{Index: 3, OfferedIOPS: 45678, PercentOfMax: 100}},
		{name: "curve tiny max gives at least 1", l: curve, done: []StepOutcome{out(0, 3, ms, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 1, PercentOfMax: 10}},
		{name: "curve completed", l: curve, done: []StepOutcome{out(0, 100, ms, ms), out(1, 10, ms, ms), out(2, 50, ms, ms), out(3, 100, ms, ms)},
			wantStop: StopCompleted, stopStep: 3, wantMsg: "all 4 steps completed"},
		{name: "curve zero max", l: curve, done: []StepOutcome{out(0, 0, ms, ms)}, wantErr: true, wantMsg: "unthrottled step achieved 0 IOPS; cannot build the curve"},
		{name: "curve NaN max", l: curve, done: []StepOutcome{out(0, math.NaN(), ms, ms)}, wantErr: true, wantMsg: "cannot build the curve"},
		{name: "curve MiBps", l: curveMiB, done: []StepOutcome{{Index: 0, AchievedIOPS: 1, AchievedBytesPerSec: 1000 << 20, Read: lat(ms)}},
			wantNext: &Step{Index: 1, OfferedBytesPerSec: 250 << 20, PercentOfMax: 25}},
		{name: "curve MiBps zero max", l: curveMiB, done: []StepOutcome{{Index: 0, AchievedIOPS: 5}}, wantErr: true,
			wantMsg: "unthrottled step achieved 0 bytes per second"},
		{name: "curve unthrottled step exempt from latency", l: withStop(curve, p99read2ms, 0), done: []StepOutcome{out(0, 50000, 50*ms, 0)},
			wantNext: &Step{Index: 1, OfferedIOPS: 5000, PercentOfMax: 10}},
		{name: "curve later step latency stop", l: withStop(curve, p99read2ms, 0), done: []StepOutcome{out(0, 50000, 50*ms, 0), out(1, 5000, ms, 0), out(2, 25000, 2310*1000, 0)},
			wantStop: StopLatencyLimit, stopStep: 2, wantMsg: "step 3/4 (50 % of max, 25000 IOPS offered): p99 read latency 2.31 ms exceeded the 2 ms limit"},
		{name: "curve unthrottled step exempt from saturation", l: withStop(curve, nil, 90), done: []StepOutcome{out(0, 1000, ms, ms)},
			wantNext: &Step{Index: 1, OfferedIOPS: 100, PercentOfMax: 10}},
		{name: "curve saturation", l: withStop(curve, nil, 90), done: []StepOutcome{out(0, 1000, ms, ms), out(1, 100, ms, ms), out(2, 449, ms, ms)},
			wantStop: StopSaturated, stopStep: 2, wantMsg: "step 3/4 (50 % of max, 500 IOPS offered): achieved 449 IOPS, below 90 % of the offered rate"},
		{name: "curve MiBps saturation", l: withStop(curveMiB, nil, 95),
			done:     []StepOutcome{{Index: 0, AchievedBytesPerSec: 1000 << 20}, {Index: 1, AchievedBytesPerSec: 237.4 * (1 << 20)}},
			wantStop: StopSaturated, stopStep: 1, wantMsg: "step 2/3 (25 % of max, 250 MiB/s offered): achieved 237.4 MiB/s, below 95 % of the offered rate"},

		// latency boundaries
		{name: "latency exactly at limit continues", l: withStop(rate, p99read2ms, 0), done: []StepOutcome{out(0, 1000, 2*ms, 0)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "latency 1 ns above limit stops", l: withStop(rate, p99read2ms, 0), done: []StepOutcome{out(0, 1000, 2*ms+1, 0)},
			wantStop: StopLatencyLimit, stopStep: 0, wantMsg: "step 1/3 (1000 IOPS offered): p99 read latency 2.000001 ms exceeded the 2 ms limit"},
		{name: "latency stops at step 2", l: withStop(rate, p99read2ms, 0), done: []StepOutcome{out(0, 1000, ms, 0), out(1, 2000, 2310*1000, 0)},
			wantStop: StopLatencyLimit, stopStep: 1, wantMsg: "step 2/3 (2000 IOPS offered): p99 read latency 2.31 ms exceeded the 2 ms limit"},
		{name: "latency on last step beats completed", l: withStop(rate, p99read2ms, 0),
			done:     []StepOutcome{out(0, 1000, ms, 0), out(1, 2000, ms, 0), out(2, 3000, 3*ms, 0)},
			wantStop: StopLatencyLimit, stopStep: 2},
		{name: "earlier stop is reported even with later outcomes", l: withStop(rate, p99read2ms, 0),
			done:     []StepOutcome{out(0, 1000, 5*ms, 0), out(1, 2000, ms, 0)},
			wantStop: StopLatencyLimit, stopStep: 0},
		{name: "latency write ignores reads", l: withStop(rate, &LatencyStop{P99, Write, 2000}, 0), done: []StepOutcome{out(0, 1000, 9*ms, ms)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "latency mean", l: withStop(rate, &LatencyStop{Mean, Read, 500}, 0), done: []StepOutcome{out(0, 1000, 2*ms+4, 0)},
			wantStop: StopLatencyLimit, wantMsg: "mean read latency 500.001 µs exceeded the 500 µs limit"},
		{name: "latency p50 under", l: withStop(rate, &LatencyStop{P50, Read, 1000}, 0), done: []StepOutcome{out(0, 1000, 3*ms, 0)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "latency p90", l: withStop(rate, &LatencyStop{P90, Read, 1000}, 0), done: []StepOutcome{out(0, 1000, 3*ms, 0)},
			wantStop: StopLatencyLimit, wantMsg: "p90 read latency 1.5 ms exceeded the 1 ms limit"},
		{name: "latency p99.9", l: withStop(rate, &LatencyStop{P999, Read, 1000}, 0), done: []StepOutcome{out(0, 1000, 600_000, 0)},
			wantStop: StopLatencyLimit, wantMsg: "p99.9 read latency 1.2 ms exceeded the 1 ms limit"},
		{name: "latency sub-ms formatting", l: withStop(rate, &LatencyStop{P99, Read, 500}, 0), done: []StepOutcome{out(0, 1000, 850_000, 0)},
			wantStop: StopLatencyLimit, wantMsg: "p99 read latency 850 µs exceeded the 500 µs limit"},
		{name: "latency worst picks worse write", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, ms, 12*ms)},
			wantStop: StopLatencyLimit, wantMsg: "p99 write latency 12 ms exceeded the 2 ms limit"},
		{name: "latency worst picks worse read", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, 3*ms, ms)},
			wantStop: StopLatencyLimit, wantMsg: "p99 read latency 3 ms"},
		{name: "latency worst both under", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, 2*ms, 2*ms)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "latency worst read-only outcome", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, 3*ms, 0)},
			wantStop: StopLatencyLimit, wantMsg: "p99 read latency"},
		{name: "latency worst write-only outcome", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, 0, 3*ms)},
			wantStop: StopLatencyLimit, wantMsg: "p99 write latency"},
		{name: "latency missing direction", l: withStop(rate, p99read2ms, 0), done: []StepOutcome{out(0, 1000, 0, ms)},
			wantErr: true, wantMsg: "step 1/3 (1000 IOPS offered): no read latencies reported"},
		{name: "latency worst with none", l: withStop(rate, &LatencyStop{P99, Worst, 2000}, 0), done: []StepOutcome{out(0, 1000, 0, 0)},
			wantErr: true, wantMsg: "no latencies reported"},

		// saturation boundaries
		{name: "saturation exactly at threshold continues", l: withStop(rate, nil, 90), done: []StepOutcome{out(0, 900, ms, ms)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "saturation just below stops", l: withStop(rate, nil, 90), done: []StepOutcome{out(0, 899.99, ms, ms)},
			wantStop: StopSaturated, stopStep: 0, wantMsg: "step 1/3 (1000 IOPS offered): achieved 899.99 IOPS, below 90 % of the offered rate"},
		{name: "saturation rate as the reports print it", l: withStop(rateLoad(70000), nil, 90), done: []StepOutcome{out(0, 61837.4, ms, ms)},
			wantStop: StopSaturated, wantMsg: "step 1/1 (70000 IOPS offered): achieved 61,837 IOPS, below 90 % of the offered rate"},
		{name: "saturation MiBps as the reports print it", l: withStop(Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{1280}}, StepDuration: time.Minute}, nil, 90),
			done:     []StepOutcome{{Index: 0, AchievedIOPS: 1, AchievedBytesPerSec: 1041.46 * (1 << 20)}},
			wantStop: StopSaturated, wantMsg: "step 1/1 (1280 MiB/s offered): achieved 1,041.5 MiB/s, below 90 % of the offered rate"},
		{name: "saturation off", l: rate, done: []StepOutcome{out(0, 1, ms, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "saturation 100 needs all", l: withStop(rate, nil, 100), done: []StepOutcome{out(0, 999.9, ms, ms)}, wantStop: StopSaturated},
		{name: "saturation 100 at offered", l: withStop(rate, nil, 100), done: []StepOutcome{out(0, 1000, ms, ms)}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "saturation MiBps uses bytes", l: withStop(rateMiB, nil, 90),
			done:     []StepOutcome{{Index: 0, AchievedIOPS: 1, AchievedBytesPerSec: 89 << 20}},
			wantStop: StopSaturated, wantMsg: "step 1/2 (100 MiB/s offered): achieved 89 MiB/s"},
		{name: "saturation MiBps at threshold", l: withStop(rateMiB, nil, 90),
			done:     []StepOutcome{{Index: 0, AchievedIOPS: 1, AchievedBytesPerSec: 90 << 20}},
			wantNext: &Step{Index: 1, OfferedBytesPerSec: 200 << 20}},
		// stall rule
		{name: "stall at the limit continues", l: withStall(rate, 2), done: []StepOutcome{stalled(out(0, 1000, ms, ms), 2)},
			wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "stall above the limit stops", l: withStall(rate, 2), done: []StepOutcome{stalled(out(0, 1000, ms, ms), 3)},
			wantStop: StopIOStall, stopStep: 0, wantMsg: "step 1/3 (1000 IOPS offered): no I/O completed for 3 s, longer than the 2 s limit"},
		{name: "stall rule applies to a curve's unthrottled step", l: withStall(Load{Curve: &CurveSpec{}, StepDuration: time.Minute}, 1),
			done: []StepOutcome{stalled(out(0, 1000, ms, ms), 5)}, wantStop: StopIOStall, stopStep: 0},
		{name: "stall off", l: rate, done: []StepOutcome{stalled(out(0, 1000, ms, ms), 30)}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
		{name: "latency checked before saturation", l: withStop(rate, p99read2ms, 90), done: []StepOutcome{out(0, 10, 5*ms, 0)},
			wantStop: StopLatencyLimit},

		// bad input
		{name: "too many outcomes", l: rate, done: []StepOutcome{out(0, 1, ms, ms), out(1, 1, ms, ms), out(2, 1, ms, ms), out(3, 1, ms, ms)},
			wantErr: true, wantMsg: "4 step outcomes for a load of 3 steps"},
		{name: "outcomes out of order", l: rate, done: []StepOutcome{out(1, 1, ms, ms)}, wantErr: true, wantMsg: "outcome 0 has index 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, stop, err := Next(tt.l, tt.done)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("Next() error = %v, want one containing %q", err, tt.wantMsg)
				}
				if next != nil || stop != nil {
					t.Errorf("Next() = %+v, %+v with an error", next, stop)
				}
				return
			}
			if err != nil {
				t.Fatalf("Next() error = %v", err)
			}
			if tt.wantNext != nil {
				if stop != nil || next == nil || *next != *tt.wantNext {
					t.Fatalf("Next() = %+v, %+v; want next %+v", next, stop, *tt.wantNext)
				}
				return
			}
			if next != nil || stop == nil {
				t.Fatalf("Next() = %+v, %+v; want stop %s", next, stop, tt.wantStop)
			}
			if stop.Kind != tt.wantStop || stop.Step != tt.stopStep {
				t.Errorf("stop = %+v, want %s at step %d", stop, tt.wantStop, tt.stopStep)
			}
			if !strings.Contains(stop.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", stop.Message, tt.wantMsg)
			}
		})
	}
}

// TestNextDrivesWholeLoad runs each mode, once and repeated, to completion
// through Next the way a controller would and checks the step sequence
// matches Steps, every run of a repeated level ordered once.
func TestNextDrivesWholeLoad(t *testing.T) {
	for _, l := range []Load{
		{Rate: &RateSteps{Start: 1000, FactorPercent: 200, Max: 32000}, StepDuration: time.Minute},
		{QueueDepth: &QueueDepthSteps{Start: 1, Max: 64}, StepDuration: time.Minute},
		{Curve: &CurveSpec{}, StepDuration: time.Minute},
		{Rate: &RateSteps{Steps: []int64{1000, 2000, 3000}}, StepDuration: time.Minute, Repeat: 4},
		{QueueDepth: &QueueDepthSteps{Start: 1, Max: 8}, StepDuration: time.Minute, Repeat: 2},
		{Curve: &CurveSpec{Percents: []int32{25, 50}}, StepDuration: time.Minute, Repeat: 10},
		{Curve: &CurveSpec{Percents: []int32{25, 50}, ClientBoundCheck: true}, StepDuration: time.Minute, Repeat: 2},
	} {
		planned := Steps(l)
		var done []StepOutcome
		for {
			next, stop, err := Next(l, done)
			if err != nil {
				t.Fatal(err)
			}
			if stop != nil {
				if stop.Kind != StopCompleted || len(done) != len(planned) || stop.Step != len(planned)-1 {
					t.Errorf("stop = %+v after %d of %d steps", stop, len(done), len(planned))
				}
				break
			}
			p := planned[next.Index]
			if next.Index != len(done) || next.PercentOfMax != p.PercentOfMax || next.QueueDepthPerClient != p.QueueDepthPerClient ||
				next.Level != p.Level || next.Repetition != p.Repetition || (l.Repeat > 1) != (next.Repetition > 0) {
				t.Fatalf("next = %+v, planned %+v", next, planned[next.Index])
			}
			if next.ClientBoundCheck != p.ClientBoundCheck || next.Unthrottled != p.Unthrottled {
				t.Fatalf("next = %+v, planned %+v", next, p)
			}
			// The check's outcomes (30,000 IOPS) must not raise the
			// maximum the percentages are of (10,000).
			if l.Curve != nil && !next.Unthrottled && next.OfferedIOPS != int64(next.PercentOfMax)*100 {
				t.Errorf("curve step %+v: want %d IOPS", next, next.PercentOfMax*100)
			}
			iops := 10000.0
			if next.ClientBoundCheck {
				iops = 30000
			}
			done = append(done, out(next.Index, iops, 1000, 1000))
		}
	}
}

// Every metric a stop rule may name must be one the aggregated summary
// answers, each with its own value.
func TestLatencyMetricsResolve(t *testing.T) {
	l := results.LatencySummary{Count: 1, MeanNs: 1, P50Ns: 2, P90Ns: 3, P99Ns: 4, P999Ns: 5}
	for i, m := range LatencyMetrics() {
		if v, ok := l.Metric(string(m)); !ok || v != uint64(i+1) {
			t.Errorf("Metric(%s) = %d, %v", m, v, ok)
		}
	}
}

func withStall(l Load, seconds int32) Load {
	l.Stop.MaxStallSeconds = seconds
	return l
}

func stalled(o StepOutcome, seconds int) StepOutcome {
	o.LongestStall = time.Duration(seconds) * time.Second
	return o
}

func TestNextRepeat(t *testing.T) {
	const ms = 1_000_000
	rate := Load{Rate: &RateSteps{Steps: []int64{1000, 2000}}, StepDuration: time.Minute, Repeat: 3}
	curve := Load{Curve: &CurveSpec{Percents: []int32{10, 100}}, StepDuration: time.Minute, Repeat: 3}
	curveMiB := Load{Curve: &CurveSpec{Unit: MiBps, Percents: []int32{50}}, StepDuration: time.Minute, Repeat: 2}
	p99read2ms := &LatencyStop{P99, Read, 2000}
	unthrottled := []StepOutcome{out(0, 9000, 50*ms, 0), out(1, 10000, 50*ms, 0), out(2, 11500, 50*ms, 0)} // mean 10,166.67
	runNextCases(t, []nextCase{
		{name: "first run of the first level", l: rate, wantNext: &Step{Index: 0, Level: 0, Repetition: 1, OfferedIOPS: 1000}},
		{name: "third run of the first level", l: rate, done: []StepOutcome{out(0, 1000, ms, ms), out(1, 1000, ms, ms)},
			wantNext: &Step{Index: 2, Level: 0, Repetition: 3, OfferedIOPS: 1000}},
		{name: "then the next level", l: rate, done: []StepOutcome{out(0, 1000, ms, ms), out(1, 1000, ms, ms), out(2, 1000, ms, ms)},
			wantNext: &Step{Index: 3, Level: 1, Repetition: 1, OfferedIOPS: 2000}},
		{name: "every run completed", l: rate, done: []StepOutcome{out(0, 1, ms, ms), out(1, 1, ms, ms), out(2, 1, ms, ms), out(3, 1, ms, ms), out(4, 1, ms, ms), out(5, 1, ms, ms)},
			wantStop: StopCompleted, stopStep: 5, wantMsg: "all 6 steps completed"},
		{name: "a stop rule judges each run: the second run breaks it", l: withStop(rate, p99read2ms, 0),
			done:     []StepOutcome{out(0, 1000, ms, 0), out(1, 1000, 3*ms, 0)},
			wantStop: StopLatencyLimit, stopStep: 1, wantMsg: "step 2/6 (1000 IOPS offered, run 2/3): p99 read latency 3 ms exceeded the 2 ms limit"},
		{name: "curve: the unthrottled level runs 3 times", l: curve, done: unthrottled[:2],
			wantNext: &Step{Index: 2, Level: 0, Repetition: 3, Unthrottled: true}},
		{name: "curve: 10 % of the unthrottled runs' mean", l: curve, done: unthrottled,
			wantNext: &Step{Index: 3, Level: 1, Repetition: 1, OfferedIOPS: 1016, PercentOfMax: 10}},
		{name: "curve: every run of a level offers the same", l: curve, done: append(slices.Clone(unthrottled), out(3, 1016, ms, 0)),
			wantNext: &Step{Index: 4, Level: 1, Repetition: 2, OfferedIOPS: 1016, PercentOfMax: 10}},
		{name: "curve: 100 % of the mean, not of the last or the highest run", l: curve,
			done:     append(slices.Clone(unthrottled), out(3, 1016, ms, 0), out(4, 1016, ms, 0), out(5, 1016, ms, 0)),
			wantNext: &Step{Index: 6, Level: 2, Repetition: 1, OfferedIOPS: 10166, PercentOfMax: 100}},
		{name: "curve MiBps: mean of bytes per second", l: curveMiB,
			done:     []StepOutcome{{Index: 0, AchievedBytesPerSec: 900 << 20}, {Index: 1, AchievedBytesPerSec: 1100 << 20}},
			wantNext: &Step{Index: 2, Level: 1, Repetition: 1, OfferedBytesPerSec: 500 << 20, PercentOfMax: 50}},
		{name: "curve: unthrottled runs are exempt from the latency rule", l: withStop(curve, p99read2ms, 0), done: unthrottled,
			wantNext: &Step{Index: 3, Level: 1, Repetition: 1, OfferedIOPS: 1016, PercentOfMax: 10}},
		{name: "curve: one invalid unthrottled run", l: curve, done: []StepOutcome{out(0, 9000, ms, 0), out(1, math.Inf(1), ms, 0), out(2, 9000, ms, 0)},
			wantErr: true, wantMsg: "unthrottled run 2/3 achieved an invalid IOPS (+Inf); cannot build the curve"},
		{name: "curve: unthrottled runs that achieved nothing", l: curve, done: []StepOutcome{out(0, 0, ms, 0), out(1, 0, ms, 0), out(2, 0, ms, 0)},
			wantErr: true, wantMsg: "unthrottled runs achieved 0 IOPS on average"},
	})
}

// nextCase is a call of Next and what it must return: the next step, a
// stop (its kind, step and a substring of its message) or an error
// containing wantMsg.
type nextCase struct {
	name     string
	l        Load
	done     []StepOutcome
	wantNext *Step
	wantStop StopKind
	stopStep int
	wantMsg  string
	wantErr  bool
}

func runNextCases(t *testing.T, tests []nextCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, stop, err := Next(tt.l, tt.done)
			switch {
			case tt.wantErr:
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("Next() = %+v, %+v, %v; want an error containing %q", next, stop, err, tt.wantMsg)
				}
			case err != nil:
				t.Fatalf("Next() error = %v", err)
			case tt.wantNext != nil:
				if stop != nil || next == nil || *next != *tt.wantNext {
					t.Fatalf("Next() = %+v, %+v; want next %+v", next, stop, *tt.wantNext)
				}
			default:
				if next != nil || stop == nil || stop.Kind != tt.wantStop || stop.Step != tt.stopStep || !strings.Contains(stop.Message, tt.wantMsg) {
					t.Fatalf("Next() = %+v, %+v; want stop %s at step %d saying %q", next, stop, tt.wantStop, tt.stopStep, tt.wantMsg)
				}
			}
		})
	}
}

// judged is o with a steady-state verdict.
func judged(o StepOutcome, steady bool) StepOutcome {
	o.Steady = &steady
	return o
}

func TestNextExtendUntilSteady(t *testing.T) {
	const ms = 1_000_000
	rate := Load{Rate: &RateSteps{Steps: []int64{1000, 2000}}, StepDuration: time.Minute, ExtendUntilSteady: 3}
	curve := Load{Curve: &CurveSpec{Percents: []int32{50, 100}, ClientBoundCheck: true}, StepDuration: time.Minute, ExtendUntilSteady: 2}
	repeated := rate
	repeated.Repeat = 2
	no := false
	runNextCases(t, []nextCase{
		{name: "first run is attempt 1", l: rate, wantNext: &Step{Index: 0, Attempt: 1, OfferedIOPS: 1000}},
		{name: "a steady run moves on", l: rate, done: []StepOutcome{judged(out(0, 1000, ms, 0), true)},
			wantNext: &Step{Index: 1, Attempt: 1, OfferedIOPS: 2000}},
		{name: "an unjudged run moves on", l: rate, done: []StepOutcome{out(0, 1000, ms, 0)},
			wantNext: &Step{Index: 1, Attempt: 1, OfferedIOPS: 2000}},
		{name: "an unsteady run is run again", l: rate, done: []StepOutcome{judged(out(0, 1000, ms, 0), false)},
			wantNext: &Step{Index: 1, Attempt: 2, OfferedIOPS: 1000}},
		{name: "until maxRuns have run", l: rate, done: []StepOutcome{judged(out(0, 1000, ms, 0), false), judged(out(1, 1000, ms, 0), false), judged(out(2, 1000, ms, 0), false)},
			wantNext: &Step{Index: 3, Attempt: 1, OfferedIOPS: 2000}},
		{name: "completed counts the reruns", l: rate, done: []StepOutcome{judged(out(0, 1000, ms, 0), false), judged(out(1, 1000, ms, 0), true), judged(out(2, 2000, ms, 0), true)},
			wantStop: StopCompleted, stopStep: 2, wantMsg: "all 3 steps completed"},
		{name: "stop rules judge every run; N counts the reruns decided", l: withStop(rate, &LatencyStop{P99, Read, 2000}, 0),
			done:     []StepOutcome{judged(out(0, 1000, ms, 0), false), judged(out(1, 1000, 3*ms, 0), false)},
			wantStop: StopLatencyLimit, stopStep: 1, wantMsg: "step 2/3 (1000 IOPS offered, attempt 2/3 until steady): p99 read latency 3 ms exceeded the 2 ms limit"},
		{name: "repeat: each run of a level is extended on its own", l: repeated,
			done:     []StepOutcome{judged(out(0, 1000, ms, 0), true), judged(out(1, 1000, ms, 0), false)},
			wantNext: &Step{Index: 2, Level: 0, Repetition: 2, Attempt: 2, OfferedIOPS: 1000}},
		{name: "curve: the unthrottled step is run again", l: curve, done: []StepOutcome{judged(out(0, 9000, ms, 0), false)},
			wantNext: &Step{Index: 1, Attempt: 2, Unthrottled: true}},
		{name: "curve: the maximum is the last run's, not the superseded one's", l: curve,
			done:     []StepOutcome{judged(out(0, 9000, ms, 0), false), judged(out(1, 12000, ms, 0), true), judged(out(2, 12100, ms, 0), true)},
			wantNext: &Step{Index: 3, Attempt: 1, OfferedIOPS: 6000, PercentOfMax: 50}},
		{name: "curve: an extended throttled step offers the same", l: curve,
			done:     []StepOutcome{judged(out(0, 12000, ms, 0), true), judged(out(1, 12000, ms, 0), true), judged(out(2, 6000, ms, 0), false)},
			wantNext: &Step{Index: 3, Attempt: 2, OfferedIOPS: 6000, PercentOfMax: 50}},
		{name: "off: an unsteady run is not run again", l: Load{Rate: &RateSteps{Steps: []int64{1000, 2000}}, StepDuration: time.Minute},
			done: []StepOutcome{{Index: 0, AchievedIOPS: 1000, Steady: &no}}, wantNext: &Step{Index: 1, OfferedIOPS: 2000}},
	})
}

func TestPlannedStepsCountsReruns(t *testing.T) {
	l := Load{Rate: &RateSteps{Steps: []int64{1000, 2000}}, StepDuration: time.Minute, ExtendUntilSteady: 3}
	if got := TotalSteps(l); got != 6 {
		t.Errorf("TotalSteps = %d, want 6 (2 planned × at most 3 runs)", got)
	}
	ran := []Step{{Index: 0, Attempt: 1}, {Index: 1, Attempt: 2}, {Index: 2, Attempt: 3}, {Index: 3, Attempt: 1}}
	if got := PlannedSteps(l, ran); got != 4 {
		t.Errorf("PlannedSteps = %d, want 4 (2 planned + 2 reruns)", got)
	}
	if got := PlannedSteps(l, nil); got != 2 {
		t.Errorf("PlannedSteps before any step = %d, want 2", got)
	}
}
