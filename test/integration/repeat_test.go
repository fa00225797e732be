package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

var _ = Describe("A repeated load", func() {
	ctx := context.Background()

	It("runs each rate step 3 times and reports how much each level's runs varied", func() {
		ns := newNamespace()
		b := benchmark(ns, "repeat", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Load.Repeat = 3
			b.Spec.Analysis.MaxVariationPercent = ptr.To[int32](25)
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitComplete(b, 4*time.Minute)

		By("status: 2 levels × 3 runs, every run a step with its repetition")
		Expect(cur.Status.StepsPlanned).To(BeEquivalentTo(6))
		Expect(cur.Status.Progress).To(Equal("6/6"))
		Expect(cur.Status.Steps).To(HaveLen(6))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.Repetition).To(BeEquivalentTo(k%3+1), "step %d", k)
			Expect(s.OfferedIOPS).To(Equal([]int64{150, 300}[k/3]), "step %d", k)
			Expect(s.Clients).To(BeEquivalentTo(3))
			Expect(s.Latency).NotTo(BeNil())
		}

		By("status.repeatability: one entry per level over its 3 runs, the interval around the mean")
		GinkgoWriter.Printf("repeatability: %+v\nconditions: %+v\n", cur.Status.Repeatability, cur.Status.Conditions)
		Expect(cur.Status.Repeatability).To(HaveLen(2))
		anyUnstable := false
		for lvl, r := range cur.Status.Repeatability {
			runs := cur.Status.Steps[3*lvl : 3*lvl+3]
			Expect(r.Level).To(BeEquivalentTo(lvl))
			Expect(r.OfferedIOPS).To(Equal(runs[0].OfferedIOPS))
			Expect(r.Runs).To(BeEquivalentTo(3))
			var iops float64
			var p99 time.Duration
			for _, s := range runs {
				iops += float64(s.AchievedIOPS)
				p99 += s.Latency.P99.Duration // analysis.targetLatency's operation: total
			}
			// Status rounds each step's IOPS; its repeatability is the exact mean's.
			Expect(float64(r.IOPS.Mean)).To(BeNumerically("~", iops/3, 1))
			Expect(r.IOPS.CI95Low).To(BeNumerically("<=", r.IOPS.Mean))
			Expect(r.IOPS.CI95High).To(BeNumerically(">=", r.IOPS.Mean))
			Expect(r.IOPS.CVPercent).To(BeNumerically(">=", 0))
			Expect(r.P99).NotTo(BeNil())
			Expect(r.P99.Mean.Duration).To(BeNumerically("~", p99/3, 1))
			Expect(r.P99.CI95Low.Duration).To(BeNumerically("<=", r.P99.Mean.Duration))
			Expect(r.P99.CI95High.Duration).To(BeNumerically(">=", r.P99.Mean.Duration))
			Expect(r.Stable).NotTo(BeNil(), "analysis.maxVariationPercent is set")
			anyUnstable = anyUnstable || !*r.Stable
		}

		By("the Unstable condition says whether a level varied above the limit, and the run is Ready either way")
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionUnstable)
		Expect(c).NotTo(BeNil())
		Expect(c.ObservedGeneration).To(Equal(cur.Generation))
		if anyUnstable {
			Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			Expect(c.Reason).To(Equal(controllers.ReasonVariationAboveLimit))
			Expect(c.Message).To(ContainSubstring("25 % limit"))
			Expect(c.Message).To(ContainSubstring("CV"))
		} else {
			Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
			Expect(c.Reason).To(Equal(controllers.ReasonVariationWithin))
		}
		Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionReady)).To(BeTrue())
		Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionStalled)).To(BeFalse())

		By("the report shows every run and the levels' spread")
		r := apireport.FromAPI(cur)
		Expect(r.StepTable().Header).To(ContainElement("run"))
		Expect(r.RepeatabilityTable().Rows).To(HaveLen(2))
	})
})
