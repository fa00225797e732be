package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/runner"
)

// fidelityClaim is the one claim every fidelity benchmark uses (as
// storage.existingClaim), so that every operator run and every plain run
// works on the same directory and the same files.
const fidelityClaim = "fidelity-data"

// startLead is how long before a step's start instant the operator writes
// its order when the order does not record its lead (the manager's
// default StartLead). The plain runs wait as long between the preceding
// I/O (preconditioning) and the step as the runner in the pod did: the
// first step's recorded lead.
const startLead = protocol.DefaultStartLead

// Fidelity goals. At an offered rate the operator must achieve what plain
// fio achieves and see the same p99, each within 1 %: the mean of the
// rounds' operator/plain ratios within [fidelityGoal, 1/fidelityGoal]. At
// saturation what the runner pod's cgroup and the volume's state add is
// allowed a wider band: the IOPS ratio within [saturatedBand,
// 1/saturatedBand]; its p99 ratio is reported, not judged.
const (
	fidelityGoal  = 0.99
	saturatedBand = 0.95
)

// fidelityCase is one kind of step the fidelity measurement compares.
type fidelityCase struct {
	key, label string
	load       v1alpha1.LoadSpec
	// saturating is set for the step that saturates (judged with
	// saturatedBand).
	saturating bool
}

func (m *measurer) fidelityCases() []fidelityCase {
	return []fidelityCase{
		{"rate", fmt.Sprintf("rate %d IOPS", m.cfg.rate),
			v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Steps: []int64{m.cfg.rate}}}, false},
		{"qd", fmt.Sprintf("queue depth %d", m.cfg.queueDepth),
			v1alpha1.LoadSpec{QueueDepth: &v1alpha1.QueueDepthSteps{Steps: []int32{int32(m.cfg.queueDepth)}}}, true},
	}
}

// measureFidelity runs, for every round and case, a one-step benchmark
// through the operator, then the same step with plain fio on the host,
// right after it and on the same files.
func (m *measurer) measureFidelity(ctx context.Context) (*fidelityResult, error) {
	size := resource.MustParse(m.cfg.workingSet)
	size.Add(resource.MustParse("64Mi")) // room for the file system's own blocks
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fidelityClaim, Namespace: m.cfg.namespace, Labels: map[string]string{labelCreatedBy: createdBy},
			// The claim is this program's: it consents to benchmarks
			// writing their files on it.
			Annotations: map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentFiles}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(m.cfg.fidelityClass),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if err := m.k.Create(ctx, pvc); err != nil {
		return nil, fmt.Errorf("creating claim %s: %w", fidelityClaim, err)
	}
	res := &fidelityResult{Claim: fidelityClaim, StorageClass: m.cfg.fidelityClass, Goal: fidelityGoal, SaturatedBand: saturatedBand}
	cases := m.fidelityCases()
	for _, c := range cases {
		res.Cases = append(res.Cases, fidelityCaseResult{Case: c.label})
	}
	// Rounds alternate operator and plain runs of every case, so that drift
	// (other work on the machine, the disk's state) shows up in the
	// per-round ratios instead of biasing one side.
	for round := 1; round <= m.cfg.rounds; round++ {
		for i, c := range cases {
			r, err := m.fidelityRound(ctx, res, c, round)
			if err != nil {
				return nil, err
			}
			res.Cases[i].Rounds = append(res.Cases[i].Rounds, r)
		}
	}
	res.WorstIOPSRatio = math.Inf(1)
	res.Met = true
	for i, c := range cases {
		res.Cases[i].summarize(c.saturating)
		res.WorstIOPSRatio = min(res.WorstIOPSRatio, res.Cases[i].IOPSRatio)
		res.Met = res.Met && res.Cases[i].Met
	}
	return res, nil
}

