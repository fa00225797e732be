package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// overheadGoal is the largest acceptable mean ratio of a benchmark's wall
// time to the sum of its step durations: 1.05, and 1.02 once the steps add
// up to 10 minutes (10 × 60 s), where the fixed costs weigh less.
func overheadGoal(sumSteps time.Duration) float64 {
	if sumSteps >= 10*time.Minute {
		return 1.02
	}
	return 1.05
}

// measureOverhead runs the overhead benchmark -overhead-rounds times, one
// after another, and summarizes the ratios.
func (m *measurer) measureOverhead(ctx context.Context) (*overheadSummary, error) {
	s := &overheadSummary{Goal: overheadGoal(time.Duration(m.cfg.steps) * m.cfg.stepDuration)}
	var ratios []float64
	for round := 1; round <= m.cfg.overheadRounds; round++ {
		name := fmt.Sprintf("overhead-%d", round)
		res, err := m.overheadRun(ctx, name)
		if err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, *res)
		ratios = append(ratios, res.Ratio)
		// The next round starts on a quiet node.
		if err := m.waitClientPodsEnded(ctx, name); err != nil {
			return nil, err
		}
	}
	s.Ratio = intervalOf(ratios)
	s.Met = s.Ratio.Mean <= s.Goal
	s.Split = summarizeSplits(s.Runs, m.cfg.steps)
	return s, nil
}

// summarizeSplits gives each part of the split over the rounds that have
// one, as a mean with its 95 % interval, and judges the operator's part
// against its goal; nil when no round has a split.
func summarizeSplits(runs []overheadResult, steps int) *splitSummary {
	var parts [5][]float64
	for _, r := range runs {
		if p := r.Split; p != nil {
			for i, v := range []float64{p.StorageSeconds, p.KubeletSeconds, p.ClientsSeconds, p.FioOverrunSeconds, p.OperatorSeconds} {
				parts[i] = append(parts[i], v)
			}
		}
	}
	if len(parts[0]) == 0 {
		return nil
	}
	s := &splitSummary{Storage: intervalOf(parts[0]), Kubelet: intervalOf(parts[1]), Clients: intervalOf(parts[2]),
		FioOverrun: intervalOf(parts[3]), Operator: intervalOf(parts[4]), OperatorGoal: operatorGoal(steps)}
	s.OperatorMet = s.Operator.Mean <= s.OperatorGoal
	return s
}

// overheadRun runs one benchmark of rate steps on a shared volume and
// times it from the create call to Complete.
func (m *measurer) overheadRun(ctx context.Context, name string) (*overheadResult, error) {
	rates := make([]int64, m.cfg.steps)
	for i := range rates {
		rates[i] = int64(i+1) * m.cfg.rateIncrement
	}
	ws := resource.MustParse(m.cfg.workingSet)
	size := *resource.NewQuantity(ws.Value()*int64(m.cfg.clients)+64<<20, resource.BinarySI)
	storage := v1alpha1.StorageSpec{StorageClassName: ptr.To(m.cfg.overheadClass), Size: size,
		Sharing: v1alpha1.SharingShared, AccessMode: corev1.ReadWriteMany}
	b := m.benchmark(name, storage, int32(m.cfg.clients), v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Steps: rates}})
	logf("overhead: %d clients, %d rate steps %v IOPS of %s + %s ramp", m.cfg.clients, len(rates), rates, m.cfg.stepDuration, m.cfg.ramp)
	obs, err := runBenchmark(ctx, m.k, b, m.cfg.timeout+time.Duration(m.cfg.steps)*(m.cfg.stepDuration+m.cfg.ramp))
	if err != nil {
		return nil, err
	}
	res := overheadOf(obs, m.cfg)
	logf("overhead: wall %.1f s for %.0f s of steps: ratio %.3f", res.WallSeconds, res.SumStepDurationsSeconds, res.Ratio)
	return res, nil
}

