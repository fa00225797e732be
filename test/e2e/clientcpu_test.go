package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/test/k8stest"
)

// Clients whose CPU limit is far below what fio needs at full depth: the
// kernel throttles their containers, the runners read it from their
// cgroups, and the run says which clients measured their own CPU and what
// to raise. The four corners (corners_test.go) run without a CPU limit and
// say the clients had headroom.
var _ = Describe("Clients starved of CPU", func() {
	It("says which clients were throttled, and what to raise", func() {
		doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: cpu-starved, namespace: %s}
spec:
  storage: {storageClassName: %s, size: 1Gi}
  clients:
    count: 2
    jobsPerClient: 1
    resources:
      requests: {cpu: 20m, memory: 128Mi}
      limits: {cpu: 20m}
  workload: {profile: rand-read, workingSetPerClient: 16Mi}
  load:
    queueDepth: {steps: [8]}
    stepDuration: 5s
    rampTime: 1s
  cleanup: {volumes: Delete}
`, newNamespace("cpu-starved"), classCSI)
		var b v1alpha1.StorageBenchmark
		Expect(yaml.UnmarshalStrict([]byte(doc), &b)).To(Succeed())
		apply(&b)
		cur := k8stest.WaitComplete(k8s, &b, 5*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(1))
		s := cur.Status.Steps[0]
		Expect(s.ClientCPU).NotTo(BeNil(), "the runners measured their CPU")
		GinkgoWriter.Printf("20m CPU limit, depth 8 unthrottled: %d IOPS, busiest fio %d %% of what it could use, throttled in up to %d %% of CFS periods, clients past a bound %v\n",
			s.AchievedIOPS, s.ClientCPU.BusyPercent, s.ClientCPU.ThrottledPercent, s.ClientCPU.BoundClients)
		Expect(s.ClientCPU.ThrottledPercent).To(BeNumerically(">", 1), "a 20m limit throttles fio at full depth")
		Expect(s.ClientCPU.BoundClients).To(ConsistOf(int32(0), int32(1)))
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClientCPUBound)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(controllers.ReasonClientCPUThrottled))
		Expect(c.Message).To(ContainSubstring("clients 0, 1 were past a bound"))
		Expect(c.Message).To(ContainSubstring("clients.resources.limits.cpu"))
	})
})

// expectCPUHeadroom: a run whose clients have no CPU limit and a light load
// says so.
func expectCPUHeadroom(b *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientCPUBound)
	Expect(c).NotTo(BeNil(), "the runners measured their CPU")
	Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
	Expect(c.Reason).To(Equal(controllers.ReasonClientCPUHeadroom))
	for _, s := range b.Status.Steps {
		Expect(s.ClientCPU).NotTo(BeNil())
		Expect(s.ClientCPU.ThrottledPercent).To(BeZero(), "no CPU limit, no CFS periods")
		Expect(s.ClientCPU.BoundClients).To(BeEmpty())
	}
}