func (m *measurer) fidelityRound(ctx context.Context, res *fidelityResult, c fidelityCase, round int) (fidelityRound, error) {
	name := fmt.Sprintf("fidelity-%s-%d", c.key, round)
	b := m.benchmark(name, v1alpha1.StorageSpec{ExistingClaim: ptr.To(fidelityClaim)}, 1, c.load)
	logf("%s: operator run (%s, %s + %s ramp)", name, c.label, m.cfg.stepDuration, m.cfg.ramp)
	obs, err := runBenchmark(ctx, m.k, b, m.cfg.timeout+m.cfg.stepDuration+m.cfg.ramp)
	if err != nil {
		return fidelityRound{}, err
	}
	if len(obs.final.Status.Steps) != 1 {
		return fidelityRound{}, fmt.Errorf("%s recorded %d steps, want 1", name, len(obs.final.Status.Steps))
	}
	step := obs.final.Status.Steps[0]
	op := figuresOfStatus(&step)
	if start, end, ok := obs.stepSpan(0); ok {
		op.Start, op.End = start, end
	}
	if rep, ok := obs.readyReports[0]; ok {
		res.RunnerFio = rep.FioVersion
	}
	logf("%s: operator %s IOPS, p99 %s", name, fmtCount(op.IOPS), fmtLatency(op.P99Ns))

	// The runner's pod must have ended (not merely be done with fio) before
	// the plain run, so that the two never overlap.
	if err := m.waitClientPodsEnded(ctx, name); err != nil {
		return fidelityRound{}, err
	}
	if res.HostPath == "" {
		if res.PersistentVolume, res.HostPath, err = m.hostPath(ctx, fidelityClaim); err != nil {
			return fidelityRound{}, err
		}
	}
	plain, jobFile, err := m.plainRun(ctx, obs, res.HostPath)
	if err != nil {
		return fidelityRound{}, fmt.Errorf("%s: plain fio: %w", name, err)
	}
	res.JobFile = jobFile
	r := fidelityRound{Round: round, Benchmark: name, Operator: op, Plain: plain,
		IOPSRatio: ratio(float64(op.IOPS), float64(plain.IOPS)), P99Ratio: ratio(float64(op.P99Ns), float64(plain.P99Ns))}
	if !op.End.IsZero() {
		r.PlainStartedAfterSeconds = seconds(plain.Start.Sub(op.End))
	}
	logf("%s: plain    %s IOPS, p99 %s (ratios: IOPS %.4f, p99 %.3f)", name, fmtCount(plain.IOPS), fmtLatency(plain.P99Ns), r.IOPSRatio, r.P99Ratio)
	return r, nil
}

// plainRun runs the benchmark's steps again outside Kubernetes: the
// project's runner, in this process, with the plan the operator gave the
// pod (the plan ConfigMap) and the same step orders, fio being -fio. Only
// the volume's path differs: the pod's mount point becomes the
// PersistentVolume's directory on the host, and the runner's own layout
// code places the files in it exactly as in the pod (the benchmark's own
// directory on this existing claim), so plain fio works on the same paths
// and the same blocks of the volume the pod used. Like the runner in the
// pod, it lays out and preconditions them before the step.
func (m *measurer) plainRun(ctx context.Context, obs *observation, hostPath string) (figures, string, error) {
	b := obs.final
	var cm corev1.ConfigMap
	if err := m.k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.PlanName(b.Name)}, &cm); err != nil {
		return figures{}, "", err
	}
	p, err := exchange.Plan(&cm)
	if err != nil {
		return figures{}, "", err
	}
	if p.Volume.Block {
		return figures{}, "", fmt.Errorf("%s uses a raw block volume; the plain run only supports Filesystem volumes", b.Name)
	}
	// As the runner in the pod sets them (exchange.Client.LoadPlan).
	p.Client, p.Seed = 0, protocol.ClientSeed(b.Name, 0)
	p.Volume.Path, p.Fio = hostPath, m.cfg.fio

	rep := &replay{orders: obs.stepOrders()}
	workDir, err := filepath.Abs(filepath.Join(m.cfg.out, "fidelity", b.Name))
	if err != nil {
		return figures{}, "", err
	}
	if err := os.RemoveAll(workDir); err != nil {
		return figures{}, "", err
	}
	r := &runner.Runner{Plan: p, Coordinator: rep, Publisher: rep, WorkDir: workDir}
	if err := r.Run(ctx); err != nil {
		return figures{}, "", err
	}
	if len(rep.results) != 1 {
		return figures{}, "", fmt.Errorf("the plain run published %d step results, want 1", len(rep.results))
	}
	cs := rep.results[0]
	agg := results.Aggregate(cs.Step, []results.ClientStep{cs})
	f := figuresOfAggregate(&agg, rep.orders[0].Step)
	f.Start, f.End = cs.ActualStart, cs.End
	return f, filepath.Join(workDir, fmt.Sprintf("step%d.fio", cs.Step)), nil
}

