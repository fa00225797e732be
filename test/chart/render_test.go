// Package chart tests the install manifests: the Helm chart
// (charts/storagebench) rendered by the pinned helm and the kustomize tree
// (config/default) built by the pinned kustomize, offline and then created
// with server-side dry run in a real kube-apiserver.
package chart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The release every chart render uses unless a test says otherwise: its
// object names equal config/default's.
const (
	release   = "storagebench"
	namespace = "storagebench-system"
)

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", dir, err)
	}
	return dir
}

// tool returns the path of a pinned tool under bin/, failing when it is not
// built.
func tool(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(root(t), "bin", name)
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("%s is missing (%v): run `make setup`, which builds the pinned helm and kustomize into bin/", path, err)
	}
	return path
}

// run runs a command in the repository's root with Helm's state in a
// temporary directory and returns its standard output.
func run(t *testing.T, name string, args ...string) ([]byte, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(name, args...)
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// helmTemplate renders the chart as release storagebench in
// storagebench-system with extra helm arguments (--set ..., --include-crds).
func helmTemplate(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helmTemplateErr(t, release, namespace, args...)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, out)
}

// helmTemplateErr renders the chart as release name in namespace ns.
func helmTemplateErr(t *testing.T, name, ns string, args ...string) ([]byte, error) {
	t.Helper()
	all := append([]string{"template", name, "charts/storagebench", "--namespace", ns}, args...)
	return run(t, tool(t, "helm"), all...)
}

// kustomizeBuild builds config/default.
func kustomizeBuild(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, err := run(t, tool(t, "kustomize"), "build", "config/default")
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, out)
}

// parse splits a multi-document YAML stream into objects (integers as
// int64, as Kubernetes' decoder has them). Strict: a duplicate key (a
// template that emits a label twice) fails.
func parse(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("splitting the documents: %v", err)
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("parsing a document: %v\n%s", err, doc)
		}
		if j = bytes.TrimSpace(j); bytes.Equal(j, []byte("null")) {
			continue // only comments
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatalf("decoding a document: %v\n%s", err, doc)
		}
		if u.GetName() == "" {
			t.Fatalf("a document without a name:\n%s", doc)
		}
		objs = append(objs, u)
	}
	if len(objs) == 0 {
		t.Fatalf("no objects rendered")
	}
	return objs
}

// find returns the object of that kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// must returns the object of that kind and name, failing when it is absent.
func must(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	o := find(objs, kind, name)
	if o == nil {
		t.Fatalf("no %s %q among %v", kind, name, ids(objs))
	}
	return o
}

// ofKind returns the objects of a kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// ids lists kind/namespace/name of every object.
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, id(o))
	}
	return out
}

func id(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + "/" + o.GetName()
	}
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// field returns the value at a path of fields, or nil.
func field(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// podSpec returns a Deployment's pod spec.
func podSpec(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	spec, ok := field(d.Object, "spec", "template", "spec").(map[string]any)
	if !ok {
		t.Fatalf("%s has no pod spec", id(d))
	}
	return spec
}

// container returns the Deployment's only container, the manager.
func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _ := podSpec(t, d)["containers"].([]any)
	if len(cs) != 1 {
		t.Fatalf("%s: want one container, got %d", id(d), len(cs))
	}
	c, _ := cs[0].(map[string]any)
	if c["name"] != "manager" {
		t.Fatalf("%s: container %v, want manager", id(d), c["name"])
	}
	return c
}

// args returns the manager container's arguments.
func args(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	raw, _ := container(t, d)["args"].([]any)
	out := make([]string, 0, len(raw))
	for _, a := range raw {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("%s: argument %v is not a string", id(d), a)
		}
		out = append(out, s)
	}
	return out
}

// stringMap converts a YAML map of strings (labels, selectors).
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// subset reports whether every pair of sel is in labels (a non-empty sel).
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// rules returns the rules of a Role or ClusterRole, or of a role.yaml file.
func rules(o map[string]any) []any {
	r, _ := o["rules"].([]any)
	return r
}

// readYAML parses one YAML document of a file in the repository.
func readYAML(t *testing.T, rel string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return m
}
