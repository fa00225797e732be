// Package e2e proves the whole product on a real single-node Kubernetes
// built on this machine (hack/cluster/up.sh: etcd, the control plane,
// containerd, a real kubelet, kube-proxy, a bridge CNI, local-path and raw
// block storage, the test-bed CSI driver's csi-local), with the operator
// installed by its Helm chart from images built from this clone
// (hack/cluster/install.sh), client pods running real
// fio in containers, and a real Prometheus (Debian's package) scraping the
// operator and evaluating the chart's rules.
//
// It needs root, like the cluster. The cluster stays up afterwards for the
// next run (make cluster-down stops it). On a failed spec, the suite dumps
// events, objects, the manager's and pods' logs and the cluster components'
// logs to _work/e2e/dumps/<spec>/ and prints where.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/test/spectimes"
)

// The chart's release and what it names.
const (
	release        = "storagebench"
	systemNS       = "storagebench-system"
	managerDeploy  = "storagebench-manager"
	metricsService = "storagebench-metrics"
	metricsReader  = "storagebench-metrics-reader"
)

// Storage classes hack/cluster/up.sh provides. A spec whose subject is not
// local-path itself runs on csi-local: local-path runs a helper pod per
// claim (about 3 s of every short run), the CSI driver binds in under a
// second.
const (
	classPath   = "local-path"   // RWO directory per claim (default), bound to its node
	classShared = "local-shared" // RWX directory per claim
	classBlock  = "local-block"  // raw block PVs on loop devices
	classCSI    = "csi-local"    // the test-bed CSI driver (hack/cluster/csi.sh): Filesystem (RWX) or Block, any node
)

var (
	root       string // the clone
	kubeconfig string
	kubectlBin string
	cfg        *rest.Config
	k8s        client.Client
	cs         *kubernetes.Clientset
	prom       *prometheus
	// promAddr is where the suite's Prometheus listens: on node 0's pod
	// bridge, so the manager reaches it wherever it runs.
	promAddr string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "e2e")
}

// The specs' times, for make test's list of the slowest (test/spectimes).
var _ = ReportAfterSuite("spec times", func(r Report) {
	Expect(spectimes.Record("e2e", r)).To(Succeed())
})

var _ = BeforeSuite(func() {
	Expect(os.Geteuid()).To(BeZero(), "the e2e suite builds a real single-node cluster (containerd, kubelet, loop devices, iptables) and needs root")
	var err error
	root, err = filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())

	By("bringing the cluster up and installing the chart (hack/cluster/install.sh)")
	began := time.Now()
	promAddr = freePodReachableAddr()
	kubeconfig = strings.TrimSpace(run("hack/cluster/install.sh", backendMetricsArgs()...))
	GinkgoWriter.Printf("cluster and chart ready in %s\n", time.Since(began).Round(time.Second))
	kubectlBin = filepath.Join(strings.TrimSpace(run("hack/k8s-binaries.sh", "kubectl")), "kubectl")

	cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())

	By("deleting what an interrupted earlier run left (its e2e- namespaces)")
	deleteLeftovers()

	By("starting Prometheus, scraping the operator with a ServiceAccount token")
	prom = startPrometheus()
})

var _ = AfterSuite(func() {
	if prom != nil {
		prom.stop()
	}
})

// On failure, dump what the cluster and the pods said.
var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && k8s != nil {
		dump(r)
	}
})

// deleteLeftovers deletes the spec namespaces an interrupted run left
// behind (their claims would hold the block volumes) and waits until they
// are gone.
func deleteLeftovers() {
	GinkgoHelper()
	ctx := context.Background()
	left := func() []string {
		var list corev1.NamespaceList
		Expect(k8s.List(ctx, &list)).To(Succeed())
		var names []string
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, "e2e-") && ns.Name != monitoringNS {
				names = append(names, ns.Name)
			}
		}
		return names
	}
	for _, name := range left() {
		GinkgoWriter.Printf("deleting namespace %s, left by an earlier run\n", name)
		err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
	}
	Eventually(left, 3*time.Minute, time.Second).Should(BeEmpty())
}
