package chart

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkMemoryLimitEnv: the manager's GOMEMLIMIT is its container's memory
// limit in bytes.
func checkMemoryLimitEnv(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	env, _ := container(t, d)["env"].([]any)
	for _, e := range env {
		e := e.(map[string]any)
		if e["name"] != "GOMEMLIMIT" {
			continue
		}
		ref := field(e, "valueFrom", "resourceFieldRef")
		want := map[string]any{"resource": "limits.memory", "divisor": "1"}
		if !reflect.DeepEqual(ref, want) {
			t.Errorf("GOMEMLIMIT from %v, want %v (bytes: Go reads a plain number as bytes)", ref, want)
		}
		return
	}
	t.Errorf("%s: no GOMEMLIMIT in env %v", id(d), env)
}

// variable returns the expression of a ValidatingAdmissionPolicy variable.
func variable(t *testing.T, vap *unstructured.Unstructured, name string) string {
	t.Helper()
	vars, _ := field(vap.Object, "spec", "variables").([]any)
	for _, v := range vars {
		v := v.(map[string]any)
		if v["name"] == name {
			return v["expression"].(string)
		}
	}
	t.Fatalf("%s has no variable %s", id(vap), name)
	return ""
}

// checkAdmissionPolicy: the policy matches the creation of
// StorageBenchmarks, denies, and inlines exactly these lists; its binding
// binds it.
func checkAdmissionPolicy(t *testing.T, objs []*unstructured.Unstructured, name string, images, tolerationKeys, nodeSelectorKeys []string) {
	t.Helper()
	vap := must(t, objs, "ValidatingAdmissionPolicy", name)
	if vap.GetAPIVersion() != "admissionregistration.k8s.io/v1" || vap.GetNamespace() != "" {
		t.Errorf("%s: %s in namespace %q", id(vap), vap.GetAPIVersion(), vap.GetNamespace())
	}
	if fp := field(vap.Object, "spec", "failurePolicy"); fp != "Fail" {
		t.Errorf("%s failurePolicy %v, want Fail", id(vap), fp)
	}
	wantRules := []any{map[string]any{
		"apiGroups": []any{"storagebench.io"}, "apiVersions": []any{"*"},
		"resources": []any{"storagebenchmarks"}, "operations": []any{"CREATE"},
	}}
	if r := field(vap.Object, "spec", "matchConstraints", "resourceRules"); !reflect.DeepEqual(r, wantRules) {
		t.Errorf("%s resourceRules %v, want %v", id(vap), r, wantRules)
	}
	for v, want := range map[string][]string{
		"allowedImages":           images,
		"allowedTolerationKeys":   tolerationKeys,
		"allowedNodeSelectorKeys": nodeSelectorKeys,
	} {
		var got []string
		if err := json.Unmarshal([]byte(variable(t, vap, v)), &got); err != nil {
			t.Errorf("%s variable %s is not a list of strings: %v", id(vap), v, err)
		}
		if !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s variable %s = %q, want %q", id(vap), v, got, want)
		}
	}
	if n, _ := field(vap.Object, "spec", "validations").([]any); len(n) != 5 {
		t.Errorf("%s: %d validations, want 5 (image, tolerations, node selector, memory limit and request)", id(vap), len(n))
	}
	var maxMemory string
	if err := json.Unmarshal([]byte(variable(t, vap, "maxMemory")), &maxMemory); err != nil || maxMemory != "8Gi" {
		t.Errorf("%s variable maxMemory = %q (%v), want \"8Gi\", policy.maxClientMemory's default", id(vap), maxMemory, err)
	}
	b := must(t, objs, "ValidatingAdmissionPolicyBinding", name)
	if p := field(b.Object, "spec", "policyName"); p != name {
		t.Errorf("%s binds %v, want %s", id(b), p, name)
	}
	if a := field(b.Object, "spec", "validationActions"); !reflect.DeepEqual(a, []any{"Deny"}) {
		t.Errorf("%s validationActions %v, want [Deny]", id(b), a)
	}
}

