package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/grafana"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The chart's dashboard (hack/dashboard writes it) is proven to draw: every
// query of every panel and variable, as Grafana would send it for one
// namespace, returns series from the suite's Prometheus once that namespace
// holds what the panels show: a benchmark on the capped class (its steps
// carry the storage's figures), the same benchmark deleted and run again
// under its name (the history's previous run), and a schedule's run.
var _ = Describe("The chart's Grafana dashboard", func() {
	It("draws every panel and variable from real series", func() {
		ctx := context.Background()
		ns := newNamespace("dash")
		stop := keepVolumesFree(classQoS)
		defer stop()

		By("a schedule's run, on csi-local, while the benchmark runs")
		s := dashboardSchedule(ns)
		defer deleteSchedule(s)

		By("a benchmark on the capped class, joined with the storage's figures")
		b := dashboardBenchmark(ns)
		apply(b)
		first := k8stest.WaitComplete(k8s, b, 3*time.Minute)
		waitJoined(b)

		By("the same benchmark again under its name, once the rules remembered the first (the history's previous run)")
		// The chart's recording rules run once a minute: the first run must
		// be seen complete by one evaluation before it is deleted.
		Eventually(func() (model.Vector, error) {
			return prom.query(fmt.Sprintf(`storagebench:performance_at_target_iops:last_run{namespace=%q}`, ns))
		}, 2*time.Minute, 2*time.Second).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, first)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.StorageBenchmark{}))
		}, time.Minute, time.Second).Should(BeTrue(), "the first run is gone")
		apply(dashboardBenchmark(ns))
		k8stest.WaitComplete(k8s, b, 3*time.Minute)
		waitJoined(b)
		waitRuns(s, 1, time.Time{})
		deleteSchedule(s)

		By("every query of the dashboard returns series")
		Eventually(func(g Gomega) {
			for _, q := range dashboardQueries() {
				n, err := runDashboardQuery(q, ns)
				g.Expect(err).NotTo(HaveOccurred(), q.Where)
				g.Expect(n).To(BeNumerically(">", 0), "%s: %s returned no series", q.Where, q.Expr)
			}
		}, 2*time.Minute, 5*time.Second).Should(Succeed())
		AddReportEntry("dashboard", fmt.Sprintf("%d queries, each with series", len(dashboardQueries())))
	})
})

func dashboardBenchmark(ns string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: dash, namespace: %s}
spec:
  storage: {storageClassName: %s, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}
  clients: {count: 1, jobsPerClient: 1}
  workload: {profile: oltp, workingSetPerClient: 256Mi}
  load:
    rate: {unit: IOPS, steps: [500, 1000]}
    stepDuration: 5s
    rampTime: 1s
  analysis: {latencyTarget: 5ms}
  slo:
    objectives:
    - name: iops-at-5ms
      iopsAtLatency: {metric: p99, operation: read, maxLatency: 5ms, minIOPS: 400}
  cleanup: {volumes: Delete}
`, ns, classQoS)
	var b v1alpha1.StorageBenchmark
	Expect(yaml.UnmarshalStrict([]byte(doc), &b)).To(Succeed())
	return &b
}

func dashboardSchedule(ns string) *v1alpha1.StorageBenchmarkSchedule {
	GinkgoHelper()
	doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmarkSchedule
metadata: {name: dash-nightly, namespace: %s}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Forbid
  template:
    spec:
      storage: {storageClassName: %s, size: 1Gi}
      clients: {count: 1, jobsPerClient: 1}
      workload: {profile: rand-read, workingSetPerClient: 32Mi}
      load:
        rate: {unit: IOPS, steps: [100]}
        stepDuration: 5s
        rampTime: 1s
`, ns, classCSI)
	return applySchedule(doc)
}

// waitJoined waits for the storage's figures of b's steps and returns b
// with them.
func waitJoined(b *v1alpha1.StorageBenchmark) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	cur := k8stest.WaitFor(k8s, b, time.Minute, "the storage's figures", func(b *v1alpha1.StorageBenchmark) bool {
		c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
		return c != nil && c.Status != metav1.ConditionUnknown
	})
	c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
	Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s", c.Reason, c.Message)
	return cur
}

// dashboardQueries reads every query of the chart's dashboard.
func dashboardQueries() []grafana.Query {
	GinkgoHelper()
	d, err := grafana.Load(filepath.Join(root, "charts", "storagebench", "files", "dashboard.json"))
	Expect(err).NotTo(HaveOccurred())
	qs, err := d.Queries()
	Expect(err).NotTo(HaveOccurred())
	Expect(len(qs)).To(BeNumerically(">=", 20), "the dashboard's queries")
	return qs
}

// run sends the query as Grafana would with the namespace chosen and every
// benchmark: an instant query, or a range over the last 15 minutes at the
// panel's step. It returns the number of series.
func runDashboardQuery(q grafana.Query, ns string) (int, error) {
	expr := strings.NewReplacer(`"$namespace"`, fmt.Sprintf("%q", ns), `"$benchmark"`, `".*"`).Replace(q.Expr)
	if strings.Contains(expr, "$") && !strings.Contains(expr, `"$1"`) {
		return 0, fmt.Errorf("%s: a variable left in %s", q.Where, expr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := time.Now()
	if !q.Range {
		v, _, err := prom.api.Query(ctx, expr, now)
		if err != nil {
			return 0, err
		}
		return len(v.(model.Vector)), nil
	}
	v, _, err := prom.api.QueryRange(ctx, expr, promv1.Range{Start: now.Add(-15 * time.Minute), End: now, Step: 15 * time.Second})
	if err != nil {
		return 0, err
	}
	return len(v.(model.Matrix)), nil
}
