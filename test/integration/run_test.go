package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/test/k8stest"
)

var _ = Describe("A benchmark run", func() {
	ctx := context.Background()

	It("runs 3 clients on a shared volume through rate steps to Complete, with exact aggregates", func() {
		ns := newNamespace()
		rec := recordResults(ns)
		b := benchmark(ns, "oltp", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Load.Rate.Steps = []int64{150, 300, 600}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 3*time.Minute)

		By("status: every planned step, offered vs achieved, ordered percentiles")
		Expect(cur.Status.Steps).To(HaveLen(3))
		Expect(cur.Status.Progress).To(Equal("3/3"))
		Expect(cur.Status.ClientsReady).To(BeEquivalentTo(3))
		Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.Clients).To(BeEquivalentTo(3))
			Expect(s.OfferedIOPS).To(Equal([]int64{150, 300, 600}[k]))
			Expect(s.Saturated).To(BeFalse())
			k8stest.ExpectTracksOffered(s, 0.05)
			for _, op := range []*v1alpha1.OperationStatus{s.Read, s.Write} {
				Expect(op).NotTo(BeNil())
				k8stest.ExpectOrderedPercentiles(op.Latency)
			}
			Expect(s.ConfigMap).To(Equal(exchange.StepName(b.Name, k)))
		}
		Expect(cur.Status.Summary).NotTo(BeNil())
		Expect(cur.Status.Summary.PeakIOPS).To(BeNumerically(">", 0))
		Expect(cur.Status.Storage.StorageClassName).To(Equal(classLocal))
		Expect(cur.Status.Storage.Claims).To(BeEquivalentTo(1))
		Expect(cur.Status.Storage.Capacity).NotTo(BeNil())

		By("status: the storage's control-plane times, from the API's timestamps (whole seconds)")
		for what, timing := range map[string]*v1alpha1.ControlPlaneTimingStatus{
			"provisioning": cur.Status.Storage.Provisioning, "attach": cur.Status.Storage.Attach} {
			Expect(timing).NotTo(BeNil(), what)
			Expect(timing.P50.Duration).To(BeNumerically(">=", 0), what)
			Expect(timing.P50.Duration).To(BeNumerically("<=", timing.Max.Duration), what)
			Expect(timing.Max.Duration).To(BeNumerically("<", time.Minute), what)
			Expect(timing.Max.Duration%time.Second).To(BeZero(), what)
		}
		Expect(cur.Status.Storage.Provisioning.Count).To(BeEquivalentTo(1), "the shared claim")
		Expect(cur.Status.Storage.Provisioning.Max.Duration).To(BeNumerically("<=", testBindWait))
		Expect(cur.Status.Storage.Attach.Count).To(BeEquivalentTo(3), "each client's pod, scheduled (the binding) to ready to start (the harness's kubelet)")

		By("the runners published in the wire encoding the plan offered, never JSON")
		Expect(rec.encodings()).To(HaveKeyWithValue(exchange.KeyResultWire, BeNumerically(">=", 9)))
		Expect(rec.encodings()).NotTo(HaveKey(exchange.KeyResult))

		By("rate steps without stop rules were ordered ahead: each began the instant the one before ended")
		for k := range cur.Status.Steps {
			for _, r := range rec.step(k, 3) {
				if k > 0 {
					prev := rec.step(k-1, 3)[0].PlannedStart
					Expect(r.PlannedStart).To(BeTemporally("==", prev.Add(6*time.Second)), "step %d starts as step %d ends", k, k-1)
				}
				// fio held its I/O until the instant (whole milliseconds).
				Expect(r.ActualStart.Sub(r.PlannedStart)).To(BeNumerically(">=", -time.Millisecond), "client %d step %d", r.Client, k)
				Expect(r.ActualStart.Sub(r.PlannedStart)).To(BeNumerically("<", 500*time.Millisecond), "client %d step %d", r.Client, k)
			}
		}

		By("the first step's lead was derived from the runners' measured fio start-up, and recorded with its order")
		var first corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.StepName(b.Name, 0)}, &first)).To(Succeed())
		order, _, err := exchange.Step(&first, 0)
		Expect(err).NotTo(HaveOccurred())
		var slowest time.Duration
		for i := range 3 {
			var cm corev1.ConfigMap
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, i)}, &cm)).To(Succeed())
			rep, _, err := exchange.ReadyReport(&cm)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.FioStartup).To(BeNumerically(">", 0), "client %d timed fio's start-up", i)
			Expect(rep.At.IsZero()).To(BeFalse(), "client %d stamped its report", i)
			slowest = max(slowest, rep.FioStartup)
		}
		Expect(order.Lead).To(BeNumerically(">=", min(time.Duration(protocol.LeadFactor*float64(slowest)), suiteStartLead)),
			"the lead leaves the slowest client its start-up (%s)", slowest)
		Expect(order.Lead).To(BeNumerically("<=", suiteStartLead), "the configured lead is the most it can be")

		By("each step's merged result equals the merge of what the runners published")
		for k := range cur.Status.Steps {
			want := results.Aggregate(k, rec.step(k, 3))
			got := stepAggregate(b, k)
			wantJSON, _ := json.Marshal(want)
			gotJSON, _ := json.Marshal(got)
			Expect(gotJSON).To(MatchJSON(wantJSON), "step %d", k)
			Expect(cur.Status.Steps[k].Read.IOs).To(BeEquivalentTo(want.Read.IOs))
			Expect(cur.Status.Steps[k].Read.Latency.P99.Nanoseconds()).To(BeEquivalentTo(want.Read.Latency.P99Ns))
			Expect(cur.Status.Steps[k].Write.Latency.P999.Nanoseconds()).To(BeEquivalentTo(want.Write.Latency.P999Ns))
			By(fmt.Sprintf("step %d: the clients' IOPS spread, from the runners' own figures", k))
			var lo, hi float64
			for i, r := range rec.step(k, 3) {
				iops := r.Read.IOPS + r.Write.IOPS
				if i == 0 || iops < lo {
					lo = iops
				}
				hi = max(hi, iops)
			}
			spread := cur.Status.Steps[k].ClientIOPS
			Expect(spread).NotTo(BeNil(), "step %d", k)
			Expect(spread.MinIOPS).To(BeEquivalentTo(math.Round(lo)), "step %d", k)
			Expect(spread.MaxIOPS).To(BeEquivalentTo(math.Round(hi)), "step %d", k)
			Expect(spread.CVPercent).To(BeNumerically("<=", analysis.UnevenClientsPercent), "step %d: three clients at an even third of a rate the volume sustains", k)
		}

		By("the run's ClientsEven verdict agrees with every step's spread")
		even := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClientsEven)
		Expect(even).NotTo(BeNil())
		Expect(even.Status).To(Equal(metav1.ConditionTrue), even.Message)
		Expect(even.Reason).To(Equal("EvenShare"))
		Expect(even.Message).To(ContainSubstring(fmt.Sprintf("in each of %d steps", len(cur.Status.Steps))))

		By("each step's timeline: one-second windows adding up to the step, judged for steady state")
		for k := range cur.Status.Steps {
			agg := stepAggregate(b, k)
			Expect(agg.Timeline.WindowSeconds).To(Equal(1))
			Expect(agg.Timeline.Windows).To(HaveLen(5), "step %d: 5 s measured", k)
			var ios uint64
			for _, w := range agg.Timeline.Windows {
				ios += w.IOs
			}
			Expect(ios).To(Equal(agg.Total.Latency.Count), "step %d", k)
			Expect(cur.Status.Steps[k].SteadyState).NotTo(BeNil(), "step %d", k)
		}
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionSteadyState)).NotTo(BeNil())

		By("after a complete run the client Jobs go, releasing the claim, which is deleted (cleanup Delete)")
		noPodsLeft(b, time.Minute)
		Eventually(func() int { return len(jobsOf(b)) }, time.Minute).Should(BeZero())
		Eventually(func() []corev1.PersistentVolumeClaim { return claimsOf(b) }, time.Minute).Should(BeEmpty())

		By("each client's Role names only the plan and its own ConfigMap")
		for i := range int(b.Spec.Clients.Count) {
			var role rbacv1.Role
			Expect(k8s.Get(ctx, keyOf(ns, exchange.ClientName(b.Name, i)), &role)).To(Succeed())
			for _, rule := range role.Rules {
				Expect(rule.Resources).To(Equal([]string{"configmaps"}))
				Expect(rule.ResourceNames).To(Or(Equal([]string{exchange.PlanName(b.Name)}), Equal([]string{exchange.ClientName(b.Name, i)})))
			}
		}
	})

	It("gives each client its own volume with PerClient sharing, stepping queue depth", func() {
		ns := newNamespace()
		b := benchmark(ns, "perclient", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingPerClient, ""
			b.Spec.Clients.Count = 2
			b.Spec.Workload = v1alpha1.WorkloadSpec{Profile: "rand-read", WorkingSetPerClient: b.Spec.Workload.WorkingSetPerClient}
			b.Spec.Load.Rate = nil
			b.Spec.Load.QueueDepth = &v1alpha1.QueueDepthSteps{Steps: []int32{1, 2}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func() int { return len(claimsOf(b)) }, 30*time.Second).Should(Equal(2))
		for _, c := range claimsOf(b) {
			Expect(c.Spec.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
		}
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(2))
		Expect(cur.Status.Steps[0].QueueDepthPerClient).To(BeEquivalentTo(1))
		Expect(cur.Status.Steps[1].QueueDepthPerClient).To(BeEquivalentTo(2))
		Expect(cur.Status.Steps[0].Write).To(BeNil(), "a read-only workload has no write figures")
		Expect(cur.Status.Storage.Claims).To(BeEquivalentTo(2))
	})

	It("finds the maximum, then runs percentages of it in curve mode", func() {
		ns := newNamespace()
		b := benchmark(ns, "curve", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 2
			b.Spec.Load.Rate = nil
			b.Spec.Load.Curve = &v1alpha1.CurveSteps{Percents: []int32{20, 50}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(4), "the maximum, the client-bound check (on by default), 2 percentages")
		max := cur.Status.Steps[0]
		Expect(max.Unthrottled).To(BeTrue())
		Expect(max.ClientBoundCheck).To(BeFalse())
		check := cur.Status.Steps[1]
		Expect(check.Unthrottled && check.ClientBoundCheck).To(BeTrue(), "step 2 is the maximum again at twice the outstanding I/O")
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClientBound)
		Expect(c).NotTo(BeNil())
		Expect(c.Reason).To(BeElementOf("MoreOutstandingIOGained", "MoreOutstandingIODidNotGain"))
		Expect(c.Message).To(ContainSubstring("(step 2) achieved"))
		for i, pct := range []int64{20, 50} {
			s := cur.Status.Steps[i+2]
			Expect(s.PercentOfMax).To(BeEquivalentTo(pct))
			Expect(float64(s.OfferedIOPS)).To(BeNumerically("~", float64(max.AchievedIOPS*pct/100), float64(max.AchievedIOPS)/100+2))
		}
	})

	It("sweeps the number of running clients, the others idle and left out of each step", func() {
		ns := newNamespace()
		b := benchmark(ns, "scaleout", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Load.Rate = nil
			b.Spec.Load.Clients = &v1alpha1.ClientSteps{Steps: []int32{1, 3}, PerClientIOPS: ptr.To[int64](100)}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(2))
		for i, n := range []int32{1, 3} {
			s := cur.Status.Steps[i]
			Expect(s.ActiveClients).To(Equal(n))
			Expect(s.Clients).To(Equal(n), "only the running clients' results are merged")
			Expect(s.OfferedIOPS).To(BeEquivalentTo(100 * int64(n)))
			Expect(float64(s.AchievedIOPS)).To(BeNumerically("~", 100*float64(n), 2*float64(n)), "each running client offers 100 IOPS")
		}
	})

	It("ends early on a stop rule and says why", func() {
		ns := newNamespace()
		b := benchmark(ns, "stop", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 1
			b.Spec.Load.Stop = &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
				LatencySelector: v1alpha1.LatencySelector{Metric: "mean", Operation: "worst"},
				Limit:           durationOf("1us")}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(1))
		Expect(cur.Status.StepsPlanned).To(BeEquivalentTo(2))
		Expect(cur.Status.StopReason).To(ContainSubstring("latency"))
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionComplete).Message).To(ContainSubstring("1 steps ran"))
	})

	It("evaluates SLOs into the SLOMet condition", func() {
		ns := newNamespace()
		b := benchmark(ns, "slo", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 1
			b.Spec.Load.Rate.Steps = []int64{200}
			b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{
				{Name: "some-iops", PeakIOPS: ptr.To[int64](100)},
				{Name: "out-of-reach", PeakIOPS: ptr.To[int64](1_000_000_000)},
			}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.SLOs).To(HaveLen(2))
		Expect(cur.Status.SLOs[0].Verdict).To(BeEquivalentTo("Met"))
		Expect(cur.Status.SLOs[1].Verdict).To(BeEquivalentTo("NotMet"))
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionSLOMet)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(BeEquivalentTo("False"))
		Expect(c.Message).To(ContainSubstring("out-of-reach"))

		By("the manager's metrics registry serves the benchmark's series, read from the cache at scrape time")
		verdicts := map[string]float64{}
		families, err := crmetrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		names := map[string]bool{}
		for _, f := range families {
			names[f.GetName()] = true
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if f.GetName() == "storagebench_slo_objective_met" && l["namespace"] == ns && l["benchmark"] == "slo" {
					verdicts[l["objective"]] = m.GetGauge().GetValue()
				}
			}
		}
		Expect(verdicts).To(Equal(map[string]float64{"some-iops": 1, "out-of-reach": 0}))
		for _, n := range []string{"storagebench_step_achieved_iops", "storagebench_step_latency_seconds", "storagebench_peak_iops", "storagebench_run_state"} {
			Expect(names).To(HaveKey(n))
		}
	})
})
