package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/internal/backend"
)

// TestChartBackendMetricsClasses: the chart hands the manager the classes'
// queries as the file --backend-metrics-classes reads, and restarts it
// when they change. The values are the documented node-exporter example.
func TestChartBackendMetricsClasses(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(root(t), "docs/examples/backend-classes-node-exporter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc backend.Classes
	if err := yaml.Unmarshal(example, &doc); err != nil {
		t.Fatal(err)
	}
	values := func(url string, classes []backend.ClassConfig) string {
		v := map[string]any{"backendMetrics": map[string]any{"prometheusURL": url, "classes": classes}}
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	const cm = "storagebench-backend-metrics-classes"
	objs := helmTemplate(t, "-f", values("http://prometheus.monitoring:9090", doc.Classes))
	c := must(t, objs, "ConfigMap", cm)
	got, err := backend.ParseClasses([]byte(stringMap(c.Object["data"])["classes.yaml"]))
	if err != nil {
		t.Fatalf("the manager refuses the chart's classes.yaml: %v", err)
	}
	want, _ := backend.ParseClasses(example)
	if len(got) != 1 || got["local-disk"] == nil || got["local-disk"].Resolution != want["local-disk"].Resolution {
		t.Errorf("classes %v, want the example's local-disk", got)
	}
	d := ofKind(objs, "Deployment")[0]
	hasArg(t, d, "--backend-metrics-classes=/etc/storagebench/backend-metrics/classes.yaml")
	if v := field(podSpec(t, d), "volumes"); !strings.Contains(yamlOf(t, v), cm) {
		t.Errorf("volumes %v: want the ConfigMap %s", v, cm)
	}
	sum := stringMap(field(d.Object, "spec", "template", "metadata", "annotations"))["checksum/backend-metrics-classes"]

	changed := doc.Classes[0]
	changed.Resolution.Duration *= 2
	d2 := ofKind(helmTemplate(t, "-f", values("http://prometheus.monitoring:9090", []backend.ClassConfig{changed})), "Deployment")[0]
	if sum == "" || stringMap(field(d2.Object, "spec", "template", "metadata", "annotations"))["checksum/backend-metrics-classes"] == sum {
		t.Errorf("checksum %q: want one that changes with the queries, so the manager rereads them", sum)
	}

	off := helmTemplate(t, "-f", values("", doc.Classes))
	absent(t, off, "ConfigMap", cm)
	noArg(t, ofKind(off, "Deployment")[0], "--backend-metrics-classes")
}

func yamlOf(t *testing.T, v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
