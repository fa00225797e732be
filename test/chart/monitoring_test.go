package chart

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
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

var labelValuesRE = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// TestDashboardQueries parses every query of the dashboard with the
// Prometheus parser and checks that it selects only series the operator
// exports or the chart's rules record.
func TestDashboardQueries(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string            `json:"uid"`
		Title      string            `json:"title"`
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
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
	check := func(where, expr string) {
		for _, name := range selectors(t, where, grafanaVars.Replace(expr)) {
			if !known[name] {
				t.Errorf("%s queries %s, which neither the operator exports nor the chart's rules record", where, name)
			}
		}
	}
	type panel struct {
		ID      int               `json:"id"`
		Title   string            `json:"title"`
		Type    string            `json:"type"`
		Panels  []json.RawMessage `json:"panels"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	}
	ids, queries, types := map[int]bool{}, 0, map[string]bool{}
	var walk func([]json.RawMessage)
	walk = func(raws []json.RawMessage) {
		for _, r := range raws {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatal(err)
			}
			if ids[p.ID] {
				t.Errorf("panel id %d repeats", p.ID)
			}
			ids[p.ID] = true
			types[p.Type] = true
			for _, tg := range p.Targets {
				if tg.Expr == "" {
					t.Errorf("panel %q target %s has no expr", p.Title, tg.RefID)
					continue
				}
				queries++
				check("panel "+p.Title+" target "+tg.RefID, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var s string
			if err := json.Unmarshal(v.Query, &s); err != nil {
				t.Fatalf("variable %s: query %s", v.Name, v.Query)
			}
			q.Query = s
		}
		m := labelValuesRE.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		queries++
		check("variable "+v.Name, m[1])
	}
	if queries == 0 {
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
