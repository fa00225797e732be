package e2e

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The rates the loop devices of local-block sustain, per corner.
var cornerRates = map[string][]int64{
	"corner-seq-read":   {8, 16},    // MiB/s of 64 KiB reads
	"corner-seq-write":  {4, 8},     // MiB/s of 64 KiB writes
	"corner-rand-read":  {400, 800}, // IOPS of 8 KiB reads
	"corner-rand-write": {200, 400}, // IOPS of 8 KiB writes
}

var _ = Describe("The four corners sample", func() {
	It("runs each corner on PerClient raw block volumes to Complete, one after the other", func() {
		ns := newNamespace("corners")
		samples := k8stest.BenchmarksIn(filepath.Join(root, "config", "samples", "four-corners-block.yaml"))
		Expect(samples).To(HaveLen(4))
		Eventually(freeVolumes(classBlock), time.Minute, time.Second).Should(BeNumerically(">=", 2),
			"local-block PVs Available; hack/cluster/up.sh makes STORAGEBENCH_BLOCK_PVS (2) and nothing else may hold them")
		for _, b := range samples {
			By(b.Name)
			// Scaled to this machine: 2 clients with a 1 GiB loop device
			// each, two steps of 5 s.
			b.Namespace = ns
			Expect(b.Spec.Storage.VolumeMode).To(Equal(corev1.PersistentVolumeBlock))
			Expect(b.Spec.Storage.Sharing).To(Equal(v1alpha1.SharingPerClient))
			b.Spec.Storage.StorageClassName = ptr.To(classBlock)
			b.Spec.Storage.Size = resource.MustParse("1Gi")
			b.Spec.Clients.Count, b.Spec.Clients.JobsPerClient = 2, 1
			b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse("512Mi"))
			Expect(cornerRates).To(HaveKey(b.Name))
			b.Spec.Load.Rate.Steps = cornerRates[b.Name]
			b.Spec.Load.StepDuration = metav1.Duration{Duration: 5 * time.Second}
			b.Spec.Load.RampTime = &metav1.Duration{Duration: time.Second}
			apply(b)
			cur := k8stest.WaitComplete(k8s, b, 4*time.Minute)

			expectCPUHeadroom(cur)
			Expect(cur.Status.Storage.VolumeMode).To(Equal(string(corev1.PersistentVolumeBlock)))
			Expect(cur.Status.Storage.Claims).To(BeEquivalentTo(2))
			Expect(cur.Status.Steps).To(HaveLen(2))
			reads := cur.Status.Workload.ReadPercent == 100
			for _, s := range cur.Status.Steps {
				Expect(s.Clients).To(BeEquivalentTo(2))
				k8stest.ExpectTracksOffered(s, 0.05)
				active, idle := s.Read, s.Write
				if !reads {
					active, idle = s.Write, s.Read
				}
				Expect(active).NotTo(BeNil())
				Expect(active.IOPS).To(BeNumerically(">", 0))
				k8stest.ExpectOrderedPercentiles(active.Latency)
				if idle != nil {
					Expect(idle.IOPS).To(BeZero())
				}
			}
			Eventually(func() []corev1.PersistentVolumeClaim {
				return k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(b)).Items
			}, 2*time.Minute, time.Second).Should(BeEmpty(), "cleanup.volumes Delete")
			Eventually(freeVolumes(classBlock), 2*time.Minute, time.Second).Should(BeNumerically(">=", 2))
		}
	})
})
