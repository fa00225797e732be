package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/storagebench/storagebench/internal/report"
)

// ColorOperationMax draws the legend's entry for the dashed max lines
// (each curve's own max line is in its operation's colour).
var ColorOperationMax = colorSubtext

// OperationsPalette draws the operations of a VolumeOperationsBenchmark,
// in status order (it repeats after its last colour). Tests look for
// these colours in the pixels.
var OperationsPalette = ComparePalette

// The operations figure's legend entries besides the operations'.
const (
	operationsMaxLegend = "max of each step (dashed)"
	operationsKnee      = "knee"
	operationsFailures  = "step with failures"
)

// operationsChart is a VolumeOperationsBenchmark's figure: per operation,
// the median latency of each step against its concurrency, joined by a
// line, and the step's slowest operation as a thinner dashed line; the
// knee ringed, steps with failed or timed-out operations crossed, and the
// fitted time per operation in the legend.
type operationsChart struct{ r *report.OperationsRun }

// OperationsPNG renders a VolumeOperationsBenchmark's latency against
// concurrency.
func OperationsPNG(r *report.OperationsRun, o report.Options) ([]byte, error) {
	return pngOf(operationsChart{r}, o.Width, o.Height)
}

// OperationsSVG renders a VolumeOperationsBenchmark's latency against
// concurrency.
func OperationsSVG(r *report.OperationsRun, o report.Options) ([]byte, error) {
	return svgOf(operationsChart{r}, o.Width, o.Height)
}

// RenderOperations writes a VolumeOperationsBenchmark's report in a
// format: png, svg, md (the figure, a step table and the time per
// operation of each operation, the verdicts) or html (the same as a
// standalone page); the JSON document is
// apireport.WriteOperationsDocument's.
func RenderOperations(w io.Writer, r *report.OperationsRun, f report.Format, o report.Options) error {
	switch f {
	case report.FormatPNG:
		b, err := OperationsPNG(r, o)
		return writeBytes(w, b, err)
	case report.FormatSVG:
		b, err := OperationsSVG(r, o)
		return writeBytes(w, b, err)
	case report.FormatMarkdown:
		return operationsMarkdown(w, r, o)
	case report.FormatHTML:
		return operationsHTML(w, r, o)
	}
	return fmt.Errorf("volume operations: unsupported format %q", f)
}

// operationsMeta are the lines under a report's title.
func operationsMeta(r *report.OperationsRun) [][2]string {
	meta := [][2]string{
		{"storage", r.StorageLine()},
		{"status", report.SafeLine(r.Phase)},
		{"operations", r.PlanLine()},
	}
	if !r.Started.IsZero() {
		run := "started " + r.Started.UTC().Format(time.RFC3339)
		if !r.Ended.IsZero() {
			run += ", ended " + r.Ended.UTC().Format(time.RFC3339)
		}
		meta = append(meta, [2]string{"run", run})
	}
	return meta
}

