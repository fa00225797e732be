package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// appVersion is the chart's appVersion, the default tag of both images.
func appVersion(t *testing.T) string {
	t.Helper()
	v, _ := readYAML(t, "charts/storagebench/Chart.yaml")["appVersion"].(string)
	if v == "" {
		t.Fatal("Chart.yaml has no appVersion")
	}
	return v
}

func TestHelmLint(t *testing.T) {
	helm := tool(t, "helm")
	for _, set := range [][]string{
		nil,
		{"--set", "metrics.serviceMonitor.enabled=true", "--set", "watchNamespaces={a,b}"},
		{"--set", "metrics.enabled=false", "--set", "leaderElection.enabled=false"},
		{"--set", "prometheusRule.enabled=true", "--set", "grafanaDashboard.enabled=true"},
		{"--set", "policy.allowedRunnerImages={registry.example/runner:2}", "--set", "policy.allowedTolerationKeys={*}", "--set", "admissionPolicy.enabled=false"},
	} {
		args := append([]string{"lint", "--strict", "charts/storagebench"}, set...)
		if out, err := run(t, helm, args...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
}

// TestChartDefaults checks the default render: names, images, the manager's
// arguments, probes, security contexts and the optional objects.
func TestChartDefaults(t *testing.T) {
	objs := helmTemplate(t)
	v := appVersion(t)
	d := must(t, objs, "Deployment", "storagebench-manager")
	if d.GetNamespace() != namespace {
		t.Errorf("Deployment namespace %q, want %q", d.GetNamespace(), namespace)
	}
	want := []string{
		"--leader-elect",
		"--health-probe-bind-address=:8081",
		"--metrics-bind-address=:8443",
		"--runner-image=localhost/storagebench-runner:" + v,
		"--runner-image-pull-policy=IfNotPresent",
		"--max-client-memory=8Gi",
		"--max-running-operations-benchmarks=2",
		"--trident-namespace=trident",
		"--claim-bind-timeout=5m",
		"--ready-timeout=30m",
		"--run-key-secret=storagebench-run-key",
		"--max-concurrent-reconciles=4",
	}
	if got := args(t, d); !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
	c := container(t, d)
	if c["image"] != "localhost/storagebench-manager:"+v || c["imagePullPolicy"] != "IfNotPresent" {
		t.Errorf("image %v (%v)", c["image"], c["imagePullPolicy"])
	}
	if r, _ := field(d.Object, "spec", "replicas").(int64); r != 1 {
		t.Errorf("replicas %v, want 1", field(d.Object, "spec", "replicas"))
	}
	checkRestricted(t, d)
	checkProbes(t, d)
	checkMemoryLimitEnv(t, d)
	if field(c, "resources", "requests", "cpu") == nil || field(c, "resources", "requests", "memory") == nil {
		t.Errorf("no resource requests: %v", c["resources"])
	}
	if sa := podSpec(t, d)["serviceAccountName"]; sa != "storagebench-manager" {
		t.Errorf("serviceAccountName %v", sa)
	}

	must(t, objs, "ServiceAccount", "storagebench-manager")
	must(t, objs, "ClusterRole", "storagebench-manager")
	must(t, objs, "ClusterRoleBinding", "storagebench-manager")
	must(t, objs, "ClusterRole", "storagebench-metrics-auth")
	must(t, objs, "ClusterRoleBinding", "storagebench-metrics-auth")
	must(t, objs, "ClusterRole", "storagebench-metrics-reader")
	must(t, objs, "NetworkPolicy", "storagebench-allow-metrics-traffic")
	checkLeaderElection(t, objs, "storagebench-leader-election")
	svc := must(t, objs, "Service", "storagebench-metrics")
	checkServicePort(t, svc, "https", 8443)
	checkAdmissionPolicy(t, objs, "storagebench-policy", []string{"localhost/storagebench-runner:" + v}, nil, nil)
	if sm := ofKind(objs, "ServiceMonitor"); len(sm) != 0 {
		t.Errorf("ServiceMonitor rendered though metrics.serviceMonitor.enabled is false: %v", ids(sm))
	}
	if crds := ofKind(objs, "CustomResourceDefinition"); len(crds) != 0 {
		t.Errorf("CRDs rendered without --include-crds: Helm installs them from crds/")
	}
	checkConsistent(t, objs)
}

// TestChartValues renders the chart with one group of values at a time and
// checks what each changes.
func TestChartValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   []string
		check func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured)
	}{{
		name: "watchNamespaces",
		set:  []string{"watchNamespaces={a,b}"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--watch-namespaces=a,b")
		},
	}, {
		name: "one watched namespace",
		set:  []string{"watchNamespaces={team-a}"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--watch-namespaces=team-a")
		},
	}, {
		name: "tridentNamespace",
		set:  []string{"tridentNamespace=netapp-trident"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--trident-namespace=netapp-trident")
		},
	}, {
		name: "empty tridentNamespace and timeouts: the manager's defaults",
		set:  []string{"tridentNamespace=", "claimBindTimeout=", "readyTimeout="},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			noArg(t, d, "--trident-namespace")
			noArg(t, d, "--claim-bind-timeout")
			noArg(t, d, "--ready-timeout")
		},
	}, {
		name: "timeouts",
		set:  []string{"claimBindTimeout=10m", "readyTimeout=2h30m"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--claim-bind-timeout=10m")
			hasArg(t, d, "--ready-timeout=2h30m")
		},
	}, {
		name: "images",
		set: []string{
			"image.repository=registry.example/sb/manager", "image.tag=v9", "image.pullPolicy=Always",
			"runnerImage.repository=registry.example/sb/runner", "runnerImage.tag=v8", "runnerImage.pullPolicy=Never",
		},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			c := container(t, d)
			if c["image"] != "registry.example/sb/manager:v9" || c["imagePullPolicy"] != "Always" {
				t.Errorf("image %v (%v)", c["image"], c["imagePullPolicy"])
			}
			hasArg(t, d, "--runner-image=registry.example/sb/runner:v8")
			hasArg(t, d, "--runner-image-pull-policy=Never")
		},
	}, {
		name: "no leader election",
		set:  []string{"leaderElection.enabled=false"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured) {
			noArg(t, d, "--leader-elect")
			absent(t, objs, "Role", "storagebench-leader-election")
			absent(t, objs, "RoleBinding", "storagebench-leader-election")
		},
	}, {
		name: "replicas",
		set:  []string{"replicas=3"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			if r, _ := field(d.Object, "spec", "replicas").(int64); r != 3 {
				t.Errorf("replicas %v, want 3", field(d.Object, "spec", "replicas"))
			}
			hasArg(t, d, "--leader-elect")
		},
	}, {
		name: "plain-HTTP metrics",
		set:  []string{"metrics.secure=false"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--metrics-bind-address=:8443")
			hasArg(t, d, "--metrics-secure=false")
			checkServicePort(t, must(t, objs, "Service", "storagebench-metrics"), "http", 8443)
			absent(t, objs, "ClusterRole", "storagebench-metrics-auth")
			absent(t, objs, "ClusterRoleBinding", "storagebench-metrics-auth")
			must(t, objs, "ClusterRole", "storagebench-metrics-reader")
		},
	}, {
		name: "metrics off",
		set:  []string{"metrics.enabled=false", "metrics.serviceMonitor.enabled=true"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--metrics-bind-address=0")
			noArg(t, d, "--metrics-secure")
			for _, kind := range []string{"Service", "NetworkPolicy", "ServiceMonitor"} {
				if o := ofKind(objs, kind); len(o) != 0 {
					t.Errorf("%s rendered with metrics off: %v", kind, ids(o))
				}
			}
			absent(t, objs, "ClusterRole", "storagebench-metrics-auth")
			absent(t, objs, "ClusterRole", "storagebench-metrics-reader")
		},
	}, {
		name: "metrics port",
		set:  []string{"metrics.port=9443"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured) {
			hasArg(t, d, "--metrics-bind-address=:9443")
			checkServicePort(t, must(t, objs, "Service", "storagebench-metrics"), "https", 9443)
			np := must(t, objs, "NetworkPolicy", "storagebench-allow-metrics-traffic")
			if p := field(np.Object, "spec", "ingress").([]any)[0].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]; p != int64(9443) {
				t.Errorf("NetworkPolicy port %v, want 9443", p)
			}
		},
	}, {
		name: "ServiceMonitor",
		set:  []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prometheus"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ *unstructured.Unstructured) {
			sm := must(t, objs, "ServiceMonitor", "storagebench-metrics")
			if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetNamespace() != namespace {
				t.Errorf("ServiceMonitor %s in %q", sm.GetAPIVersion(), sm.GetNamespace())
			}
			if sm.GetLabels()["release"] != "prometheus" {
				t.Errorf("ServiceMonitor labels %v lack release=prometheus", sm.GetLabels())
			}
			ep, _ := field(sm.Object, "spec", "endpoints").([]any)
			if len(ep) != 1 {
				t.Fatalf("endpoints %v", ep)
			}
			e := ep[0].(map[string]any)
			if e["port"] != "https" || e["scheme"] != "https" || e["path"] != "/metrics" || e["bearerTokenFile"] == nil {
				t.Errorf("endpoint %v", e)
			}
			svc := must(t, objs, "Service", "storagebench-metrics")
			if sel := stringMap(field(sm.Object, "spec", "selector", "matchLabels")); !subset(sel, svc.GetLabels()) {
				t.Errorf("ServiceMonitor selector %v does not select the Service (labels %v)", sel, svc.GetLabels())
			}
		},
	}, {
		name: "ServiceMonitor over plain HTTP",
		set:  []string{"metrics.serviceMonitor.enabled=true", "metrics.secure=false"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ *unstructured.Unstructured) {
			sm := must(t, objs, "ServiceMonitor", "storagebench-metrics")
			e := field(sm.Object, "spec", "endpoints").([]any)[0].(map[string]any)
			if e["port"] != "http" || e["scheme"] != "http" || e["bearerTokenFile"] != nil || e["tlsConfig"] != nil {
				t.Errorf("endpoint %v", e)
			}
		},
	}, {
		name: "no NetworkPolicy",
		set:  []string{"networkPolicy.enabled=false"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, _ *unstructured.Unstructured) {
			if o := ofKind(objs, "NetworkPolicy"); len(o) != 0 {
				t.Errorf("NetworkPolicy rendered: %v", ids(o))
			}
		},
	}, {
		name: "an existing ServiceAccount",
		set:  []string{"serviceAccount.create=false", "serviceAccount.name=sb-operator"},
		check: func(t *testing.T, objs []*unstructured.Unstructured, d *unstructured.Unstructured) {
			if o := ofKind(objs, "ServiceAccount"); len(o) != 0 {
				t.Errorf("ServiceAccount rendered: %v", ids(o))
			}
			if sa := podSpec(t, d)["serviceAccountName"]; sa != "sb-operator" {
				t.Errorf("serviceAccountName %v", sa)
			}
		},
	}, {
		name: "scheduling, resources and extra arguments",
		set: []string{
			"nodeSelector.kubernetes\\.io/os=linux",
			"tolerations[0].key=dedicated", "tolerations[0].operator=Exists", "tolerations[0].effect=NoSchedule",
			"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=tier",
			"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=In",
			"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values={infra}",
			"resources.limits.memory=2Gi", "resources.requests.cpu=250m",
			"extraArgs={--zap-log-level=debug}",
			"podAnnotations.example\\.com/team=storage",
		},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			ps := podSpec(t, d)
			if got := stringMap(ps["nodeSelector"]); got["kubernetes.io/os"] != "linux" {
				t.Errorf("nodeSelector %v", ps["nodeSelector"])
			}
			tol, _ := ps["tolerations"].([]any)
			if len(tol) != 1 || tol[0].(map[string]any)["key"] != "dedicated" {
				t.Errorf("tolerations %v", ps["tolerations"])
			}
			if field(ps, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution") == nil {
				t.Errorf("affinity %v", ps["affinity"])
			}
			c := container(t, d)
			if field(c, "resources", "limits", "memory") != "2Gi" || field(c, "resources", "requests", "cpu") != "250m" {
				t.Errorf("resources %v", c["resources"])
			}
			hasArg(t, d, "--zap-log-level=debug")
			ann := stringMap(field(d.Object, "spec", "template", "metadata", "annotations"))
			if ann["example.com/team"] != "storage" || ann["kubectl.kubernetes.io/default-container"] != "manager" {
				t.Errorf("pod annotations %v", ann)
			}
		},
	}, {
		name: "security contexts",
		set:  []string{"podSecurityContext.runAsUser=65532", "securityContext.runAsGroup=65532"},
		check: func(t *testing.T, _ []*unstructured.Unstructured, d *unstructured.Unstructured) {
			checkRestricted(t, d)
			if u := field(podSpec(t, d), "securityContext", "runAsUser"); u != int64(65532) {
				t.Errorf("pod runAsUser %v", u)
			}
			if g := field(container(t, d), "securityContext", "runAsGroup"); g != int64(65532) {
				t.Errorf("container runAsGroup %v", g)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var helmArgs []string
			for _, s := range tc.set {
				helmArgs = append(helmArgs, "--set", s)
			}
			objs := helmTemplate(t, helmArgs...)
			ds := ofKind(objs, "Deployment")
			if len(ds) != 1 {
				t.Fatalf("want one Deployment, got %v", ids(ds))
			}
			tc.check(t, objs, ds[0])
			checkConsistent(t, objs)
		})
	}
}

