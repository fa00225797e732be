package backend

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"text/template"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ClassConfig is how the figures of one storage class's volumes are read
// when no Harvest series name them: a PromQL query per figure, written as
// a Go template rendered for each volume. Each query is evaluated at the
// end of a step's window and must return at most one series.
type ClassConfig struct {
	// StorageClassName is the class whose volumes these queries read.
	StorageClassName string `json:"storageClassName"`
	// Resolution is the interval of the source's samples (a scrape
	// interval for an exporter Prometheus scrapes).
	Resolution metav1.Duration `json:"resolution"`
	// ReadOps and WriteOps are operations per second, ReadBytes and
	// WriteBytes bytes per second, over the window.
	ReadOps    string `json:"readOps"`
	WriteOps   string `json:"writeOps"`
	ReadBytes  string `json:"readBytes"`
	WriteBytes string `json:"writeBytes"`
	// ReadLatency and WriteLatency are the mean seconds per operation;
	// optional (without one, the step has no latency of that direction).
	ReadLatency  string `json:"readLatency,omitempty"`
	WriteLatency string `json:"writeLatency,omitempty"`
	// Samples is how many samples of the source the window holds.
	Samples string `json:"samples"`
}

// Classes is the file --backend-metrics-classes names.
type Classes struct {
	Classes []ClassConfig `json:"classes"`
}

// Volume is what a template may name of a volume. Every value is escaped
// for a PromQL string literal: placed between double quotes, it matches
// exactly (use =, not =~), whatever characters it holds.
type Volume struct {
	PersistentVolume string
	Claim            string
	Namespace        string
	StorageClass     string
	// InternalName is Trident's name of the volume on the storage.
	InternalName string
	// VolumeHandle is a CSI volume's handle, its ID on the storage.
	VolumeHandle string
	// Path is a local or hostPath volume's path on its node.
	Path string
	// Node is the node a local volume is pinned to.
	Node string
}

// templateData is what a query is rendered with.
type templateData struct {
	Volume
	// Range is the window's length as a PromQL duration ("[{{.Range}}]").
	Range string
	// Resolution is the source's resolution as a PromQL duration.
	Resolution string
}

// Template is a class's parsed queries.
type Template struct {
	StorageClassName string
	Resolution       time.Duration
	queries          map[string]*template.Template // by Harvest's metric name
	samples          *template.Template
}

// funcs are the template functions: base is a path's last element (a
// device's name from its path).
var funcs = template.FuncMap{"base": path.Base}

// ParseClasses reads and checks a --backend-metrics-classes file: every
// class named once, a positive resolution, the rates and samples given,
// and every query a template that renders for a volume.
func ParseClasses(data []byte) (map[string]*Template, error) {
	var c Classes
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	out := make(map[string]*Template, len(c.Classes))
	for i, cc := range c.Classes {
		t, err := cc.parse()
		if err != nil {
			return nil, fmt.Errorf("classes[%d] (%q): %w", i, cc.StorageClassName, err)
		}
		if _, dup := out[t.StorageClassName]; dup {
			return nil, fmt.Errorf("classes[%d]: storage class %q is named twice", i, cc.StorageClassName)
		}
		out[t.StorageClassName] = t
	}
	return out, nil
}

func (cc ClassConfig) parse() (*Template, error) {
	if cc.StorageClassName == "" {
		return nil, errors.New("storageClassName is empty")
	}
	if cc.Resolution.Duration <= 0 {
		return nil, fmt.Errorf("resolution %v is not positive", cc.Resolution.Duration)
	}
	t := &Template{StorageClassName: cc.StorageClassName, Resolution: cc.Resolution.Duration, queries: map[string]*template.Template{}}
	fields := []struct {
		name, metric, text string
		required           bool
	}{
		{"readOps", ReadOps, cc.ReadOps, true}, {"writeOps", WriteOps, cc.WriteOps, true},
		{"readBytes", ReadData, cc.ReadBytes, true}, {"writeBytes", WriteData, cc.WriteBytes, true},
		{"readLatency", ReadLatency, cc.ReadLatency, false}, {"writeLatency", WriteLatency, cc.WriteLatency, false},
		{"samples", "", cc.Samples, true},
	}
	probe := templateData{Volume: Volume{PersistentVolume: "pv", Claim: "claim", Namespace: "ns", StorageClass: "class",
		InternalName: "vol", VolumeHandle: "handle", Path: "/dev/x", Node: "node"}, Range: "1m", Resolution: "1m"}
	for _, f := range fields {
		if strings.TrimSpace(f.text) == "" {
			if f.required {
				return nil, fmt.Errorf("%s is empty", f.name)
			}
			continue
		}
		tt, err := template.New(f.name).Funcs(funcs).Option("missingkey=error").Parse(f.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if err := tt.Execute(&bytes.Buffer{}, probe); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if f.metric == "" {
			t.samples = tt
		} else {
			t.queries[f.metric] = tt
		}
	}
	return t, nil
}

// Queries are v's queries over w, by Harvest's metric name (so Join
// reduces their results as it does Harvest's), and the samples query.
// Latencies, in seconds per operation, are scaled to Harvest's µs.
func (t *Template) Queries(v Volume, w Window) (means map[string]string, samples string, err error) {
	d := templateData{Volume: escaped(v), Range: promDuration(w.Range), Resolution: promDuration(t.Resolution)}
	render := func(tt *template.Template) (string, error) {
		var b strings.Builder
		if err := tt.Execute(&b, d); err != nil {
			return "", fmt.Errorf("%s: %w", tt.Name(), err)
		}
		return b.String(), nil
	}
	means = make(map[string]string, len(t.queries))
	for m, tt := range t.queries {
		q, err := render(tt)
		if err != nil {
			return nil, "", err
		}
		if m == ReadLatency || m == WriteLatency {
			// On lines of their own: a query may end in a # comment.
			q = "(\n" + q + "\n) * 1e6"
		}
		means[m] = q
	}
	samples, err = render(t.samples)
	return means, samples, err
}

// escaped is v with every value escaped for a PromQL string literal
// (whose escapes are Go's), in ASCII: PromQL's lexer refuses some runes
// Go would leave as they are (U+FFFD).
func escaped(v Volume) Volume {
	e := func(s string) string { q := strconv.QuoteToASCII(s); return q[1 : len(q)-1] }
	return Volume{PersistentVolume: e(v.PersistentVolume), Claim: e(v.Claim), Namespace: e(v.Namespace),
		StorageClass: e(v.StorageClass), InternalName: e(v.InternalName), VolumeHandle: e(v.VolumeHandle),
		Path: e(v.Path), Node: e(v.Node)}
}
