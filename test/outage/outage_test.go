// Package outage stops the real manager for longer than every grace in the
// middle of a run, on a real kube-apiserver, etcd and kube-controller-
// manager (test/harness) with real runners and fio: a manager away (a
// restart, an upgrade, a failover, a crash loop) is never the clients'
// failure. Its specs mostly wait, so `make integration` runs this package
// beside the main integration suite, on a control plane of its own.
package outage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/manager"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/build"
	"github.com/storagebench/storagebench/test/harness"
	"github.com/storagebench/storagebench/test/k8stest"
	"github.com/storagebench/storagebench/test/spectimes"
)

const class = "local"

var (
	cluster *harness.Cluster
	k8s     client.Client
)

func TestOutage(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "outage")
}

// The specs' times, for make test's list of the slowest (test/spectimes).
var _ = ReportAfterSuite("spec times", func(r Report) {
	Expect(spectimes.Record("outage", r)).To(Succeed())
})

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	bin := k8stest.BuildRunner(root, GinkgoT().TempDir())
	cluster, err = harness.Start(harness.Options{
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")},
		Scheme:            controllers.Scheme(),
		Executables:       map[string]string{exchange.RunnerCommand: bin},
	})
	Expect(err).NotTo(HaveOccurred())
	k8s = cluster.Client
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: harness.ProvisionerName}
	Expect(k8s.Create(context.Background(), sc)).To(Succeed())
})

var _ = AfterSuite(func() {
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && cluster != nil {
		cluster.Dump(GinkgoWriter)
	}
})

// startManager runs the operator in this process with the result grace
// and ready timeout given (they size the client Jobs' deadline:
// runDeadline).
func startManager(grace, ready time.Duration) *k8stest.Manager {
	return k8stest.StartManager(cluster.Config, manager.Options{
		MetricsAddr: "0", ProbeAddr: "0", Restartable: true,
		Reconciler: controllers.Reconciler{Jobs: controllers.JobOptions{Image: "storagebench-runner:test"},
			ReadyTimeout: ready, ResultGrace: grace, StartLead: 1500 * time.Millisecond},
	})
}

func newBenchmark(name string, steps []int64, step time.Duration) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "outage-"}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	b := build.Benchmark(ns.Name, name, build.Class(class), build.Shared(), build.Clients(2),
		build.Rates(steps...), build.StepDuration(step))
	Expect(k8s.Create(context.Background(), b)).To(Succeed())
	return b
}

var _ = Describe("A manager away", Ordered, func() {
	It("for 4 minutes in the middle of a step, longer than every grace, then back: the run completes with every step once", func() {
		// A result grace of 45 s, as the integration suite's, and a ready
		// timeout that gives the clients' Jobs a deadline beyond the
		// outage: the clients wait, the manager comes back. 4 minutes is
		// over 5 times that grace and twice the default one (2 minutes).
		// Only the grace (and a verifying step's allowance, not used
		// here) counts from a step's end (run.Decide).
		mgr := startManager(45*time.Second, 15*time.Minute)
		b := newBenchmark("away", []int64{100, 200, 300}, 10*time.Second)
		k8stest.WaitFor(k8s, b, 2*time.Minute, "in step 2", k8stest.StepRunning(1))
		mgr.Stop()
		began := time.Now()
		// Step 2 ends, its results wait in the client ConfigMaps; every
		// deadline that counted from the step's end passes.
		for time.Since(began) < 4*time.Minute {
			Expect(k8stest.Get(k8s, b).Status.Steps).To(HaveLen(1), "nothing is recorded while no manager runs")
			time.Sleep(30 * time.Second)
		}
		mgr = startManager(45*time.Second, 15*time.Minute)
		defer mgr.Stop()
		cur := k8stest.WaitComplete(k8s, b, 3*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(3))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(Equal(int32(k)))
			Expect(s.OfferedIOPS).To(Equal([]int64{100, 200, 300}[k]), "step %d, once", k)
			Expect(s.Clients).To(Equal(int32(2)))
		}
	})

	It("longer than the clients wait: the run ends with the reason that names the manager, and nothing is left behind", func() {
		// A deadline of under two minutes: ready timeout 30 s, then per
		// planned step (2, and the final order) lead, ramp, 5 s and a
		// 20 s grace.
		mgr := startManager(20*time.Second, 30*time.Second)
		b := newBenchmark("gone", []int64{100, 200}, 5*time.Second)
		k8stest.WaitFor(k8s, b, 2*time.Minute, "in step 1", k8stest.StepRunning(0))
		mgr.Stop()
		Eventually(func() int {
			jobs := k8stest.Listed(k8s, b.Namespace, &batchv1.JobList{}, k8stest.OfBenchmark(b))
			failed := 0
			for _, j := range jobs.Items {
				for _, c := range j.Status.Conditions {
					if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && c.Reason == batchv1.JobReasonDeadlineExceeded {
						failed++
					}
				}
			}
			return failed
		}, 5*time.Minute, 2*time.Second).Should(Equal(2), "the clients give up at their Jobs' deadline")
		mgr = startManager(20*time.Second, 30*time.Second)
		defer mgr.Stop()
		cur := k8stest.WaitFor(k8s, b, time.Minute, "failed", k8stest.ConditionTrue(v1alpha1.ConditionFailed))
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(c.Reason).To(Equal(controllers.ReasonManagerUnavailable), c.Message)
		Expect(c.Message).To(ContainSubstring("the manager did not conduct the run"))
		By("nothing is left behind: no client pod runs, the claims are deleted")
		Eventually(func() int {
			running := 0
			for _, p := range k8stest.Listed(k8s, b.Namespace, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items {
				if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
					running++
				}
			}
			return running
		}, time.Minute, time.Second).Should(BeZero())
		Eventually(func() int {
			return len(k8stest.Listed(k8s, b.Namespace, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(b)).Items)
		}, time.Minute, time.Second).Should(BeZero())
	})
})
