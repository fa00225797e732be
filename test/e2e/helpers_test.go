package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// run runs a command of the clone and returns its standard output; its
// standard error goes to the spec's output.
func run(name string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Stderr = GinkgoWriter
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "%s %s", name, strings.Join(args, " "))
	return string(out)
}

// kubectl runs the pinned kubectl against the cluster with stdin, and
// returns its output and error.
func kubectl(stdin string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// newNamespace creates a namespace for one spec, deleted after it (with
// everything in it).
func newNamespace(prefix string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// manifest is the benchmark as the YAML a user applies.
func manifest(b *v1alpha1.StorageBenchmark) string {
	GinkgoHelper()
	doc, err := yaml.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return string(doc)
}

// apply is `kubectl apply -f` of the benchmark.
func apply(b *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	out, errOut, err := kubectl(manifest(b), "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), errOut)
	Expect(out).To(ContainSubstring("storagebenchmark.storagebench.io/%s created", b.Name))
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// recordYAML writes v as YAML to _work/e2e/file: recordings of real runs the
// docs' pictures are drawn from.
func recordYAML(file string, v any) {
	GinkgoHelper()
	out, err := yaml.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(filepath.Join(root, "_work", "e2e"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(root, "_work", "e2e", file), out, 0o644)).To(Succeed())
}
