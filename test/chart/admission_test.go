package chart

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/testenv"
)

// benchmark is a valid StorageBenchmark in ns with spec.clients c.
func benchmark(ns string, c map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "storagebench.io/v1alpha1",
		"kind":       "StorageBenchmark",
		"metadata":   map[string]any{"name": "bench", "namespace": ns},
		"spec": map[string]any{
			"storage": map[string]any{"size": "1Gi"},
			"load":    map[string]any{"rate": map[string]any{"steps": []any{int64(100)}}},
			"clients": c,
		},
	}}
}

// eventually retries f every 200 ms until it returns nil or the time is up,
// and returns its last error.
func eventually(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// refusal is nil when err is the API server's refusal (403 Forbidden).
func refusal(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err == nil:
		return errors.New("admitted")
	}
	return fmt.Errorf("not refused: %w", err)
}

// TestAdmissionPolicy installs the chart's ValidatingAdmissionPolicy and
// its binding in a real kube-apiserver serving the StorageBenchmark CRD,
// then creates benchmarks: the API server refuses what internal/policy
// refuses, with the same message, and admits what it allows. Every branch
// of the expressions runs (a failing expression would refuse the allowed
// benchmarks; a failing message expression would lose the message). It also
// checks this package's table of resource scopes against the server's
// discovery.
func TestAdmissionPolicy(t *testing.T) {
	const other = "registry.example/runner:2"
	runner := "localhost/storagebench-runner:" + appVersion(t)
	pol := policy.Policy{AllowedImages: []string{other}, AllowedTolerationKeys: []string{"dedicated", "gpu"}, AllowedNodeSelectorKeys: []string{"pool"}}
	render := func(name string, set ...string) []*unstructured.Unstructured {
		args := []string{"--show-only", "templates/admission-policy.yaml"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		out, err := helmTemplateErr(t, name, namespace, args...)
		if err != nil {
			t.Fatal(err)
		}
		return parse(t, out)
	}
	cluster := render(release, "policy.allowedRunnerImages={"+other+"}", "policy.allowedTolerationKeys={dedicated,gpu}",
		"policy.allowedNodeSelectorKeys={pool}")
	scoped := render("scoped", "watchNamespaces={team-a}")

	env, k8s, err := testenv.Start(filepath.Join(root(t), "config", "crd", "bases"))
	if err != nil {
		t.Fatalf("the admission test needs a real kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("resource scopes", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		served := map[string]bool{}
		for _, l := range lists {
			group, _, _ := strings.Cut(l.GroupVersion, "/")
			if !strings.Contains(l.GroupVersion, "/") {
				group = "" // the core group: "v1"
			}
			for _, r := range l.APIResources {
				served[group+"/"+r.Name] = r.Namespaced
			}
		}
		// Trident's and the snapshot CRDs are not installed here; every
		// other resource must be served and checked.
		notHere := map[string]bool{"trident.netapp.io": true, "snapshot.storage.k8s.io": true}
		for res, want := range resourceNamespaced {
			got, ok := served[res]
			group, _, _ := strings.Cut(res, "/")
			switch {
			case !ok && notHere[group]:
				continue
			case !ok:
				t.Errorf("%s is not served: its scope cannot be checked", res)
			case got != want:
				t.Errorf("%s: namespaced %v, the test's table says %v", res, got, want)
			}
		}
	})

	for _, ns := range []string{"tenant", "team-a", "team-b"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range cluster {
		if err := k8s.Create(ctx, o.DeepCopy()); err != nil {
			t.Fatalf("creating %s: %v", id(o), err)
		}
	}

	tol := func(keys ...string) []any {
		var out []any
		for _, k := range keys {
			if k == "" {
				out = append(out, map[string]any{"operator": "Exists"})
				continue
			}
			out = append(out, map[string]any{"key": k, "operator": "Equal", "value": "x", "effect": "NoSchedule"})
		}
		return out
	}
	long := "registry.example/" + strings.Repeat("a", 300) + ":1"
	cases := []struct {
		name    string
		clients map[string]any
		refused bool
	}{
		{"a forbidden image", map[string]any{"image": "evil:latest"}, true},
		{"a long forbidden image", map[string]any{"image": long}, true},
		{"a forbidden toleration key", map[string]any{"tolerations": tol("gpu", "dedicated", "control-plane", "other")}, true},
		{"a toleration without key", map[string]any{"tolerations": tol("dedicated", "")}, true},
		{"forbidden node selector keys", map[string]any{"nodeSelector": map[string]any{"pool": "a", "zone": "b", "arch": "c"}}, true},
		{"an image and a toleration", map[string]any{"image": "evil:latest", "tolerations": tol("other")}, true},
		{"a memory limit above the bound", map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "1Ti"}}}, true},
		{"a memory request above the bound, in bytes", map[string]any{"resources": map[string]any{"requests": map[string]any{"memory": int64(9 << 30)}}}, true},
		{"a memory limit within the bound", map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "8Gi"}, "requests": map[string]any{"memory": "1Gi"}}}, false},
		{"nothing asked", map[string]any{"count": int64(2)}, false},
		{"the runner image", map[string]any{"image": runner}, false},
		{"everything allowed", map[string]any{"image": other, "tolerations": tol("gpu", "dedicated"), "nodeSelector": map[string]any{"pool": "fast"}}, false},
	}
	// expected is internal/policy's verdict, which must agree with the case.
	expected := func(t *testing.T, b *unstructured.Unstructured, refused bool) error {
		t.Helper()
		var spec v1alpha1.StorageBenchmarkSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(b.Object["spec"].(map[string]any), &spec); err != nil {
			t.Fatal(err)
		}
		want := pol.Check(&spec, runner)
		if (want != nil) != refused {
			t.Fatalf("internal/policy says %v; the case says refused=%v", want, refused)
		}
		return want
	}

	// The binding takes effect once the API server has observed it:
	// retry the first refusal until it comes, then expect every verdict
	// at once.
	first := benchmark("tenant", cases[0].clients)
	err = eventually(30*time.Second, func() error {
		return refusal(k8s.Create(ctx, first.DeepCopy(), client.DryRunAll))
	})
	if err != nil {
		t.Fatalf("the admission policy never refused %v: %v", cases[0].clients, err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := benchmark("tenant", tc.clients)
			want := expected(t, b, tc.refused)
			err := k8s.Create(ctx, b, client.DryRunAll)
			switch {
			case want == nil && err != nil:
				t.Errorf("refused: %v", err)
			case want != nil && !apierrors.IsForbidden(err):
				t.Errorf("got %v, want a refusal: %s", err, want)
			case want != nil && !strings.Contains(err.Error(), want.Error()):
				t.Errorf("the API server's message\n%v\nlacks internal/policy's\n%s", err, want)
			case want != nil:
				t.Logf("refused: %v", err)
			}
		})
	}

	t.Run("schedule runs", func(t *testing.T) { scheduleRunsPolicy(ctx, t, env.Config, k8s) })

	// With watchNamespaces, the binding is limited to those namespaces.
	t.Run("watchNamespaces", func(t *testing.T) {
		for _, o := range cluster {
			if err := k8s.Delete(ctx, o.DeepCopy()); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range scoped {
			if err := k8s.Create(ctx, o.DeepCopy()); err != nil {
				t.Fatalf("creating %s: %v", id(o), err)
			}
		}
		evil := map[string]any{"image": "evil:latest"}
		err := eventually(30*time.Second, func() error {
			return k8s.Create(ctx, benchmark("team-b", evil), client.DryRunAll)
		})
		if err != nil {
			t.Errorf("team-b is not watched, yet: %v", err)
		}
		err = eventually(30*time.Second, func() error {
			return refusal(k8s.Create(ctx, benchmark("team-a", evil), client.DryRunAll))
		})
		if err != nil {
			t.Errorf("team-a is watched: %v", err)
		}
	})
}