// TestChartReleaseName: names derive from the release name, so two releases
// never share a cluster-scoped object.
func TestChartReleaseName(t *testing.T) {
	out, err := helmTemplateErr(t, "perf", "perf-system")
	if err != nil {
		t.Fatal(err)
	}
	objs := parse(t, out)
	for _, o := range objs {
		if !strings.HasPrefix(o.GetName(), "perf-storagebench-") {
			t.Errorf("%s: want the prefix perf-storagebench-", id(o))
		}
		if ns := o.GetNamespace(); ns != "" && ns != "perf-system" {
			t.Errorf("%s not in the release namespace", id(o))
		}
	}
	must(t, objs, "ClusterRole", "perf-storagebench-manager")
	must(t, objs, "Deployment", "perf-storagebench-manager")
	checkConsistent(t, objs)
}

// TestChartRefusesReplicasWithoutLeaderElection: two managers without a
// lease would both run every benchmark.
func TestChartRefusesReplicasWithoutLeaderElection(t *testing.T) {
	_, err := helmTemplateErr(t, release, namespace, "--set", "replicas=2", "--set", "leaderElection.enabled=false")
	if err == nil || !strings.Contains(err.Error(), "leaderElection.enabled") {
		t.Fatalf("want a failure naming leaderElection.enabled, got %v", err)
	}
}

