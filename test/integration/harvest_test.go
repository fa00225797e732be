package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/backend"
	"github.com/storagebench/storagebench/test/harness"
	"github.com/storagebench/storagebench/test/k8stest"
	"github.com/storagebench/storagebench/test/promtest"
)

// harvestSource stands in for NetApp Harvest's Prometheus exporter: it
// serves the volume series Harvest names (backend.Metrics), labelled as
// Harvest labels them (volume, svm, cluster), with the values specs set.
// The join under test is the manager's, through a real Prometheus that
// scrapes this source every second.
type harvestSource struct {
	gauges map[string]*prometheus.GaugeVec
	addr   string
}

func startHarvestSource() *harvestSource {
	reg := prometheus.NewRegistry()
	h := &harvestSource{gauges: map[string]*prometheus.GaugeVec{}}
	for _, m := range backend.Metrics {
		h.gauges[m] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m, Help: "Harvest's " + m}, []string{"volume", "svm", "cluster"})
		reg.MustRegister(h.gauges[m])
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	h.addr = l.Addr().String()
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go func() { _ = srv.Serve(l) }()
	return h
}

// set gives one volume's series (by metric) their values.
func (h *harvestSource) set(volume, svm string, values map[string]float64) {
	for m, v := range values {
		h.gauges[m].WithLabelValues(volume, svm, "cvo-bench").Set(v)
	}
}

// startSuitePrometheus scrapes the Harvest stand-in every second.
func startSuitePrometheus(dir string, h *harvestSource) *promtest.Server {
	config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
- job_name: harvest
  static_configs: [{targets: [%q]}]
`, h.addr)
	p, err := promtest.Start(filepath.Join(dir, "prometheus"), config, "")
	Expect(err).NotTo(HaveOccurred())
	return p
}

// A source that cannot be reached never changes how a run ends: the run
// completes, and the condition says the storage's figures are missing
// and why, once the manager gave up trying.
var _ = Describe("A manager whose metrics source is unreachable", Serial, func() {
	It("completes the run, and says why its steps have no storage figures", func() {
		bg := context.Background()
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-harvest",
			Annotations: map[string]string{controllers.AnnotationBackendVolumeNames: "persistentVolume"}},
			Provisioner: harness.ProvisionerName}
		Expect(k8s.Create(bg, sc)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(bg, sc) })

		dead, err := promtest.FreeLoopbackAddr() // nothing listens there
		Expect(err).NotTo(HaveOccurred())
		source, err := controllers.NewBackendMetrics("http://"+dead, time.Second, time.Second)
		Expect(err).NotTo(HaveOccurred())
		source.GiveUp, source.Retry = 3*time.Second, time.Second
		mgr.Stop()
		opts := managerOptions()
		opts.Reconciler.Backend = source
		mgr = k8stest.StartManager(cluster.Config, opts)
		defer func() {
			mgr.Stop()
			mgr = startManager()
		}()

		ns := newNamespace()
		b := benchmark(ns, "unreachable", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.StorageClassName = ptr.To(sc.Name)
			b.Spec.Clients.Count = 1
		})
		Expect(k8s.Create(bg, b)).To(Succeed())
		waitComplete(b, 2*time.Minute)
		cur := waitFor(b, time.Minute, "the manager to give up on the source", func(b *v1alpha1.StorageBenchmark) bool {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
			return c != nil && c.Status == metav1.ConditionFalse
		})
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
		Expect(c.Reason).To(Equal(controllers.ReasonBackendUnavailable))
		Expect(c.Message).To(And(ContainSubstring(dead), ContainSubstring("connection refused")))
		Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionComplete)).To(BeTrue(), "the run's outcome is its own")
		for _, st := range cur.Status.Steps {
			Expect(st.Backend).To(BeNil())
		}
	})
})
