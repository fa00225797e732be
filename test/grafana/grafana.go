// Package grafana reads a Grafana dashboard's JSON as the test suites
// check it: its panels (rows' nested ones included) and the queries of
// its panels and variables.
package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// Dashboard is the part of a dashboard the suites read.
type Dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Panel is a panel, or a row holding panels.
type Panel struct {
	ID      int      `json:"id"`
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Panels  []Panel  `json:"panels"`
	Targets []Target `json:"targets"`
}

// Target is a panel's Prometheus query.
type Target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
	// Range: drawn over time; else the latest value (instant).
	Range bool `json:"range"`
}

// Variable is a template variable; a query variable's Query is a string
// or an object with a query field, as Grafana versions write it.
type Variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// Load reads a dashboard file.
func Load(path string) (*Dashboard, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}

// Walk calls f on every panel, rows' panels included.
func (d *Dashboard) Walk(f func(Panel)) {
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			f(p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
}

// Query is one query of the dashboard: a panel's target, or the selector
// of a variable's label_values(selector, label).
type Query struct {
	Where, Expr string
	Range       bool
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// Queries lists every query; a target without an expression, or a query
// variable that is not label_values(selector, label), is an error.
func (d *Dashboard) Queries() ([]Query, error) {
	var out []Query
	var err error
	d.Walk(func(p Panel) {
		for _, t := range p.Targets {
			where := "panel " + p.Title + " target " + t.RefID
			if t.Expr == "" && err == nil {
				err = fmt.Errorf("%s has no expr", where)
			}
			out = append(out, Query{Where: where, Expr: t.Expr, Range: t.Range})
		}
	})
	if err != nil {
		return nil, err
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			if err := json.Unmarshal(v.Query, &q.Query); err != nil {
				return nil, fmt.Errorf("variable %s: query %s", v.Name, v.Query)
			}
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			return nil, fmt.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
		}
		out = append(out, Query{Where: "variable " + v.Name, Expr: m[1]})
	}
	return out, nil
}
