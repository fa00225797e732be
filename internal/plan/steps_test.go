package plan

import (
	"slices"
	"testing"
	"time"
)

func TestStepsRate(t *testing.T) {
	tests := []struct {
		name string
		r    RateSteps
		want []int64
	}{
		{"listed", RateSteps{Steps: []int64{100, 200, 500}}, []int64{100, 200, 500}},
		{"increment reaching max exactly", RateSteps{Start: 1000, Increment: 1000, Max: 5000}, []int64{1000, 2000, 3000, 4000, 5000}},
		{"increment not reaching max", RateSteps{Start: 1000, Increment: 1500, Max: 5000}, []int64{1000, 2500, 4000}},
		{"single step", RateSteps{Start: 7, Increment: 1, Max: 7}, []int64{7}},
		{"factor x2", RateSteps{Start: 1000, FactorPercent: 200, Max: 16000}, []int64{1000, 2000, 4000, 8000, 16000}},
		{"factor x2 max between", RateSteps{Start: 1000, FactorPercent: 200, Max: 10000}, []int64{1000, 2000, 4000, 8000}},
		{"factor x1.5 rounds down", RateSteps{Start: 10, FactorPercent: 150, Max: 60}, []int64{10, 15, 22, 33, 49}},
		{"factor grows by at least 1", RateSteps{Start: 1, FactorPercent: 150, Max: 5}, []int64{1, 2, 3, 4}},
		{"huge increment no overflow", RateSteps{Start: 1, Increment: 1 << 62, Max: 1 << 40}, []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Load{Rate: &tt.r, StepDuration: time.Minute}
			steps := Steps(l)
			var got []int64
			for i, s := range steps {
				if s.Index != i || s.Unthrottled || s.OfferedBytesPerSec != 0 || s.QueueDepthPerClient != 0 {
					t.Errorf("step %d = %+v", i, s)
				}
				got = append(got, s.OfferedIOPS)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("offered = %v, want %v", got, tt.want)
			}
			if TotalSteps(l) != len(tt.want) {
				t.Errorf("TotalSteps = %d, want %d", TotalSteps(l), len(tt.want))
			}
		})
	}
}

func TestStepsMiBps(t *testing.T) {
	steps := Steps(Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{1, 100}}})
	if len(steps) != 2 || steps[0].OfferedBytesPerSec != 1<<20 || steps[1].OfferedBytesPerSec != 100<<20 ||
		steps[0].OfferedIOPS != 0 {
		t.Errorf("Steps = %+v", steps)
	}
}

