package integration

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storagebench/storagebench/internal/backend"
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
