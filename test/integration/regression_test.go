package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
)

// Runs with real fio compared with a baseline. What a real regression looks
// like is test/e2e's (a volume throttled under the same schedule); here the
// baselines are made to order, so each verdict is known in advance.
var _ = Describe("A run compared with a baseline", func() {
	ctx := context.Background()

	regressionOn := func(bl v1alpha1.RegressionBaseline) func(*v1alpha1.StorageBenchmark) {
		return func(b *v1alpha1.StorageBenchmark) { b.Spec.Regression = &v1alpha1.RegressionSpec{Baseline: bl} }
	}
	regressed := func(b *v1alpha1.StorageBenchmark) *metav1.Condition {
		GinkgoHelper()
		cur := waitComplete(b, 2*time.Minute)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionRegressed)
		Expect(c).NotTo(BeNil(), "a completed run with spec.regression has a Regressed condition")
		return c
	}

	It("reports Regressed, naming the step, the metric, the change and the p-value, against a pinned baseline ten times faster", func() {
		ns := newNamespace()
		b := benchmark(ns, "pinned", regressionOn(v1alpha1.RegressionBaseline{ConfigMap: ptr.To("ten-times")}))
		// The fingerprint is of the spec as admission defaults it.
		dry := b.DeepCopy()
		Expect(k8s.Create(ctx, dry, client.DryRunAll)).To(Succeed())
		// 10 seconds of ten times the IOPS each step offers (at the same
		// offered load, so that p99s are compared too), with p99s far above
		// anything the run will see: IOPS regressed, p99 not.
		same := func(v float64) []float64 {
			out := make([]float64, 10)
			for i := range out {
				out[i] = v
			}
			return out
		}
		// Three runs pinned (version 2): enough to judge p99 too.
		steps := []analysis.StepSamples{
			{Planned: 0, Index: 0, Label: "150 IOPS offered", Offered: 150, IOPS: same(1500), P99Ns: same(1e12)},
			{Planned: 1, Index: 1, Label: "300 IOPS offered", Offered: 300, IOPS: same(3000), P99Ns: same(1e12)},
		}
		pinned := analysis.Baseline{Version: analysis.BaselineVersionRuns, Fingerprint: dry.Spec.RegressionFingerprint()}
		for _, run := range []string{"monday", "tuesday", "wednesday"} {
			pinned.Runs = append(pinned.Runs, analysis.BaselineRun{Source: ns + "/" + run, Steps: steps})
		}
		data, err := pinned.Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ten-times", Labels: map[string]string{exchange.LabelBaseline: "true"}},
			Data:       map[string]string{exchange.KeyBaseline: string(data)}})).To(Succeed())
		// The same baseline without the label is not read.
		unlabelled := benchmark(ns, "unlabelled", regressionOn(v1alpha1.RegressionBaseline{ConfigMap: ptr.To("no-label")}))
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-label"},
			Data: map[string]string{exchange.KeyBaseline: string(data)}})).To(Succeed())
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Expect(k8s.Create(ctx, unlabelled)).To(Succeed())

		c := regressed(b)
		GinkgoWriter.Printf("Regressed: %s %s: %s\n", c.Status, c.Reason, c.Message)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(controllers.ReasonRegressed))
		Expect(c.Message).To(MatchRegexp(`^step [12] \(\d+ IOPS offered\): IOPS [\d,]+ → [\d,]+ \(-\d+\.\d %\), p = `))
		Expect(c.Message).To(ContainSubstring("2 of 4 tests regressed against 3 baseline runs of ConfigMap/ten-times"))
		cur := get(b)
		Expect(cur.Status.Regression).NotTo(BeNil())
		Expect(cur.Status.Regression.Baseline).To(Equal("ConfigMap/ten-times"))
		Expect(cur.Status.Regression.BaselineRuns).To(BeEquivalentTo(3))
		Expect(cur.Status.Regression.Tests).To(HaveLen(4))
		for _, t := range cur.Status.Regression.Tests {
			want := v1alpha1.RegressionNotRegressed
			if t.Metric == "iops" {
				want = v1alpha1.RegressionRegressed
				Expect(t.BaselineMedian).To(Equal([]int64{1500, 3000}[t.Step]))
				Expect(float64(t.CurrentMedian)).To(BeNumerically("~", []float64{150, 300}[t.Step], 0.2*[]float64{150, 300}[t.Step]))
			}
			Expect(t.Verdict).To(Equal(want), "step %d %s: %s", t.Step, t.Metric, t.Message)
		}
		Expect(kstatusOf(cur, "StorageBenchmark")).To(Equal(kstatus.CurrentStatus), "Regressed is informational: kstatus reads Current")
		Expect(argoHealth(cur, "StorageBenchmark")).To(HavePrefix("Degraded: Regressed: step "))

		c = regressed(unlabelled)
		Expect(c.Status).To(Equal(metav1.ConditionUnknown))
		Expect(c.Reason).To(Equal(controllers.ReasonBaselineInvalid))
		Expect(c.Message).To(ContainSubstring("ConfigMap/no-label is not labelled storagebench.io/baseline=true"))
		Expect(kstatusOf(get(unlabelled), "StorageBenchmark")).To(Equal(kstatus.CurrentStatus))
	})

	It("compares with a named benchmark of the same load, and refuses one of another load, one missing and a previous run without a schedule", func() {
		ns := newNamespace()
		base := benchmark(ns, "base", nil)
		Expect(k8s.Create(ctx, base)).To(Succeed())
		waitComplete(base, 2*time.Minute)

		same := benchmark(ns, "same", regressionOn(v1alpha1.RegressionBaseline{Benchmark: ptr.To("base")}))
		other := benchmark(ns, "other", func(b *v1alpha1.StorageBenchmark) {
			regressionOn(v1alpha1.RegressionBaseline{Benchmark: ptr.To("base")})(b)
			b.Spec.Load.Rate.Steps = []int64{150, 450}
		})
		missing := benchmark(ns, "missing", regressionOn(v1alpha1.RegressionBaseline{Benchmarks: []string{"base", "nope"}}))
		alone := benchmark(ns, "alone", regressionOn(v1alpha1.RegressionBaseline{PreviousRun: &v1alpha1.PreviousRunBaseline{}}))
		for _, b := range []*v1alpha1.StorageBenchmark{same, other, missing, alone} {
			Expect(k8s.Create(ctx, b)).To(Succeed())
		}

		c := regressed(same)
		GinkgoWriter.Printf("same load: %s %s: %s\n", c.Status, c.Reason, c.Message)
		Expect(c.Status).NotTo(Equal(metav1.ConditionUnknown), "compared: %s", c.Message)
		Expect(c.Message).To(ContainSubstring("against 1 baseline run of StorageBenchmark/base"))
		cur := get(same)
		Expect(cur.Status.Regression.BaselineRuns).To(BeEquivalentTo(1))
		Expect(cur.Status.Regression.Tests).To(HaveLen(4))
		for _, t := range cur.Status.Regression.Tests {
			if t.Metric == "p99" {
				// One baseline run says nothing of how much p99 varies
				// between runs of the same storage.
				Expect(t.Verdict).To(Equal(v1alpha1.RegressionNotJudged))
				Expect(t.Message).To(ContainSubstring("p99 needs at least 3 baseline runs"))
				continue
			}
			Expect(t.Verdict).NotTo(Equal(v1alpha1.RegressionNotJudged), "step %d %s: 5 seconds a step are enough samples: %s", t.Step, t.Metric, t.Message)
			Expect(t.PValue).NotTo(BeEmpty())
		}

		c = regressed(other)
		Expect(c.Status).To(Equal(metav1.ConditionUnknown))
		Expect(c.Reason).To(Equal(controllers.ReasonBaselineNotComparable))
		Expect(c.Message).To(ContainSubstring("StorageBenchmark/base measured another load"))

		c = regressed(missing)
		Expect(c.Reason).To(Equal(controllers.ReasonBaselineNotFound))
		Expect(c.Message).To(ContainSubstring("StorageBenchmark/nope does not exist"))

		c = regressed(alone)
		Expect(c.Reason).To(Equal(controllers.ReasonNotScheduled))
	})
})
