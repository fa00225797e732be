package metrics

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/metrics.md's series table from the code")

const (
	beginTable = "<!-- BEGIN SERIES (generated from internal/metrics: go test ./internal/metrics -update) -->"
	endTable   = "<!-- END SERIES -->"
)

var descRE = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", help: "((?:[^"\\]|\\.)*)", constLabels: \{\}, variableLabels: \{([^}]*)\}\}$`)

type series struct {
	name, typ, help string
	labels          []string
}

// Series lists every exported series, from the descriptors.
func allSeries(t *testing.T) []series {
	t.Helper()
	var out []series
	for _, d := range Descs() {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot parse %s", d)
		}
		s := series{name: m[1], typ: "gauge", help: strings.ReplaceAll(m[2], `\"`, `"`)}
		if strings.HasSuffix(s.name, "_total") {
			s.typ = "counter"
		}
		if m[3] != "" {
			s.labels = strings.Split(m[3], ",")
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b series) int { return strings.Compare(a.name, b.name) })
	return out
}

func table(ss []series) string {
	var b strings.Builder
	b.WriteString("| Series | Type | Labels | Help |\n|---|---|---|---|\n")
	for _, s := range ss {
		labels := "—"
		if len(s.labels) > 0 {
			labels = "`" + strings.Join(s.labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.name, s.typ, labels, strings.ReplaceAll(s.help, "|", `\|`))
	}
	return b.String()
}

// TestDocsMetrics checks docs/metrics.md's series table against the
// descriptors (names, types, labels, help) and that the prose names no series
// the operator does not export.
func TestDocsMetrics(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "metrics.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, beginTable), strings.Index(doc, endTable)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, beginTable, endTable)
	}
	ss := allSeries(t)
	want := table(ss)
	got := doc[i+len(beginTable)+1 : j]
	if got != want {
		if *update {
			doc = doc[:i+len(beginTable)+1] + want + doc[j:]
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's series table is out of date (go test ./internal/metrics -update)\n got:\n%s\nwant:\n%s", path, got, want)
	}
	names := map[string]bool{}
	for _, s := range ss {
		names[s.name] = true
	}
	for _, m := range regexp.MustCompile(`storagebench_[a-z0-9_]+`).FindAllString(doc, -1) {
		if !names[m] && !strings.HasPrefix(m, "storagebench_io") {
			t.Errorf("%s names %s, which the operator does not export", path, m)
		}
	}
}
