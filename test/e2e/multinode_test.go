package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The multi-node specs: the cluster grows to three nodes (hack/cluster/up.sh
// with STORAGEBENCH_NODES=3: this machine and two nodes in network namespaces of their
// own, hack/cluster/node.sh), three clients spread over them, and faults
// while a fixed rate runs. Each fault spec adds a row to
// _work/e2e/faults.md (docs/faults.md is written from it). The cluster goes
// back to one node afterwards.

// smallOnNodes is small on local-path, whose volumes belong to one node
// each (node affinity): a client's volume is made on the node its pod is
// scheduled to, the multi-node behaviour these specs run on.
func smallOnNodes(ns, name string, stepDuration time.Duration, rates ...int64) *v1alpha1.StorageBenchmark {
	b := small(ns, name, stepDuration, rates...)
	b.Spec.Storage.StorageClassName = ptr.To(classPath)
	return b
}

// spread3 is smallOnNodes with three clients spread across nodes.
func spread3(ns, name string, stepDuration time.Duration, rates ...int64) *v1alpha1.StorageBenchmark {
	b := smallOnNodes(ns, name, stepDuration, rates...)
	b.Spec.Clients.Count = 3
	b.Spec.Clients.SpreadAcrossNodes = true
	return b
}

// runningSpread3 applies spread3 of one rate step in a namespace of its
// own, and returns once the step has run for settle.
func runningSpread3(prefix, name string, stepDuration time.Duration, rate int64, settle time.Duration) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	b := spread3(newNamespace(prefix), name, stepDuration, rate)
	apply(b)
	k8stest.WaitFor(k8s, b, 4*time.Minute, "running step 1", k8stest.StepRunning(0))
	time.Sleep(settle)
	return b
}

// faultRow is one fault's measured outcome.
type faultRow struct {
	fault, outcome, stall, gap, detection, outage string
}

