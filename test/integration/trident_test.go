package integration

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/backend"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/trident"
	"github.com/storagebench/storagebench/test/harness"
)

// Trident is not installable here (its module is not served), so these
// specs use Trident-shaped classes, PersistentVolumes (CSI driver
// csi.trident.netapp.io with Trident's volume attributes) and Trident's
// custom resources, written from Trident's documented schema
// (testdata/trident). The harness serves the CSI volumes from directories.
var _ = Describe("Trident awareness", Ordered, func() {
	const (
		ontapUUID = "5b1f0b7e-2c5d-4c1e-9a43-6e0f7d3a9c21"
		ontapPV   = "pvc-8d3c2a61-5e4f-4b7a-9c10-3f2e1d0c9b8a"
		gcnvUUID  = "0c9e4b3a-7f21-4e8d-b5a6-2d1c8e7f6a54"
		gcnvPV    = "pvc-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	)
	bg := context.Background()

	classes := map[string]map[string]string{
		"cvo-nas":         {"backendType": "ontap-nas", "csi.storage.k8s.io/node-stage-secret-name": "must-not-be-recorded"},
		"cvo-nas-economy": {"backendType": "ontap-nas-economy"},
		"cvo-san":         {"backendType": "ontap-san"},
		// Trident reads trident.netapp.io/backendType as backendType.
		"cvo-nas-prefixed": {"trident.netapp.io/backendType": "ontap-nas", "trident.netapp.io/selector": "performance!=standard"},
		// Names no driver: the backends its selector reaches say which.
		"gcnv-premium": {"selector": "performance=premium"},
		"gcnv-san":     {"backendType": "google-cloud-netapp-volumes-san"},
	}
	BeforeAll(func() {
		for name, params := range classes {
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: trident.Provisioner,
				Parameters: params, MountOptions: []string{"nfsvers=3"}}
			Expect(k8s.Create(bg, sc)).To(Succeed())
			DeferCleanup(func() { _ = k8s.Delete(bg, sc) })
		}
	})

	It("records a Trident volume's CSI attributes on a cluster without Trident's CRDs", func() {
		ns := newNamespace()
		b := benchmark(ns, "nocrds", func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.StorageClassName = ptr.To("cvo-nas")
			b.Spec.Clients.Count = 2
			b.Spec.Load.Rate.Steps = []int64{100}
		})
		tridentPV("pvc-nocrds", b, "20Gi", ontapUUID, "trident_pvc_nocrds")
		Expect(k8s.Create(bg, b)).To(Succeed())
		cur := waitComplete(b, 2*time.Minute)
		s := cur.Status.Storage
		Expect(s.Provisioner).To(Equal(trident.Provisioner))
		Expect(s.Driver).To(Equal("ontap-nas"))
		Expect(s.Parameters).To(Equal(map[string]string{"backendType": "ontap-nas"}), "secret references are never recorded")
		Expect(s.MountOptions).To(Equal([]string{"nfsvers=3"}))
		Expect(s.Volumes).To(HaveLen(1))
		v := s.Volumes[0]
		Expect(v.PersistentVolume).To(Equal("pvc-nocrds"))
		Expect(v.BackendUUID).To(Equal(ontapUUID))
		Expect(v.InternalName).To(Equal("trident_pvc_nocrds"))
		Expect(v.Protocol).To(Equal("file"))
		Expect(v.Capacity.String()).To(Equal("20Gi"))
		Expect(v.Pool).To(BeEmpty())
		Expect(s.Backend).To(BeNil())
		Expect(s.Mounts).NotTo(BeEmpty(), "the runners report what /proc/mounts shows")
		Expect(s.Mounts[0].Clients).To(BeEquivalentTo(2))
	})

	Context("with Trident's CRDs and objects installed", func() {
		BeforeAll(installTrident)

		DescribeTable("refuses, before creating anything, what the driver cannot serve",
			func(class string, mutate func(*v1alpha1.StorageBenchmark), msg string) {
				ns := newNamespace()
				b := benchmark(ns, "refused", func(b *v1alpha1.StorageBenchmark) {
					b.Spec.Storage.StorageClassName = ptr.To(class)
					mutate(b)
				})
				Expect(k8s.Create(bg, b)).To(Succeed())
				waitFailed(b, 30*time.Second, controllers.ReasonUnsupportedStorage, msg)
				Consistently(func() int { return len(claimsOf(b)) + len(jobsOf(b)) }, 2*time.Second).Should(BeZero())
			},
			Entry("a Filesystem volume shared by 3 clients on ontap-san", "cvo-san", func(*v1alpha1.StorageBenchmark) {}, "ontap-nas"),
			Entry("a raw Block volume on ontap-nas", "cvo-nas", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock
			}, "ontap-san"),
			Entry("a raw Block volume on a class naming ontap-nas with Trident's prefix", "cvo-nas-prefixed", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock
			}, "ontap-san"),
			Entry("a raw Block volume on a class naming no driver whose selector reaches only NAS pools", "gcnv-premium", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock
			}, "no backend it can select serves volumeMode Block: gcnv-europe-west6 (google-cloud-netapp-volumes)"),
			Entry("ReadWriteMany Filesystem on google-cloud-netapp-volumes-san", "gcnv-san", func(*v1alpha1.StorageBenchmark) {}, "google-cloud-netapp-volumes-san"),
		)

		It("warns on an economy driver, as a condition and an event", func() {
			ns := newNamespace()
			b := benchmark(ns, "economy", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To("cvo-nas-economy")
			})
			Expect(k8s.Create(bg, b)).To(Succeed())
			cur := waitFor(b, 30*time.Second, "warned", conditionTrue(v1alpha1.ConditionStorageWarning))
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStorageWarning)
			Expect(c.Reason).To(ContainSubstring(trident.ReasonSharedFlexVol))
			Expect(c.Message).To(ContainSubstring("ontap-nas-economy"))
			Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionFailed)).To(BeFalse())
			Eventually(func() []string {
				var reasons []string
				for _, e := range listed(ns, &corev1.EventList{}, nil).Items {
					if e.Type == corev1.EventTypeWarning {
						reasons = append(reasons, e.Reason)
					}
				}
				return reasons
			}, 30*time.Second).Should(ContainElement(controllers.EventStorageWarning))
		})

		It("records an ONTAP volume's tiering policy from its backend's defaults, and the protocol", func() {
			ns := newNamespace()
			b := benchmark(ns, "ontap", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To("cvo-nas-prefixed")
				b.Spec.Clients.Count = 1
				b.Spec.Load.Rate.Steps = []int64{100}
			})
			tridentPV(ontapPV, b, "20Gi", ontapUUID, "trident_pvc_8d3c2a61_5e4f_4b7a_9c10_3f2e1d0c9b8a")
			Expect(k8s.Create(bg, b)).To(Succeed())
			cur := waitComplete(b, 2*time.Minute)
			s := cur.Status.Storage
			Expect(s.Driver).To(Equal("ontap-nas"), "from the prefixed parameter")
			Expect(s.Parameters).To(HaveKeyWithValue("trident.netapp.io/backendType", "ontap-nas"))
			v := s.Volumes[0]
			Expect(v.Pool).To(Equal("aggr1"))
			Expect(v.QoSPolicy).To(Equal("bench-qos"))
			Expect(v.TieringPolicy).To(Equal("none"), "the TridentVolume has none: the backend's defaults say")
			Expect(s.Backend).NotTo(BeNil())
			Expect(s.Backend.Protocol).To(Equal("nfs"))
			Expect(s.Entitlement).To(BeNil(), "an ONTAP volume has no service level, whatever the selector")
		})

		It("joins Harvest's series of the volume to every step, and of no other volume", func() {
			ns := newNamespace()
			const internal = "trident_pvc_harvest_join"
			all := func(v float64) map[string]float64 {
				out := map[string]float64{}
				for _, m := range backend.Metrics {
					out[m] = v
				}
				return out
			}
			harvest.set(internal, "svm_cvo_bench", map[string]float64{
				backend.ReadOps: 1500, backend.WriteOps: 500, backend.ReadData: 1500 * 8192, backend.WriteData: 500 * 8192,
				backend.ReadLatency: 250, backend.WriteLatency: 650})
			// The same name in another SVM, and a name that only begins
			// with it: neither is the benchmarked volume.
			harvest.set(internal, "svm_other", all(99999))
			harvest.set(internal+"_2", "svm_cvo_bench", all(77777))
			b := benchmark(ns, "harvest", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To("cvo-nas")
				b.Spec.Clients.Count = 1
			})
			tridentPV("pvc-0d1e2f3a-harvest-join", b, "20Gi", ontapUUID, internal)
			Expect(k8s.Create(bg, b)).To(Succeed())
			waitComplete(b, 2*time.Minute)
			cur := waitFor(b, 45*time.Second, "the backend figures", func(b *v1alpha1.StorageBenchmark) bool {
				c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
				return c != nil && c.Status != metav1.ConditionUnknown
			})
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
			Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			Expect(c.Reason).To(Equal(controllers.ReasonBackendJoined))
			Expect(cur.Status.Storage.Backend.SVM).To(Equal("svm_cvo_bench"))
			Expect(cur.Status.Steps).To(HaveLen(2))
			mean := (1500*250 + 500*650) / 2000 * time.Microsecond
			for _, st := range cur.Status.Steps {
				be := st.Backend
				Expect(be).NotTo(BeNil())
				Expect(be.Resolution.Duration).To(Equal(time.Second))
				Expect(be.TooShort).To(BeFalse())
				Expect(be.Samples).To(BeNumerically(">=", 2), "a 5 s step less one resolution holds 4 one-second samples, give or take a scrape")
				Expect([]int64{be.IOPS, be.ReadIOPS, be.WriteIOPS, be.BytesPerSecond}).To(Equal([]int64{2000, 1500, 500, 2000 * 8192}))
				Expect(be.ReadLatency.Duration).To(Equal(250 * time.Microsecond))
				Expect(be.WriteLatency.Duration).To(Equal(650 * time.Microsecond))
				Expect(be.Latency.Duration).To(Equal(mean), "weighted by operations")
				Expect(be.LatencyGap.Duration).To(Equal(st.Latency.Mean.Duration - mean))
			}
		})

		It("joins the PV, TridentVolume and TridentBackend, and states throughput against the service level", func() {
			ns := newNamespace()
			b := benchmark(ns, "gcnv", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To("gcnv-premium")
				b.Spec.Storage.Size = resource.MustParse("50Gi") // Trident rounds it up to 100Gi
				b.Spec.Clients.Count = 2
				b.Spec.Workload = v1alpha1.WorkloadSpec{Profile: "streaming-read", WorkingSetPerClient: ptr.To(resource.MustParse("8Mi"))}
				b.Spec.Load.Rate = &v1alpha1.RateSteps{Unit: "MiBps", Steps: []int64{2, 4}}
			})
			tridentPV(gcnvPV, b, "100Gi", gcnvUUID, gcnvPV)
			Expect(k8s.Create(bg, b)).To(Succeed())
			cur := waitComplete(b, 2*time.Minute)
			s := cur.Status.Storage
			Expect(s.Capacity.String()).To(Equal("100Gi"), "the PV's real capacity, not the 50Gi request")
			Expect(s.Driver).To(Equal("google-cloud-netapp-volumes"), "the class names none: its volume's backend does")
			v := s.Volumes[0]
			Expect(v.Pool).To(Equal("gcnv-europe-west6_pool_0"))
			Expect(v.ServiceLevel).To(Equal("Premium"))
			Expect(v.SnapshotReserve).To(Equal("0"))
			Expect(s.Backend).NotTo(BeNil())
			Expect(*s.Backend).To(Equal(v1alpha1.BackendStatus{Name: "gcnv-europe-west6", UUID: gcnvUUID,
				Driver: "google-cloud-netapp-volumes", Protocol: "nfs", Version: "1", State: "online"}))
			e := s.Entitlement
			Expect(e).NotTo(BeNil())
			Expect(e.ServiceLevel).To(Equal("Premium"))
			Expect(e.ThroughputBytesPerSecond).To(BeEquivalentTo(6553600), "64 MiB/s per TiB × 100 GiB = 6.25 MiB/s")
			for i, want := range []float64{32, 64} { // 2 and 4 MiB/s of 6.25
				Expect(float64(cur.Status.Steps[i].EntitlementPercent)).To(BeNumerically("~", want, 4))
			}
			Expect(float64(e.PeakPercent)).To(BeNumerically("~", 64, 4))
			Eventually(func() *metav1.Condition {
				return meta.FindStatusCondition(get(b).Status.Conditions, v1alpha1.ConditionBackendMetrics)
			}, 30*time.Second).Should(And(Not(BeNil()), HaveField("Reason", controllers.ReasonBackendNoSource),
				HaveField("Message", ContainSubstring("not served by a Trident ONTAP driver"))), "Harvest does not report NetApp Volumes")
		})
	})
})

