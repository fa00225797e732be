package protocol

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 678_901_234, time.UTC)

// agg is a recorded step: iops achieved, read and write p99 (0: none).
func agg(step int, iops float64, readP99, writeP99 time.Duration) results.StepAggregate {
	a := results.StepAggregate{Step: step, Clients: 2}
	a.Total.IOPS, a.Total.BytesPerSec = iops, iops*4096
	for _, d := range []struct {
		s   *results.OperationSummary
		p99 time.Duration
	}{{&a.Read, readP99}, {&a.Write, writeP99}} {
		if d.p99 > 0 {
			d.s.Latency = results.LatencySummary{Count: 100, P99Ns: uint64(d.p99), MeanNs: float64(d.p99 / 2)}
		}
	}
	a.Total.Latency = results.LatencySummary{Count: 200, P99Ns: uint64(max(readP99, writeP99)), MeanNs: float64(max(readP99, writeP99) / 2)}
	return a
}

func TestOutcomeOf(t *testing.T) {
	o := OutcomeOf(1, agg(1, 1600, 900*time.Microsecond, 0))
	if o.Index != 1 || o.AchievedIOPS != 1600 || o.AchievedBytesPerSec != 1600*4096 {
		t.Fatalf("outcome %+v", o)
	}
	if o.Read == nil || o.Read.P99Ns != uint64(900*time.Microsecond) || o.Write != nil || o.Total == nil {
		t.Fatalf("latencies read %v write %v total %v: want read and total, no write", o.Read, o.Write, o.Total)
	}
	if o.LongestStall != 0 {
		t.Fatalf("a step without a timeline stalled %s", o.LongestStall)
	}
	a := agg(1, 1600, 900*time.Microsecond, 0)
	a.Timeline = results.Timeline{WindowSeconds: 1, Windows: []results.Window{{IOs: 5}, {StartMs: 1000}, {StartMs: 3400, IOs: 5}},
		Idle: []results.Span{{StartMs: 1000, EndMs: 3400}}}
	if got := OutcomeOf(1, a).LongestStall; got != 2400*time.Millisecond {
		t.Fatalf("an idle span of 2.4 s: a stall of %s", got)
	}
}

// warming is a recorded step whose IOPS rose 30 % in its last fifth: not
// steady by the default rule (range 28 %), steady with 30 % allowed.
func warming(step int) results.StepAggregate {
	a := agg(step, 106, time.Millisecond, 0)
	for k, v := range []float64{100, 100, 100, 100, 130} {
		a.Timeline.Windows = append(a.Timeline.Windows, results.Window{StartMs: uint64(k) * 1000, IOPS: v, IOs: uint64(v)})
	}
	a.Timeline.WindowSeconds = 1
	return a
}

func TestNextExtendsUnsteadySteps(t *testing.T) {
	topo := plan.Topology{Clients: 2, JobsPerClient: 1}
	w := workload.BaseSpec()
	l := plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200}}, StepDuration: time.Minute, ExtendUntilSteady: 2}
	rec := []results.StepAggregate{warming(0)}
	got, _, err := Next(l, topo, w, analysis.SteadyOptions{}, rec, now, DefaultLeads)
	if err != nil || got.Done || got.Index != 1 || got.Step.OfferedIOPS != 100 || got.Step.Attempt != 2 {
		t.Fatalf("after an unsteady step: %+v, %v; want step 1 at 100 IOPS, attempt 2", got, err)
	}
	loose := analysis.SteadyOptions{RangePercent: 30, SlopePercent: 30}
	got, _, err = Next(l, topo, w, loose, rec, now, DefaultLeads)
	if err != nil || got.Done || got.Step.OfferedIOPS != 200 || got.Step.Attempt != 1 {
		t.Fatalf("after a step steady by the rule given: %+v, %v; want the next planned step", got, err)
	}
	l.ExtendUntilSteady = 0
	got, _, err = Next(l, topo, w, analysis.SteadyOptions{}, rec, now, DefaultLeads)
	if err != nil || got.Step.OfferedIOPS != 200 || got.Step.Attempt != 0 {
		t.Fatalf("a load that does not extend: %+v, %v; want the next planned step", got, err)
	}
}