// overheadOf reads the timings out of a finished run. Every "since create"
// figure counts from just before the create call.
func overheadOf(obs *observation, cfg *config) *overheadResult {
	b := obs.final
	n := len(b.Status.Steps)
	res := &overheadResult{Benchmark: b.Name, Clients: cfg.clients, StorageClass: cfg.overheadClass,
		StepDurationSeconds: seconds(cfg.stepDuration), RampSeconds: seconds(cfg.ramp),
		SumStepDurationsSeconds: seconds(time.Duration(n) * cfg.stepDuration),
		SumStepIOSeconds:        seconds(time.Duration(n) * (cfg.stepDuration + cfg.ramp)),
		WallSeconds:             seconds(obs.complete.Sub(obs.start)),
		CreationTimestamp:       b.CreationTimestamp.Time,
	}
	res.Ratio = ratio(res.WallSeconds, res.SumStepDurationsSeconds)
	res.RatioIncludingRamp = ratio(res.WallSeconds, res.SumStepIOSeconds)
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionComplete); c != nil {
		res.CompleteLastTransitionTime = c.LastTransitionTime.Time
		res.WallByConditionSeconds = seconds(c.LastTransitionTime.Sub(b.CreationTimestamp.Time))
	}
	for i := range obs.clients {
		if r, ok := obs.readyReports[i]; ok {
			res.PreconditionSeconds = append(res.PreconditionSeconds, seconds(r.Precondition))
		}
	}

	add := func(name string, t time.Time, ok bool, source string) {
		if !ok {
			res.Milestones = append(res.Milestones, milestone{Name: name, Source: "not observed"})
			return
		}
		res.Milestones = append(res.Milestones, milestone{Name: name, At: t, SinceCreateSeconds: seconds(t.Sub(obs.start)), Source: source})
	}
	add("create call returned", obs.created, true, "this program's clock")
	t, ok := latest(obs.podCreated, cfg.clients)
	add("all client pods created", t, ok, "pod watch: the last client pod seen")
	t, ok = obs.allClaimsBound()
	add("all claims bound", t, ok, "claim watch: phase Bound seen for the last claim")
	t, ok = latest(obs.podScheduled, cfg.clients)
	add("all client pods scheduled", t, ok, "pod watch: a node seen in the last client pod's spec")
	t, ok = obs.allPodsRunning()
	add("all client pods Running", t, ok, "pod watch: phase Running seen for the last client pod")
	t, ok = obs.allReady()
	add("all clients ready", t, ok, "ConfigMap watch: storagebench.io/ready=true seen for the last client (files laid out and preconditioned)")
	order, ok := obs.orders[0]
	add("step 1 start instant", order.StartAt, ok, "order.json of the plan ConfigMap: startAt, the instant every client was told to start")
	first, _, ok := obs.stepSpan(0)
	add("first I/O (step 1 fio started)", first, ok, "the client results: the earliest actualStart of step 1 (its I/O began, by fio's timestamps; its ramp is I/O)")
	if ok {
		res.FirstIOSeconds = seconds(first.Sub(obs.start))
	}
	_, last, ok := obs.stepSpan(n - 1)
	add("last step end", last, ok, "the client results: the latest end of the last step (fio exited and its report was read)")
	add("Complete", obs.complete, true, "benchmark watch: condition Complete seen True")

	res.Split = splitOfObservation(obs, cfg, n)

	var prevEnd time.Time
	for i, s := range b.Status.Steps {
		st := overheadStep{Index: i + 1, OfferedIOPS: s.OfferedIOPS, AchievedIOPS: s.AchievedIOPS, Saturated: s.Saturated}
		if o, ok := obs.orders[i]; ok {
			st.StartInstantSeconds = seconds(o.StartAt.Sub(obs.start))
		}
		if first, last, ok := obs.stepSpan(i); ok {
			st.FioStartSeconds, st.EndSeconds = seconds(first.Sub(obs.start)), seconds(last.Sub(obs.start))
			if !prevEnd.IsZero() {
				st.GapSeconds = seconds(first.Sub(prevEnd))
			}
			prevEnd = last
		} else {
			prevEnd = time.Time{}
		}
		res.Steps = append(res.Steps, st)
	}
	return res
}

// splitOfObservation splits the run's wall time, when every milestone
// was seen.
func splitOfObservation(obs *observation, cfg *config, steps int) *overheadSplit {
	t := runTimes{start: obs.start, complete: obs.complete, stepIO: cfg.stepDuration + cfg.ramp}
	var ok [5]bool
	t.firstClaim, ok[0] = earliest(obs.claimSeen)
	t.bound, ok[1] = obs.allClaimsBound()
	t.scheduled, ok[2] = latest(obs.podScheduled, cfg.clients)
	t.running, ok[3] = obs.allPodsRunning()
	t.ready, ok[4] = obs.allReady()
	for _, seen := range ok {
		if !seen {
			return nil
		}
	}
	for k := range steps {
		first, last, seen := obs.stepSpan(k)
		if !seen {
			return nil
		}
		t.fioStart, t.fioEnd = append(t.fioStart, first), append(t.fioEnd, last)
	}
	s := splitOf(t)
	return &s
}

// seconds rounds a duration to milliseconds, in seconds.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}
