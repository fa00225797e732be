package main

import (
	"math"
	"testing"
)

func TestFidelityCaseJudgement(t *testing.T) {
	round := func(opIOPS, plainIOPS, opP99, plainP99 int64) fidelityRound {
		return fidelityRound{Operator: figures{IOPS: opIOPS, P99Ns: opP99}, Plain: figures{IOPS: plainIOPS, P99Ns: plainP99},
			IOPSRatio: ratio(float64(opIOPS), float64(plainIOPS)), P99Ratio: ratio(float64(opP99), float64(plainP99))}
	}
	for _, c := range []struct {
		name       string
		rounds     []fidelityRound
		saturating bool
		met        bool
		withCI     bool
	}{
		{"within 1 % at a rate", []fidelityRound{round(2000, 2000, 995, 1000), round(1999, 2000, 1004, 1000)}, false, true, true},
		{"p99 2 % low at a rate", []fidelityRound{round(2000, 2000, 980, 1000), round(2000, 2000, 980, 1000)}, false, false, true},
		{"p99 2 % high at a rate", []fidelityRound{round(2000, 2000, 1020, 1000), round(2000, 2000, 1020, 1000)}, false, false, true},
		{"IOPS 2 % low at a rate", []fidelityRound{round(1960, 2000, 1000, 1000)}, false, false, false},
		{"IOPS 4 % low at saturation, p99 off", []fidelityRound{round(9600, 10000, 1500, 1000), round(9600, 10000, 1500, 1000)}, true, true, true},
		{"IOPS 6 % low at saturation", []fidelityRound{round(9400, 10000, 1000, 1000), round(9400, 10000, 1000, 1000)}, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := fidelityCaseResult{Rounds: c.rounds}
			r.summarize(c.saturating)
			if r.Met != c.met {
				t.Errorf("met %v, want %v (IOPS %s, p99 %s)", r.Met, c.met, r.IOPSRatioCI, r.P99RatioCI)
			}
			if (r.IOPSRatioCI.Low != nil) != c.withCI || r.IOPSRatioCI.Count != len(c.rounds) {
				t.Errorf("interval %+v with %d rounds", r.IOPSRatioCI, len(c.rounds))
			}
			if c.withCI && !(*r.IOPSRatioCI.Low <= r.IOPSRatioCI.Mean && r.IOPSRatioCI.Mean <= *r.IOPSRatioCI.High) {
				t.Errorf("the mean lies outside its interval: %s", r.IOPSRatioCI)
			}
		})
	}
}

func TestIntervalOf(t *testing.T) {
	iv := intervalOf([]float64{1.10, 1.12, 1.14})
	// Mean 1.12, s 0.02, t(0.975, 2) 4.3027: ±0.0497.
	if math.Abs(iv.Mean-1.12) > 1e-9 || math.Abs(*iv.Low-1.0703) > 1e-4 || math.Abs(*iv.High-1.1697) > 1e-4 {
		t.Fatalf("got %s", iv)
	}
	if one := intervalOf([]float64{1.2}); one.Mean != 1.2 || one.Low != nil {
		t.Fatalf("one round: %+v", one)
	}
	if overheadGoal(80e9) != 1.05 || overheadGoal(600e9) != 1.02 {
		t.Fatal("overhead goals: 1.05 below ten minutes of steps, 1.02 from then on")
	}
}