// TestChartPolicy: the policy values reach the manager's flags and the
// admission policy alike.
func TestChartPolicy(t *testing.T) {
	v := appVersion(t)
	runner := "localhost/storagebench-runner:" + v
	objs := helmTemplate(t,
		"--set", "policy.allowedRunnerImages={registry.example/runner:2,"+runner+",registry.example/runner@sha256:0123}",
		"--set", "policy.allowedTolerationKeys={dedicated,gpu}",
		"--set", "policy.allowedNodeSelectorKeys={*}",
		"--set", "watchNamespaces={a,b}")
	d := must(t, objs, "Deployment", "storagebench-manager")
	hasArg(t, d, "--allowed-runner-images=registry.example/runner:2,"+runner+",registry.example/runner@sha256:0123")
	hasArg(t, d, "--allowed-toleration-keys=dedicated,gpu")
	hasArg(t, d, "--allowed-node-selector-keys=*")
	// The runner image first and once, as policy.Policy.Images lists it.
	checkAdmissionPolicy(t, objs, "storagebench-policy",
		[]string{runner, "registry.example/runner:2", "registry.example/runner@sha256:0123"}, []string{"dedicated", "gpu"}, []string{"*"})
	b := must(t, objs, "ValidatingAdmissionPolicyBinding", "storagebench-policy")
	wantSel := map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "In", "values": []any{"a", "b"},
	}}}
	if sel := field(b.Object, "spec", "matchResources", "namespaceSelector"); !reflect.DeepEqual(sel, wantSel) {
		t.Errorf("with watchNamespaces the binding selects %v, want %v", sel, wantSel)
	}
	checkConsistent(t, objs)

	// Defaults: no flags (the manager's default is the safe policy), and a
	// binding for every namespace.
	objs = helmTemplate(t)
	d = must(t, objs, "Deployment", "storagebench-manager")
	for _, f := range []string{"--allowed-runner-images", "--allowed-toleration-keys", "--allowed-node-selector-keys"} {
		noArg(t, d, f)
	}
	if mr := field(must(t, objs, "ValidatingAdmissionPolicyBinding", "storagebench-policy").Object, "spec", "matchResources"); mr != nil {
		t.Errorf("without watchNamespaces the binding is limited to %v", mr)
	}

	objs = helmTemplate(t, "--set", "admissionPolicy.enabled=false", "--set", "policy.allowedTolerationKeys={gpu}")
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if o := ofKind(objs, kind); len(o) != 0 {
			t.Errorf("%s rendered with admissionPolicy.enabled=false: %v", kind, ids(o))
		}
	}
	hasArg(t, must(t, objs, "Deployment", "storagebench-manager"), "--allowed-toleration-keys=gpu")

	// Another release: its own policy, so two releases never share one.
	out, err := helmTemplateErr(t, "perf", "perf-system")
	if err != nil {
		t.Fatal(err)
	}
	checkAdmissionPolicy(t, parse(t, out), "perf-storagebench-policy", []string{runner}, nil, nil)
}

// TestChartRefusesBadPolicyValues: what the manager would split or read
// otherwise than the admission policy fails the render, naming the value.
func TestChartRefusesBadPolicyValues(t *testing.T) {
	for _, set := range []string{
		"policy.allowedRunnerImages={*}",
		"policy.allowedRunnerImages={registry.example/*}",
		`policy.allowedTolerationKeys={a\,b}`,
		"policy.allowedNodeSelectorKeys[0]=a b",
		`policy.allowedNodeSelectorKeys[0]=`,
	} {
		_, err := helmTemplateErr(t, release, namespace, "--set", set)
		name, _, _ := strings.Cut(set, "=")
		name, _, _ = strings.Cut(name, "[")
		if err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("--set %s: want a failure naming %s, got %v", set, name, err)
		}
	}
}

// perm is one permission: a verb on a resource (or subresource) of a group.
type perm struct{ group, resource, verb string }

// perms expands rules into their permissions.
func perms(t *testing.T, rules []any) map[perm]bool {
	t.Helper()
	out := map[perm]bool{}
	for _, r := range rules {
		r := r.(map[string]any)
		for _, g := range r["apiGroups"].([]any) {
			for _, res := range r["resources"].([]any) {
				for _, v := range r["verbs"].([]any) {
					out[perm{g.(string), res.(string), v.(string)}] = true
				}
			}
		}
	}
	return out
}

// resourceNamespaced is the scope of every resource the generated role
// names ("group/resource"; a subresource has its resource's scope). A new
// resource fails TestChartManagerRBAC until it is added here;
// TestAdmissionPolicy checks the entries of served groups against the API
// server's discovery.
var resourceNamespaced = map[string]bool{
	"/configmaps":                            true,
	"/events":                                true,
	"/persistentvolumeclaims":                true,
	"/nodes":                                 false,
	"/persistentvolumes":                     false,
	"/pods":                                  true,
	"/serviceaccounts":                       true,
	"batch/jobs":                             true,
	"events.k8s.io/events":                   true,
	"rbac.authorization.k8s.io/rolebindings": true,
	"rbac.authorization.k8s.io/roles":        true,
	"snapshot.storage.k8s.io/volumesnapshots":       true,
	"snapshot.storage.k8s.io/volumesnapshotclasses": false,
	"storage.k8s.io/storageclasses":                 false,
	"storagebench.io/storagebenchmarks":             true,
	"storagebench.io/storagebenchmarkschedules":     true,
	"storagebench.io/volumeoperationsbenchmarks":    true,
	"trident.netapp.io/tridentbackends":             true,
	"trident.netapp.io/tridentvolumes":              true,
}

