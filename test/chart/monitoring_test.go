package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
	"github.com/storagebench/storagebench/test/grafana"
)

// The rules file and dashboard the chart installs (prometheusRule.enabled,
// grafanaDashboard.enabled).
const (
	rulesFile     = "charts/storagebench/files/rules.yaml"
	dashboardFile = "charts/storagebench/files/dashboard.json"
)

// promtool returns the path of Debian's promtool, failing when it is not
// installed.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is missing (%v): run `make setup`, which installs Debian's prometheus package", err)
	}
	return path
}

// TestRulesPromtool checks the rules file and runs its unit tests with the
// default values (testdata/rules_defaults_test.yaml).
func TestRulesPromtool(t *testing.T) {
	p := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", rulesFile},
		{"test", "rules", "test/chart/testdata/rules_defaults_test.yaml"},
	} {
		if out, err := run(t, p, args...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
}

// TestChartPrometheusRule renders the PrometheusRule with values, then checks
// and unit-tests its groups with promtool (testdata/rules_test.yaml).
func TestChartPrometheusRule(t *testing.T) {
	objs := helmTemplate(t)
	if r := ofKind(objs, "PrometheusRule"); len(r) != 0 {
		t.Errorf("PrometheusRule rendered though prometheusRule.enabled is false: %v", ids(r))
	}
	objs = helmTemplate(t, "--set", "prometheusRule.enabled=true", "--set", "prometheusRule.performanceDropPercent=25",
		"--set", "prometheusRule.noSuccessfulRunHours=1", "--set", "prometheusRule.labels.release=prometheus")
	pr := must(t, objs, "PrometheusRule", "storagebench")
	if pr.GetAPIVersion() != "monitoring.coreos.com/v1" || pr.GetNamespace() != namespace || pr.GetLabels()["release"] != "prometheus" {
		t.Errorf("PrometheusRule %s in %q with labels %v", pr.GetAPIVersion(), pr.GetNamespace(), pr.GetLabels())
	}
	spec, err := yaml.Marshal(pr.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	test, err := os.ReadFile(filepath.Join("testdata", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"rules.yaml": spec, "rules_test.yaml": test} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(dir, "rules.yaml")},
		{"test", "rules", filepath.Join(dir, "rules_test.yaml")},
	} {
		if out, err := run(t, p, args...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
	for _, bad := range []string{"prometheusRule.performanceDropPercent=lots", "prometheusRule.noSuccessfulRunHours=-1"} {
		if _, err := helmTemplateErr(t, release, namespace, "--set", "prometheusRule.enabled=true", "--set", bad); err == nil {
			t.Errorf("--set %s rendered", bad)
		}
	}
}

// TestChartGrafanaDashboard checks the dashboard's ConfigMap.
func TestChartGrafanaDashboard(t *testing.T) {
	if cms := helmTemplate(t); find(cms, "ConfigMap", "storagebench-dashboard") != nil {
		t.Errorf("dashboard rendered though grafanaDashboard.enabled is false")
	}
	objs := helmTemplate(t, "--set", "grafanaDashboard.enabled=true", "--set", "grafanaDashboard.namespace=monitoring",
		"--set", "grafanaDashboard.annotations.grafana_folder=Storage")
	cm := must(t, objs, "ConfigMap", "storagebench-dashboard")
	if cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetNamespace() != "monitoring" || cm.GetAnnotations()["grafana_folder"] != "Storage" {
		t.Errorf("dashboard ConfigMap in %q, labels %v, annotations %v", cm.GetNamespace(), cm.GetLabels(), cm.GetAnnotations())
	}
	want, err := os.ReadFile(filepath.Join(root(t), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := field(cm.Object, "data", "storagebench.json").(string); got != strings.TrimRight(string(want), "\n") {
		t.Errorf("ConfigMap's storagebench.json differs from %s", dashboardFile)
	}
}

// exported returns the series the operator exports (internal/metrics).
func exported(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`fqName: "([^"]+)"`)
	out := map[string]bool{}
	for _, d := range sbmetrics.Descs() {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot parse %s", d)
		}
		out[m[1]] = true
	}
	return out
}

type rulesDoc struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record string `json:"record"`
			Alert  string `json:"alert"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

func readRules(t *testing.T) rulesDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc rulesDoc
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// selectors parses a PromQL expression and returns the metric names it
// selects.
func selectors(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			if vs.Name == "" {
				t.Errorf("%s: %q selects series without a metric name", where, expr)
			}
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// TestRulesQueryExportedSeries checks that the rules select only series the
// operator exports or the rules record, and record only storagebench:
// names.
func TestRulesQueryExportedSeries(t *testing.T) {
	known := exported(t)
	doc := readRules(t)
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				if !strings.HasPrefix(r.Record, "storagebench:") {
					t.Errorf("recording rule %s: not in storagebench:", r.Record)
				}
				known[r.Record] = true
			}
		}
	}
	n := 0
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			for _, name := range selectors(t, "rule "+r.Record+r.Alert, r.Expr) {
				n++
				if !known[name] {
					t.Errorf("rule %s%s queries %s, which neither the operator exports nor a rule records", r.Record, r.Alert, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no selectors in the rules")
	}
}

// grafanaVars replaces the dashboard variables PromQL cannot parse.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// TestDashboardQueries parses every query of the dashboard with the
// Prometheus parser and checks that it selects only series the operator
// exports or the chart's rules record.
func TestDashboardQueries(t *testing.T) {
	dash, err := grafana.Load(filepath.Join(root(t), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Errorf("dashboard uid %q, title %q", dash.UID, dash.Title)
	}
	known := exported(t)
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	ids, types := map[int]bool{}, map[string]bool{}
	dash.Walk(func(p grafana.Panel) {
		if ids[p.ID] {
			t.Errorf("panel id %d repeats", p.ID)
		}
		ids[p.ID] = true
		types[p.Type] = true
	})
	queries, err := dash.Queries()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		for _, name := range selectors(t, q.Where, grafanaVars.Replace(q.Expr)) {
			if !known[name] {
				t.Errorf("%s queries %s, which neither the operator exports nor the chart's rules record", q.Where, name)
			}
		}
	}
	if len(queries) == 0 {
		t.Fatal("no queries in the dashboard")
	}
	// What the issue asks of the dashboard: the ops-latency XY chart, the
	// step table, SLO status and history.
	for _, typ := range []string{"xychart", "table", "timeseries"} {
		if !types[typ] {
			t.Errorf("no %s panel", typ)
		}
	}
}
