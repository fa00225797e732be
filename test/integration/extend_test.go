package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

var _ = Describe("A load extended until steady", func() {
	ctx := context.Background()

	// Poisson arrivals at 150 IOPS make every second's count vary by about
	// 8 %: judged over 10 one-second rounds with 1 % allowed, no run is
	// steady, so every step runs maxRuns times.
	It("runs an unsteady step again up to maxRuns and keeps the superseded runs out of the figures", func() {
		ns := newNamespace()
		b := benchmark(ns, "extend", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Load.Arrivals = v1alpha1.ArrivalsPoisson
			b.Spec.Load.StepDuration = metav1.Duration{Duration: 13 * time.Second}
			b.Spec.Load.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 2}
			b.Spec.Analysis.SteadyState = v1alpha1.SteadyStateSpec{Rounds: 10, RangePercent: 1, SlopePercent: 1}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 4*time.Minute)
		GinkgoWriter.Printf("steps: %+v\nconditions: %+v\n", cur.Status.Steps, cur.Status.Conditions)

		By("status: 2 planned steps × 2 runs, the first run of each superseded")
		Expect(cur.Status.StepsPlanned).To(BeEquivalentTo(4))
		Expect(cur.Status.Progress).To(Equal("4/4"))
		Expect(cur.Status.StopReason).To(Equal("all 4 steps completed"))
		Expect(cur.Status.Steps).To(HaveLen(4))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.OfferedIOPS).To(Equal([]int64{150, 300}[k/2]), "step %d", k)
			Expect(s.Attempt).To(BeEquivalentTo(k%2+1), "step %d", k)
			Expect(s.Superseded).To(Equal(k%2 == 0), "step %d", k)
			Expect(s.SteadyState).NotTo(BeNil(), "step %d was judged", k)
			Expect(s.SteadyState.Steady).To(BeFalse(), "step %d", k)
		}

		By("the figures stand on the last runs only")
		Expect(cur.Status.Summary).NotTo(BeNil())
		Expect(cur.Status.Summary.PeakIOPSStep).NotTo(BeNil())
		Expect(*cur.Status.Summary.PeakIOPSStep).To(BeElementOf(int32(1), int32(3)))
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionSteadyState)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Message).To(ContainSubstring("step 2 ("))
		Expect(c.Message).To(ContainSubstring("step 4 ("))
		Expect(c.Message).NotTo(ContainSubstring("step 1 ("), "a superseded run is not in the condition")
		Expect(c.Message).NotTo(ContainSubstring("step 3 ("), "a superseded run is not in the condition")
		Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionReady)).To(BeTrue())
		Expect(kstatusOf(cur, "StorageBenchmark")).To(Equal(kstatus.CurrentStatus),
			"kstatus reads a completed run as Current: SteadyState False is informational")
		Expect(argoHealth(cur, "StorageBenchmark")).To(HavePrefix("Healthy: Completed: "))

		By("the report marks the reruns and the superseded runs")
		r := apireport.FromAPI(cur)
		Expect(r.Steps[0].Marks()).To(ContainElement("superseded"))
		Expect(r.Steps[1].Marks()).To(ContainElement("attempt 2"))
		Expect(r.Steps[1].Marks()).NotTo(ContainElement("superseded"))
	})
})
