package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

var _ = Describe("Scale", func() {
	It("runs 20 benchmarks at once in separate namespaces", func() {
		var all []*v1alpha1.StorageBenchmark
		for i := 0; i < 20; i++ {
			b := benchmark(newNamespace(), fmt.Sprintf("many-%02d", i), func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = 1
				b.Spec.Load.Rate.Steps = []int64{100}
			})
			Expect(k8s.Create(context.Background(), b)).To(Succeed())
			all = append(all, b)
		}
		for _, b := range all {
			cur := waitComplete(b, 4*time.Minute)
			Expect(cur.Status.Steps).To(HaveLen(1))
			// Twenty runs share two cores here: this spec is about running
			// them side by side, not fidelity, so the margin is wide.
			Expect(float64(cur.Status.Steps[0].AchievedIOPS)).To(BeNumerically("~", 100, 25))
		}
	})

	// API writes of one step: each client's result, plus the operator's
	// step ConfigMap, status and order (and events). The goal is linear
	// growth with clients; the figures go to the closing note. 10 and 50
	// clients show it (make bench counts them up to 1,000); 100 would
	// spend most of a minute more starting runners.
	It("costs API writes linear in the number of clients per step", Serial, func() {
		perStep := map[int]float64{}
		for _, n := range []int{10, 50} {
			b := benchmark(newNamespace(), fmt.Sprintf("writes-%d", n), func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = int32(n)
				b.Spec.Workload.Profile = "rand-read"
				b.Spec.Precondition.Fill = ptr.To(false) // 1 MiB each: nothing to measure before the steps
				b.Spec.Load.Rate.Steps = []int64{int64(10 * n), int64(20 * n)}
				// A stop rule (that never holds) orders step 1 once step 0
				// is recorded. Ordered ahead, step 1 would run while step 0
				// is collected, and on two loaded cores its results can
				// come before this spec sees step 0 in status, outside the
				// window counted. The writes of a step are the same either
				// way: the order written ahead rides on the same patch.
				b.Spec.Load.Stop = &v1alpha1.StopRules{MaxStall: &metav1.Duration{Duration: time.Hour}}
			})
			Expect(k8s.Create(context.Background(), b)).To(Succeed())
			waitFor(b, 5*time.Minute, "step 0 recorded", func(c *v1alpha1.StorageBenchmark) bool { return len(c.Status.Steps) == 1 })
			before := apiWrites()
			cur := waitComplete(b, 3*time.Minute)
			writes := apiWrites() - before
			Expect(cur.Status.Steps).To(HaveLen(2))
			perStep[n] = writes
			GinkgoWriter.Printf("API writes for one step with %d clients: %.0f (%.2f per client)\n", n, writes, writes/float64(n))
			AddReportEntry(fmt.Sprintf("API writes per step, %d clients", n), writes)
		}
		// Linear: the per-client cost at 50 clients is no more than at 10
		// (constant operator writes are amortised, never multiplied).
		Expect(perStep[50] / 50).To(BeNumerically("<=", perStep[10]/10))
		Expect(perStep[50]).To(BeNumerically(">=", 50), "each client writes its result")
	})
})

// apiWrites reads the API server's count of write requests (create, update,
// patch, delete) on ConfigMaps, StorageBenchmarks and Events so far.
func apiWrites() float64 {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	Expect(err).NotTo(HaveOccurred())
	var total float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels, value, _ := strings.Cut(line[len("apiserver_request_total{"):], "} ")
		if !hasAny(labels, `verb="POST"`, `verb="PUT"`, `verb="PATCH"`, `verb="DELETE"`) ||
			!hasAny(labels, `resource="configmaps"`, `resource="storagebenchmarks"`, `resource="events"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		Expect(err).NotTo(HaveOccurred())
		total += v
	}
	return total
}

func hasAny(s string, parts ...string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