var _ = Describe("Several nodes", Ordered, Label("multinode"), func() {
	var rows []faultRow

	BeforeAll(func() {
		By("growing the cluster to three nodes, and allowing a node selector and a toleration (STORAGEBENCH_NODES=3 hack/cluster/install.sh)")
		installWith("3", "--set", "policy.allowedNodeSelectorKeys={"+poolLabel+"}", "--set", "policy.allowedTolerationKeys={"+dedicatedTaint+"}")
		Eventually(func() int { return len(readyNodes()) }, 2*time.Minute, time.Second).Should(Equal(3))
		settledManagerPod()
	})
	AfterAll(func() {
		if len(rows) > 0 {
			writeFaults(rows)
		}
		// Back to one node and the default policy even when the wait fails,
		// with the manager settled on it for whatever runs next (make demo).
		defer func() {
			installWith("1")
			Eventually(readyNodes, 2*time.Minute, time.Second).Should(HaveLen(1))
			settledManagerPod()
		}()
		By("waiting for the volumes on the extra nodes to go, then back to one node (hack/cluster/up.sh)")
		// A node removed with volumes on it would keep them, and their
		// deletion pending, for good.
		Eventually(func() []string {
			var left []string
			for _, pv := range k8stest.Listed(k8s, "", &corev1.PersistentVolumeList{}, nil).Items {
				if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
					for _, t := range a.Required.NodeSelectorTerms {
						for _, e := range t.MatchExpressions {
							for _, v := range e.Values {
								if nodeNumber(v) != "" {
									left = append(left, pv.Name)
								}
							}
						}
					}
				}
			}
			return left
		}, 3*time.Minute, time.Second).Should(BeEmpty(), "local-path volumes on the extra nodes")
	})

	It("spreads three clients over three nodes, and starts each step on all of them at one instant", func() {
		ns := newNamespace("spread")
		b := spread3(ns, "spread", 10*time.Second, 300, 600)
		apply(b)
		// The pods' nodes, read while step 1 runs: a complete run deletes
		// its pods.
		k8stest.WaitFor(k8s, b, 4*time.Minute, "running step 1", k8stest.StepRunning(0))
		nodes := map[string]bool{}
		for _, p := range k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items {
			nodes[p.Spec.NodeName] = true
		}
		Expect(nodes).To(HaveLen(3), "the client pods' nodes")
		cur := k8stest.WaitComplete(k8s, b, 5*time.Minute)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClientsSpread)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		Expect(c.Message).To(Equal("3 clients on 3 distinct nodes"))
		Expect(cur.Status.Steps).To(HaveLen(2))
		for _, s := range cur.Status.Steps {
			Expect(s.Clients).To(BeEquivalentTo(3))
			k8stest.ExpectTracksOffered(s, 0.05)
			// The start instants are in the API server's clock, each runner
			// correcting its own offset; the spread is what is left.
			Expect(s.StartSkew.Duration).To(BeNumerically("<", 500*time.Millisecond), "step %d's start skew", s.Index)
			GinkgoWriter.Printf("step %d: %d IOPS offered, %d achieved, start skew %s over 3 nodes\n", s.Index+1, s.OfferedIOPS, s.AchievedIOPS, s.StartSkew.Duration)
		}
	})

	It("honours nodeSelector and tolerations, and says when the spread could not be kept", func() {
		extra := []string{}
		for _, n := range readyNodes() {
			if nodeNumber(n) != "" {
				extra = append(extra, n)
			}
		}
		Expect(extra).To(HaveLen(2))
		By("labelling both extra nodes " + poolLabel + "=bench, and tainting " + extra[1])
		for _, n := range extra {
			_, stderr, err := kubectl("", "label", "node", n, poolLabel+"=bench", "--overwrite")
			Expect(err).NotTo(HaveOccurred(), stderr)
			DeferCleanup(func() { _, _, _ = kubectl("", "label", "node", n, poolLabel+"-") })
		}
		_, stderr, err := kubectl("", "taint", "node", extra[1], dedicatedTaint+"=bench:NoSchedule", "--overwrite")
		Expect(err).NotTo(HaveOccurred(), stderr)
		DeferCleanup(func() { _, _, _ = kubectl("", "taint", "node", extra[1], dedicatedTaint+"-") })

		ns := newNamespace("placement")
		tolerant := smallOnNodes(ns, "tolerant", 5*time.Second, 200)
		tolerant.Spec.Clients.SpreadAcrossNodes = true
		tolerant.Spec.Clients.NodeSelector = map[string]string{poolLabel: "bench"}
		tolerant.Spec.Clients.Tolerations = []corev1.Toleration{{Key: dedicatedTaint, Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}}
		intolerant := smallOnNodes(ns, "intolerant", 5*time.Second, 200)
		intolerant.Spec.Clients.SpreadAcrossNodes = true
		intolerant.Spec.Clients.NodeSelector = map[string]string{poolLabel: "bench"}
		for _, b := range []*v1alpha1.StorageBenchmark{tolerant, intolerant} {
			apply(b)
		}
		// The nodes, read while the pods exist: a complete run deletes them.
		nodesOf := func(b *v1alpha1.StorageBenchmark) []string {
			var nodes []string
			Eventually(func() []string {
				nodes = nil
				for _, p := range k8stest.Listed(k8s, ns, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items {
					if p.Spec.NodeName != "" {
						nodes = append(nodes, p.Spec.NodeName)
					}
				}
				return nodes
			}, 3*time.Minute, time.Second).Should(HaveLen(2), "%s's two client pods scheduled", b.Name)
			return nodes
		}
		placed := map[string][]string{}
		for _, b := range []*v1alpha1.StorageBenchmark{tolerant, intolerant} {
			placed[b.Name] = nodesOf(b)
		}
		for _, b := range []*v1alpha1.StorageBenchmark{tolerant, intolerant} {
			k8stest.WaitComplete(k8s, b, 5*time.Minute)
		}
		Expect(placed[tolerant.Name]).To(ConsistOf(extra[0], extra[1]), "the selector keeps node 0 out, the toleration lets %s in", extra[1])
		Expect(placed[intolerant.Name]).To(ConsistOf(extra[0], extra[0]), "without the toleration only %s is left", extra[0])
		c := meta.FindStatusCondition(k8stest.Get(k8s, tolerant).Status.Conditions, v1alpha1.ConditionClientsSpread)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		c = meta.FindStatusCondition(k8stest.Get(k8s, intolerant).Status.Conditions, v1alpha1.ConditionClientsSpread)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal("SharingNodes"))
		Expect(c.Message).To(HavePrefix("2 clients on 1 node: %s runs clients 0 1", extra[0]))
	})

	It("fails with ClientLost naming the node when a client's node is lost, a verifier on another node reads back its finished writes, and nothing is left behind", func() {
		// One volume every node reaches, as NFS would be: a hostPath PV
		// with no node affinity (the nodes share this machine's disk).
		// The clients verify what they write; the node of one of them is
		// lost in the second step.
		ns := newNamespace("nodelost")
		b := spread3(ns, "nodelost", 10*time.Second, 300, 600)
		b.Spec.Storage.StorageClassName = ptr.To(anyNodeVolume(ns))
		b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingShared, corev1.ReadWriteMany
		b.Spec.Storage.Size = resource.MustParse("1Gi")
		b.Spec.Workload.Profile = "rand-write"
		b.Spec.Verify = &v1alpha1.VerifySpec{}
		apply(b)
		k8stest.WaitFor(k8s, b, 4*time.Minute, "running step 2", k8stest.StepRunning(1))
		time.Sleep(4 * time.Second)
		victim, k := extraNodeClient(b)
		DeferCleanup(func() { _ = exec.Command(filepath.Join(root, "hack/cluster/node.sh"), "up", k).Run() })
		began := time.Now()
		run("hack/cluster/node.sh", "kill", k)
		cur := waitFailed(b, 4*time.Minute)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(c.Reason).To(Equal("ClientLost"))
		Expect(c.Message).To(ContainSubstring("lost its node " + victim))
		detection := time.Since(began)
		// The node controller marks the node after its grace period (50 s),
		// checked every 5 s; the manager reacts to the Node's update.
		Expect(detection).To(BeNumerically("<", 90*time.Second))

		By("reading back, from a node that is up, every block the clients' finished steps wrote")
		cur = k8stest.WaitFor(k8s, b, 3*time.Minute, "the verifier's verdict", func(b *v1alpha1.StorageBenchmark) bool {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionDataIntegrity)
			return c != nil && c.Status != metav1.ConditionUnknown
		})
		integrity := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDataIntegrity)
		Expect(integrity.Reason).To(Equal("Verified"), integrity.Message)
		v := cur.Status.VerificationAfterLoss
		Expect(v).NotTo(BeNil())
		Expect(v.BadBlocks).To(BeZero())
		Expect(v.Unverified).To(BeZero())
		// Step 0 is every client's; the survivors finished step 1 too.
		Expect(v.BlocksVerified).To(BeNumerically(">", cur.Status.Steps[0].Verification.BlocksVerified))
		verified := fmt.Sprintf("; a verifier on a node that was up read back all %d blocks the finished steps wrote (%d overwritten by the lost step): none bad",
			v.BlocksVerified, v.Overwritten)
		rows = append(rows, faultRow{fault: "a client's node lost (kubelet, containerd and pods SIGKILLed)", outcome: "Failed, ClientLost: " + c.Message + verified,
			stall: "not measured: the step is not recorded, as the lost client never reports", gap: "-", detection: round(detection), outage: "until the node returns"})

		By("bringing the node back: its kubelet finishes the deleted pods")
		run("hack/cluster/node.sh", "up", k)
		expectNothingLeft(b)
	})

	It("completes every step once when the manager pod is deleted and comes back on another node", func() {
		ns := newNamespace("manager")
		b := spread3(ns, "manager", 15*time.Second, 200, 400, 600)
		apply(b)
		k8stest.WaitFor(k8s, b, 4*time.Minute, "running step 2", k8stest.StepRunning(1))
		old := settledManagerPod()
		from := old.Spec.NodeName
		cordon(from)
		began := time.Now()
		Expect(k8s.Delete(context.Background(), &old)).To(Succeed())
		var to string
		Eventually(func() string {
			for _, p := range managerPods() {
				if p.Name != old.Name && p.Status.Phase == corev1.PodRunning && isReady(p) {
					to = p.Spec.NodeName
				}
			}
			return to
		}, 3*time.Minute, time.Second).ShouldNot(BeEmpty(), "a new manager pod, Ready")
		outage := time.Since(began)
		uncordon(from)
		Expect(to).NotTo(Equal(from))
		cur := k8stest.WaitComplete(k8s, b, 5*time.Minute)
		expectEveryStepOnce(cur, 3)
		rows = append(rows, faultRow{fault: "the manager pod deleted mid-step, rescheduled from " + from + " to " + to, outcome: "Complete, 3 of 3 steps, none run twice",
			stall: longestStall(cur), gap: longestGap(cur), detection: "-", outage: round(outage) + " without a Ready manager"})
	})

	It("completes every step once when the control plane restarts mid-step: kube-apiserver in one step, etcd in the next", func() {
		// One run for both daemons: each restart lands in a step of its own.
		ns := newNamespace("restart")
		b := spread3(ns, "cp", 20*time.Second, 300, 450, 600)
		apply(b)
		for k, daemon := range []string{"kube-apiserver", "etcd"} {
			k8stest.WaitFor(k8s, b, 4*time.Minute, fmt.Sprintf("running step %d", k+1), k8stest.StepRunning(int32(k)))
			time.Sleep(5 * time.Second)
			began := time.Now()
			run("hack/cluster/restart.sh", daemon)
			outage := time.Since(began)
			rows = append(rows, faultRow{fault: fmt.Sprintf("%s SIGKILLed mid-step %d and started again", daemon, k+1), outcome: "Complete, 3 of 3 steps, none run twice",
				detection: "-", outage: round(outage) + " until /readyz answers"})
		}
		cur := k8stest.WaitComplete(k8s, b, 5*time.Minute)
		expectEveryStepOnce(cur, 3)
		for i := len(rows) - 2; i < len(rows); i++ {
			rows[i].stall, rows[i].gap = longestStall(cur), longestGap(cur)
		}
	})

	It("fails with ClientFailed when a client's container is killed (restartPolicy Never: the kubelet does not restart it)", func() {
		b := runningSpread3("killed", "killed", 2*time.Minute, 300, 5*time.Second)
		p := clientPod(b, 1)
		Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
		id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		began := time.Now()
		out, err := exec.Command("ctr", "--address", containerdSocket(p.Spec.NodeName), "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		cur := waitFailed(b, 2*time.Minute)
		detection := time.Since(began)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(c.Reason).To(Equal("ClientFailed"))
		Expect(c.Message).To(ContainSubstring("client 1 (pod %s) failed with exit code 137 (signal 9, killed)", p.Name))
		Expect(detection).To(BeNumerically("<", 30*time.Second))
		Expect(clientPod(b, 1).Status.ContainerStatuses[0].RestartCount).To(BeZero())
		rows = append(rows, faultRow{fault: "a client's container SIGKILLed on " + p.Spec.NodeName, outcome: "Failed, ClientFailed: " + c.Message,
			stall: "the killed client reports nothing", gap: "-", detection: round(detection), outage: "-"})
		expectNothingLeft(b)
	})

	It("fails with ClientLost naming the eviction when a client's node is drained", func() {
		b := runningSpread3("drain", "drained", 2*time.Minute, 300, 10*time.Second)
		victim, _ := extraNodeClient(b)
		DeferCleanup(func() { _, _, _ = kubectl("", "uncordon", victim) })
		began := time.Now()
		_, stderr, err := kubectl("", "drain", victim, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout", "2m")
		Expect(err).NotTo(HaveOccurred(), stderr)
		cur := waitFailed(b, 2*time.Minute)
		detection := time.Since(began)
		uncordon(victim)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		Expect(c.Reason).To(Equal("ClientLost"))
		Expect(c.Message).To(MatchRegexp(`client \d \(pod \S+\) was evicted from node %s \(EvictionByEvictionAPI: `, victim))
		Expect(detection).To(BeNumerically("<", 60*time.Second))
		rows = append(rows, faultRow{fault: "a client's node drained (cordon, eviction)", outcome: "Failed, ClientLost: " + c.Message,
			stall: "the evicted client reports nothing", gap: "-", detection: round(detection), outage: "-"})
		expectNothingLeft(b)
	})
})