// TestChartCRDsInSync: the chart's crds/ are byte-for-byte the generated
// CRDs (make manifests copies them).
func TestChartCRDsInSync(t *testing.T) {
	dir := root(t)
	gen, err := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(gen) == 0 {
		t.Fatalf("no generated CRDs in config/crd/bases (%v)", err)
	}
	chart, err := filepath.Glob(filepath.Join(dir, "charts", "storagebench", "crds", "*"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if !slices.Equal(names(gen), names(chart)) {
		t.Fatalf("charts/storagebench/crds holds %v, config/crd/bases %v: run make manifests", names(chart), names(gen))
	}
	for _, p := range gen {
		sameFile(t, p, filepath.Join(dir, "charts", "storagebench", "crds", filepath.Base(p)))
	}
}

// TestChartManagerRoleInSync: the chart's manager ClusterRole has the rules
// controller-gen generated into config/rbac/role.yaml, through the chart's
// byte-equal copy of that file.
func TestChartManagerRoleInSync(t *testing.T) {
	dir := root(t)
	sameFile(t, filepath.Join(dir, "config", "rbac", "role.yaml"), filepath.Join(dir, "charts", "storagebench", "files", "manager-role.yaml"))
	want := rules(readYAML(t, "config/rbac/role.yaml"))
	if len(want) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	for name, objs := range map[string][]*unstructured.Unstructured{
		"helm":      helmTemplate(t),
		"kustomize": kustomizeBuild(t),
	} {
		got := rules(must(t, objs, "ClusterRole", "storagebench-manager").Object)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ClusterRole storagebench-manager rules\n got %v\nwant %v", name, got, want)
		}
	}
}

func sameFile(t *testing.T, want, got string) {
	t.Helper()
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("%v: run make manifests", err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from %s: run make manifests", got, want)
	}
}

// TestKustomize builds config/default and checks what it holds.
func TestKustomize(t *testing.T) {
	objs := kustomizeBuild(t)
	ns := must(t, objs, "Namespace", namespace)
	if ns.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace labels %v: want the restricted Pod Security profile enforced", ns.GetLabels())
	}
	must(t, objs, "CustomResourceDefinition", "storagebenchmarks.storagebench.io")
	d := must(t, objs, "Deployment", "storagebench-manager")
	a := args(t, d)
	for _, want := range []string{"--leader-elect", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"} {
		if !slices.Contains(a, want) {
			t.Errorf("args %q lack %s", a, want)
		}
	}
	if !slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--runner-image=") }) {
		t.Errorf("args %q lack --runner-image", a)
	}
	checkRestricted(t, d)
	checkProbes(t, d)
	checkMemoryLimitEnv(t, d)
	checkServicePort(t, must(t, objs, "Service", "storagebench-metrics"), "https", 8443)
	must(t, objs, "NetworkPolicy", "storagebench-allow-metrics-traffic")
	must(t, objs, "ServiceAccount", "storagebench-manager")
	checkAdmissionPolicy(t, objs, "storagebench-policy", []string{"localhost/storagebench-runner:0.1.0"}, nil, nil)
	for _, name := range []string{"storagebench-manager", "storagebench-metrics-auth"} {
		must(t, objs, "ClusterRole", name)
		must(t, objs, "ClusterRoleBinding", name)
	}
	must(t, objs, "ClusterRole", "storagebench-metrics-reader")
	checkLeaderElection(t, objs, "storagebench-leader-election")
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if o.GetNamespace() != "" {
				t.Errorf("%s is cluster-scoped but has a namespace", id(o))
			}
		default:
			if o.GetNamespace() != namespace {
				t.Errorf("%s not in %s", id(o), namespace)
			}
		}
	}
	checkConsistent(t, objs)
}

