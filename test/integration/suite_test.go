// Package integration runs the real manager against a real kube-apiserver,
// etcd and kube-controller-manager (test/harness), with the harness standing
// in for the kubelet: every client pod's real runner command runs as a
// local process driving real fio on a directory (or loop device) that
// stands in for the volume.
package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/manager"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/harness"
	"github.com/storagebench/storagebench/test/k8stest"
	"github.com/storagebench/storagebench/test/promtest"
	"github.com/storagebench/storagebench/test/spectimes"
)

// Storage classes of the suite.
const (
	classLocal   = "local"    // provisioned by the harness
	classNobody  = "unserved" // no provisioner serves it: claims stay Pending
	testBindWait = 15 * time.Second
	// suiteStartLead is the manager's --step-start-lead: the longest first
	// step's lead, which runners that measured their fio start-up shorten.
	suiteStartLead = 1500 * time.Millisecond
)

var (
	cluster *harness.Cluster
	k8s     client.Client
	mgr     *k8stest.Manager
	// harvest and prom are the backend metrics source every manager of
	// the suite reads (--backend-metrics-url), at a 1 s resolution.
	harvest *harvestSource
	prom    *promtest.Server
	// scheduleClock is the schedule controller's clock: specs move it to
	// scheduled times (schedule_test.go).
	scheduleClock = clocktesting.NewFakePassiveClock(time.Now())
	// runKey signs schedules' runs for every manager of the suite, as the
	// run key Secret does for every manager of a cluster.
	runKey = func() *controllers.RunKey {
		k, err := controllers.NewRunKey([]byte("integration-suite-run-key-0123456789"), time.Time{})
		if err != nil {
			panic(err)
		}
		return k
	}()
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "integration")
}

// The specs' times, for make test's list of the slowest (test/spectimes).
var _ = ReportAfterSuite("spec times", func(r Report) {
	Expect(spectimes.Record("integration", r)).To(Succeed())
})

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	bin := k8stest.BuildRunner(root, GinkgoT().TempDir())

	began := time.Now()
	cluster, err = harness.Start(harness.Options{
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")},
		Scheme:            controllers.Scheme(),
		Executables:       map[string]string{exchange.RunnerCommand: bin},
	})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("control plane up in %s\n", time.Since(began).Round(time.Millisecond))
	k8s = cluster.Client
	ctx := context.Background()
	for name, provisioner := range map[string]string{classLocal: harness.ProvisionerName, classNobody: "example.com/nobody"} {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
		Expect(k8s.Create(ctx, sc)).To(Succeed())
	}
	harvest = startHarvestSource()
	prom = startSuitePrometheus(GinkgoT().TempDir(), harvest)
	mgr = startManager()
})

var _ = AfterSuite(func() {
	if mgr != nil {
		mgr.Stop()
	}
	if prom != nil {
		_ = prom.Stop()
	}
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

// On failure, dump what the control plane and the pods said.
var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && cluster != nil {
		cluster.Dump(GinkgoWriter)
	}
})

func managerOptions() manager.Options {
	source, err := controllers.NewBackendMetrics(prom.URL, time.Second, 5*time.Second)
	Expect(err).NotTo(HaveOccurred())
	source.Classes = diskCountersClasses()
	return manager.Options{
		MetricsAddr:   "0",
		ProbeAddr:     "0",
		Restartable:   true,
		ScheduleClock: scheduleClock,
		RunKey:        runKey,
		Reconciler: controllers.Reconciler{
			Jobs:             controllers.JobOptions{Image: "storagebench-runner:test"},
			ClaimBindTimeout: testBindWait,
			ReadyTimeout:     3 * time.Minute,
			StartLead:        suiteStartLead,
			ResultGrace:      45 * time.Second,
			Backend:          source,
		},
	}
}

func startManager() *k8stest.Manager { return k8stest.StartManager(cluster.Config, managerOptions()) }