// The node label and taint of the placement spec.
const (
	poolLabel      = "storagebench.io/e2e-pool"
	dedicatedTaint = "storagebench.io/e2e-dedicated"
)

// installWith runs hack/cluster/install.sh with n nodes and helm arguments.
func installWith(n string, helmArgs ...string) {
	GinkgoHelper()
	cmd := exec.Command("hack/cluster/install.sh", append(backendMetricsArgs(), helmArgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "STORAGEBENCH_NODES="+n)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "STORAGEBENCH_NODES=%s hack/cluster/install.sh %s", n, strings.Join(helmArgs, " "))
}

// readyNodes are the Ready nodes' names.
func readyNodes() []string {
	GinkgoHelper()
	var names []string
	for _, n := range k8stest.Listed(k8s, "", &corev1.NodeList{}, nil).Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				names = append(names, n.Name)
			}
		}
	}
	return names
}

// clientPod is client i's pod.
func clientPod(b *v1alpha1.StorageBenchmark, i int) corev1.Pod {
	GinkgoHelper()
	sel := k8stest.OfBenchmark(b)
	sel["storagebench.io/client"] = strconv.Itoa(i)
	pods := k8stest.Listed(k8s, b.Namespace, &corev1.PodList{}, sel).Items
	Expect(pods).To(HaveLen(1))
	return pods[0]
}

