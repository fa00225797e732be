package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
	"github.com/storagebench/storagebench/test/k8stest"
)

var _ = Describe("Failure handling", func() {
	ctx := context.Background()

	It("fails at once, creating nothing, when the StorageClass does not exist", func() {
		ns := newNamespace()
		b := benchmark(ns, "noclass", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.StorageClassName = ptr.To("does-not-exist")
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		waitFailed(b, 30*time.Second, controllers.ReasonStorageClassNotFound, `StorageClass "does-not-exist" not found`)
		Consistently(func() int { return len(claimsOf(b)) + len(jobsOf(b)) }, 3*time.Second).Should(BeZero())
	})

	It("fails when a claim is not bound in time, stopping the clients and deleting the claims", func() {
		ns := newNamespace()
		b := benchmark(ns, "unbound", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.StorageClassName = ptr.To(classNobody)
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(3))
		waitFailed(b, testBindWait+30*time.Second, controllers.ReasonClaimNotBound, "is not bound")
		noPodsLeft(b, 30*time.Second)
		for _, j := range jobsOf(b) {
			Expect(j.Spec.Suspend).To(HaveValue(BeTrue()), "job %s", j.Name)
		}
		Eventually(func() []corev1.PersistentVolumeClaim { return claimsOf(b) }, 30*time.Second).Should(BeEmpty())
	})

	It("surfaces fio's error text when a client fails", func() {
		ns := newNamespace()
		dir := tinyVolume(ns, "tiny")
		DeferCleanup(func() { _ = exec.Command("umount", dir).Run() })
		b := benchmark(ns, "enospc", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 1
			b.Spec.Storage.StorageClassName = ptr.To("tiny-" + ns)
			b.Spec.Storage.Size = resource.MustParse("1Mi")
			b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingPerClient, ""
			b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse("1Mi"))
			b.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cur := waitFailed(b, time.Minute, controllers.ReasonClientFailed, "No space left on device")
		Expect(cur.Status.Steps).To(BeEmpty())
		noPodsRunning(b, 30*time.Second)
	})

	It("fails with ClientLost when a client pod is deleted mid-step, keeping finished steps", func() {
		ns := newNamespace()
		b := benchmark(ns, "podgone", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 2
			b.Spec.Load.Rate.Steps = []int64{100, 200, 300}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		waitFor(b, 2*time.Minute, "in step 1", func(c *v1alpha1.StorageBenchmark) bool { return len(c.Status.Steps) == 1 })
		time.Sleep(3 * time.Second) // inside step 1's measurement
		pods := listed(ns, &corev1.PodList{}, client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelClient: "1"}).Items
		Expect(pods).To(HaveLen(1))
		Expect(k8s.Delete(ctx, &pods[0])).To(Succeed())
		cur := waitFailed(b, time.Minute, controllers.ReasonClientLost, "client 1")
		Expect(cur.Status.Steps).NotTo(BeEmpty(), "step 0 must be kept")
		Expect(cur.Status.Steps[0].Clients).To(BeEquivalentTo(2))
		noPodsRunning(b, time.Minute)
	})

	It("removes pods and follows the volume policy when a running benchmark is deleted", func() {
		ns := newNamespace()
		del := benchmark(ns, "del", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 2 })
		keep := benchmark(ns, "keep", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 2
			b.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
		})
		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			Expect(k8s.Create(ctx, b)).To(Succeed())
		}
		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			waitFor(b, 2*time.Minute, "running", func(c *v1alpha1.StorageBenchmark) bool { return c.Status.CurrentStep != nil })
			Expect(k8s.Delete(ctx, b, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		}
		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			noPodsLeft(b, time.Minute)
			Eventually(func() int {
				return len(jobsOf(b)) + len(listed(ns, &corev1.ConfigMapList{}, ofBenchmark(b)).Items)
			}, time.Minute).Should(BeZero(), "jobs and ConfigMaps of %s", b.Name)
		}
		Eventually(func() []corev1.PersistentVolumeClaim { return claimsOf(del) }, time.Minute).Should(BeEmpty())
		Consistently(func() int { return len(claimsOf(keep)) }, 3*time.Second).Should(Equal(1))
	})

	It("deletes a finished benchmark after its TTL", func() {
		ns := newNamespace()
		b := benchmark(ns, "ttl", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 1
			b.Spec.Load.Rate.Steps = []int64{100}
			b.Spec.Cleanup.TTLSecondsAfterFinished = ptr.To[int32](2)
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func() bool {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.StorageBenchmark{})
			return apierrors.IsNotFound(err)
		}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue())
	})
})

var _ = Describe("A manager restart mid-step", Serial, func() {
	It("continues the run and loses no finished step", func() {
		ns := newNamespace()
		b := benchmark(ns, "restart", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 2
			b.Spec.Load.Rate.Steps = []int64{100, 200, 300}
		})
		Expect(k8s.Create(ctx(), b)).To(Succeed())
		waitFor(b, 2*time.Minute, "in step 1", k8stest.StepRunning(1))
		mgr.Stop()
		// Step 1 ends while no manager runs; its results wait in the
		// client ConfigMaps.
		time.Sleep(b.Spec.Load.StepDuration.Duration + 4*time.Second)
		Expect(get(b).Status.Steps).To(HaveLen(1))
		mgr = startManager()
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(3))
		for k, s := range cur.Status.Steps {
			Expect(s.OfferedIOPS).To(Equal([]int64{100, 200, 300}[k]))
			Expect(s.Clients).To(BeEquivalentTo(2))
		}
	})
})