// tridentPV makes a PersistentVolume shaped like one Trident provisions,
// pre-bound to the benchmark's (Shared) claim, served by the harness from
// a directory.
func tridentPV(name string, b *v1alpha1.StorageBenchmark, capacity, backendUUID, internalName string) {
	dir := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.MkdirAll(dir, 0o777)).To(Succeed())
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              *b.Spec.Storage.StorageClassName,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: b.Namespace, Name: exchange.SharedClaimName(b.Name)},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: trident.Provisioner, VolumeHandle: name,
				VolumeAttributes: map[string]string{"backendUUID": backendUUID, "internalName": internalName, "name": name,
					"protocol": "file", harness.CSIPathAttribute: dir},
			}},
		},
	}
	Expect(k8s.Create(context.Background(), pv)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), pv) })
}

// installTrident installs Trident's CRDs and the objects of testdata.
func installTrident() {
	opts := envtest.CRDInstallOptions{Paths: []string{"testdata/trident/crds.yaml"}}
	crds, err := envtest.InstallCRDs(cluster.Config, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(crds).To(HaveLen(2))
	DeferCleanup(func() { _ = envtest.UninstallCRDs(cluster.Config, opts) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllers.DefaultTridentNamespace}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(context.Background(), ns))).To(Succeed())
	for _, u := range objectsIn("testdata/trident/objects.yaml") {
		Expect(k8s.Create(context.Background(), u)).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
	}
}
