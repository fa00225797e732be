package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/k8stest"
)

// verifyDoc is a run that verifies: one client writing 4 KiB blocks in
// order from its device's start, 10 s per step at 200, 300 and 400 IOPS,
// so step k writes blocks 0 to about 2,000 + 1,000k, each once, and never
// wraps in its 64 MiB.
func verifyDoc(name string) string {
	return fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: %s, namespace: %s}
spec:
  storage: {storageClassName: %s, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}
  clients: {count: 1, jobsPerClient: 1}
  workload: {blockSize: 4Ki, readPercent: 0, pattern: sequential, ioDepth: 4, workingSetPerClient: 64Mi}
  precondition: {fill: false}
  load:
    rate: {unit: IOPS, steps: [200, 300, 400]}
    stepDuration: 10s
    rampTime: 0s
  verify: {}
  cleanup: {volumes: Delete}
`, name, newNamespace(name), classBlock)
}

// backingFile is the file behind the loop device of the benchmark's
// (one) local block PV: the storage's own copy of the blocks.
func backingFile(b *v1alpha1.StorageBenchmark) string {
	GinkgoHelper()
	cur := k8stest.Get(k8s, b)
	Expect(cur.Status.Storage).NotTo(BeNil())
	Expect(cur.Status.Storage.Volumes).To(HaveLen(1))
	var pv corev1.PersistentVolume
	Expect(k8s.Get(context.Background(), client.ObjectKey{Name: cur.Status.Storage.Volumes[0].PersistentVolume}, &pv)).To(Succeed())
	Expect(pv.Spec.Local).NotTo(BeNil(), "a local PV")
	dev := filepath.Base(pv.Spec.Local.Path)
	out, err := os.ReadFile(filepath.Join("/sys/block", dev, "loop", "backing_file"))
	Expect(err).NotTo(HaveOccurred(), "the loop device %s behind PV %s", dev, pv.Name)
	return strings.TrimSpace(string(out))
}

// damage changes blocks of the backing file behind the client's back,
// with O_DIRECT so that the loop device sees it whatever its own cache:
// one byte flipped at byte 100 of each block of corrupt, and the block
// at from copied over the block at to.
func damage(file string, corrupt []int64, from, to int64) {
	GinkgoHelper()
	f, err := os.OpenFile(file, os.O_RDWR|unix.O_DIRECT, 0)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	buf := alignedBlock()
	for _, off := range corrupt {
		_, err := f.ReadAt(buf, off)
		Expect(err).NotTo(HaveOccurred())
		buf[100] ^= 0xff
		_, err = f.WriteAt(buf, off)
		Expect(err).NotTo(HaveOccurred())
	}
	_, err = f.ReadAt(buf, from)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteAt(buf, to)
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Sync()).To(Succeed())
}

// alignedBlock is 4 KiB aligned for O_DIRECT.
func alignedBlock() []byte {
	b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(unix.Munmap, b)
	return b
}

// A storage that returns something other than what it acknowledged: the
// run must report exactly the blocks that were damaged, where and how,
// and fail; the same run on intact storage verifies every block it wrote.
var _ = Describe("A run that verifies what it writes", func() {
	It("reports exactly the blocks damaged behind its back and fails DataCorrupted; intact, it verifies every block", func(ctx SpecContext) {
		Eventually(freeVolumes(classBlock), time.Minute, time.Second).Should(BeNumerically(">=", 2),
			"two %s PVs Available; nothing else may hold them", classBlock)
		var intact, damaged v1alpha1.StorageBenchmark
		Expect(yaml.UnmarshalStrict([]byte(verifyDoc("verify-intact")), &intact)).To(Succeed())
		Expect(yaml.UnmarshalStrict([]byte(verifyDoc("verify-damaged")), &damaged)).To(Succeed())
		apply(&intact)
		apply(&damaged)

		// Step 1 writes block n about n/300 s after it starts (a lead
		// after it is ordered): blocks 100 to 500 are written by 2 s in
		// and not again in the step. They are damaged 5 s after the order.
		k8stest.WaitFor(k8s, &damaged, 5*time.Minute, "step 1 running", k8stest.StepRunning(1))
		file := backingFile(&damaged)
		time.Sleep(5 * time.Second)
		corrupt := []int64{101 * 4096, 202 * 4096, 303 * 4096, 404 * 4096}
		from, to := int64(150*4096), int64(450*4096)
		damage(file, corrupt, from, to)

		cur := waitFailed(&damaged, 5*time.Minute)
		failed := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(failed.Reason).To(Equal("DataCorrupted"), failed.Message)
		Expect(failed.Message).To(HavePrefix("step 2: 5 of "), "the first bad block, plainly")
		integrity := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDataIntegrity)
		Expect(integrity).NotTo(BeNil())
		Expect(integrity.Status).To(BeEquivalentTo("False"))
		Expect(integrity.Reason).To(Equal("DataCorrupted"))
		Expect(integrity.Message).To(Equal(failed.Message))
		Expect(cur.Status.Steps).To(HaveLen(2), "the run stops at the step whose read-back found bad blocks")
		Expect(cur.Status.Steps[0].Verification.BadBlocks).To(BeZero())
		v := cur.Status.Steps[1].Verification
		Expect(v.BadBlocks).To(BeEquivalentTo(5), "exactly the blocks damaged: %+v", v.FirstBadBlocks)
		Expect(v.FirstBadBlocks).To(HaveLen(5))
		var offsets []int64
		for _, bb := range v.FirstBadBlocks {
			offsets = append(offsets, bb.Offset)
			Expect(bb.Generation).To(BeEquivalentTo(2), "written in step 1, generation 2")
			if bb.Offset == to {
				Expect(bb.Kind).To(Equal("Misdirected"))
				Expect(bb.FoundOffset).To(HaveValue(Equal(from)))
				Expect(bb.FoundGeneration).To(BeEquivalentTo(2))
				continue
			}
			Expect(bb.Kind).To(Equal("Corrupted"))
			Expect(bb.FirstDiff).To(BeEquivalentTo(100))
		}
		Expect(offsets).To(ConsistOf(append(slices.Clone(corrupt), to)))
		Expect(cur.Status.Verification.BadBlocks).To(BeEquivalentTo(5))

		// The same run, undamaged: every block written read back, and the
		// logs' count of blocks is fio's own count of writes (each block
		// is written once per step).
		cur = k8stest.WaitComplete(k8s, &intact, 5*time.Minute)
		integrity = meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDataIntegrity)
		Expect(integrity).NotTo(BeNil())
		Expect(integrity.Status).To(BeEquivalentTo("True"), integrity.Message)
		Expect(integrity.Reason).To(Equal("Verified"))
		Expect(cur.Status.Steps).To(HaveLen(3))
		var union int64
		for _, s := range cur.Status.Steps {
			v := s.Verification
			Expect(v).NotTo(BeNil())
			Expect(s.Write).NotTo(BeNil())
			Expect(s.Read).To(BeNil(), "no read-back I/O among the step's figures")
			union = max(union, s.Write.IOs)
			Expect(v.BlocksWritten).To(Equal(s.Write.IOs), "step %d", s.Index)
			Expect(v.BlocksVerified).To(Equal(union), "step %d: every block written so far", s.Index)
			Expect(v.BadBlocks).To(BeZero())
			Expect(v.Unverified).To(BeZero())
			GinkgoWriter.Printf("verify: step %d wrote %d blocks at %d IOPS; read back %d in %v (%d MB/s)\n", s.Index, v.BlocksWritten,
				s.AchievedIOPS, v.BlocksVerified, v.Duration.Duration, v.BytesPerSecond/1e6)
		}
		Expect(cur.Status.Verification.BlocksVerified).To(BeNumerically(">", union))
		Eventually(freeVolumes(classBlock), 2*time.Minute, time.Second).Should(BeNumerically(">=", 2), "the PVs freed for the next run")
	})
})

// A client lost mid-step on a Shared Filesystem volume: its finished
// steps' record stays on the volume, and a verifier pod reads back every
// block the clients' finished steps wrote. One block of the lost client's
// first step is damaged just before the loss, where its second step had
// not reached: exactly that block is reported, nothing else.
var _ = Describe("A client lost while its run verifies", func() {
	It("has a verifier read back what the clients' finished steps wrote: exactly the block damaged, the rest intact", func(ctx SpecContext) {
		doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: verify-lost, namespace: %s}
spec:
  storage: {storageClassName: %s, size: 1Gi, sharing: Shared, accessMode: ReadWriteMany}
  clients: {count: 2, jobsPerClient: 1}
  workload: {blockSize: 4Ki, readPercent: 0, pattern: sequential, ioDepth: 4, workingSetPerClient: 64Mi}
  load:
    rate: {unit: IOPS, steps: [400, 600]}
    stepDuration: 10s
    rampTime: 0s
  verify: {}
  cleanup: {volumes: Delete}
`, newNamespace("verify-lost"), classShared)
		var b v1alpha1.StorageBenchmark
		Expect(yaml.UnmarshalStrict([]byte(doc), &b)).To(Succeed())
		apply(&b)
		// Each client writes its blocks in order, 200 a second in step 0
		// (blocks 0 to about 2,000) and 300 in step 1, which starts a lead
		// after it is ordered: 2 s into it, client 1 is near block 600.
		cur := k8stest.WaitFor(k8s, &b, 5*time.Minute, "step 1 running", k8stest.StepRunning(1))
		Expect(cur.Status.Storage.Volumes).To(HaveLen(1))
		file := filepath.Join(cur.Status.Storage.Volumes[0].Path, "client-001", "job0.dat")
		time.Sleep(3 * time.Second)
		const damaged = 1500 * 4096
		damage(file, []int64{damaged}, 0, 0)
		pod := clientPod(&b, 1)
		Expect(k8s.Delete(ctx, &pod, client.GracePeriodSeconds(0))).To(Succeed())

		cur = waitFailed(&b, 3*time.Minute)
		failed := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(failed.Reason).To(Equal("ClientLost"), failed.Message)
		cur = k8stest.WaitFor(k8s, &b, 5*time.Minute, "the verifier's verdict", func(b *v1alpha1.StorageBenchmark) bool {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionDataIntegrity)
			return c != nil && c.Status != metav1.ConditionUnknown
		})
		integrity := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDataIntegrity)
		Expect(integrity.Reason).To(Equal("DataCorrupted"), integrity.Message)
		Expect(integrity.Message).To(ContainSubstring("after the loss"))
		v := cur.Status.VerificationAfterLoss
		Expect(v).NotTo(BeNil())
		GinkgoWriter.Printf("verify-lost: %d blocks read back, %d overwritten by the interrupted step, %d bad: %s\n",
			v.BlocksVerified, v.Overwritten, v.BadBlocks, integrity.Message)
		Expect(v.BadBlocks).To(BeEquivalentTo(1))
		bad := v.FirstBadBlocks[0]
		Expect(bad.Client).To(BeEquivalentTo(1))
		Expect(bad.File).To(Equal("job0.dat"))
		Expect(bad.Offset).To(BeEquivalentTo(damaged))
		Expect(bad.Kind).To(Equal("Corrupted"))
		Expect(bad.Generation).To(BeEquivalentTo(1))
		// Every block step 0 wrote, both clients', was read back; the
		// interrupted step had overwritten some of them.
		Expect(cur.Status.Steps[0].Verification).NotTo(BeNil())
		Expect(v.BlocksVerified).To(Equal(cur.Status.Steps[0].Verification.BlocksVerified))
		Expect(v.Overwritten).To(BeNumerically(">", 0))
		// The verifier's Job is gone with its report recorded.
		Eventually(func() int {
			return len(k8stest.Listed(k8s, b.Namespace, &batchv1.JobList{}, client.MatchingLabels{"storagebench.io/role": "verify"}).Items)
		}, time.Minute, time.Second).Should(BeZero())
	})
})