// extraNodeClient is the node of a client on one of hack/cluster/node.sh's
// nodes that does not run the manager, and that node's number.
func extraNodeClient(b *v1alpha1.StorageBenchmark) (string, string) {
	GinkgoHelper()
	mgr := settledManagerPod().Spec.NodeName
	for i := range 3 {
		node := clientPod(b, i).Spec.NodeName
		if k := nodeNumber(node); k != "" && node != mgr {
			return node, k
		}
	}
	Fail("no client runs on an extra node apart from the manager")
	return "", ""
}

// nodeNumber is K of a node.sh node (<this machine's node>-nK), "" for
// this machine's own node or any other.
func nodeNumber(node string) string {
	host, err := os.Hostname()
	Expect(err).NotTo(HaveOccurred())
	k, ok := strings.CutPrefix(node, strings.ToLower(host)+"-n")
	if _, err := strconv.Atoi(k); !ok || err != nil {
		return ""
	}
	return k
}

// containerdSocket is the containerd socket of a node.
func containerdSocket(node string) string {
	dir := clusterDir()
	if k := nodeNumber(node); k != "" {
		return filepath.Join(dir, "nodes", "n"+k, "containerd/containerd.sock")
	}
	return filepath.Join(dir, "containerd/containerd.sock")
}

func cordon(node string) {
	GinkgoHelper()
	_, stderr, err := kubectl("", "cordon", node)
	Expect(err).NotTo(HaveOccurred(), stderr)
}

