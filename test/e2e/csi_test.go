package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
	"github.com/storagebench/storagebench/test/k8stest"
)

// csiDriver is the test-bed CSI driver behind csi-local (hack/csidriver).
const csiDriver = "csi.storagebench.test"

// The CSI path of the cluster (hack/cluster/csi.sh, run by up.sh): the
// data path through a real CSI driver, its volumes provisioned by the
// external-provisioner and published by the kubelet through the driver.
var _ = Describe("The test-bed CSI class", func() {
	It("runs a data-path benchmark on csi-local in Block mode and in Filesystem mode, on the driver's volumes", func() {
		ctx := context.Background()
		ns := newNamespace("csi")
		// Both at once, each a short rate step: raw block volumes, one per
		// client (a sparse file on a loop device each), and one
		// ReadWriteMany filesystem volume both clients share (a directory).
		// Retain keeps the claims after the run, to be read.
		block := small(ns, "block", 5*time.Second, 200)
		build.VolumeMode(corev1.PersistentVolumeBlock)(block)
		build.AccessMode(corev1.ReadWriteOnce)(block)
		fs := small(ns, "filesystem", 5*time.Second, 200)
		build.Shared()(fs)
		for _, b := range []*v1alpha1.StorageBenchmark{block, fs} {
			b.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
			apply(b)
		}
		for _, c := range []struct {
			b      *v1alpha1.StorageBenchmark
			mode   corev1.PersistentVolumeMode
			claims int
		}{{block, corev1.PersistentVolumeBlock, 2}, {fs, corev1.PersistentVolumeFilesystem, 1}} {
			cur := k8stest.WaitComplete(k8s, c.b, 4*time.Minute)
			Expect(cur.Status.Steps).To(HaveLen(1), "%s's steps", c.b.Name)
			for _, s := range cur.Status.Steps {
				Expect(s.Clients).To(BeEquivalentTo(2))
				Expect(s.AchievedIOPS).To(BeNumerically(">", 0), "%s step %d's I/O", c.b.Name, s.Index+1)
				Expect(s.Read).NotTo(BeNil(), "%s step %d's reads", c.b.Name, s.Index+1)
				Expect(s.Read.IOs).To(BeNumerically(">", 0), "%s step %d's reads", c.b.Name, s.Index+1)
				Expect(s.Write).NotTo(BeNil(), "%s step %d's writes", c.b.Name, s.Index+1)
				Expect(s.Write.IOs).To(BeNumerically(">", 0), "%s step %d's writes", c.b.Name, s.Index+1)
				k8stest.ExpectTracksOffered(s, 0.05)
				GinkgoWriter.Printf("%s (%s): %d IOPS offered, %d achieved\n", c.b.Name, c.mode, s.OfferedIOPS, s.AchievedIOPS)
			}
			claims := k8stest.Listed(k8s, ns, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(c.b)).Items
			Expect(claims).To(HaveLen(c.claims), "%s's claims", c.b.Name)
			for _, claim := range claims {
				Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), claim.Name)
				Expect(claim.Spec.StorageClassName).To(HaveValue(Equal(classCSI)), claim.Name)
				var pv corev1.PersistentVolume
				Expect(k8s.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, &pv)).To(Succeed())
				Expect(pv.Spec.CSI).NotTo(BeNil(), "PV %s is a CSI volume", pv.Name)
				Expect(pv.Spec.CSI.Driver).To(Equal(csiDriver), "PV %s's driver", pv.Name)
				Expect(pv.Spec.VolumeMode).To(HaveValue(Equal(c.mode)), "PV %s's volume mode", pv.Name)
			}
		}
	})
})
