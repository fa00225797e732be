package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The capped classes hack/cluster/up.sh provides, and their caps per volume
// (hack/blkcap writes them into each client container's block cgroup).
const (
	classQoS        = "local-block-qos"  // raw block, 1,500 IOPS per volume
	classNVExtreme  = "local-nv-extreme" // ext4 on 64 GiB, 8 MiB/s per volume
	qosIOPSPerPV    = 1500
	nvBytesPerPV    = 64 << 30 / 8192 // Extreme: 128 MiB/s per TiB
	nvCapacityPerPV = "64Gi"
)

// capCase is a class with a known cap and the loads that probe it.
type capCase struct {
	class, storage, workload string
	// rate offers two loads below the cap and one above; curve is the
	// curve, in the same unit.
	rate, curve string
	cap         float64 // of 2 volumes: IOPS, or bytes per second
	// achieved is a step's figure in the cap's unit; peak the summary's.
	achieved func(v1alpha1.StepStatus) int64
	peak     func(*v1alpha1.SummaryStatus) int64
	// entitled: the class is read as NetApp Volumes, its entitlement the cap.
	entitled bool
	// joined: the class's volumes have Harvest series (hack/blkcap
	// exports their disk statistics), so steps carry the storage's figures.
	joined bool
}

// A ground truth: volumes whose limit is known, as an ONTAP QoS policy's
// maximum or a NetApp Volumes level × capacity would set it. Each benchmark
// runs 2 clients, one capped volume each, so the cap is twice a volume's.
var _ = Describe("Volumes with a known cap", Ordered, func() {
	// figures are the ratios this spec measured, printed for
	// docs/measurement.md.
	var figures []string
	AfterAll(func() {
		GinkgoWriter.Printf("ground truth:\n  %s\n", strings.Join(figures, "\n  "))
	})
	recovers := func(name string, c capCase) {
		b := groundTruth(name+"-rate", c.storage, c.workload, c.rate)
		cur := runCapped(b, c.class)
		Expect(cur.Status.Steps).To(HaveLen(3))
		for _, s := range cur.Status.Steps[:2] {
			expectExact(s, &figures)
		}
		over := cur.Status.Steps[2]
		Expect(over.Saturated).To(BeTrue(), "step 3 offers more than the cap")
		Expect(over.ClosedLoop).To(BeTrue())
		Expect(over.QueueFull).To(BeTrue(), "held back by the cap, the clients' queues filled up")
		Expect(float64(c.achieved(over))).To(BeNumerically("~", c.cap, 0.03*c.cap))
		figures = append(figures, fmt.Sprintf("%s: step 3 above the cap: achieved / cap = %.4f (saturated)", b.Name, float64(c.achieved(over))/c.cap))
		if c.entitled {
			expectEntitlement(cur, c.cap, &figures)
		}
		if c.joined {
			expectStorageFigures(cur, &figures)
		}

		b = groundTruth(name+"-curve", c.storage, c.workload, c.curve)
		cur = runCapped(b, c.class)
		Expect(cur.Status.Steps).To(HaveLen(4), "the maximum, the client-bound check, 2 percentages")
		Expect(cur.Status.Summary).NotTo(BeNil())
		peak := float64(c.peak(cur.Status.Summary))
		Expect(peak).To(BeNumerically("~", c.cap, 0.03*c.cap), "peak against the cap")
		figures = append(figures, fmt.Sprintf("%s: peak / cap = %.4f", b.Name, peak/c.cap))
		// The cap is the storage's: twice the outstanding I/O gains nothing.
		check := cur.Status.Steps[1]
		Expect(check.ClientBoundCheck).To(BeTrue())
		Expect(float64(c.achieved(check))).To(BeNumerically("~", c.cap, 0.03*c.cap))
		cb := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClientBound)
		Expect(cb).NotTo(BeNil())
		Expect(cb.Status).To(Equal(metav1.ConditionFalse), "a capped volume is not client-bound: %s", cb.Message)
		figures = append(figures, fmt.Sprintf("%s: client-bound check (2x outstanding I/O) / maximum = %.4f",
			b.Name, float64(c.achieved(check))/float64(c.achieved(cur.Status.Steps[0]))))
		for _, s := range cur.Status.Steps[2:] {
			expectExact(s, &figures)
		}
		if c.entitled {
			expectEntitlement(cur, c.cap, &figures)
		}
	}

	It("recovers a 3,000 IOPS QoS cap: rate steps below it within 1 %, above it saturated, a curve's peak within 3 %; the storage's own figures match the clients'", func() {
		recovers("qos", capCase{
			class:    classQoS,
			storage:  `{storageClassName: ` + classQoS + `, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}`,
			workload: `{profile: rand-read, workingSetPerClient: 512Mi}`,
			rate:     `rate: {unit: IOPS, steps: [1000, 2400, 4500]}`,
			curve:    `curve: {percents: [50, 90]}`,
			cap:      2 * qosIOPSPerPV,
			achieved: func(s v1alpha1.StepStatus) int64 { return s.AchievedIOPS },
			peak:     func(s *v1alpha1.SummaryStatus) int64 { return s.PeakIOPS },
			joined:   true,
		})
	})

	It("recovers a NetApp Volumes Extreme entitlement of 16 MiB/s: below within 1 %, above saturated, peak and entitlement share within 3 %", func() {
		recovers("nv", capCase{
			class:    classNVExtreme,
			storage:  `{storageClassName: ` + classNVExtreme + `, size: ` + nvCapacityPerPV + `, sharing: PerClient, accessMode: ReadWriteOnce}`,
			workload: `{profile: seq-read, workingSetPerClient: 64Mi}`,
			rate:     `rate: {unit: MiBps, steps: [6, 14, 24]}`,
			curve:    `curve: {unit: MiBps, percents: [50, 90]}`,
			cap:      2 * nvBytesPerPV,
			achieved: func(s v1alpha1.StepStatus) int64 { return s.AchievedBytesPerSecond },
			peak:     func(s *v1alpha1.SummaryStatus) int64 { return s.PeakBytesPerSecond },
			entitled: true,
		})
	})
})

