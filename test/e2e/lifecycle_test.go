package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
	"github.com/storagebench/storagebench/test/k8stest"
)

// small is a small OLTP benchmark on csi-local: 2 clients with a volume
// each, the given rate steps.
func small(ns, name string, stepDuration time.Duration, rates ...int64) *v1alpha1.StorageBenchmark {
	return build.Benchmark(ns, name, build.Typed(), build.Class(classCSI), build.Clients(2), build.WorkingSet("64Mi"),
		build.Rates(rates...), build.StepDuration(stepDuration))
}

var _ = Describe("Admission", func() {
	DescribeTable("kubectl apply refuses an invalid benchmark with its validation message",
		func(mutate func(*v1alpha1.StorageBenchmark), field, message string) {
			ns := newNamespace("invalid")
			b := small(ns, "invalid", 10*time.Second, 100, 200)
			mutate(b)
			_, stderr, err := kubectl(manifest(b), "apply", "-f", "-")
			Expect(err).To(HaveOccurred(), "kubectl apply must fail")
			Expect(stderr).To(ContainSubstring(`The StorageBenchmark "invalid" is invalid`))
			Expect(stderr).To(ContainSubstring(field))
			Expect(stderr).To(ContainSubstring(message))
			err = k8s.Get(context.Background(), keyOf(ns, b.Name), &v1alpha1.StorageBenchmark{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing was created")
		},
		Entry("a shared ReadWriteOnce volume for 3 clients", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode, b.Spec.Clients.Count = v1alpha1.SharingShared, corev1.ReadWriteOnce, 3
		}, "spec.storage.accessMode", "storage.sharing Shared with more than one client needs storage.accessMode ReadWriteMany"),
		Entry("rate steps not increasing", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Load.Rate.Steps = []int64{200, 100}
		}, "spec.load.rate.steps", "load.rate.steps must be strictly increasing"),
		Entry("an unknown profile", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Workload.Profile = "oltpp"
		}, "spec.workload.profile", "Unsupported value"),
	)
})

var _ = Describe("Deleting a running benchmark", func() {
	It("removes its pods, Jobs and ConfigMaps, and its claims as cleanup.volumes says", func() {
		ctx := context.Background()
		ns := newNamespace("delete")
		del := small(ns, "deleted", time.Minute, 100, 200, 300)
		keep := small(ns, "retained", time.Minute, 100, 200, 300)
		keep.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			apply(b)
		}
		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			k8stest.WaitFor(k8s, b, 3*time.Minute, "running step 1", k8stest.StepRunning(0))
			Expect(k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items).To(HaveLen(2))
		}
		var volumes []string
		for _, c := range k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, nil).Items {
			volumes = append(volumes, c.Spec.VolumeName)
		}
		Expect(volumes).To(HaveLen(4))

		_, stderr, err := kubectl("", "-n", ns, "delete", "storagebenchmark", del.Name, keep.Name, "--wait=true")
		Expect(err).NotTo(HaveOccurred(), stderr)

		for _, b := range []*v1alpha1.StorageBenchmark{del, keep} {
			Eventually(func() int {
				return len(k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items) +
					len(k8stest.Listed(k8s, ns, &batchv1.JobList{}, k8stest.OfBenchmark(b)).Items) +
					len(k8stest.Listed(k8s, ns, &corev1.ConfigMapList{}, k8stest.OfBenchmark(b)).Items)
			}, 2*time.Minute, time.Second).Should(BeZero(), "pods, Jobs and ConfigMaps of %s", b.Name)
		}
		By("Delete: the claims and their volumes are gone; Retain: the claims stay, bound")
		Eventually(func() []corev1.PersistentVolumeClaim {
			return k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(del)).Items
		}, 2*time.Minute, time.Second).Should(BeEmpty())
		kept := k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(keep)).Items
		Expect(kept).To(HaveLen(2))
		for _, c := range kept {
			Expect(c.Status.Phase).To(Equal(corev1.ClaimBound))
			Expect(c.DeletionTimestamp).To(BeNil())
		}
		Eventually(func() int {
			n := 0
			for _, v := range volumes {
				err := k8s.Get(ctx, client.ObjectKey{Name: v}, &corev1.PersistentVolume{})
				if err == nil {
					n++
				}
			}
			return n
		}, 2*time.Minute, time.Second).Should(Equal(2), "the deleted benchmark's two volumes are deleted, the retained two are not")
	})
})

