package volops

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateObjective(t *testing.T) {
	ok := Objective{Operation: Provision, Percentile: P90, MaxLatency: 30 * time.Second}
	for _, tc := range []struct {
		name string
		edit func(*Objective)
		is   error
		msg  string
	}{
		{"valid", func(*Objective) {}, nil, ""},
		{"valid with every field", func(o *Objective) { o.Percentile, o.UpToConcurrency, o.MinPerMinute = Max, 25, 12.5 }, nil, ""},
		{"unknown operation", func(o *Objective) { o.Operation = "resize" }, ErrUnknownOperation, `objective: unknown operation "resize"`},
		{"unknown percentile", func(o *Objective) { o.Percentile = "p95" }, ErrUnknownPercentile,
			`objective on provision: unknown percentile "p95": must be one of p50, p90, p99, max`},
		{"no percentile", func(o *Objective) { o.Percentile = "" }, ErrUnknownPercentile, `unknown percentile ""`},
		{"no latency", func(o *Objective) { o.MaxLatency = 0 }, ErrInvalidThreshold, "MaxLatency must be positive, got 0s"},
		{"negative latency", func(o *Objective) { o.MaxLatency = -time.Second }, ErrInvalidThreshold, "got -1s"},
		{"negative concurrency", func(o *Objective) { o.UpToConcurrency = -1 }, ErrInvalidThreshold,
			"UpToConcurrency must be 0 (every step) or at least 1, got -1"},
		{"negative rate", func(o *Objective) { o.MinPerMinute = -1 }, ErrInvalidThreshold, "MinPerMinute must be 0 (none) or a positive number, got -1"},
		{"NaN rate", func(o *Objective) { o.MinPerMinute = math.NaN() }, ErrInvalidThreshold, "got NaN"},
		{"infinite rate", func(o *Objective) { o.MinPerMinute = math.Inf(1) }, ErrInvalidThreshold, "got +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			err := ValidateObjective(o)
			if tc.is == nil {
				if err != nil {
					t.Errorf("ValidateObjective(%+v) = %v", o, err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ValidateObjective error = %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	const d = 2 * time.Second
	// A serial provisioner over 1, 5, 10, 25, 50: p90 at N is ⌈0.9·N⌉·D =
	// 2, 10, 18, 46, 90 s; every step runs 30 operations a minute. Attach
	// fails twice at 5. Snapshot is not measured.
	var samples []Sample
	for _, n := range steps {
		samples = append(samples, serial(Provision, n, d)...)
	}
	samples = append(samples, parallel(Attach, 1, d)...)
	samples = append(samples, with(with(parallel(Attach, 5, d), 4, Failed, "FailedMount: no such host"), 2, TimedOut, "")...)
	r, err := Summarize(samples)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(op Operation, p Percentile, maxLatency time.Duration, upTo int, perMinute float64) Objective {
		return Objective{Operation: op, Percentile: p, MaxLatency: maxLatency, UpToConcurrency: upTo, MinPerMinute: perMinute}
	}
	for _, tc := range []struct {
		name     string
		obj      Objective
		met      bool
		step     int
		observed time.Duration
		msg      string
	}{
		{
			"met at every step", obj(Provision, P90, 100*time.Second, 0, 0), true, 50, 90 * time.Second,
			"p90 latency of provision at most 100 s at all 5 steps up to concurrency 50 (highest 90 s, at concurrency 50)",
		},
		{
			"the first step above the limit decides", obj(Provision, P90, 30*time.Second, 0, 0), false, 25, 46 * time.Second,
			"at concurrency 25, p90 latency of provision is 46 s, above 30 s",
		},
		{
			"equal passes", obj(Provision, P90, 18*time.Second, 10, 0), true, 10, 18 * time.Second,
			"at all 3 steps up to concurrency 10 (highest 18 s, at concurrency 10)",
		},
		{
			"close values get the digits to tell them apart", obj(Provision, Max, 19999*time.Millisecond, 10, 0), false, 10, 20 * time.Second,
			"max latency of provision is 20 s, above 19.999 s",
		},
		{
			"up to a concurrency between steps", obj(Provision, P50, 10*time.Second, 24, 0), true, 10, 10 * time.Second,
			"at all 3 steps up to concurrency 10",
		},
		{
			"failures at a step", obj(Attach, P50, time.Minute, 0, 0), false, 5, d,
			"at concurrency 5, 2 of 5 attach operations did not succeed (1 failed, 1 timed out); no reason given",
		},
		{
			"rate equal to the minimum passes", obj(Provision, P50, time.Minute, 0, 30), true, 50, 50 * time.Second,
			"and at least 30 per minute (lowest 30, at concurrency 1)",
		},
		{
			"rate below the minimum", obj(Provision, P50, time.Minute, 0, 30.01), false, 1, d,
			"at concurrency 1, 30 provision operations per minute, below 30.01",
		},
		{
			"nothing measured", obj(Snapshot, P99, time.Minute, 0, 0), false, 0, 0,
			"nothing was measured: no snapshot operation has a sample",
		},
		{
			"invalid objective", obj(Snapshot, "p95", time.Minute, 0, 0), false, 0, 0,
			`unknown percentile "p95"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(r, []Objective{tc.obj})
			if len(res) != 1 {
				t.Fatalf("Evaluate gave %d results", len(res))
			}
			got := res[0]
			if got.Objective != tc.obj || got.Met != tc.met || got.Step != tc.step || got.Observed != tc.observed ||
				!strings.Contains(got.Message, tc.msg) {
				t.Errorf("Evaluate = %+v\nwant met %v, step %d, observed %v, message containing %q",
					got, tc.met, tc.step, tc.observed, tc.msg)
			}
		})
	}
}

func TestEvaluateFailures(t *testing.T) {
	r, err := Summarize(concat(
		parallel(Attach, 1, time.Second),
		with(with(parallel(Attach, 5, time.Second), 4, Failed, "FailedMount: no such host"), 1, TimedOut, "not running after 5m"),
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		obj  Objective
		met  bool
		msg  string
	}{
		{
			// The latency of the rest is fine; the failures decide.
			"failures fail the step", Objective{Operation: Attach, Percentile: P50, MaxLatency: time.Hour}, false,
			"at concurrency 5, 2 of 5 attach operations did not succeed (1 failed, 1 timed out); first reason: not running after 5m",
		},
		{
			"steps before the failures pass", Objective{Operation: Attach, Percentile: P50, MaxLatency: time.Hour, UpToConcurrency: 4}, true,
			"p50 latency of attach at most 3,600 s at the only step up to concurrency 1 (highest 1 s, at concurrency 1)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(r, []Objective{tc.obj})[0]
			if got.Met != tc.met || !strings.Contains(got.Message, tc.msg) {
				t.Errorf("Evaluate = %+v, want met %v and %q", got, tc.met, tc.msg)
			}
		})
	}
	r2, err := Summarize(parallel(Attach, 5, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(r2, []Objective{{Operation: Attach, Percentile: P50, MaxLatency: time.Hour, UpToConcurrency: 4}})[0]
	if want := "nothing was measured: no attach step at concurrency 4 or below"; got.Met || got.Step != 0 || got.Message != want {
		t.Errorf("Evaluate = %+v, want not met: %q", got, want)
	}
	if got := Evaluate(r2, nil); len(got) != 0 {
		t.Errorf("Evaluate(no objectives) = %v", got)
	}
}