func ctx() context.Context { return context.Background() }

// tinyVolume makes a 2 MiB tmpfs without a free inode and a StorageClass
// with one static PersistentVolume of 1 MiB on it: a working set of 1 MiB
// fits the free space the runner checks, but fio runs out of space
// creating its file.
func tinyVolume(ns, name string) string {
	dir := GinkgoT().TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,nr_inodes=1", name, dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	class := "tiny-" + ns
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner"}
	Expect(k8s.Create(ctx(), sc)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx(), sc) })
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
		},
	}
	Expect(k8s.Create(ctx(), pv)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx(), pv) })
	Expect(os.Chmod(dir, 0o777)).To(Succeed())
	return dir
}

var _ = Describe("A manager restarted with its status wiped", Serial, func() {
	// wipe stops the manager, empties the benchmark's status and starts
	// the manager again: all it has to go on are the children.
	wipe := func(b *v1alpha1.StorageBenchmark) {
		GinkgoHelper()
		mgr.Stop()
		cur := get(b)
		cur.Status = v1alpha1.StorageBenchmarkStatus{}
		Expect(k8s.Status().Update(ctx(), cur)).To(Succeed())
		Expect(get(b).Status.Steps).To(BeEmpty())
		mgr = startManager()
	}
	It("rebuilds mid-step, finishes without losing or repeating a step, and rebuilds the ended status byte for byte", func() {
		ns := newNamespace()
		b := benchmark(ns, "wiped", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Clients.Count = 2
			b.Spec.Load.Rate.Steps = []int64{100, 200, 300}
			// Retained claims keep the storage observable after the run.
			b.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
			b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{{Name: "peak", PeakIOPS: ptr.To[int64](50)}}}
		})
		Expect(k8s.Create(ctx(), b)).To(Succeed())

		By("wiped in step 1: step 0 comes back from its ConfigMap, and the run goes on")
		waitFor(b, 2*time.Minute, "in step 1", k8stest.StepRunning(1))
		wipe(b)
		rebuilt := waitFor(b, time.Minute, "rebuilt", func(cur *v1alpha1.StorageBenchmark) bool { return len(cur.Status.Steps) >= 1 })
		Expect(rebuilt.Status.StartTime).NotTo(BeNil())
		cur := waitComplete(b, 2*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(3))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.OfferedIOPS).To(Equal([]int64{100, 200, 300}[k]))
			agg := stepAggregate(b, k)
			Expect(s.Read.IOs).To(BeEquivalentTo(agg.Read.IOs), "step %d", k)
			Expect(s.Write.IOs).To(BeEquivalentTo(agg.Write.IOs), "step %d", k)
		}
		Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionSLOMet)).To(BeTrue())

		By("the storage's control-plane times survived the rebuild mid-step, to be compared after the end")
		Expect(cur.Status.Storage.Provisioning).NotTo(BeNil())
		Expect(cur.Status.Storage.Provisioning.Count).To(Equal(cur.Status.Storage.Claims), "one per claim")
		Expect(cur.Status.Storage.Attach).NotTo(BeNil())
		Expect(cur.Status.Storage.Attach.Count).To(BeEquivalentTo(b.Spec.Clients.Count), "one per client pod")

		By("wiped after the end: the same status, byte for byte")
		// Let the manager settle (finish, cleanup) before the snapshot.
		Eventually(func() bool {
			rv := get(b).ResourceVersion
			time.Sleep(2 * time.Second)
			return get(b).ResourceVersion == rv
		}, time.Minute).Should(BeTrue())
		before, err := json.Marshal(get(b).Status)
		Expect(err).NotTo(HaveOccurred())
		completedRuns := testutil.ToFloat64(sbmetrics.RunsCompleted)
		wipe(b)
		after := waitComplete(b, time.Minute)
		got, err := json.Marshal(after.Status)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal(string(before)))
		Expect(after.Status.Storage.Attach).NotTo(BeNil())
		for _, p := range listed(ns, &corev1.PodList{}, ofBenchmark(b)).Items {
			for _, c := range p.Status.Conditions {
				Expect(c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue).To(BeFalse(),
					"pod %s still ready to start: the rebuilt attach may not come from the plan's record", p.Name)
			}
		}

		By("the rebuilt ending is neither counted nor announced again")
		Expect(testutil.ToFloat64(sbmetrics.RunsCompleted)).To(Equal(completedRuns))
		Consistently(func() int32 {
			var n int32
			for _, e := range listed(ns, &corev1.EventList{}, nil).Items {
				if e.InvolvedObject.Name == b.Name && e.Reason == controllers.EventCompleted {
					n += max(e.Count, 1)
				}
			}
			return n
		}, 5*time.Second).Should(BeEquivalentTo(1))
	})
})
