package main

import (
	"testing"
	"time"
)

func TestSplitOf(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name  string
		times runTimes
		want  overheadSplit
	}{
		{"in order: the parts add up to the wall time",
			runTimes{start: at(0), firstClaim: at(200), bound: at(1200), scheduled: at(1300), running: at(3300), ready: at(4300),
				fioStart: []time.Time{at(4800), at(25810)}, fioEnd: []time.Time{at(25800), at(46830)}, complete: at(47030), stepIO: 20 * time.Second},
			overheadSplit{StorageSeconds: 1, KubeletSeconds: 2, ClientsSeconds: 1, StepsSeconds: 40, FioOverrunSeconds: 2.02,
				OperatorSeconds: 1.01, OperatorCreateSeconds: 0.2, OperatorPodsSeconds: 0.1, OperatorLeadSeconds: 0.5,
				OperatorGapsSeconds: 0.01, OperatorTailSeconds: 0.2}},
		{"pods scheduled before their claim bound: the kubelet's part starts at the bind",
			runTimes{start: at(0), firstClaim: at(100), bound: at(3100), scheduled: at(500), running: at(4100), ready: at(4100),
				fioStart: []time.Time{at(5100)}, fioEnd: []time.Time{at(15100)}, complete: at(15300), stepIO: 10 * time.Second},
			overheadSplit{StorageSeconds: 3, KubeletSeconds: 1, StepsSeconds: 10, OperatorSeconds: 1.3, OperatorCreateSeconds: 0.1,
				OperatorLeadSeconds: 1, OperatorTailSeconds: 0.2}},
		{"steps ordered ahead overlap: only the span beyond them is fio's overrun",
			runTimes{start: at(0), firstClaim: at(0), bound: at(0), scheduled: at(0), running: at(0), ready: at(0),
				fioStart: []time.Time{at(0), at(19700)}, fioEnd: []time.Time{at(20000), at(40300)}, complete: at(40300), stepIO: 20 * time.Second},
			overheadSplit{StepsSeconds: 40, FioOverrunSeconds: 0.3}},
		{"a step shorter than its ramp and duration has no overrun",
			runTimes{start: at(0), firstClaim: at(0), bound: at(0), scheduled: at(0), running: at(0), ready: at(0),
				fioStart: []time.Time{at(0)}, fioEnd: []time.Time{at(9000)}, complete: at(9000), stepIO: 10 * time.Second},
			overheadSplit{StepsSeconds: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := splitOf(c.times)
			if got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
			if c.name[:8] == "in order" {
				sum := got.StorageSeconds + got.KubeletSeconds + got.ClientsSeconds + got.StepsSeconds + got.FioOverrunSeconds + got.OperatorSeconds
				if wall := seconds(c.times.complete.Sub(c.times.start)); sum < wall-1e-9 || sum > wall+1e-9 {
					t.Fatalf("the parts add up to %v s, the wall time is %v s", sum, wall)
				}
			}
		})
	}
}

func TestSummarizeSplits(t *testing.T) {
	runs := []overheadResult{{Split: &overheadSplit{OperatorSeconds: 0.9, StorageSeconds: 1}}, {}, {Split: &overheadSplit{OperatorSeconds: 1.1, StorageSeconds: 3}}}
	s := summarizeSplits(runs, 4)
	if s == nil || s.Operator.Count != 2 || s.Operator.Mean != 1.0 || s.Storage.Mean != 2 || s.OperatorGoal != 1.04 || !s.OperatorMet {
		t.Fatalf("got %+v", s)
	}
	if summarizeSplits([]overheadResult{{}}, 4) != nil {
		t.Fatal("a split of no round")
	}
	if s := summarizeSplits([]overheadResult{{Split: &overheadSplit{OperatorSeconds: 1.05}}}, 4); s.OperatorMet {
		t.Fatalf("1.05 s met a goal of 1.04 s: %+v", s)
	}
}