// TestHelmMatchesKustomize: `helm install storagebench` and `make deploy`
// create the same objects (but the Namespace) with the same names, manager
// arguments, security, probes, resources, ports and RBAC rules.
func TestHelmMatchesKustomize(t *testing.T) {
	h := helmTemplate(t, "--include-crds")
	k := kustomizeBuild(t)
	var hk, kk []string
	for _, o := range h {
		hk = append(hk, id(o))
	}
	for _, o := range k {
		if o.GetKind() != "Namespace" {
			kk = append(kk, id(o))
		}
	}
	slices.Sort(hk)
	slices.Sort(kk)
	if !slices.Equal(hk, kk) {
		t.Fatalf("objects differ\n helm      %v\n kustomize %v", hk, kk)
	}
	same := func(what string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs\n helm      %v\n kustomize %v", what, a, b)
		}
	}
	hd, kd := must(t, h, "Deployment", "storagebench-manager"), must(t, k, "Deployment", "storagebench-manager")
	same("args", args(t, hd), args(t, kd))
	same("replicas", field(hd.Object, "spec", "replicas"), field(kd.Object, "spec", "replicas"))
	same("image", container(t, hd)["image"], container(t, kd)["image"])
	for _, f := range []string{"securityContext", "resources", "ports", "livenessProbe", "readinessProbe", "imagePullPolicy", "env"} {
		same("container "+f, container(t, hd)[f], container(t, kd)[f])
	}
	for _, f := range []string{"securityContext", "serviceAccountName", "terminationGracePeriodSeconds"} {
		same("pod "+f, podSpec(t, hd)[f], podSpec(t, kd)[f])
	}
	for _, o := range h {
		ko := must(t, k, o.GetKind(), o.GetName())
		switch o.GetKind() {
		case "ClusterRole", "Role":
			same(id(o)+" rules", rules(o.Object), rules(ko.Object))
		case "ClusterRoleBinding", "RoleBinding":
			same(id(o)+" roleRef", o.Object["roleRef"], ko.Object["roleRef"])
			same(id(o)+" subjects", o.Object["subjects"], ko.Object["subjects"])
		case "Service":
			same(id(o)+" ports", field(o.Object, "spec", "ports"), field(ko.Object, "spec", "ports"))
		case "NetworkPolicy":
			same(id(o)+" ingress", field(o.Object, "spec", "ingress"), field(ko.Object, "spec", "ingress"))
			same(id(o)+" policyTypes", field(o.Object, "spec", "policyTypes"), field(ko.Object, "spec", "policyTypes"))
		case "CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			same(id(o)+" spec", o.Object["spec"], ko.Object["spec"])
		}
	}
}

