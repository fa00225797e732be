package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Format is an output format of report and compare.
type Format string

// Formats.
const (
	FormatMarkdown Format = "md"
	FormatHTML     Format = "html"
	FormatSVG      Format = "svg"
	FormatPNG      Format = "png"
	FormatJSON     Format = "json"
)

// ParseFormat checks an output format name; allowed lists the formats the
// command accepts.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q: want one of %s", s, strings.Join(names, ", "))
}

// Options tune a rendering.
type Options struct {
	// Metric is the latency metric plotted; empty means the benchmark's
	// analysis.targetLatency metric (for compare, the first benchmark's).
	Metric v1alpha1.LatencyMetric
	// Operation is the direction compare plots (read, write, total,
	// worst); empty means the first benchmark's target operation. A report
	// always plots a read and a write series.
	Operation v1alpha1.Operation
	// Width and Height of the image in pixels; 0 means 1200 × 750.
	Width, Height int
	// ImageRef is the path Markdown references for the figure (the
	// caller writes the PNG there); empty embeds the PNG as a data URI.
	ImageRef string
}

// PNG renders the ops–latency curve of a benchmark.
func PNG(sb *v1alpha1.StorageBenchmark, o Options) ([]byte, error) {
	c := curveChart(sb, o.Metric)
	return c.png(o.Width, o.Height)
}

// SVG renders the ops–latency curve of a benchmark.
func SVG(sb *v1alpha1.StorageBenchmark, o Options) ([]byte, error) {
	c := curveChart(sb, o.Metric)
	return c.svg(o.Width, o.Height)
}

// Document is the JSON report: the benchmark, the plotted series and the
// recorded steps, summary and verdicts.
type Document struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Class     string `json:"storageClass,omitempty"`
	Profile   string `json:"profile"`
	// Status is the Ready condition's reason.
	Status string `json:"status"`
	// Unit of the series' load.
	Unit Unit `json:"unit"`
	// TargetLatency is the figure compared with LatencyTargetMs.
	TargetLatency   Selector `json:"targetLatency"`
	LatencyTargetMs float64  `json:"latencyTargetMs"`
	// Series are the plotted curves (read and write).
	Series []Series `json:"series"`
	// Steps, Summary and SLOs are the status' own.
	Steps      []v1alpha1.StepStatus   `json:"steps"`
	Summary    *v1alpha1.SummaryStatus `json:"summary,omitempty"`
	SLOs       []v1alpha1.SLOStatus    `json:"slos,omitempty"`
	StopReason string                  `json:"stopReason,omitempty"`
}

// DocumentOf builds the JSON report of a benchmark.
func DocumentOf(sb *v1alpha1.StorageBenchmark, o Options) Document {
	metric := o.Metric
	if metric == "" {
		metric = TargetSelector(sb).Metric
	}
	d := Document{
		Name: sb.Name, Namespace: sb.Namespace, Class: className(sb), Profile: profileName(sb),
		Status: Phase(sb), Unit: UnitOf(sb), TargetLatency: TargetSelector(sb), LatencyTargetMs: ms(LatencyTarget(sb)),
		Series: CurveSeries(sb, metric), Steps: sb.Status.Steps, Summary: sb.Status.Summary, SLOs: sb.Status.SLOs,
		StopReason: sb.Status.StopReason,
	}
	if d.Series == nil {
		d.Series = []Series{}
	}
	if d.Steps == nil {
		d.Steps = []v1alpha1.StepStatus{}
	}
	return d
}

// Render writes a benchmark's report in a format.
func Render(w io.Writer, sb *v1alpha1.StorageBenchmark, f Format, o Options) error {
	switch f {
	case FormatPNG:
		b, err := PNG(sb, o)
		return writeBytes(w, b, err)
	case FormatSVG:
		b, err := SVG(sb, o)
		return writeBytes(w, b, err)
	case FormatJSON:
		b, err := json.MarshalIndent(DocumentOf(sb, o), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case FormatMarkdown:
		return markdown(w, sb, o)
	case FormatHTML:
		return htmlPage(w, sb, o)
	}
	return fmt.Errorf("report: unsupported format %q", f)
}

func writeBytes(w io.Writer, b []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// imageMarkdown is the Markdown image of a figure: a reference to ref, or
// the PNG inline as a data URI.
func imageMarkdown(alt, ref string, png func() ([]byte, error)) (string, error) {
	if ref == "" {
		b, err := png()
		if err != nil {
			return "", err
		}
		ref = "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
	}
	return fmt.Sprintf("![%s](%s)", alt, ref), nil
}

func markdown(w io.Writer, sb *v1alpha1.StorageBenchmark, o Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: ops–latency curve\n\n", sb.Name)
	fmt.Fprintf(&b, "- **class** %s · **profile** %s · **status** %s\n", orDash(className(sb)), profileName(sb), Phase(sb))
	fmt.Fprintf(&b, "- **workload** %s\n", WorkloadLine(sb))
	fmt.Fprintf(&b, "- **load** %s\n", LoadLine(sb))
	for i, l := range StorageLines(sb) {
		if i == 0 {
			fmt.Fprintf(&b, "- **storage** %s\n", l)
		} else {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	img, err := imageMarkdown("ops–latency curve of "+sb.Name, o.ImageRef, func() ([]byte, error) { return PNG(sb, o) })
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s\n\n## Steps\n\n", img)
	t := StepTable(sb)
	if err := t.Markdown(&b); err != nil {
		return err
	}
	b.WriteString("\n## Summary\n\n")
	for _, l := range SummaryLines(sb) {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	_, err = w.Write(b.Bytes())
	return err
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; margin: 2em auto; max-width: 1200px; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
.meta { color: #555; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #ddd; text-align: left; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
thead th { border-bottom: 2px solid #999; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Meta}}<p class="meta">{{.}}</p>
{{end}}<figure>
{{.Figure}}
</figure>
{{range .Tables}}<h2>{{.Heading}}</h2>
{{.Table}}{{end}}{{if .Summary}}<h2>Summary</h2>
<ul>
{{range .Summary}}<li>{{.}}</li>
{{end}}</ul>
{{end}}</body>
</html>
`))

type pageTable struct {
	Heading string
	Table   template.HTML
}

type page struct {
	Title   string
	Meta    []string
	Figure  template.HTML
	Tables  []pageTable
	Summary []string
}

// inlineSVG strips the XML prolog so that the SVG can sit in HTML.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s) // gonum/plot escapes its text
}

func tableHTML(t Table) (template.HTML, error) {
	var b bytes.Buffer
	if err := t.HTML(&b); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // Table.HTML escapes every cell
}

func htmlPage(w io.Writer, sb *v1alpha1.StorageBenchmark, o Options) error {
	svg, err := SVG(sb, o)
	if err != nil {
		return err
	}
	steps, err := tableHTML(StepTable(sb))
	if err != nil {
		return err
	}
	p := page{
		Title:   sb.Name + ": ops–latency curve",
		Meta:    append([]string{fmt.Sprintf("class %s · profile %s · status %s", orDash(className(sb)), profileName(sb), Phase(sb)), WorkloadLine(sb), LoadLine(sb)}, StorageLines(sb)...),
		Figure:  inlineSVG(svg),
		Tables:  []pageTable{{Heading: "Steps", Table: steps}},
		Summary: SummaryLines(sb),
	}
	return pageTemplate.Execute(w, p)
}