// stepOrders are the orders the runners received: those captured from the
// plan ConfigMap, or else rebuilt from status (which records each order's
// step verbatim) and the spec's duration and ramp (which the operator copies
// into every order).
func (o *observation) stepOrders() []protocol.StepOrder {
	b := o.final
	out := make([]protocol.StepOrder, len(b.Status.Steps))
	for i, s := range b.Status.Steps {
		if order, ok := o.orders[i]; ok {
			out[i] = order
			continue
		}
		out[i] = protocol.StepOrder{Index: i, Duration: b.Spec.Load.StepDuration.Duration, Ramp: ptr.Deref(b.Spec.Load.RampTime, metav1.Duration{}).Duration,
			Step: plan.Step{Index: i, Unthrottled: s.Unthrottled, OfferedIOPS: s.OfferedIOPS, OfferedBytesPerSec: s.OfferedBytesPerSecond,
				QueueDepthPerClient: s.QueueDepthPerClient, PercentOfMax: s.PercentOfMax}}
	}
	return out
}

// replay is the plain run's coordinator and publisher: it hands the runner
// the operator's orders, each due its lead from now, and keeps its results.
type replay struct {
	orders  []protocol.StepOrder
	results []results.ClientStep
}

func (r *replay) ReportReady(context.Context, protocol.Ready) error { return nil }

func (r *replay) WaitOrder(_ context.Context, index int) (protocol.StepOrder, error) {
	if index >= len(r.orders) {
		return protocol.StepOrder{Index: index, Done: true, Reason: "replayed every step"}, nil
	}
	o := r.orders[index]
	o.StartAt = time.Now().Add(cmp.Or(o.Lead, startLead))
	return o, nil
}

func (r *replay) Publish(_ context.Context, cs results.ClientStep) error {
	r.results = append(r.results, cs)
	return nil
}

// hostPath finds the directory on this host behind a bound claim.
func (m *measurer) hostPath(ctx context.Context, claim string) (pvName, path string, err error) {
	var pvc corev1.PersistentVolumeClaim
	if err := m.k.Get(ctx, client.ObjectKey{Namespace: m.cfg.namespace, Name: claim}, &pvc); err != nil {
		return "", "", err
	}
	if pvc.Spec.VolumeName == "" {
		return "", "", fmt.Errorf("claim %s is not bound", claim)
	}
	var pv corev1.PersistentVolume
	if err := m.k.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
		return "", "", err
	}
	switch {
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	default:
		return "", "", fmt.Errorf("volume %s is neither a hostPath nor a local volume: plain fio cannot reach it from this host", pv.Name)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("volume %s: directory %s not found on this host (is this the cluster's node?): %w", pv.Name, path, err)
	}
	return pv.Name, path, nil
}

