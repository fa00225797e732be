package figure

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/storagebench/storagebench/internal/report"
)

// PNG renders the run's ops–latency curve.
func PNG(r *report.Run, o report.Options) ([]byte, error) {
	c := curveChart(r, o.Metric)
	return pngOf(&c, o.Width, o.Height)
}

// SVG renders the run's ops–latency curve.
func SVG(r *report.Run, o report.Options) ([]byte, error) {
	c := curveChart(r, o.Metric)
	return svgOf(&c, o.Width, o.Height)
}

// Render writes the run's report in a format: md, html, svg or png (the
// JSON document is apireport.WriteDocument's).
func Render(w io.Writer, r *report.Run, f report.Format, o report.Options) error {
	switch f {
	case report.FormatPNG:
		b, err := PNG(r, o)
		return writeBytes(w, b, err)
	case report.FormatSVG:
		b, err := SVG(r, o)
		return writeBytes(w, b, err)
	case report.FormatMarkdown:
		return markdown(w, r, o)
	case report.FormatHTML:
		return HTML(w, r, o, nil)
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

func markdown(w io.Writer, r *report.Run, o report.Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: ops–latency curve\n\n", r.Name)
	fmt.Fprintf(&b, "- **class** %s · **profile** %s · **status** %s\n", orDash(r.Class), r.ProfileName(), r.Phase)
	fmt.Fprintf(&b, "- **workload** %s\n", r.WorkloadLine())
	fmt.Fprintf(&b, "- **load** %s\n", r.LoadLine())
	for i, l := range r.StorageLines() {
		if i == 0 {
			fmt.Fprintf(&b, "- **storage** %s\n", l)
		} else {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	img, err := imageMarkdown("ops–latency curve of "+r.Name, o.ImageRef, func() ([]byte, error) { return PNG(r, o) })
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s\n\n## Steps\n\n", img)
	t := r.StepTable()
	if err := t.Markdown(&b); err != nil {
		return err
	}
	if len(r.Repeatability) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n", repeatabilityHeading(r))
		t := r.RepeatabilityTable()
		if err := t.Markdown(&b); err != nil {
			return err
		}
	}
	b.WriteString("\n## Summary\n\n")
	for _, l := range r.SummaryLines() {
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
.meta, .note { color: #555; }
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
{{end}}{{with .Timelines}}<h2>Timelines</h2>
{{if .Note}}<p class="note">{{.Note}}</p>
{{end}}{{range .Steps}}<h3>{{.Heading}}</h3>
{{if .Figure}}<figure>
{{.Figure}}
</figure>
{{else}}<p class="note">{{.Missing}}</p>
{{end}}{{end}}{{end}}</body>
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
	// Timelines is nil on a page without them.
	Timelines *pageTimelines
}

// pageTimelines is a page's section of step timelines: a note when none
// could be read, else one entry per step.
type pageTimelines struct {
	Note  string
	Steps []pageTimeline
}

// pageTimeline is one step's timeline, or why it has none.
type pageTimeline struct {
	Heading string
	Figure  template.HTML
	Missing string
}

// inlineSVG strips the XML prolog so that the SVG can sit in HTML.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s) // gonum/plot escapes its text
}

func tableHTML(t report.Table) (template.HTML, error) {
	var b bytes.Buffer
	if err := t.HTML(&b); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // Table.HTML escapes every cell
}

// HTML writes the run's report as a standalone page and, unless tl is nil,
// the steps' timelines after the summary: one inline SVG per step that has
// a timeline (the figure TimelineSVG draws), a line saying why for a step
// without, or a note when none could be read.
func HTML(w io.Writer, r *report.Run, o report.Options, tl *report.Timelines) error {
	svg, err := SVG(r, o)
	if err != nil {
		return err
	}
	steps, err := tableHTML(r.StepTable())
	if err != nil {
		return err
	}
	p := page{
		Title:   r.Name + ": ops–latency curve",
		Meta:    append([]string{fmt.Sprintf("class %s · profile %s · status %s", orDash(r.Class), r.ProfileName(), r.Phase), r.WorkloadLine(), r.LoadLine()}, r.StorageLines()...),
		Figure:  inlineSVG(svg),
		Tables:  []pageTable{{Heading: "Steps", Table: steps}},
		Summary: r.SummaryLines(),
	}
	if len(r.Repeatability) > 0 {
		rt, err := tableHTML(r.RepeatabilityTable())
		if err != nil {
			return err
		}
		p.Tables = append(p.Tables, pageTable{Heading: repeatabilityHeading(r), Table: rt})
	}
	if tl != nil {
		if p.Timelines, err = timelinesHTML(r, o, tl); err != nil {
			return err
		}
	}
	return pageTemplate.Execute(w, p)
}

// timelinesHTML lays out the timelines of a run's steps.
func timelinesHTML(r *report.Run, o report.Options, tl *report.Timelines) (*pageTimelines, error) {
	if tl.Unavailable != "" {
		return &pageTimelines{Note: "Timelines not available: " + tl.Unavailable}, nil
	}
	p := &pageTimelines{}
	for i := range r.Steps {
		s := &r.Steps[i]
		e := pageTimeline{Heading: fmt.Sprintf("Step %d: offered %s", s.Index+1, s.Offered())}
		if t, ok := tl.ByStep[s.Index]; ok {
			svg, err := TimelineSVG(t, o)
			if err != nil {
				return nil, err
			}
			e.Figure = inlineSVG(svg)
		} else if why := tl.Missing[s.Index]; why != "" {
			e.Missing = "No timeline: " + why
		} else {
			e.Missing = "No timeline."
		}
		p.Steps = append(p.Steps, e)
	}
	return p, nil
}

// repeatabilityHeading names the repeatability table and what its p99 is.
func repeatabilityHeading(r *report.Run) string {
	return "Repeatability (" + r.RepeatabilityKey() + ")"
}