func TestNext(t *testing.T) {
	topo := plan.Topology{Clients: 2, JobsPerClient: 1}
	w := workload.BaseSpec()
	w.ReadPercent = 50
	rate := plan.Load{Rate: &plan.RateSteps{Steps: []int64{1000, 2000, 3000}}, StepDuration: time.Minute, RampTime: 5 * time.Second}
	stopAt := rate
	stopAt.Stop.Latency = &plan.LatencyStop{Metric: plan.P99, Operation: plan.Worst, LimitMicroseconds: 1200}
	tiny := plan.Load{Curve: &plan.CurveSpec{Percents: []int32{1}}, StepDuration: time.Minute}
	leads := Leads{First: 3 * time.Second, Next: time.Second}
	tests := []struct {
		name     string
		load     plan.Load
		recorded []results.StepAggregate
		want     StepOrder
		stop     plan.StopKind
		err      string
	}{
		{name: "step 0, a first lead ahead, which its order records", load: rate,
			want: StepOrder{Index: 0, StartAt: now.Add(3 * time.Second).Truncate(time.Millisecond), Step: plan.Step{Index: 0, OfferedIOPS: 1000},
				Duration: time.Minute, Ramp: 5 * time.Second, Lead: 3 * time.Second}},
		{name: "step 1, the next lead ahead", load: rate, recorded: []results.StepAggregate{agg(0, 1000, time.Millisecond, time.Millisecond)},
			want: StepOrder{Index: 1, StartAt: now.Add(time.Second).Truncate(time.Millisecond), Step: plan.Step{Index: 1, OfferedIOPS: 2000},
				Duration: time.Minute, Ramp: 5 * time.Second}},
		{name: "every step ran: the final order", load: rate, recorded: []results.StepAggregate{agg(0, 1000, 0, time.Millisecond),
			agg(1, 2000, 0, time.Millisecond), agg(2, 3000, 0, time.Millisecond)},
			want: StepOrder{Index: 3, Done: true, Reason: "all 3 steps completed", EndedAt: now.Truncate(time.Second)}, stop: plan.StopCompleted},
		{name: "a stop rule: the final order says why", load: stopAt, recorded: []results.StepAggregate{agg(0, 1000, 900*time.Microsecond, 1500*time.Microsecond)},
			want: StepOrder{Index: 1, Done: true, EndedAt: now.Truncate(time.Second)}, stop: plan.StopLatencyLimit},
		{name: "a step too small to divide over the jobs", load: tiny, recorded: []results.StepAggregate{agg(0, 150, time.Millisecond, time.Millisecond)},
			err: "planning step 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, stop, err := Next(tt.load, topo, w, analysis.SteadyOptions{}, tt.recorded, now, leads)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.stop != "" {
				if stop == nil || stop.Kind != tt.stop || got.Reason != stop.Message || got.Reason == "" {
					t.Fatalf("stop %+v, reason %q; want %s", stop, got.Reason, tt.stop)
				}
				if tt.want.Reason == "" {
					tt.want.Reason = got.Reason
				}
			} else if stop != nil {
				t.Fatalf("stop %+v, want none", stop)
			}
			if got.Index != tt.want.Index || got.Done != tt.want.Done || got.Reason != tt.want.Reason || !got.EndedAt.Equal(tt.want.EndedAt) ||
				!got.StartAt.Equal(tt.want.StartAt) || got.Step != tt.want.Step || got.Duration != tt.want.Duration || got.Ramp != tt.want.Ramp {
				t.Fatalf("order %+v\nwant  %+v", got, tt.want)
			}
		})
	}
}

func TestStepFailure(t *testing.T) {
	many := results.StepAggregate{Step: 2, FailedClients: 100}
	for i := range 5 {
		many.Errors = append(many.Errors, "client "+string(rune('0'+i))+": "+strings.Repeat("x", 600))
	}
	tests := []struct {
		name       string
		a          results.StepAggregate
		kind, want string
	}{
		{"a clean step", results.StepAggregate{Step: 0}, "", ""},
		{"a client's error", results.StepAggregate{Step: 1, Errors: []string{"client 1: fio: io_u error"}, FailedClients: 1},
			ClientFailed, "step 2: client 1: fio: io_u error"},
		{"errors first, then interruption", results.StepAggregate{Step: 1, Errors: []string{"boom"}, Interrupted: true}, ClientFailed, "step 2: boom"},
		{"interrupted", results.StepAggregate{Step: 0, Interrupted: true}, ClientLost, "step 1 was interrupted"},
		{"a hundred failed clients, each error cut", many, ClientFailed, "… and 96 more errors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, msg := StepFailure(tt.a)
			if kind != tt.kind || !strings.Contains(msg, tt.want) {
				t.Fatalf("StepFailure = %s, %q; want %s, containing %q", kind, msg, tt.kind, tt.want)
			}
		})
	}
	lines := ErrorLines(many)
	if len(lines) != MaxStepErrors {
		t.Fatalf("%d lines, want %d", len(lines), MaxStepErrors)
	}
	for _, l := range lines {
		if len(l) > MaxErrorLine {
			t.Fatalf("a line of %d bytes", len(l))
		}
	}
}