// groundTruth is a benchmark of 2 clients on the capped volumes: 10 s steps
// after a 1 s ramp, no stop rule (the steps above the cap must run).
func groundTruth(name, storage, workload, load string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: %s, namespace: %s}
spec:
  storage: %s
  clients: {count: 2, jobsPerClient: 1}
  workload: %s
  load:
    %s
    stepDuration: 10s
    rampTime: 1s
  cleanup: {volumes: Delete}
`, name, newNamespace(name), storage, workload, load)
	var b v1alpha1.StorageBenchmark
	Expect(yaml.UnmarshalStrict([]byte(doc), &b)).To(Succeed())
	return &b
}

// runCapped applies the benchmark, waits for Complete, checks that every
// client container ran under its volume's cap from before the first step,
// and frees the volumes for the next benchmark.
func runCapped(b *v1alpha1.StorageBenchmark, class string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	Eventually(freeVolumes(class), time.Minute, time.Second).Should(BeNumerically(">=", 2),
		"%s PVs Available; hack/cluster/up.sh makes STORAGEBENCH_CAPPED_PVS (2) and nothing else may hold them", class)
	apply(b)
	var runners []string
	Eventually(func(g Gomega) {
		pods := k8stest.Listed(k8s, b.Namespace, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items
		runners = runners[:0]
		for _, p := range pods {
			for _, c := range p.Status.ContainerStatuses {
				if c.ContainerID != "" {
					runners = append(runners, c.ContainerID[strings.Index(c.ContainerID, "://")+3:])
				}
			}
		}
		g.Expect(runners).To(HaveLen(2), "the 2 client containers started")
	}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())
	cur := k8stest.WaitComplete(k8s, b, 5*time.Minute)
	Expect(cur.Status.Steps).NotTo(BeEmpty())
	first := cur.Status.Steps[0].StartTime.Time

	caps := capsWritten(b.Namespace)
	for _, id := range runners {
		var at *time.Time
		for _, c := range caps {
			if strings.HasSuffix(strings.TrimSuffix(c.Cgroup, "/"), "/"+id) {
				at = &c.Time
			}
		}
		Expect(at).NotTo(BeNil(), "hack/blkcap capped client container %s (caps written: %+v)", id, caps)
		Expect(at.Before(first)).To(BeTrue(), "container %s capped at %s, after the first step started at %s", id, at, first)
	}
	Eventually(func() []corev1.PersistentVolumeClaim {
		return k8stest.Listed(k8s, b.Namespace, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(b)).Items
	}, 2*time.Minute, time.Second).Should(BeEmpty(), "cleanup.volumes Delete")
	return cur
}

// expectStorageFigures: every step carries what the volumes' block devices
// completed (hack/blkcap's Harvest series, through the suite's Prometheus):
// the storage's IOPS and bytes per second within 2 % of the clients', and
// its mean latency no more than theirs (the cap holds I/O back before the
// device's queue, where the clients still time it).
func expectStorageFigures(b *v1alpha1.StorageBenchmark, figures *[]string) {
	GinkgoHelper()
	cur := waitJoined(b)
	// The recording docs/images/storage-view.png is drawn from.
	cur.APIVersion, cur.Kind = v1alpha1.GroupVersion.String(), "StorageBenchmark"
	recordYAML("storage-view-"+b.Name+".yaml", cur)
	for _, s := range cur.Status.Steps {
		be := s.Backend
		Expect(be).NotTo(BeNil(), "step %d", s.Index+1)
		Expect(be.TooShort).To(BeFalse())
		iops, bytes := float64(be.IOPS)/float64(s.AchievedIOPS), float64(be.BytesPerSecond)/float64(s.AchievedBytesPerSecond)
		Expect(iops).To(BeNumerically("~", 1, 0.02), "step %d: storage IOPS %d, clients' %d", s.Index+1, be.IOPS, s.AchievedIOPS)
		Expect(bytes).To(BeNumerically("~", 1, 0.02), "step %d: storage bytes/s %d, clients' %d", s.Index+1, be.BytesPerSecond, s.AchievedBytesPerSecond)
		Expect(be.Latency).NotTo(BeNil())
		Expect(be.Latency.Duration).To(BeNumerically("<=", s.Latency.Mean.Duration), "step %d: the storage's mean latency is within the clients'", s.Index+1)
		*figures = append(*figures, fmt.Sprintf("%s step %d: storage IOPS / clients' = %.4f, bytes/s = %.4f, storage mean latency %v of the clients' %v (%d samples at %v)",
			b.Name, s.Index+1, iops, bytes, be.Latency.Duration, s.Latency.Mean.Duration, be.Samples, be.Resolution.Duration))
	}
}

// expectExact: a step offered below the cap achieved its offered load
// within 1 % and is not saturated.
func expectExact(s v1alpha1.StepStatus, figures *[]string) {
	GinkgoHelper()
	Expect(s.Saturated).To(BeFalse(), "step %d is below the cap", s.Index+1)
	k8stest.ExpectTracksOffered(s, 0.01)
	if s.OfferedIOPS > 0 {
		*figures = append(*figures, fmt.Sprintf("%d IOPS offered: achieved / offered = %.4f", s.OfferedIOPS, float64(s.AchievedIOPS)/float64(s.OfferedIOPS)))
	} else {
		*figures = append(*figures, fmt.Sprintf("%d B/s offered: achieved / offered = %.4f", s.OfferedBytesPerSecond, float64(s.AchievedBytesPerSecond)/float64(s.OfferedBytesPerSecond)))
	}
}

// expectEntitlement: the operator read the class as NetApp Volumes Extreme
// on 2 × 64 GiB, and its peak share of that entitlement is 100 ± 3 %.
func expectEntitlement(b *v1alpha1.StorageBenchmark, capBytes float64, figures *[]string) {
	GinkgoHelper()
	Expect(b.Status.Storage).NotTo(BeNil())
	e := b.Status.Storage.Entitlement
	Expect(e).NotTo(BeNil(), "the class names NetApp Volumes' Extreme level")
	Expect(e.ServiceLevel).To(Equal("Extreme"))
	Expect(e.ThroughputBytesPerSecond).To(BeEquivalentTo(int64(capBytes)), "the entitlement is the cap")
	Expect(e.PeakPercent).To(BeNumerically(">=", 97))
	Expect(e.PeakPercent).To(BeNumerically("<=", 103))
	*figures = append(*figures, fmt.Sprintf("%s: entitlement share at peak %d %%", b.Name, e.PeakPercent))
}

// capWritten is one line of hack/blkcap's record.
type capWritten struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Cgroup    string    `json:"cgroup"`
	Device    string    `json:"device"`
}

// capsWritten reads hack/blkcap's record for one namespace.
func capsWritten(ns string) []capWritten {
	GinkgoHelper()
	f, err := os.Open(filepath.Join(clusterDir(), "block", "caps.jsonl"))
	Expect(err).NotTo(HaveOccurred(), "hack/blkcap's record")
	defer func() { _ = f.Close() }()
	var out []capWritten
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c capWritten
		Expect(json.Unmarshal(sc.Bytes(), &c)).To(Succeed())
		if c.Namespace == ns {
			out = append(out, c)
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	return out
}

// freeVolumes makes a class's PVs whose claim is gone (Released, reclaim
// policy Retain) Available again, as a static local-volume provisioner
// would, and returns how many are Available.
func freeVolumes(class string) func() (int, error) {
	return func() (int, error) {
		ctx := context.Background()
		var pvs corev1.PersistentVolumeList
		if err := k8s.List(ctx, &pvs); err != nil {
			return 0, err
		}
		free := 0
		for i := range pvs.Items {
			pv := &pvs.Items[i]
			if pv.Spec.StorageClassName != class {
				continue
			}
			switch pv.Status.Phase {
			case corev1.VolumeAvailable:
				free++
			case corev1.VolumeReleased:
				patch := client.MergeFrom(pv.DeepCopy())
				pv.Spec.ClaimRef = nil
				if err := k8s.Patch(ctx, pv, patch); err != nil {
					return free, err
				}
			}
		}
		return free, nil
	}
}