func hasArg(t *testing.T, d *unstructured.Unstructured, want string) {
	t.Helper()
	if a := args(t, d); !slices.Contains(a, want) {
		t.Errorf("args %q lack %s", a, want)
	}
}

// noArg fails when an argument starts with flag.
func noArg(t *testing.T, d *unstructured.Unstructured, flag string) {
	t.Helper()
	for _, a := range args(t, d) {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			t.Errorf("unexpected argument %s", a)
		}
	}
}

func absent(t *testing.T, objs []*unstructured.Unstructured, kind, name string) {
	t.Helper()
	if find(objs, kind, name) != nil {
		t.Errorf("%s %s rendered", kind, name)
	}
}

// checkRestricted checks the manager against the restricted Pod Security
// profile and a read-only root file system.
func checkRestricted(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	ps := podSpec(t, d)
	if v := field(ps, "securityContext", "runAsNonRoot"); v != true {
		t.Errorf("pod runAsNonRoot %v", v)
	}
	if v := field(ps, "securityContext", "seccompProfile", "type"); v != "RuntimeDefault" {
		t.Errorf("pod seccompProfile %v", v)
	}
	for _, f := range []string{"hostNetwork", "hostPID", "hostIPC", "volumes"} {
		if ps[f] != nil {
			t.Errorf("pod %s: %v", f, ps[f])
		}
	}
	sc, _ := container(t, d)["securityContext"].(map[string]any)
	if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true {
		t.Errorf("container securityContext %v", sc)
	}
	if v, ok := sc["privileged"]; ok && v != false {
		t.Errorf("privileged: %v", v)
	}
	if drop := field(sc, "capabilities", "drop"); !reflect.DeepEqual(drop, []any{"ALL"}) {
		t.Errorf("capabilities.drop %v, want [ALL]", drop)
	}
	if add := field(sc, "capabilities", "add"); add != nil {
		t.Errorf("capabilities.add %v", add)
	}
}