// managerPods are the manager's pods (the Deployment's selector), those
// being deleted included.
func managerPods() []corev1.Pod {
	GinkgoHelper()
	var d appsv1.Deployment
	Expect(k8s.Get(context.Background(), keyOf(systemNS, managerDeploy), &d)).To(Succeed())
	return k8stest.Listed(k8s, systemNS, &corev1.PodList{}, d.Spec.Selector.MatchLabels).Items
}

// settledManagerPod waits until the manager's Deployment has one pod, Ready
// and not being deleted, and returns it. A helm upgrade that changed the
// pod template (a new image or policy), or a node taken away, leaves the
// old pod Terminating for a while after the new one is Ready.
func settledManagerPod() corev1.Pod {
	GinkgoHelper()
	var pod corev1.Pod
	Eventually(func(g Gomega) {
		pods := managerPods()
		g.Expect(pods).To(HaveLen(1), "the manager's pods")
		g.Expect(pods[0].DeletionTimestamp).To(BeNil(), "pod %s is being deleted", pods[0].Name)
		g.Expect(isReady(pods[0])).To(BeTrue(), "pod %s Ready", pods[0].Name)
		pod = pods[0]
	}, 3*time.Minute, time.Second).Should(Succeed())
	return pod
}

// A manager upgraded in the middle of a run, as an operator upgrades it:
// helm upgrade to another manager image (the same binary under another
// image configuration, so another image ID: the kubelet really starts a new
// container from it), while a benchmark runs.
var _ = Describe("A helm upgrade to a new manager image in the middle of a run", func() {
	It("replaces the manager pod, and the run completes with every step once", func() {
		dir := clusterDir()
		tag := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, "images.tag")))))
		images := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, "images.dir")))))
		upgraded := tag + "-upgrade"
		By("deriving image localhost/storagebench-manager:" + upgraded)
		tmp := GinkgoT().TempDir()
		layout := filepath.Join(tmp, "oci")
		run("skopeo", "copy", "docker-archive:"+filepath.Join(images, "manager.tar")+":localhost/storagebench-manager:"+tag, "oci:"+layout+":upgrade")
		run("umoci", "config", "--image", layout+":upgrade", "--config.label", "storagebench.io/e2e-upgrade="+time.Now().UTC().Format(time.RFC3339Nano))
		archive := filepath.Join(tmp, "manager-upgrade.tar")
		run("skopeo", "copy", "oci:"+layout+":upgrade", "docker-archive:"+archive+":localhost/storagebench-manager:"+upgraded)
		run("ctr", "--address", filepath.Join(dir, "containerd", "containerd.sock"), "-n", "k8s.io", "images", "import", archive)

		ns := newNamespace("upgrade")
		b := small(ns, "upgraded", 10*time.Second, 150, 300, 450, 600, 750)
		apply(b)
		k8stest.WaitFor(k8s, b, 3*time.Minute, "running step 2", k8stest.StepRunning(1))
		old := settledManagerPod()
		helmUpgrade := func(imageTag string) {
			GinkgoHelper()
			run(filepath.Join(root, "bin", "helm"), "upgrade", "storagebench", filepath.Join(root, "charts", "storagebench"),
				"--kubeconfig", kubeconfig, "--namespace", systemNS, "--reuse-values", "--set", "image.tag="+imageTag, "--wait", "--timeout", "3m")
		}
		helmUpgrade(upgraded)
		defer func() {
			helmUpgrade(tag)
			settledManagerPod()
		}()
		fresh := settledManagerPod()
		Expect(fresh.Name).NotTo(Equal(old.Name))
		Expect(fresh.Spec.Containers[0].Image).To(HaveSuffix(":" + upgraded))
		Expect(fresh.Status.ContainerStatuses[0].ImageID).NotTo(Equal(old.Status.ContainerStatuses[0].ImageID), "another image")
		AddReportEntry("upgrade", fmt.Sprintf("manager pod %s (%s) replaced by %s (%s) while step %d ran",
			old.Name, old.Status.ContainerStatuses[0].ImageID, fresh.Name, fresh.Status.ContainerStatuses[0].ImageID, *k8stest.Get(k8s, b).Status.CurrentStep+1))

		cur := k8stest.WaitComplete(k8s, b, 4*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(5))
		for k, s := range cur.Status.Steps {
			Expect(s.Index).To(BeEquivalentTo(k))
			Expect(s.OfferedIOPS).To(Equal([]int64{150, 300, 450, 600, 750}[k]), "step %d, once", k)
			Expect(s.Interrupted).To(BeFalse())
		}
		Expect(cur.Status.Progress).To(Equal("5/5"))
	})
})

func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}
