package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A database log on a volume with a known IOPS cap: every write is made
// durable by fdatasync before the next (the db-log profile), and the calls'
// own latency is reported per step. Below the cap the calls keep up with
// the writes, one each; above it the writes and the calls alike stay at or
// below the cap, and the step is saturated like any other.
var _ = Describe("A database log's synced writes", func() {
	It("reports each step's fdatasync latency, and on a capped volume stays at or below the cap, saturated above it", func() {
		b := groundTruth("db-log", `{storageClassName: `+classQoS+`, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}`,
			`{profile: db-log, workingSetPerClient: 64Mi}`, `rate: {unit: IOPS, steps: [400, 4500]}`)
		cur := runCapped(b, classQoS)
		Expect(cur.Status.Workload).NotTo(BeNil())
		Expect(cur.Status.Workload.Sync).To(Equal("fdatasync"))
		Expect(cur.Status.Steps).To(HaveLen(2))
		const capIOPS = 2 * qosIOPSPerPV
		for i, s := range cur.Status.Steps {
			Expect(s.Sync).NotTo(BeNil(), "step %d reports its sync calls", i+1)
			Expect(s.Write).NotTo(BeNil())
			Expect(s.Read).To(BeNil(), "a log only writes")
			Expect(s.Sync.BytesPerSecond).To(BeZero())
			Expect(s.Sync.Latency.P99.Duration).To(BeNumerically(">", 0))
			Expect(s.Sync.Latency.Max.Duration).To(BeNumerically(">=", s.Sync.Latency.P99.Duration))
			// One call after each write; a job's last write may end the
			// step before its call.
			Expect(s.Sync.IOs).To(BeNumerically("<=", s.Write.IOs))
			Expect(s.Sync.IOs).To(BeNumerically(">=", s.Write.IOs-int64(s.Clients)))
			Expect(s.Sync.IOPS).To(BeNumerically("<=", capIOPS*1.01), "the synced writes stay at or below the cap")
			GinkgoWriter.Printf("db-log step %d: offered %d IOPS, writes %d/s, fdatasync %d/s (%.4f of the cap), sync p99 %s, saturated %v\n",
				i+1, s.OfferedIOPS, s.Write.IOPS, s.Sync.IOPS, float64(s.Sync.IOPS)/capIOPS, s.Sync.Latency.P99.Duration, s.Saturated)
		}
		below, above := cur.Status.Steps[0], cur.Status.Steps[1]
		Expect(float64(below.Write.IOPS)).To(BeNumerically("~", 400, 4), "below the cap the offered rate is met within 1 %")
		Expect(below.Saturated).To(BeFalse())
		Expect(above.Saturated).To(BeTrue(), fmt.Sprintf("4,500 IOPS offered over a %d IOPS cap", capIOPS))
	})
})