// checkProbes: /healthz and /readyz on the port the manager serves them on.
func checkProbes(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	c := container(t, d)
	ports := map[any]any{}
	for _, p := range c["ports"].([]any) {
		p := p.(map[string]any)
		ports[p["name"]] = p["containerPort"]
	}
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		get := field(c, probe, "httpGet")
		if field(c, probe, "httpGet", "path") != path {
			t.Errorf("%s %v, want path %s", probe, get, path)
		}
		port := field(c, probe, "httpGet", "port")
		if n, ok := ports[port]; ok {
			port = n
		}
		if port != int64(8081) {
			t.Errorf("%s on port %v, want 8081", probe, port)
		}
	}
	hasArg(t, d, "--health-probe-bind-address=:8081")
}

func checkServicePort(t *testing.T, svc *unstructured.Unstructured, name string, port int64) {
	t.Helper()
	ps, _ := field(svc.Object, "spec", "ports").([]any)
	if len(ps) != 1 {
		t.Fatalf("%s ports %v", id(svc), ps)
	}
	p := ps[0].(map[string]any)
	if p["name"] != name || p["port"] != port || p["targetPort"] != name {
		t.Errorf("%s port %v, want %s %d to the container's %s port", id(svc), p, name, port, name)
	}
}

// checkLeaderElection: a Role on leases (and events) in the manager's
// namespace, bound to its ServiceAccount.
func checkLeaderElection(t *testing.T, objs []*unstructured.Unstructured, name string) {
	t.Helper()
	r := must(t, objs, "Role", name)
	if r.GetNamespace() != namespace {
		t.Errorf("%s not in %s", id(r), namespace)
	}
	var resources []string
	for _, rule := range rules(r.Object) {
		for _, res := range rule.(map[string]any)["resources"].([]any) {
			resources = append(resources, res.(string))
		}
	}
	slices.Sort(resources)
	if !slices.Equal(resources, []string{"events", "leases"}) {
		t.Errorf("leader election Role on %v, want events and leases", resources)
	}
	must(t, objs, "RoleBinding", name)
}

