package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
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
	reg.MustRegister(diskCounters{start: time.Now().Truncate(time.Millisecond)})
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

// Classes whose volumes the manager reads through their own queries, of
// node-exporter's disk counters (docs/examples): the first at the
// source's one-second scrape, the second as if it were scraped every 10 s,
// too seldom for a 5 s step.
const classDiskCounters, classDiskSlow = "local-disk-counters", "local-disk-slow"

// The disk counters' rates, as diskCounters serves them for every volume
// of those classes.
const (
	diskReadOps, diskWriteOps         = 1200, 300
	diskReadBytes, diskWriteBytes     = diskReadOps * 4096, diskWriteOps * 8192
	diskReadLatency, diskWriteLatency = 200 * time.Microsecond, 700 * time.Microsecond
)

// diskCountersClasses is the manager's --backend-metrics-classes file for
// them: node-exporter's series of the device named by the volume's path.
func diskCountersClasses() map[string]*backend.Template {
	var b strings.Builder
	b.WriteString("classes:\n")
	for class, res := range map[string]string{classDiskCounters: "1s", classDiskSlow: "10s"} {
		sel := `{device="{{base .Path}}"}[{{.Range}}]`
		fmt.Fprintf(&b, `- storageClassName: %s
  resolution: %s
  readOps: rate(node_disk_reads_completed_total%[3]s)
  writeOps: rate(node_disk_writes_completed_total%[3]s)
  readBytes: rate(node_disk_read_bytes_total%[3]s)
  writeBytes: rate(node_disk_written_bytes_total%[3]s)
  readLatency: rate(node_disk_read_time_seconds_total%[3]s) / rate(node_disk_reads_completed_total%[3]s)
  writeLatency: rate(node_disk_write_time_seconds_total%[3]s) / rate(node_disk_writes_completed_total%[3]s)
  samples: count_over_time(node_disk_reads_completed_total%[3]s)
`, class, res, sel)
	}
	classes, err := backend.ParseClasses([]byte(b.String()))
	Expect(err).NotTo(HaveOccurred())
	return classes
}

// diskCounters serves node-exporter's disk counters of every volume of
// the disk-counter classes, under the device name node-exporter would
// give it (its path's last element), growing at the rates above since the
// suite began; each sample is stamped with when it was read, so a rate
// over any window is exact.
type diskCounters struct{ start time.Time }

var diskCounterDescs = map[string]*prometheus.Desc{}

func init() {
	for _, n := range []string{"reads_completed", "writes_completed", "read_bytes", "written_bytes", "read_time_seconds", "write_time_seconds"} {
		diskCounterDescs[n] = prometheus.NewDesc("node_disk_"+n+"_total", "node-exporter's "+n, []string{"device"}, nil)
	}
}

func (diskCounters) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range diskCounterDescs {
		ch <- d
	}
}

func (d diskCounters) Collect(ch chan<- prometheus.Metric) {
	var pvs corev1.PersistentVolumeList
	if k8s == nil || k8s.List(context.Background(), &pvs) != nil {
		return
	}
	now := time.Now().Truncate(time.Millisecond) // Prometheus' precision
	t := now.Sub(d.start).Seconds()
	for _, pv := range pvs.Items {
		if (pv.Spec.StorageClassName != classDiskCounters && pv.Spec.StorageClassName != classDiskSlow) || pv.Spec.HostPath == nil {
			continue
		}
		for n, v := range map[string]float64{
			"reads_completed": diskReadOps * t, "writes_completed": diskWriteOps * t,
			"read_bytes": diskReadBytes * t, "written_bytes": diskWriteBytes * t,
			"read_time_seconds": diskReadOps * t * diskReadLatency.Seconds(), "write_time_seconds": diskWriteOps * t * diskWriteLatency.Seconds(),
		} {
			m := prometheus.MustNewConstMetric(diskCounterDescs[n], prometheus.CounterValue, v, filepath.Base(pv.Spec.HostPath.Path))
			ch <- prometheus.NewMetricWithTimestamp(now, m)
		}
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

// A class Harvest does not report is read through its own queries: the
// step's figures are what the class's series say, and a source scraped
// more seldom than twice a step marks the steps too short.
var _ = Describe("A class read through its own queries", func() {
	bg := context.Background()
	BeforeEach(func() {
		for _, name := range []string{classDiskCounters, classDiskSlow} {
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: harness.ProvisionerName}
			Expect(k8s.Create(bg, sc)).To(Succeed())
			DeferCleanup(func() { _ = k8s.Delete(bg, sc) })
		}
	})
	run := func(class string) *v1alpha1.StorageBenchmark {
		GinkgoHelper()
		b := benchmark(newNamespace(), "own-queries", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.StorageClassName = ptr.To(class)
			b.Spec.Clients.Count = 1
		})
		Expect(k8s.Create(bg, b)).To(Succeed())
		waitComplete(b, 2*time.Minute)
		return waitFor(b, time.Minute, "the backend figures", func(b *v1alpha1.StorageBenchmark) bool {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
			return c != nil && c.Status != metav1.ConditionUnknown
		})
	}

	It("joins node-exporter's counters of the volume's device to every step", func() {
		cur := run(classDiskCounters)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
		Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		v := cur.Status.Storage.Volumes[0]
		Expect(filepath.Base(v.Path)).To(Equal(v.PersistentVolume), "the test bed's volume directory, named after its PV")
		mean := (diskReadOps*diskReadLatency + diskWriteOps*diskWriteLatency) / (diskReadOps + diskWriteOps)
		Expect(cur.Status.Steps).To(HaveLen(2))
		for _, st := range cur.Status.Steps {
			be := st.Backend
			Expect(be).NotTo(BeNil())
			Expect(be.Resolution.Duration).To(Equal(time.Second))
			Expect(be.Samples).To(BeNumerically(">=", 2))
			Expect([]int64{be.ReadIOPS, be.WriteIOPS, be.IOPS, be.BytesPerSecond}).To(Equal([]int64{diskReadOps, diskWriteOps, diskReadOps + diskWriteOps, diskReadBytes + diskWriteBytes}),
				"a counter stamped as it grows has an exact rate over any window")
			Expect(be.ReadLatency.Duration).To(BeNumerically("~", diskReadLatency, time.Nanosecond), "seconds per operation, in µs as Harvest's")
			Expect(be.WriteLatency.Duration).To(BeNumerically("~", diskWriteLatency, time.Nanosecond))
			Expect(be.Latency.Duration).To(BeNumerically("~", mean, time.Nanosecond))
			Expect(be.LatencyGap.Duration).To(Equal(st.Latency.Mean.Duration - be.Latency.Duration))
		}
	})

	It("marks every step too short when the class's source is scraped less often than twice a step", func() {
		cur := run(classDiskSlow)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
		Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
		Expect(c.Reason).To(Equal(controllers.ReasonBackendTooShort))
		Expect(c.Message).To(ContainSubstring("(10s)"))
		for _, st := range cur.Status.Steps {
			Expect(st.Backend).NotTo(BeNil())
			Expect(st.Backend.TooShort).To(BeTrue())
			Expect(st.Backend.Resolution.Duration).To(Equal(10 * time.Second))
			Expect(st.Backend.IOPS).To(BeZero())
		}
	})
})