func uncordon(node string) {
	GinkgoHelper()
	_, stderr, err := kubectl("", "uncordon", node)
	Expect(err).NotTo(HaveOccurred(), stderr)
}

func isReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitFailed waits until the run ended and expects Failed.
func waitFailed(b *v1alpha1.StorageBenchmark, timeout time.Duration) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	cur := k8stest.WaitFor(k8s, b, timeout, "Failed", func(c *v1alpha1.StorageBenchmark) bool {
		return k8stest.ConditionTrue(v1alpha1.ConditionComplete)(c) || k8stest.ConditionTrue(v1alpha1.ConditionFailed)(c)
	})
	Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionFailed)).To(BeTrue(), "the run ended %+v", cur.Status.Conditions)
	return cur
}

// expectEveryStepOnce: n steps, indexes 0..n-1 in order, none interrupted,
// each at its offered rate.
func expectEveryStepOnce(cur *v1alpha1.StorageBenchmark, n int) {
	GinkgoHelper()
	Expect(cur.Status.Steps).To(HaveLen(n))
	for k, s := range cur.Status.Steps {
		Expect(s.Index).To(BeEquivalentTo(k))
		Expect(s.Clients).To(BeEquivalentTo(3))
		Expect(s.Interrupted).To(BeFalse())
		k8stest.ExpectTracksOffered(s, 0.05)
	}
}