func operationsMarkdown(w io.Writer, r *report.OperationsRun, o report.Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: volume operations\n\n", r.Name)
	for _, m := range operationsMeta(r) {
		fmt.Fprintf(&b, "- **%s** %s\n", m[0], m[1])
	}
	img, err := imageMarkdown("latency against concurrency of each operation of "+r.Name, o.ImageRef, func() ([]byte, error) { return OperationsPNG(r, o) })
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s\n", img)
	for i := range r.Curves {
		c := &r.Curves[i]
		fmt.Fprintf(&b, "\n## %s\n\n", c.Operation)
		t := c.StepTable()
		if err := t.Markdown(&b); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n%s\n", c.SlopeLine())
	}
	if v := r.VerdictLines(); len(v) > 0 {
		b.WriteString("\n## Verdicts\n\n")
		for _, l := range v {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	_, err = w.Write(b.Bytes())
	return err
}

func operationsHTML(w io.Writer, r *report.OperationsRun, o report.Options) error {
	svg, err := OperationsSVG(r, o)
	if err != nil {
		return err
	}
	p := page{Title: r.Name + ": volume operations", Figure: inlineSVG(svg), Summary: r.SummaryLines()}
	for _, m := range operationsMeta(r) {
		p.Meta = append(p.Meta, m[0]+" "+m[1])
	}
	for i := range r.Curves {
		c := &r.Curves[i]
		t, err := tableHTML(c.StepTable())
		if err != nil {
			return err
		}
		p.Tables = append(p.Tables, pageTable{Heading: c.Operation, Table: t})
	}
	return pageTemplate.Execute(w, p)
}

func (c operationsChart) title() string {
	return c.r.Name + " · class " + orDash(c.r.Class)
}

func (c operationsChart) subtitle() string {
	var parts []string
	if c.r.Provisioner != "" {
		parts = append(parts, c.r.Provisioner)
	}
	parts = append(parts, "p50 of each step joined, its max dashed")
	if !c.r.Started.IsZero() {
		parts = append(parts, c.r.Started.UTC().Format("2006-01-02"))
	}
	if c.r.State != report.StateComplete {
		parts = append(parts, c.r.Phase)
	}
	return report.SafeLine(strings.Join(parts, " · "))
}

// operationLegend is an operation's legend entry: its name, the figure
// plotted and its fitted time per operation.
func operationLegend(c *report.OperationCurve) string {
	name := c.Operation + " p50"
	if s := c.PerOperation.ShortSlope(); s != "" {
		name += " · " + s
	}
	return report.SafeLine(name)
}

// operationsMarks are what the curves put on the figure besides their
// lines: the knees and failed steps (and where, for the legend), and the
// extent of the data.
type operationsMarks struct {
	knees, failures  plotter.XYs
	kneeAt, failedAt []string
	maxX, maxY       float64
	concurrencies    []int
	legend           []string
}

// addCurve draws an operation's p50 and max lines in col, and notes its
// marks.
func (m *operationsMarks) addCurve(p *plot.Plot, cv *report.OperationCurve, col color.RGBA) error {
	var p50s, maxes plotter.XYs
	for j := range cv.Steps {
		s := &cv.Steps[j]
		x := float64(s.Concurrency)
		m.maxX = max(m.maxX, x)
		if !slices.Contains(m.concurrencies, s.Concurrency) {
			m.concurrencies = append(m.concurrencies, s.Concurrency)
		}
		y := 0.0
		if l := s.Latency; l != nil {
			y = l.P50.Seconds()
			p50s = append(p50s, plotter.XY{X: x, Y: y})
			maxes = append(maxes, plotter.XY{X: x, Y: l.Max.Seconds()})
			m.maxY = max(m.maxY, l.Max.Seconds())
		}
		// A step without a succeeded operation is crossed at zero.
		if s.Failures() > 0 {
			m.failures = append(m.failures, plotter.XY{X: x, Y: y})
			m.failedAt = append(m.failedAt, fmt.Sprintf("%s at %d", cv.Operation, s.Concurrency))
		}
		if cv.Knee > 0 && s.Concurrency == cv.Knee && s.Latency != nil {
			m.knees = append(m.knees, plotter.XY{X: x, Y: y})
			m.kneeAt = append(m.kneeAt, fmt.Sprintf("%s at %d", cv.Operation, s.Concurrency))
		}
	}
	if len(maxes) > 0 {
		line, points, err := plotter.NewLinePoints(maxes)
		if err != nil {
			return err
		}
		line.Color, line.Width = col, vg.Points(1.2)
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.TriangleGlyph{}}
		p.Add(line, points)
	}
	if len(p50s) > 0 {
		line, points, err := plotter.NewLinePoints(p50s)
		if err != nil {
			return err
		}
		line.Color, line.Width = col, vg.Points(2)
		points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}
		p.Add(line, points)
		name := operationLegend(cv)
		p.Legend.Add(name, line, points)
		m.legend = append(m.legend, name)
	}
	return nil
}

func (c operationsChart) build() (*plot.Plot, []string, error) {
	p := styledPlot("operations started at once (concurrency)", "latency (s)")
	m := &operationsMarks{}
	for i := range c.r.Curves {
		if err := m.addCurve(p, &c.r.Curves[i], OperationsPalette[i%len(OperationsPalette)]); err != nil {
			return nil, nil, err
		}
	}
	legend, maxX, maxY := m.legend, m.maxX, m.maxY
	knees, failures, kneeAt, failedAt, concurrencies := m.knees, m.failures, m.kneeAt, m.failedAt, m.concurrencies
	if maxY > 0 {
		// One entry says what the dashed lines are, in a neutral colour.
		line := plotter.NewFunction(func(float64) float64 { return math.NaN() })
		line.Color, line.Width = ColorOperationMax, vg.Points(1.2)
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Legend.Add(operationsMaxLegend, line)
		legend = append(legend, operationsMaxLegend)
	}
	markName := func(what string, at []string) string {
		return report.SafeLine(what + " (" + strings.Join(at, ", ") + ")")
	}
	legend, err := addMarks(p, legend, knees, markName(operationsKnee, kneeAt), ringMark(ColorKnee))
	if err != nil {
		return nil, nil, err
	}
	if legend, err = addMarks(p, legend, failures, markName(operationsFailures, failedAt), crossMark(ColorFailed)); err != nil {
		return nil, nil, err
	}
	slices.Sort(concurrencies)
	p.X.Tick.Marker = concurrencyTicks(concurrencies)
	p.X.Max = max(maxX, 1) * 1.08
	// Room above the highest point for the legend, which takes about a
	// fourteenth of the height per entry at the default size.
	p.Y.Max = max(maxY*(1.1+0.07*float64(len(legend))), 1)
	return p, legend, nil
}

func (c operationsChart) draw(cv vg.CanvasSizer) error {
	p, legend, err := c.build()
	if err != nil {
		return err
	}
	dc := frame(cv, report.SafeLine(c.title()), c.subtitle(), vg.Points(6))
	drawBoxedLegend(p, legend, dc)
	return nil
}

// concurrencyTicks label the concurrencies the steps ran at (and 0); a
// label that would crowd the one before it (closer than a sixtieth of
// the axis) is left out.
type concurrencyTicks []int

func (t concurrencyTicks) Ticks(lo, hi float64) []plot.Tick {
	if len(t) == 0 || !(hi > lo) {
		return commaTicks{}.Ticks(lo, hi)
	}
	ticks := []plot.Tick{{Value: 0, Label: "0"}}
	last := 0.0
	for _, c := range t {
		v := float64(c)
		if v < lo || v > hi {
			continue
		}
		label := strconv.Itoa(c)
		if (v-last)/(hi-lo) < 1.0/60 {
			label = ""
		} else {
			last = v
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}
