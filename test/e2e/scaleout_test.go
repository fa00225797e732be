package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A scale-out sweep over volumes of their own, each capped: every client
// added brings its volume's cap, so the sweep scales by exactly the cap per
// client, with no knee. The client a step leaves out idles through it.
var _ = Describe("A scale-out sweep", func() {
	It("adds a volume's cap per client on capped volumes of their own, with no knee", func() {
		b := groundTruth("scale-out", `{storageClassName: `+classQoS+`, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}`,
			`{profile: rand-read, workingSetPerClient: 256Mi}`, `clients: {steps: [1, 2]}`)
		cur := runCapped(b, classQoS)
		Expect(cur.Status.Steps).To(HaveLen(2))
		for i, s := range cur.Status.Steps {
			n := int32(i + 1)
			Expect(s.ActiveClients).To(Equal(n))
			Expect(s.Clients).To(Equal(n), "the idle client is not merged")
			Expect(s.ClosedLoop).To(BeTrue(), "unthrottled")
			want := float64(n) * qosIOPSPerPV
			GinkgoWriter.Printf("scale-out step %d: %d clients, %d IOPS, achieved / (clients × cap) = %.4f, read p99 %s\n",
				i+1, n, s.AchievedIOPS, float64(s.AchievedIOPS)/want, s.Read.Latency.P99.Duration)
			Expect(float64(s.AchievedIOPS)).To(BeNumerically("~", want, 0.03*want), "clients × the cap per volume")
		}
		Expect(cur.Status.Summary).NotTo(BeNil())
		Expect(cur.Status.Summary.KneeStep).To(BeNil(), "each client brings its own capped volume: no knee")
	})
})