// checkConsistent checks what every render must satisfy: selectors select
// the manager's pods, bindings name roles and the ServiceAccount that
// exist in the render, and no role reaches Secrets or uses wildcards.
func checkConsistent(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	d := ofKind(objs, "Deployment")[0]
	pod := stringMap(field(d.Object, "spec", "template", "metadata", "labels"))
	if sel := stringMap(field(d.Object, "spec", "selector", "matchLabels")); !subset(sel, pod) {
		t.Errorf("Deployment selector %v does not match its pod labels %v", sel, pod)
	}
	if pod["app.kubernetes.io/managed-by"] == "storagebench" {
		t.Errorf("the manager's pods carry managed-by=storagebench, the label of the benchmarks' objects it caches")
	}
	for _, svc := range ofKind(objs, "Service") {
		if sel := stringMap(field(svc.Object, "spec", "selector")); !subset(sel, pod) {
			t.Errorf("%s selector %v does not match the manager's pods %v", id(svc), sel, pod)
		}
	}
	for _, np := range ofKind(objs, "NetworkPolicy") {
		if sel := stringMap(field(np.Object, "spec", "podSelector", "matchLabels")); !subset(sel, pod) {
			t.Errorf("%s podSelector %v does not match the manager's pods %v", id(np), sel, pod)
		}
	}
	sa := podSpec(t, d)["serviceAccountName"]
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, b := range ofKind(objs, kind) {
			ref := b.Object["roleRef"].(map[string]any)
			if find(objs, ref["kind"].(string), ref["name"].(string)) == nil {
				t.Errorf("%s refers to %s %s, which is not rendered", id(b), ref["kind"], ref["name"])
			}
			for _, s := range b.Object["subjects"].([]any) {
				s := s.(map[string]any)
				if s["kind"] != "ServiceAccount" || s["name"] != sa || s["namespace"] != d.GetNamespace() {
					t.Errorf("%s subject %v, want the manager's ServiceAccount %s/%v", id(b), s, d.GetNamespace(), sa)
				}
			}
		}
	}
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, r := range ofKind(objs, kind) {
			for _, rule := range rules(r.Object) {
				rule := rule.(map[string]any)
				for _, f := range []string{"resources", "verbs", "apiGroups"} {
					l, _ := rule[f].([]any)
					if slices.Contains(l, any("*")) {
						t.Errorf("%s: wildcard %s in %v", id(r), f, rule)
					}
					if f == "resources" && slices.Contains(l, any("secrets")) && !runKeyRule(r, rule, d.GetNamespace()) {
						t.Errorf("%s reaches secrets: %v", id(r), rule)
					}
				}
			}
		}
	}
}

// runKeyRule reports the one way the manager reaches secrets: in its own
// namespace, reading the run key's Secret by name, or creating it
// (RBAC cannot name what is created).
func runKeyRule(r *unstructured.Unstructured, rule map[string]any, ns string) bool {
	if r.GetKind() != "Role" || r.GetNamespace() != ns || !strings.HasSuffix(r.GetName(), "-run-key") {
		return false
	}
	resources, _ := rule["resources"].([]any)
	verbs, _ := rule["verbs"].([]any)
	names, _ := rule["resourceNames"].([]any)
	if !slices.Equal(resources, []any{"secrets"}) {
		return false
	}
	return (slices.Equal(verbs, []any{"get"}) && len(names) == 1) || (slices.Equal(verbs, []any{"create"}) && len(names) == 0)
}

// TestSamplesKustomization: config/samples/kustomization.yaml lists every
// sample, and kustomize builds it.
func TestSamplesKustomization(t *testing.T) {
	dir := filepath.Join(root(t), "config", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	var got []string
	for _, r := range readYAML(t, "config/samples/kustomization.yaml")["resources"].([]any) {
		got = append(got, r.(string))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("config/samples/kustomization.yaml lists %v, the directory holds %v: list every sample", got, want)
	}
	out, err := run(t, tool(t, "kustomize"), "build", "config/samples")
	if err != nil {
		t.Fatal(err)
	}
	if objs := parse(t, out); len(objs) < len(want) {
		t.Errorf("kustomize built %d objects from %d files", len(objs), len(want))
	}
}
