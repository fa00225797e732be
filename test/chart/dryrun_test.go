package chart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/internal/testenv"
)

// warnings collects the API server's warnings (Pod Security's "would
// violate PodSecurity" among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// TestServerDryRun creates every object of config/default and of several
// chart renders in a real kube-apiserver with server-side dry run, in
// namespaces that enforce the restricted Pod Security profile: the API
// server's validation and admission must accept each object without a
// warning. The ServiceMonitor's CRD (prometheus-operator) is not installed,
// so renders with it are checked offline only (TestChartValues).
func TestServerDryRun(t *testing.T) {
	// Render first: a missing tool fails before the API server starts.
	renders := []struct {
		name, namespace string
		objs            []*unstructured.Unstructured
	}{
		{"kustomize config/default", namespace, kustomizeBuild(t)},
		{"helm defaults", "sb-helm-defaults", nil},
		{"helm options", "sb-helm-options", nil},
		{"helm without metrics", "sb-helm-nometrics", nil},
	}
	for i, set := range [][]string{
		nil,
		{
			"--set", "watchNamespaces={a,b}", "--set", "tridentNamespace=netapp", "--set", "claimBindTimeout=10m",
			"--set", "readyTimeout=1h", "--set", "metrics.secure=false", "--set", "networkPolicy.enabled=false",
			"--set", "replicas=2", "--set", "podSecurityContext.runAsUser=65532", "--set", "nodeSelector.kubernetes\\.io/os=linux",
			"--set", "extraArgs={--zap-log-level=debug}",
			"--set", "policy.allowedRunnerImages={registry.example/runner:2}", "--set", "policy.allowedTolerationKeys={*}",
			"--set", "policy.allowedNodeSelectorKeys={pool,kubernetes.io/hostname}",
		},
		{"--set", "metrics.enabled=false", "--set", "leaderElection.enabled=false"},
	} {
		r := &renders[i+1]
		out, err := helmTemplateErr(t, release, r.namespace, append([]string{"--include-crds"}, set...)...)
		if err != nil {
			t.Fatal(err)
		}
		r.objs = parse(t, out)
	}

	dir, err := testenv.AssetsDir()
	if err != nil {
		t.Fatalf("the dry run needs a real kube-apiserver and etcd: %v", err)
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	warn := &warnings{}
	cfg.WarningHandler = warn
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, r := range renders {
		t.Run(r.name, func(t *testing.T) {
			// The namespace is created for real (a dry-run object needs
			// it); config/default's own Namespace object is that namespace.
			var ns client.Object = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.namespace, Labels: map[string]string{
				"pod-security.kubernetes.io/enforce": "restricted",
				"pod-security.kubernetes.io/warn":    "restricted",
			}}}
			if o := find(r.objs, "Namespace", r.namespace); o != nil {
				ns = o.DeepCopy()
			}
			if err := k8s.Create(ctx, ns); err != nil {
				t.Fatalf("creating namespace %s: %v", r.namespace, err)
			}
			if w := warn.take(); len(w) != 0 {
				t.Errorf("namespace %s: warnings %q", r.namespace, w)
			}
			// Other namespaces the render places objects in (the manager's
			// Roles in watched namespaces) exist before an install too.
			for _, o := range r.objs {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.GetNamespace()}}
				if ns.Name == "" || ns.Name == r.namespace {
					continue
				}
				if err := k8s.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("creating namespace %s: %v", ns.Name, err)
				}
			}
			// CRDs first, as kubectl and Helm apply them.
			var ordered []*unstructured.Unstructured
			for _, o := range r.objs {
				if o.GetKind() == "CustomResourceDefinition" {
					ordered = append(ordered, o)
				}
			}
			for _, o := range r.objs {
				switch o.GetKind() {
				case "CustomResourceDefinition", "Namespace":
				case "ServiceMonitor":
					t.Fatalf("%s: the API server has no ServiceMonitor CRD; render it offline only", id(o))
				default:
					ordered = append(ordered, o)
				}
			}
			kinds := map[string]bool{}
			for _, o := range ordered {
				if err := k8s.Create(ctx, o.DeepCopy(), client.DryRunAll); err != nil {
					t.Errorf("dry-run create %s: %v", id(o), err)
				}
				if w := warn.take(); len(w) != 0 {
					t.Errorf("%s: warnings %q", id(o), w)
				}
				kinds[o.GetKind()] = true
			}
			for _, kind := range []string{"CustomResourceDefinition", "Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
				"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
				if !kinds[kind] {
					t.Errorf("no %s in the render", kind)
				}
			}
			t.Logf("%d objects accepted: %s", len(ordered), strings.Join(ids(ordered), ", "))
		})
	}

	// Last, as it creates the CRD for real: helm install itself, and the
	// benchmark its NOTES show.
	t.Run("helm install and the NOTES example", func(t *testing.T) {
		const ns = "sb-helm-install"
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		user, err := env.AddUser(envtest.User{Name: "chart-test", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		kubeconfig, err := user.KubeConfig()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, tool(t, "helm"), "install", release, "charts/storagebench", "--namespace", ns, "--kubeconfig", path)
		if err != nil {
			t.Fatal(err)
		}
		notes := string(out)
		if !strings.Contains(notes, "rollout status deployment/storagebench-manager") {
			t.Errorf("NOTES do not name the Deployment:\n%s", notes)
		}
		sample := notesExample(t, notes)
		sample.SetNamespace(ns)
		deadline := time.Now().Add(30 * time.Second)
		for {
			// The CRD Helm created may take a moment to be served.
			err = k8s.Create(ctx, sample.DeepCopy(), client.DryRunAll)
			if err == nil || time.Now().After(deadline) || !meta.IsNoMatchError(err) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("the NOTES' StorageBenchmark is refused: %v", err)
		}
		if _, err := run(t, tool(t, "helm"), "uninstall", release, "--namespace", ns, "--kubeconfig", path); err != nil {
			t.Error(err)
		}
		warn.take() // helm's client is not ours; its warnings went to its stderr
	})
}

// notesExample returns the StorageBenchmark of the NOTES' heredoc.
func notesExample(t *testing.T, notes string) *unstructured.Unstructured {
	t.Helper()
	_, rest, ok := strings.Cut(notes, "cat <<YAML")
	if ok {
		_, rest, ok = strings.Cut(rest, "\n")
	}
	if !ok {
		t.Fatalf("no example in the NOTES:\n%s", notes)
	}
	body, _, ok := strings.Cut(rest, "\n  YAML\n")
	if !ok {
		t.Fatalf("the NOTES' example does not end:\n%s", notes)
	}
	var doc strings.Builder
	for _, line := range strings.Split(body, "\n") {
		doc.WriteString(strings.TrimPrefix(line, "  ") + "\n")
	}
	objs := parse(t, []byte(doc.String()))
	if len(objs) != 1 || objs[0].GetKind() != "StorageBenchmark" {
		t.Fatalf("the NOTES' example is not one StorageBenchmark: %v", ids(objs))
	}
	return objs[0]
}