func TestStepsQueueDepth(t *testing.T) {
	tests := []struct {
		name string
		q    QueueDepthSteps
		want []int32
	}{
		{"listed", QueueDepthSteps{Steps: []int32{16, 32, 64}}, []int32{16, 32, 64}},
		{"doubling 1..64", QueueDepthSteps{Start: 1, Max: 64}, []int32{1, 2, 4, 8, 16, 32, 64}},
		{"doubling max between", QueueDepthSteps{Start: 16, Max: 100}, []int32{16, 32, 64}},
		{"single", QueueDepthSteps{Start: 8, Max: 8}, []int32{8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int32
			for i, s := range Steps(Load{QueueDepth: &tt.q}) {
				if s.Index != i || s.RateLimited() || s.Unthrottled {
					t.Errorf("step %d = %+v", i, s)
				}
				got = append(got, s.QueueDepthPerClient)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("depths = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStepsCurve(t *testing.T) {
	steps := Steps(Load{Curve: &CurveSpec{}})
	if len(steps) != 11 || !steps[0].Unthrottled || steps[0].PercentOfMax != 0 {
		t.Fatalf("Steps = %+v", steps)
	}
	for i, s := range steps[1:] {
		if s.Index != i+1 || s.Unthrottled || s.PercentOfMax != int32(10*(i+1)) || s.RateLimited() {
			t.Errorf("step %d = %+v", i+1, s)
		}
	}
	if n := TotalSteps(Load{Curve: &CurveSpec{Percents: []int32{50, 100}}}); n != 3 {
		t.Errorf("TotalSteps = %d, want 3", n)
	}
}

// The client-bound check is the unthrottled level again, right after it,
// marked; the percentages follow. Repeated, each level keeps its runs.
func TestStepsCurveClientBoundCheck(t *testing.T) {
	steps := Steps(Load{Curve: &CurveSpec{Percents: []int32{50, 90}, ClientBoundCheck: true}})
	want := []Step{{Index: 0, Unthrottled: true}, {Index: 1, Unthrottled: true, ClientBoundCheck: true},
		{Index: 2, PercentOfMax: 50}, {Index: 3, PercentOfMax: 90}}
	if !slices.Equal(steps, want) {
		t.Fatalf("Steps = %+v, want %+v", steps, want)
	}
	steps = Steps(Load{Curve: &CurveSpec{Percents: []int32{50}, ClientBoundCheck: true}, Repeat: 2})
	var checks []int
	for _, s := range steps {
		if s.ClientBoundCheck {
			checks = append(checks, s.Index)
		}
	}
	if len(steps) != 6 || !slices.Equal(checks, []int{2, 3}) || steps[2].Level != 1 {
		t.Fatalf("repeated Steps = %+v", steps)
	}
}

func TestStepsInvalidMode(t *testing.T) {
	if s := Steps(Load{}); s != nil {
		t.Errorf("Steps(no mode) = %v", s)
	}
	if s := Steps(Load{Rate: &RateSteps{Steps: []int64{1}}, Curve: &CurveSpec{}}); s != nil {
		t.Errorf("Steps(two modes) = %v", s)
	}
}

func TestLoadUnit(t *testing.T) {
	for _, c := range []struct {
		name string
		l    Load
		want RateUnit
	}{
		{"rate, unset", Load{Rate: &RateSteps{Steps: []int64{1}}}, IOPS},
		{"rate, MiBps", Load{Rate: &RateSteps{Unit: MiBps, Steps: []int64{1}}}, MiBps},
		{"curve, unset", Load{Curve: &CurveSpec{}}, IOPS},
		{"curve, MiBps", Load{Curve: &CurveSpec{Unit: MiBps}}, MiBps},
		{"queue depth", Load{QueueDepth: &QueueDepthSteps{Steps: []int32{1}}}, IOPS},
	} {
		if got := c.l.Unit(); got != c.want {
			t.Errorf("%s: Unit() = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStepsRepeat(t *testing.T) {
	type run struct {
		level, rep int
		offered    int64
		qd, pct    int32
		unthrottle bool
	}
	tests := []struct {
		name string
		l    Load
		want []run
	}{
		{"rate, repeat unset: no levels or repetitions", Load{Rate: &RateSteps{Steps: []int64{100, 200}}},
			[]run{{0, 0, 100, 0, 0, false}, {0, 0, 200, 0, 0, false}}},
		{"rate, repeat 1 is the same", Load{Rate: &RateSteps{Steps: []int64{100, 200}}, Repeat: 1},
			[]run{{0, 0, 100, 0, 0, false}, {0, 0, 200, 0, 0, false}}},
		{"rate, 2 levels × 3 runs back to back", Load{Rate: &RateSteps{Steps: []int64{100, 200}}, Repeat: 3},
			[]run{{0, 1, 100, 0, 0, false}, {0, 2, 100, 0, 0, false}, {0, 3, 100, 0, 0, false},
				{1, 1, 200, 0, 0, false}, {1, 2, 200, 0, 0, false}, {1, 3, 200, 0, 0, false}}},
		{"generated rate × 2", Load{Rate: &RateSteps{Start: 10, Increment: 10, Max: 20}, Repeat: 2},
			[]run{{0, 1, 10, 0, 0, false}, {0, 2, 10, 0, 0, false}, {1, 1, 20, 0, 0, false}, {1, 2, 20, 0, 0, false}}},
		{"queue depth × 2", Load{QueueDepth: &QueueDepthSteps{Start: 4, Max: 8}, Repeat: 2},
			[]run{{0, 1, 0, 4, 0, false}, {0, 2, 0, 4, 0, false}, {1, 1, 0, 8, 0, false}, {1, 2, 0, 8, 0, false}}},
		{"curve × 2: the unthrottled level too", Load{Curve: &CurveSpec{Percents: []int32{50}}, Repeat: 2},
			[]run{{0, 1, 0, 0, 0, true}, {0, 2, 0, 0, 0, true}, {1, 1, 0, 0, 50, false}, {1, 2, 0, 0, 50, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := Steps(tt.l)
			var got []run
			for i, s := range steps {
				if s.Index != i {
					t.Errorf("step %d has Index %d", i, s.Index)
				}
				got = append(got, run{s.Level, int(s.Repetition), s.OfferedIOPS, s.QueueDepthPerClient, s.PercentOfMax, s.Unthrottled})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Steps =\n %+v\nwant\n %+v", got, tt.want)
			}
			if TotalSteps(tt.l) != len(tt.want) {
				t.Errorf("TotalSteps = %d, want %d", TotalSteps(tt.l), len(tt.want))
			}
		})
	}
}
