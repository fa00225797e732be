// Package k8stest holds the gomega helpers the integration and end-to-end
// suites share: reading, waiting for and checking StorageBenchmarks and
// their children through a controller-runtime client. They fail the
// running ginkgo spec.
package k8stest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:staticcheck // test helpers
	. "github.com/onsi/gomega"    //nolint:staticcheck // test helpers
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers/manager"
	"github.com/storagebench/storagebench/internal/exchange"
)

// Poll is how often the waits look.
const Poll = 250 * time.Millisecond

// Get reads the benchmark's current state.
func Get(c client.Client, b *v1alpha1.StorageBenchmark) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	var cur v1alpha1.StorageBenchmark
	Expect(c.Get(context.Background(), client.ObjectKeyFromObject(b), &cur)).To(Succeed())
	return &cur
}

// ConditionTrue is a condition of WaitFor: the status condition t is True.
func ConditionTrue(t string) func(*v1alpha1.StorageBenchmark) bool {
	return func(b *v1alpha1.StorageBenchmark) bool { return meta.IsStatusConditionTrue(b.Status.Conditions, t) }
}

// StepRunning is a condition of WaitFor: the step of this index (from 0,
// as in status.steps) is ordered and not yet recorded.
func StepRunning(index int32) func(*v1alpha1.StorageBenchmark) bool {
	return func(b *v1alpha1.StorageBenchmark) bool {
		return b.Status.CurrentStep != nil && *b.Status.CurrentStep == index && len(b.Status.Steps) == int(index)
	}
}

// WaitFor polls the benchmark until cond holds, and returns it.
func WaitFor(c client.Client, b *v1alpha1.StorageBenchmark, timeout time.Duration, what string, cond func(*v1alpha1.StorageBenchmark) bool) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	var cur *v1alpha1.StorageBenchmark
	Eventually(func() bool {
		cur = Get(c, b)
		return cond(cur)
	}, timeout, Poll).Should(BeTrue(), func() string {
		return fmt.Sprintf("benchmark %s/%s never became %s; conditions: %+v", b.Namespace, b.Name, what, cur.Status.Conditions)
	})
	return cur
}

// WaitComplete waits until the benchmark finished and expects Complete,
// not Failed.
func WaitComplete(c client.Client, b *v1alpha1.StorageBenchmark, timeout time.Duration) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	cur := WaitFor(c, b, timeout, "Complete or Failed", func(c *v1alpha1.StorageBenchmark) bool {
		return ConditionTrue(v1alpha1.ConditionComplete)(c) || ConditionTrue(v1alpha1.ConditionFailed)(c)
	})
	Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionComplete)).To(BeTrue(),
		"benchmark failed: %+v", meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed))
	return cur
}

// Listed lists objects of the namespace matching the labels.
func Listed[T client.ObjectList](c client.Client, ns string, list T, sel client.MatchingLabels) T {
	GinkgoHelper()
	Expect(c.List(context.Background(), list, client.InNamespace(ns), sel)).To(Succeed())
	return list
}

// OfBenchmark selects the objects the operator made for the benchmark.
func OfBenchmark(b *v1alpha1.StorageBenchmark) client.MatchingLabels {
	return client.MatchingLabels{exchange.LabelBenchmark: b.Name}
}

// ObjectsIn reads the objects of a multi-document YAML file.
func ObjectsIn(file string) []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var obj map[string]any
		Expect(yaml.Unmarshal(doc, &obj)).To(Succeed(), file)
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out
}

// BenchmarksIn reads the StorageBenchmarks of a multi-document YAML file
// (a sample), in file order.
func BenchmarksIn(file string) []*v1alpha1.StorageBenchmark {
	GinkgoHelper()
	var out []*v1alpha1.StorageBenchmark
	for _, u := range ObjectsIn(file) {
		if u.GetKind() != "StorageBenchmark" {
			continue
		}
		b := &v1alpha1.StorageBenchmark{}
		data, err := yaml.Marshal(u.Object)
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(data, b)).To(Succeed(), file)
		out = append(out, b)
	}
	Expect(out).NotTo(BeEmpty(), "no StorageBenchmark in %s", file)
	return out
}

// ExpectTracksOffered: a step that offered a rate and did not saturate
// achieved it within tolerance (0.05: 5 %), in IOPS or bytes per second,
// whichever was offered.
func ExpectTracksOffered(s v1alpha1.StepStatus, tolerance float64) {
	GinkgoHelper()
	if s.Saturated {
		return
	}
	switch {
	case s.OfferedIOPS > 0:
		Expect(float64(s.AchievedIOPS)).To(BeNumerically("~", float64(s.OfferedIOPS), tolerance*float64(s.OfferedIOPS)),
			"step %d achieved %d IOPS of %d offered", s.Index+1, s.AchievedIOPS, s.OfferedIOPS)
	case s.OfferedBytesPerSecond > 0:
		Expect(float64(s.AchievedBytesPerSecond)).To(BeNumerically("~", float64(s.OfferedBytesPerSecond), tolerance*float64(s.OfferedBytesPerSecond)),
			"step %d achieved %d B/s of %d offered", s.Index+1, s.AchievedBytesPerSecond, s.OfferedBytesPerSecond)
	default:
		Fail(fmt.Sprintf("step %d offered no rate", s.Index+1))
	}
}

// ExpectOrderedPercentiles: the percentiles are present and ordered, p99.9
// at most the maximum (fio reports a percentile as its bin's value, which
// may exceed the largest sample by less than one bin, 1/64).
func ExpectOrderedPercentiles(l v1alpha1.LatencyStatus) {
	GinkgoHelper()
	Expect(l.P50.Duration).To(BeNumerically(">", 0))
	Expect(l.P50.Duration).To(BeNumerically("<=", l.P90.Duration))
	Expect(l.P90.Duration).To(BeNumerically("<=", l.P99.Duration))
	Expect(l.P99.Duration).To(BeNumerically("<=", l.P999.Duration))
	Expect(float64(l.P999.Duration)).To(BeNumerically("<=", float64(l.Max.Duration)*(1+1.0/64)))
}

// Manager is the operator's manager running in this process (a suite's),
// stoppable to test a restart.
type Manager struct {
	cancel context.CancelFunc
	done   chan error
}

// StartManager builds the manager with o against cfg and runs it.
func StartManager(cfg *rest.Config, o manager.Options) *Manager {
	GinkgoHelper()
	m, err := manager.New(cfg, o)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	rm := &Manager{cancel: cancel, done: make(chan error, 1)}
	go func() { rm.done <- m.Start(ctx) }()
	return rm
}

// Stop stops the manager and waits until it has.
func (m *Manager) Stop() {
	GinkgoHelper()
	m.cancel()
	Eventually(m.done, time.Minute).Should(Receive(BeNil()))
}

// BuildRunner builds the runner (cmd/runner of the clone at root) into dir
// and returns its path.
func BuildRunner(root, dir string) string {
	GinkgoHelper()
	bin := filepath.Join(dir, "runner")
	build := exec.Command("go", "build", "-o", bin, "./cmd/runner")
	build.Dir = root
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return bin
}