// scheduleRunsPolicy installs the chart's schedule-runs policy and checks
// that only the manager's ServiceAccount gives a StorageBenchmark a
// schedule's label or owner reference, and that the garbage collector may
// still take an owner reference off.
func scheduleRunsPolicy(ctx context.Context, t *testing.T, cfg *rest.Config, tenant client.Client) {
	out, err := helmTemplateErr(t, release, namespace, "--show-only", "templates/schedule-runs-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range parse(t, out) {
		if err := tenant.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", id(o), err)
		}
	}
	mcfg := rest.CopyConfig(cfg)
	// The manager's user name (the policy checks it), with rights to create
	// (RBAC is not what is tested here).
	mcfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + namespace + ":storagebench-manager", Groups: []string{"system:masters"}}
	manager, err := client.New(mcfg, client.Options{Scheme: tenant.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, label bool, owner bool) *unstructured.Unstructured {
		b := benchmark("tenant", map[string]any{"count": int64(1)})
		b.SetName(name)
		if label {
			b.SetLabels(map[string]string{"storagebench.io/schedule": "nightly"})
		}
		if owner {
			b.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "storagebench.io/v1alpha1", Kind: "StorageBenchmarkSchedule",
				Name: "nightly", UID: "0b1f0e8c-0000-4000-8000-000000000001", Controller: ptr.To(true)}})
		}
		return b
	}
	// The binding takes effect once the API server has observed it.
	if err := eventually(30*time.Second, func() error {
		return refusal(tenant.Create(ctx, run("forged", true, true), client.DryRunAll))
	}); err != nil {
		t.Fatalf("a tenant's run with a schedule's label and owner was never refused: %v", err)
	}
	for _, tc := range []struct {
		name         string
		label, owner bool
	}{{"a schedule's label", true, false}, {"a schedule's owner reference", false, true}, {"both", true, true}} {
		if err := refusal(tenant.Create(ctx, run("forged", tc.label, tc.owner), client.DryRunAll)); err != nil {
			t.Errorf("a tenant creating a benchmark with %s: %v", tc.name, err)
		}
	}
	if err := tenant.Create(ctx, run("plain", false, false)); err != nil {
		t.Fatalf("a plain benchmark was refused: %v", err)
	}
	genuine := run("nightly-29000000", true, true)
	if err := manager.Create(ctx, genuine); err != nil {
		t.Fatalf("the manager's run was refused: %v", err)
	}
	update := func(c client.Client, name string, change func(*unstructured.Unstructured)) error {
		var cur unstructured.Unstructured
		cur.SetGroupVersionKind(genuine.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant", Name: name}, &cur); err != nil {
			return err
		}
		change(&cur)
		return c.Update(ctx, &cur)
	}
	if err := refusal(update(tenant, "plain", func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"storagebench.io/schedule": "nightly"})
	})); err != nil {
		t.Errorf("a tenant adding a schedule's label: %v", err)
	}
	if err := refusal(update(tenant, genuine.GetName(), func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"storagebench.io/schedule": "other"})
	})); err != nil {
		t.Errorf("a tenant moving a run to another schedule: %v", err)
	}
	if err := update(tenant, genuine.GetName(), func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"storagebench.io/schedule": "nightly", "team": "storage"})
	}); err != nil {
		t.Errorf("a tenant labelling a run otherwise was refused: %v", err)
	}
	if err := update(tenant, genuine.GetName(), func(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) }); err != nil {
		t.Errorf("taking the owner reference off (the garbage collector orphaning a run) was refused: %v", err)
	}
}
