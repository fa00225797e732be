package integration

import (
	"context"
	"maps"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/test/build"
	"github.com/storagebench/storagebench/test/k8stest"
)

// newNamespace creates a namespace for one spec, deleted after it.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sb-"}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// benchmark is a small OLTP benchmark on the harness' class: 3 clients on
// one shared volume, 2 rate steps of 5 s; mutate adapts it.
func benchmark(ns, name string, mutate func(*v1alpha1.StorageBenchmark)) *v1alpha1.StorageBenchmark {
	return build.Benchmark(ns, name, build.Class(classLocal), build.Shared(), build.Clients(3),
		build.Rates(150, 300), build.StepDuration(5*time.Second), build.With(mutate))
}

func get(b *v1alpha1.StorageBenchmark) *v1alpha1.StorageBenchmark { return k8stest.Get(k8s, b) }

var conditionTrue = k8stest.ConditionTrue

// waitFor polls the benchmark until cond holds, and returns it.
func waitFor(b *v1alpha1.StorageBenchmark, timeout time.Duration, what string, cond func(*v1alpha1.StorageBenchmark) bool) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	return k8stest.WaitFor(k8s, b, timeout, what, cond)
}

func waitComplete(b *v1alpha1.StorageBenchmark, timeout time.Duration) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	return k8stest.WaitComplete(k8s, b, timeout)
}

// waitFailed waits for Failed and checks its reason and message.
func waitFailed(b *v1alpha1.StorageBenchmark, timeout time.Duration, reason, msgPart string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	cur := waitFor(b, timeout, "Failed", conditionTrue(v1alpha1.ConditionFailed))
	c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
	Expect(c.Reason).To(Equal(reason), c.Message)
	Expect(c.Message).To(ContainSubstring(msgPart))
	Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
	Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionReady)).To(BeFalse())
	return cur
}

func listed[T client.ObjectList](ns string, list T, sel client.MatchingLabels) T {
	GinkgoHelper()
	return k8stest.Listed(k8s, ns, list, sel)
}

var ofBenchmark = k8stest.OfBenchmark

// noPodsLeft waits until no client pod of the benchmark exists.
func noPodsLeft(b *v1alpha1.StorageBenchmark, timeout time.Duration) {
	Eventually(func() []corev1.Pod {
		return listed(b.Namespace, &corev1.PodList{}, ofBenchmark(b)).Items
	}, timeout, 250*time.Millisecond).Should(BeEmpty())
}

// noPodsRunning waits until every client pod of the benchmark has ended
// (a failed client's pod stays, ended, for its logs).
func noPodsRunning(b *v1alpha1.StorageBenchmark, timeout time.Duration) {
	Eventually(func() []string {
		var running []string
		for _, p := range listed(b.Namespace, &corev1.PodList{}, ofBenchmark(b)).Items {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				running = append(running, p.Name+" "+string(p.Status.Phase))
			}
		}
		return running
	}, timeout, 250*time.Millisecond).Should(BeEmpty())
}

func claimsOf(b *v1alpha1.StorageBenchmark) []corev1.PersistentVolumeClaim {
	return listed(b.Namespace, &corev1.PersistentVolumeClaimList{}, ofBenchmark(b)).Items
}

func jobsOf(b *v1alpha1.StorageBenchmark) []batchv1.Job {
	return listed(b.Namespace, &batchv1.JobList{}, ofBenchmark(b)).Items
}

// resultRecorder keeps every result each runner published, as seen by a
// watch on the namespace's client ConfigMaps, to check the operator's
// aggregates against the runners' own results.
type resultRecorder struct {
	mu   sync.Mutex
	seen map[[2]int]results.ClientStep // (step, client) → result
	// keys counts the results seen by the ConfigMap key they came in
	// (result.bin, result.json).
	keys map[string]int
	stop func()
}

func recordResults(ns string) *resultRecorder {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	Expect(err).NotTo(HaveOccurred())
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(context.Background(), metav1.ListOptions{
		LabelSelector: exchange.LabelRole + "=" + exchange.RoleClient})
	Expect(err).NotTo(HaveOccurred())
	r := &resultRecorder{seen: map[[2]int]results.ClientStep{}, keys: map[string]int{}, stop: w.Stop}
	go func() {
		defer GinkgoRecover()
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			res, found, err := exchange.Result(cm)
			if err != nil || !found {
				continue
			}
			key := exchange.KeyResult
			if _, ok := cm.BinaryData[exchange.KeyResultWire]; ok {
				key = exchange.KeyResultWire
			}
			r.mu.Lock()
			r.seen[[2]int{res.Step, res.Client}] = res
			r.keys[key]++
			r.mu.Unlock()
		}
	}()
	DeferCleanup(w.Stop)
	return r
}

// step returns the recorded results of one step, client by client.
func (r *resultRecorder) step(k, clients int) []results.ClientStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []results.ClientStep
	for c := 0; c < clients; c++ {
		res, ok := r.seen[[2]int{k, c}]
		Expect(ok).To(BeTrue(), "no result of client %d for step %d was seen", c, k)
		out = append(out, res)
	}
	return out
}

// encodings returns how many results were seen under each ConfigMap key.
func (r *resultRecorder) encodings() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.keys)
}

// stepAggregate reads the step ConfigMap the operator wrote.
func stepAggregate(b *v1alpha1.StorageBenchmark, k int) results.StepAggregate {
	var cm corev1.ConfigMap
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: b.Namespace, Name: exchange.StepName(b.Name, k)}, &cm)).To(Succeed())
	agg, err := exchange.Aggregate(&cm)
	Expect(err).NotTo(HaveOccurred())
	return agg
}

var _ = GinkgoWriter // keep the import when specs change

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func durationOf(s string) metav1.Duration {
	d, err := time.ParseDuration(s)
	Expect(err).NotTo(HaveOccurred())
	return metav1.Duration{Duration: d}
}

func objectMeta(u *unstructured.Unstructured) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName()}
}

var objectsIn = k8stest.ObjectsIn

// kstatusOf is obj's status as kstatus (Flux, cli-utils) computes it from
// its conditions.
func kstatusOf(obj client.Object, kind string) kstatus.Status {
	GinkgoHelper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
	res, err := kstatus.Compute(u)
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// argoHealth is obj's health by the chart's Argo CD health check.
func argoHealth(obj runtime.Object, kind string) string {
	GinkgoHelper()
	status, msg, err := k8stest.ArgoHealth(filepath.Join("..", ".."), kind, obj)
	Expect(err).NotTo(HaveOccurred())
	return status + ": " + msg
}
