package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/k8stest"
)

// classPausable's one PV writes to a file on a filesystem the suite can
// freeze (hack/cluster/up.sh): a storage that pauses on command.
const classPausable = "local-block-pausable"

// Linux's ioctls that freeze and thaw a filesystem (fsfreeze(8)):
// _IOWR('X', 119, int) and _IOWR('X', 120, int), which x/sys does not name.
const (
	ioctlFreeze = 0xC0045877
	ioctlThaw   = 0xC0045878
)

// frozen is how long a pause held writes: at least from FIFREEZE's return
// to FITHAW's call, at most from FIFREEZE's call to FITHAW's return.
type frozen struct{ least, most time.Duration }

// freeze pauses the pausable volume's storage for d. The volume is never
// left frozen: a spec interrupted or timed out thaws it in its cleanup
// (and hack/cluster/up.sh and down.sh thaw it too).
func freeze(ctx SpecContext, d time.Duration) frozen {
	GinkgoHelper()
	dir := filepath.Join(clusterDir(), "block", "pausable")
	f, err := os.Open(dir)
	Expect(err).NotTo(HaveOccurred(), "the pausable volume's filesystem (hack/cluster/up.sh)")
	defer func() { _ = f.Close() }()
	DeferCleanup(thaw, dir)
	t0 := time.Now()
	Expect(unix.IoctlSetInt(int(f.Fd()), ioctlFreeze, 0)).To(Succeed())
	t1 := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	t2 := time.Now()
	Expect(unix.IoctlSetInt(int(f.Fd()), ioctlThaw, 0)).To(Succeed())
	Expect(ctx.Err()).NotTo(HaveOccurred(), "interrupted while frozen")
	return frozen{least: t2.Sub(t1), most: time.Since(t0)}
}

// thaw thaws dir's filesystem if it is frozen.
func thaw(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = unix.IoctlSetInt(int(f.Fd()), ioctlThaw, 0) // EINVAL when not frozen
		_ = f.Close()
	}
}

// A takeover or a LIF move shows as seconds in which no I/O completes; that
// length is what a storage team reports. The volume's storage is paused for
// exactly 3 s in one writing step and 10 s in the next; each step's longest
// stall must be that pause to within 100 ms.
var _ = Describe("A storage that pauses", func() {
	It("reports each pause as its step's longest stall, to within 100 ms: 3 s and 10 s", func(ctx SpecContext) {
		Eventually(freeVolumes(classPausable), time.Minute, time.Second).Should(BeNumerically(">=", 1),
			"the %s PV Available; nothing else may hold it", classPausable)
		doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata: {name: pause, namespace: %s}
spec:
  storage: {storageClassName: %s, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}
  clients: {count: 1, jobsPerClient: 1}
  workload: {profile: rand-write, workingSetPerClient: 256Mi}
  load:
    rate: {unit: IOPS, steps: [400, 500]}
    stepDuration: 18s
    rampTime: 1s
  cleanup: {volumes: Delete}
`, newNamespace("pause"), classPausable)
		var b v1alpha1.StorageBenchmark
		Expect(yaml.UnmarshalStrict([]byte(doc), &b)).To(Succeed())
		apply(&b)
		// The first step is ordered a lead (about a second) ahead of its
		// start; rate steps are ordered ahead, so each starts as the one
		// before ends (ramp 1 s + 18 s). Each pause begins 3 s into its
		// step's measured window, give or take the lead, and ends before
		// it does, whenever the step before was recorded.
		Eventually(func() bool {
			cur := k8stest.Get(k8s, &b)
			return cur.Status.CurrentStep != nil && *cur.Status.CurrentStep == 0
		}, 5*time.Minute, 100*time.Millisecond).Should(BeTrue(), "step 0 ordered")
		ordered := time.Now()
		pauses := []time.Duration{3 * time.Second, 10 * time.Second}
		held := make([]frozen, len(pauses))
		for k, d := range pauses {
			time.Sleep(time.Until(ordered.Add(time.Duration(k)*19*time.Second + 4*time.Second)))
			held[k] = freeze(ctx, d)
		}
		cur := k8stest.WaitComplete(k8s, &b, 5*time.Minute)
		Expect(cur.Status.Steps).To(HaveLen(len(pauses)))
		for k, h := range held {
			s := cur.Status.Steps[k].LongestStall
			Expect(s).NotTo(BeNil(), "step %d: a stall", k)
			got := s.Duration.Duration
			GinkgoWriter.Printf("pause: step %d frozen %v..%v, longest stall %v from %v after the ramp\n", k, h.least, h.most, got, s.Start.Duration)
			Expect(got).To(And(BeNumerically(">=", h.least-100*time.Millisecond), BeNumerically("<=", h.most+100*time.Millisecond)),
				"step %d: the pause held writes %v to %v", k, h.least, h.most)
		}
		// The class's own source samples every 10 s (backendMetricsArgs):
		// no 18 s step holds a sample wholly inside its window.
		cur = k8stest.WaitFor(k8s, &b, time.Minute, "the BackendMetrics verdict", func(b *v1alpha1.StorageBenchmark) bool {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
			return c != nil && c.Status != metav1.ConditionUnknown
		})
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionBackendMetrics)
		Expect(c.Reason).To(Equal("StepsTooShort"), c.Message)
		Expect(c.Message).To(ContainSubstring("(10s)"))
		for _, s := range cur.Status.Steps {
			Expect(s.Backend).NotTo(BeNil())
			Expect(s.Backend.TooShort).To(BeTrue(), "step %d", s.Index)
			Expect(s.Backend.Resolution.Duration).To(Equal(10 * time.Second))
		}
		recordPause(cur)
		Eventually(freeVolumes(classPausable), 2*time.Minute, time.Second).Should(BeNumerically(">=", 1), "the PV freed for the next run")
	})
})

// recordPause writes the run with its first step's ConfigMap (the 3 s
// pause's timeline) to _work/e2e/timeline-pause.yaml: the README's stall
// picture is drawn from it (docs/images/timeline-stall.yaml).
func recordPause(cur *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	var cm corev1.ConfigMap
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: cur.Namespace, Name: exchange.StepName(cur.Name, 0)}, &cm)).To(Succeed())
	// Its owner reference stays: the plugin reads a step's ConfigMap only
	// when the benchmark controls it.
	cm.ManagedFields, cur.ManagedFields = nil, nil
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	cur.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark"}
	recordYAML("timeline-pause.yaml", map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{cur, &cm}})
}