// managerRoles returns the permissions of the manager's roles by
// "ClusterRole" or "Role/<namespace>", checking that a binding of the same
// name and place binds each, and only those, to the manager's
// ServiceAccount.
func managerRoles(t *testing.T, objs []*unstructured.Unstructured) map[string]map[perm]bool {
	t.Helper()
	const name = "storagebench-manager"
	roles, bound := map[string]map[perm]bool{}, map[string]bool{}
	for _, o := range objs {
		if o.GetName() != name {
			continue
		}
		kind := strings.TrimSuffix(o.GetKind(), "Binding")
		key := kind
		if kind == "Role" {
			key += "/" + o.GetNamespace()
		}
		switch o.GetKind() {
		case "ClusterRole", "Role":
			roles[key] = perms(t, rules(o.Object))
		case "ClusterRoleBinding", "RoleBinding":
			bound[key] = true
			if ref := o.Object["roleRef"].(map[string]any); ref["kind"] != kind || ref["name"] != name {
				t.Errorf("%s refers to %v", id(o), ref)
			}
			subjects := o.Object["subjects"].([]any)
			want := map[string]any{"kind": "ServiceAccount", "name": name, "namespace": namespace}
			if len(subjects) != 1 || !reflect.DeepEqual(subjects[0], want) {
				t.Errorf("%s subjects %v, want %v", id(o), subjects, want)
			}
		}
	}
	for k := range roles {
		if !bound[k] {
			t.Errorf("%s %s is not bound", k, name)
		}
	}
	for k := range bound {
		if roles[k] == nil {
			t.Errorf("the %s binding %s binds no rendered role", k, name)
		}
	}
	return roles
}

// TestChartManagerRBAC: the manager's roles hold exactly the generated
// role.yaml's permissions: one ClusterRole with all of them, or, with
// watchNamespaces, the cluster-scoped ones in a ClusterRole, the
// namespaced ones in a Role per watched namespace and Trident's in a Role
// in tridentNamespace, and nothing more.
func TestChartManagerRBAC(t *testing.T) {
	all := perms(t, rules(readYAML(t, "config/rbac/role.yaml")))
	if len(all) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	cluster, namespaced, trident := map[perm]bool{}, map[perm]bool{}, map[perm]bool{}
	for p := range all {
		res, _, _ := strings.Cut(p.resource, "/")
		ns, ok := resourceNamespaced[p.group+"/"+res]
		switch {
		case !ok:
			t.Fatalf("role.yaml names %s/%s, whose scope this test does not know: add it to resourceNamespaced (and, if cluster-scoped, to storagebench.clusterScopedResources in the chart's _helpers.tpl)", p.group, res)
		case !ns:
			cluster[p] = true
		case p.group == "trident.netapp.io":
			trident[p] = true
		default:
			namespaced[p] = true
		}
	}
	if len(cluster) == 0 || len(namespaced) == 0 || len(trident) == 0 {
		t.Fatalf("role.yaml no longer has cluster-scoped (%d), namespaced (%d) and Trident (%d) permissions: revisit this test", len(cluster), len(namespaced), len(trident))
	}
	union := func(sets ...map[perm]bool) map[perm]bool {
		out := map[perm]bool{}
		for _, s := range sets {
			maps.Copy(out, s)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		set  []string
		want map[string]map[perm]bool
	}{
		{"cluster-wide", nil, map[string]map[perm]bool{"ClusterRole": all}},
		{"watchNamespaces", []string{"watchNamespaces={a,b}"}, map[string]map[perm]bool{
			"ClusterRole": cluster, "Role/a": namespaced, "Role/b": namespaced, "Role/trident": trident,
		}},
		{"Trident in a watched namespace", []string{"watchNamespaces={a,b}", "tridentNamespace=b"}, map[string]map[perm]bool{
			"ClusterRole": cluster, "Role/a": namespaced, "Role/b": union(namespaced, trident),
		}},
		{"no tridentNamespace", []string{"watchNamespaces={a}", "tridentNamespace="}, map[string]map[perm]bool{
			"ClusterRole": cluster, "Role/a": namespaced,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			objs := helmTemplate(t, args...)
			got := managerRoles(t, objs)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want))) {
				t.Fatalf("the manager's roles are %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want)))
			}
			for k, want := range tc.want {
				for p := range got[k] {
					if !want[p] {
						t.Errorf("%s grants %v, which it should not", k, p)
					}
				}
				for p := range want {
					if !got[k][p] {
						t.Errorf("%s lacks %v", k, p)
					}
				}
			}
			checkConsistent(t, objs)
		})
	}
}