// expectNothingLeft deletes the benchmark and expects every object of it
// gone: pods, Jobs, ConfigMaps and claims.
func expectNothingLeft(b *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	_, stderr, err := kubectl("", "-n", b.Namespace, "delete", "storagebenchmark", b.Name, "--wait=true", "--timeout=3m")
	Expect(err).NotTo(HaveOccurred(), stderr)
	Eventually(func() int {
		return len(k8stest.Listed(k8s, b.Namespace, &corev1.PodList{}, k8stest.OfBenchmark(b)).Items) +
			len(k8stest.Listed(k8s, b.Namespace, &batchv1.JobList{}, k8stest.OfBenchmark(b)).Items) +
			len(k8stest.Listed(k8s, b.Namespace, &corev1.ConfigMapList{}, k8stest.OfBenchmark(b)).Items) +
			len(k8stest.Listed(k8s, b.Namespace, &corev1.PersistentVolumeClaimList{}, k8stest.OfBenchmark(b)).Items)
	}, 3*time.Minute, time.Second).Should(BeZero(), "pods, Jobs, ConfigMaps and claims of %s", b.Name)
}

// longestStall is the longest time no client completed an I/O in any step
// (status.steps[].longestStall: the clients' latency logs and ticks).
func longestStall(cur *v1alpha1.StorageBenchmark) string {
	var d time.Duration
	for _, s := range cur.Status.Steps {
		if s.LongestStall != nil && s.LongestStall.Duration.Duration > d {
			d = s.LongestStall.Duration.Duration
		}
	}
	if d == 0 {
		return "none seen (under 1 s)"
	}
	return d.String()
}

// longestGap is the longest time between a step's end and the next
// step's start: what a control-plane fault adds between steps.
func longestGap(cur *v1alpha1.StorageBenchmark) string {
	var d time.Duration
	steps := cur.Status.Steps
	for k := 1; k < len(steps); k++ {
		end := steps[k-1].StartTime.Add(cur.Spec.Load.StepDuration.Duration)
		if g := steps[k].StartTime.Sub(end); g > d {
			d = g
		}
	}
	return round(d)
}

func round(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// writeFaults writes the rows as a markdown table to _work/e2e/faults.md.
func writeFaults(rows []faultRow) {
	var sb strings.Builder
	sb.WriteString("| fault | outcome | longest I/O stall | longest gap between steps | time to detection | outage |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", r.fault, strings.ReplaceAll(r.outcome, "|", "/"), r.stall, r.gap, r.detection, r.outage)
	}
	GinkgoWriter.Print(sb.String())
	dir := filepath.Join(root, "_work/e2e")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "faults.md"), []byte(sb.String()), 0o644)
}

// anyNodeVolume makes a StorageClass of the namespace's name and one
// ReadWriteMany hostPath PV of it, with no node affinity, in a directory
// of this machine every node mounts: shared storage every node reaches.
// Both go, with the directory, when the spec ends.
func anyNodeVolume(ns string) string {
	GinkgoHelper()
	ctx := context.Background()
	dir := filepath.Join(clusterDir(), "anynode", ns)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.Chmod(dir, 0o777)).To(Succeed()) // the runners' user creates its directories
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Provisioner: "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName: ns, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: dir, Type: ptr.To(corev1.HostPathDirectory)}}}}
	Expect(k8s.Create(ctx, sc)).To(Succeed())
	Expect(k8s.Create(ctx, pv)).To(Succeed())
	DeferCleanup(func() {
		_ = k8s.Delete(context.Background(), pv)
		_ = k8s.Delete(context.Background(), sc)
		_ = os.RemoveAll(dir)
	})
	return ns
}