// TestAheadAndPromote checks which loads get their next step ordered
// ahead, when it starts, and that the step ordered ahead is the one
// promoted once the step before it is recorded.
func TestAheadAndPromote(t *testing.T) {
	topo := plan.Topology{Clients: 2, JobsPerClient: 1}
	w := workload.BaseSpec()
	rate := plan.Load{Rate: &plan.RateSteps{Steps: []int64{1000, 2000, 3000}}, StepDuration: time.Minute, RampTime: 5 * time.Second}
	depth := plan.Load{QueueDepth: &plan.QueueDepthSteps{Steps: []int32{2, 4}}, StepDuration: time.Minute, Repeat: 2}
	stopped := rate
	stopped.Stop.SaturationPercent = 90
	steady := rate
	steady.ExtendUntilSteady = 3
	curve := plan.Load{Curve: &plan.CurveSpec{Percents: []int32{50}}, StepDuration: time.Minute}
	tiny := plan.Load{Rate: &plan.RateSteps{Steps: []int64{1000, 1}}, StepDuration: time.Minute}
	step0 := StepOrder{Index: 0, StartAt: now, Step: plan.Step{Index: 0, OfferedIOPS: 1000}, Duration: time.Minute, Ramp: 5 * time.Second}
	tests := []struct {
		name string
		load plan.Load
		prev StepOrder
		want *StepOrder
	}{
		{"rate steps: the next starts as this one ends", rate, step0, &StepOrder{Index: 1, StartAt: now.Add(65 * time.Second),
			Step: plan.Step{Index: 1, OfferedIOPS: 2000}, Duration: time.Minute, Ramp: 5 * time.Second}},
		{"queue-depth steps, repeated", depth, StepOrder{Index: 1, StartAt: now, Duration: time.Minute}, &StepOrder{Index: 2, StartAt: now.Add(time.Minute),
			Step: plan.Step{Index: 2, Level: 1, Repetition: 1, QueueDepthPerClient: 4}, Duration: time.Minute}},
		{"the last step: nothing follows", rate, StepOrder{Index: 2, StartAt: now}, nil},
		{"a final order: nothing follows", rate, StepOrder{Index: 1, Done: true}, nil},
		{"a stop rule decides from the results", stopped, step0, nil},
		{"unsteady steps are rerun", steady, step0, nil},
		{"a curve's rates follow from its maximum", curve, step0, nil},
		{"a step the plan cannot divide is left to Next", tiny, StepOrder{Index: 0, StartAt: now}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Ahead(tt.load, topo, w, tt.prev)
			switch {
			case tt.want == nil && ok:
				t.Fatalf("ordered ahead %+v, want nothing", got)
			case tt.want == nil:
				return
			case !ok:
				t.Fatal("nothing ordered ahead")
			case !got.StartAt.Equal(tt.want.StartAt) || got.Index != tt.want.Index || got.Step != tt.want.Step ||
				got.Duration != tt.want.Duration || got.Ramp != tt.want.Ramp || got.Done:
				t.Fatalf("ordered ahead %+v\nwant %+v", got, *tt.want)
			}
			// Next, deciding the same step from results, yields to it.
			recorded := make([]results.StepAggregate, got.Index)
			for i := range recorded {
				recorded[i] = agg(i, 1000, 0, time.Millisecond)
			}
			next, _, err := Next(tt.load, topo, w, analysis.SteadyOptions{}, recorded, now.Add(time.Hour), DefaultLeads)
			if err != nil {
				t.Fatal(err)
			}
			if p := Promote(tt.load, topo, w, tt.prev, next); !p.StartAt.Equal(got.StartAt) || p.Step != got.Step {
				t.Fatalf("promoted %+v, want the order written ahead %+v", p, got)
			}
		})
	}
	// Another step than the one written ahead, or none written, is Next's.
	next := StepOrder{Index: 1, StartAt: now.Add(time.Hour), Step: plan.Step{Index: 1, OfferedIOPS: 2000}}
	for _, prev := range []StepOrder{{Index: 5, StartAt: now}, {Index: 0, Done: true}} {
		if p := Promote(rate, topo, w, prev, next); !p.StartAt.Equal(next.StartAt) {
			t.Errorf("after %+v promoted %+v, want Next's order", prev, p)
		}
	}
	if p := Promote(stopped, topo, w, step0, next); !p.StartAt.Equal(next.StartAt) {
		t.Errorf("a load with stop rules promoted %+v, want Next's order", p)
	}
}