// waitClientPodsEnded waits until no client pod of the benchmark runs.
func (m *measurer) waitClientPodsEnded(ctx context.Context, name string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pods corev1.PodList
		if err := m.k.List(ctx, &pods, client.InNamespace(m.cfg.namespace),
			client.MatchingLabels{exchange.LabelBenchmark: name, exchange.LabelRole: exchange.RoleClient}); err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				running++
			}
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d client pods of %s still run 2 minutes after it completed", running, name)
		}
		if err := protocol.Pause(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

func figuresOfStatus(s *v1alpha1.StepStatus) figures {
	f := figures{OfferedIOPS: s.OfferedIOPS, QueueDepthPerClient: s.QueueDepthPerClient, IOPS: s.AchievedIOPS}
	if s.Latency != nil {
		f.MeanNs, f.P99Ns = s.Latency.Mean.Nanoseconds(), s.Latency.P99.Nanoseconds()
	}
	return f
}

// figuresOfAggregate reads a step as the operator records it in status
// (controllers.stepStatus): IOPS rounded, latencies over all I/O.
func figuresOfAggregate(a *results.StepAggregate, s plan.Step) figures {
	f := figures{OfferedIOPS: s.OfferedIOPS, QueueDepthPerClient: s.QueueDepthPerClient, IOPS: int64(math.Round(a.Total.IOPS))}
	if a.Total.IOs > 0 {
		f.MeanNs, f.P99Ns = int64(math.Round(a.Total.Latency.MeanNs)), int64(a.Total.Latency.P99Ns)
	}
	return f
}

// summarize computes the case's means and the 95 % confidence intervals
// of the rounds' ratios, and judges it: at an offered rate both ratios'
// means within 1 % of 1, at saturation the IOPS ratio's within the band.
func (c *fidelityCaseResult) summarize(saturating bool) {
	var op, plain, opP99, plainP99 float64
	iops, p99 := make([]float64, len(c.Rounds)), make([]float64, len(c.Rounds))
	for i, r := range c.Rounds {
		op += float64(r.Operator.IOPS)
		plain += float64(r.Plain.IOPS)
		opP99 += float64(r.Operator.P99Ns)
		plainP99 += float64(r.Plain.P99Ns)
		iops[i], p99[i] = r.IOPSRatio, r.P99Ratio
	}
	n := float64(len(c.Rounds))
	c.OperatorIOPS, c.PlainIOPS = op/n, plain/n
	c.OperatorP99Ns, c.PlainP99Ns = opP99/n, plainP99/n
	c.IOPSRatio, c.P99Ratio = ratio(op, plain), ratio(opP99, plainP99)
	c.IOPSRatioCI, c.P99RatioCI = intervalOf(iops), intervalOf(p99)
	c.Saturating = saturating
	if saturating {
		c.Met = within(c.IOPSRatioCI.Mean, saturatedBand)
		return
	}
	c.Met = within(c.IOPSRatioCI.Mean, fidelityGoal) && within(c.P99RatioCI.Mean, fidelityGoal)
}

// within reports whether a ratio lies in [goal, 1/goal].
func within(r, goal float64) bool { return r >= goal && r <= 1/goal }

// interval is the mean of a figure over rounds and its 95 % confidence
// interval (Student's t, analysis.VariationOf); the bounds are absent with
// a single round.
type interval struct {
	Mean  float64  `json:"mean"`
	Low   *float64 `json:"ci95Low,omitempty"`
	High  *float64 `json:"ci95High,omitempty"`
	Count int      `json:"rounds"`
}

func intervalOf(xs []float64) interval {
	iv := interval{Count: len(xs)}
	if v, ok := analysis.VariationOf(xs); ok {
		iv.Mean, iv.Low, iv.High = v.Mean, ptr.To(v.CI95Low), ptr.To(v.CI95High)
	} else if len(xs) == 1 {
		iv.Mean = xs[0]
	}
	return iv
}

func (iv interval) String() string {
	if iv.Low == nil {
		return fmt.Sprintf("%s (1 round, no interval)", fmtRatio(iv.Mean))
	}
	return fmt.Sprintf("%s, 95 %% CI %s–%s (%d rounds)", fmtRatio(iv.Mean), fmtRatio(*iv.Low), fmtRatio(*iv.High), iv.Count)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*1e4) / 1e4
}
