package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/k8stest"
)

// oltpSample is config/samples/oltp-bench.yaml scaled to this machine: 3
// clients of 2 jobs on ONE shared ReadWriteMany volume (local-shared), a
// 128 MiB working set each, 4 offered rates of 10 s that a local disk
// sustains, no node spreading (one node). Its stop rules stay.
func oltpSample(ns string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	b := k8stest.BenchmarksIn(filepath.Join(root, "config", "samples", "oltp-bench.yaml"))[0]
	b.Namespace = ns
	b.Spec.Storage.StorageClassName = ptr.To(classShared)
	b.Spec.Storage.Size = resource.MustParse("1Gi")
	Expect(b.Spec.Storage.Sharing).To(Equal(v1alpha1.SharingShared))
	b.Spec.Clients.Count, b.Spec.Clients.JobsPerClient, b.Spec.Clients.SpreadAcrossNodes = 3, 2, false
	b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse("128Mi"))
	b.Spec.Load.Rate = &v1alpha1.RateSteps{Steps: []int64{400, 800, 1200, 1600}}
	b.Spec.Load.StepDuration = metav1.Duration{Duration: 10 * time.Second}
	b.Spec.Load.RampTime = &metav1.Duration{Duration: 2 * time.Second}
	return b
}

var _ = Describe("The OLTP sample", Ordered, func() {
	var (
		ns  string
		b   *v1alpha1.StorageBenchmark
		cur *v1alpha1.StorageBenchmark
	)
	BeforeAll(func() { ns = newNamespace("oltp") })

	It("runs 3 clients on one shared volume through 4 rate steps to Complete, each within 5 % of offered", func() {
		b = oltpSample(ns)
		b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{
			{Name: "peak-within-reach", PeakIOPS: ptr.To[int64](100)},
			{Name: "peak-out-of-reach", PeakIOPS: ptr.To[int64](1 << 40)},
		}}
		apply(b)

		By("three non-root client pods running on the one claim")
		k8stest.WaitFor(k8s, b, 3*time.Minute, "running step 1", k8stest.StepRunning(0))
		// The kubelet reports a pod Running a little after its container
		// started (and may have reported ready already).
		var pods []corev1.Pod
		Eventually(func() []corev1.PodPhase {
			pods = k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items
			var phases []corev1.PodPhase
			for _, p := range pods {
				phases = append(phases, p.Status.Phase)
			}
			return phases
		}, 30*time.Second, 250*time.Millisecond).Should(Equal([]corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning}))
		claims := map[string]bool{}
		for _, p := range pods {
			Expect(p.Spec.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					claims[v.PersistentVolumeClaim.ClaimName] = true
				}
			}
		}

		cur = k8stest.WaitComplete(k8s, b, 6*time.Minute)

		Expect(cur.Status.Steps).To(HaveLen(4))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.Clients).To(BeEquivalentTo(3))
			Expect(s.Saturated).To(BeFalse(), "a local disk sustains %d IOPS", s.OfferedIOPS)
			k8stest.ExpectTracksOffered(s, 0.05)
			Expect(s.Latency).NotTo(BeNil())
			k8stest.ExpectOrderedPercentiles(*s.Latency)
			for _, op := range []*v1alpha1.OperationStatus{s.Read, s.Write} {
				Expect(op).NotTo(BeNil())
				k8stest.ExpectOrderedPercentiles(op.Latency)
			}
			// OLTP: 80 % reads.
			Expect(float64(s.Read.IOPS) / float64(s.AchievedIOPS)).To(BeNumerically("~", 0.8, 0.03))
		}

		By("one ReadWriteMany claim of local-shared")
		st := cur.Status.Storage
		Expect(st.StorageClassName).To(Equal(classShared))
		Expect(st.Claims).To(BeEquivalentTo(1))
		Expect(st.AccessMode).To(Equal(string(corev1.ReadWriteMany)))
		Expect(st.Mounts).NotTo(BeEmpty())
		Expect(claims).To(HaveLen(1))

		By("cleanup.volumes Delete: after the run, no pods and no claim are left")
		Eventually(func() int {
			return len(k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items) +
				len(k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(b)).Items)
		}, 2*time.Minute, time.Second).Should(BeZero())

		By("the SLO verdicts: one objective met, the one out of reach missed")
		Expect(k8stest.ConditionTrue(v1alpha1.ConditionSLOMet)(cur)).To(BeFalse())
		verdicts := map[string]v1alpha1.Verdict{}
		for _, s := range cur.Status.SLOs {
			verdicts[s.Name] = s.Verdict
		}
		Expect(verdicts).To(Equal(map[string]v1alpha1.Verdict{"peak-within-reach": "Met", "peak-out-of-reach": "NotMet"}))
	})

	It("serves the benchmark's storagebench_ series on the metrics endpoint to an authorized ServiceAccount token only", func() {
		url := "https://" + metricsTarget() + "/metrics"
		// The manager's serving certificate is self-signed (as the chart's
		// ServiceMonitor says); what is under test is authentication and
		// authorization.
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, see above
		}}
		get := func(token string) (int, string) {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			Expect(err).NotTo(HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			return resp.StatusCode, string(body)
		}

		code, _ := get("")
		Expect(code).To(Equal(http.StatusUnauthorized), "no token")
		code, _ = get(serviceAccountToken(ns, "not-a-reader", false))
		Expect(code).To(Equal(http.StatusForbidden), "a token without the metrics-reader role")

		code, body := get(serviceAccountToken(monitoringNS, promSA, true))
		Expect(code).To(Equal(http.StatusOK))
		var parser expfmt.TextParser
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		ours := map[string]string{"namespace": ns, "benchmark": b.Name, "storage_class": classShared, "profile": "oltp"}
		for _, name := range []string{"storagebench_step_achieved_iops", "storagebench_step_latency_seconds",
			"storagebench_step_offered_iops", "storagebench_peak_iops", "storagebench_run_state", "storagebench_slo_objective_met"} {
			Expect(families).To(HaveKey(name))
			Expect(seriesWith(families[name], ours)).NotTo(BeEmpty(), "%s of %s/%s", name, ns, b.Name)
		}
		Expect(seriesWith(families["storagebench_step_offered_iops"], ours)).To(HaveLen(4), "one per step")
		for _, m := range seriesWith(families["storagebench_step_offered_iops"], ours) {
			k, err := strconv.Atoi(label(m, "step")) // the index, from 0
			Expect(err).NotTo(HaveOccurred())
			Expect(k).To(BeNumerically("<", len(cur.Status.Steps)))
			Expect(m.GetGauge().GetValue()).To(BeEquivalentTo(cur.Status.Steps[k].OfferedIOPS), "step index %d", k)
		}
		peak := seriesWith(families["storagebench_peak_iops"], ours)
		Expect(peak).To(HaveLen(1))
		Expect(peak[0].GetGauge().GetValue()).To(BeEquivalentTo(cur.Status.Summary.PeakIOPS))
	})

	It("is scraped by a real Prometheus whose SLO alert fires for the objective out of reach", func() {
		sel := fmt.Sprintf(`{namespace=%q, benchmark=%q}`, ns, b.Name)
		Eventually(func(g Gomega) {
			v, err := prom.query("storagebench_peak_iops" + sel)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(HaveLen(1))
			g.Expect(float64(v[0].Value)).To(BeEquivalentTo(cur.Status.Summary.PeakIOPS))
			v, err = prom.query(`up{job="storagebench"}`)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).NotTo(BeEmpty())
			g.Expect(float64(v[0].Value)).To(BeEquivalentTo(1), "the scrape succeeds")
			v, err = prom.query("count(storagebench_step_latency_seconds" + sel + ")")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(HaveLen(1))
			g.Expect(float64(v[0].Value)).To(BeEquivalentTo(4*3*4), "4 steps x read/write/all x p50/p90/p99/p99.9")
		}, time.Minute, time.Second).Should(Succeed())

		var firing []model.LabelSet
		Eventually(func(g Gomega) {
			var err error
			firing, err = prom.firing("StorageBenchSLONotMet")
			g.Expect(err).NotTo(HaveOccurred())
			var ours []model.LabelSet
			for _, ls := range firing {
				if hasLabels(ls, map[string]string{"namespace": ns, "benchmark": b.Name}) {
					ours = append(ours, ls)
				}
			}
			g.Expect(ours).To(HaveLen(1), "firing:\n%s", joinLabels(firing))
			g.Expect(string(ours[0]["objective"])).To(Equal("peak-out-of-reach"))
		}, time.Minute, time.Second).Should(Succeed())
	})
})

// seriesWith: the family's series carrying every label of want.
func seriesWith(f *dto.MetricFamily, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		ok := true
		for k, v := range want {
			if label(m, k) != v {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
