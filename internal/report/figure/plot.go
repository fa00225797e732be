// Package figure draws a run's ops–latency curve (and compared runs'
// curves) with gonum/plot, and renders the reports that embed it: PNG, SVG,
// and Markdown and HTML pages with the step table and summary of package
// report. It is apart from package report because gonum/plot links its
// fonts into every binary that imports it: the runner, which prints runs
// through package report, has no use for figures.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/report"
)

// Colours of the chart elements. Tests look for the series colours in the
// rendered pixels.
var (
	// ColorRead and ColorWrite draw a report's read and write series.
	ColorRead  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	ColorWrite = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	// ColorClientMean and ColorStorageMean draw the clients' mean latency
	// and the storage's own, when steps carry the storage's figures.
	ColorClientMean  = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	ColorStorageMean = color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}
	// ColorTarget draws the latency target line.
	ColorTarget = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	// ColorKnee rings the knee.
	ColorKnee = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	// ColorSaturated crosses saturated steps.
	ColorSaturated = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
	// ComparePalette draws compared benchmarks, in order (it repeats after
	// its last colour).
	ComparePalette = []color.RGBA{
		ColorRead, ColorWrite,
		ColorClientMean,
		{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
		{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
		ColorStorageMean,
		{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
		{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	}
	colorText    = color.RGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xff}
	colorSubtext = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	colorGrid    = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
)

// dpi is the figures' resolution: report.DefaultWidth × DefaultHeight
// pixels are 8 × 5 inches.
const dpi = 150

// chart is what a figure shows, before gonum/plot draws it.
type chart struct {
	title, subtitle string
	xLabel, yLabel  string
	unit            report.Unit
	series          []chartSeries
	// target is the latency target line in ms (0: none) and its legend.
	target      float64
	targetLabel string
	// overlay: series are benchmarks, so knee and saturated entries do
	// not list step numbers (they differ per series).
	overlay bool
}

type chartSeries struct {
	name   string
	color  color.RGBA
	points []report.Point
}

// curveChart is a report's figure: the read and write series of one
// latency metric, the target line, the knee and saturated steps.
func curveChart(r *report.Run, metric string) chart {
	unit, sel := r.Unit, r.Target
	if metric == "" {
		metric = sel.WithDefaults().Metric
	}
	c := chart{
		title:       fmt.Sprintf("%s · class %s · profile %s", r.Name, orDash(r.Class), r.ProfileName()),
		subtitle:    subtitle(r),
		xLabel:      xLabel(unit),
		yLabel:      metric + " latency (ms)",
		unit:        unit,
		target:      ms(r.LatencyTarget),
		targetLabel: fmt.Sprintf("latency target %s (%s)", numfmt.Duration(r.LatencyTarget), sel),
	}
	curve := r.CurveSeries(metric)
	for _, s := range curve {
		col := ColorRead
		if s.Selector.Operation == analysis.OperationWrite {
			col = ColorWrite
		}
		c.series = append(c.series, chartSeries{name: s.Name, color: col, points: s.Points})
	}
	// The storage's own mean latency, beside the clients'.
	for _, s := range r.BackendSeries(metric, curve) {
		c.yLabel = "latency (ms)"
		col := ColorClientMean
		if s.Name == report.StorageSeries {
			col = ColorStorageMean
		}
		c.series = append(c.series, chartSeries{name: s.Name, color: col, points: s.Points})
	}
	return c
}

// compareChart overlays one series per benchmark.
func compareChart(runs []*report.Run, sel analysis.LatencySelector, unit report.Unit, target float64) chart {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Name
	}
	c := chart{
		title:       "ops–latency: " + strings.Join(names, " vs "),
		subtitle:    fmt.Sprintf("%s against achieved %s, one curve per benchmark", sel, unit.Label()),
		xLabel:      xLabel(unit),
		yLabel:      sel.String() + " (ms)",
		unit:        unit,
		target:      target,
		targetLabel: fmt.Sprintf("latency target %s", numfmt.Duration(durationMs(target))),
		overlay:     true,
	}
	for i, r := range runs {
		name := fmt.Sprintf("%s (%s, %s)", r.Name, orDash(r.Class), r.ProfileName())
		c.series = append(c.series, chartSeries{
			name:   name,
			color:  ComparePalette[i%len(ComparePalette)],
			points: r.Series(name, sel, unit).Points,
		})
	}
	return c
}

func xLabel(u report.Unit) string {
	if u == report.UnitMiBps {
		return "achieved throughput (MiB/s, reads + writes)"
	}
	return "achieved IOPS (reads + writes)"
}

func subtitle(r *report.Run) string {
	var parts []string
	if w := r.Workload; w != nil {
		parts = append(parts, fmt.Sprintf("%s %s, %s reads, iodepth %d", numfmt.Size(w.BlockSizeBytes), w.Pattern, numfmt.Percent(float64(w.ReadPercent), 0), w.IODepth))
	}
	parts = append(parts, fmt.Sprintf("%d clients × %d jobs", max(r.Clients, 1), max(r.JobsPerClient, 1)))
	if s := r.Storage; s != nil {
		st := ""
		if s.Driver != "" {
			st = s.Driver
		} else if s.Provisioner != "" {
			st = s.Provisioner
		}
		if s.Capacity != "" {
			st = strings.TrimSpace(st + " " + s.Capacity)
		}
		if st != "" {
			parts = append(parts, st)
		}
	}
	if !r.Started.IsZero() {
		parts = append(parts, r.Started.UTC().Format("2006-01-02"))
	}
	if p := r.Phase; p != "Completed" {
		parts = append(parts, p)
	}
	return strings.Join(parts, " · ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func durationMs(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fonts of the figure.
func fontOf(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// styledPlot is an empty plot in the figures' style: axes from 0 with
// thousands separators, a light grid, and a top-left legend.
func styledPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.Transparent
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = fontOf(11, false)
		ax.Label.TextStyle.Color = colorText
		ax.Label.Padding = vg.Points(6)
		ax.Tick.Label.Font = fontOf(9.5, false)
		ax.Tick.Label.Color = colorText
		ax.Color = colorSubtext
		ax.Tick.Color = colorSubtext
		ax.Tick.Length = vg.Points(4)
		ax.Tick.Marker = commaTicks{}
		ax.Padding = vg.Points(2)
		ax.Min = 0
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel

	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = colorGrid, colorGrid
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.6), vg.Points(0.6)
	p.Add(grid)

	p.Legend.TextStyle.Font = fontOf(9.5, false)
	p.Legend.TextStyle.Color = colorText
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(-8)
	p.Legend.ThumbnailWidth = vg.Points(26)
	p.Legend.Padding = vg.Points(3)
	return p
}

// build turns the chart into a gonum plot.
func (c *chart) build() (*plot.Plot, []string, error) {
	p := styledPlot(c.xLabel, c.yLabel)
	var legend []string
	var maxX, maxY float64
	var knees, saturated plotter.XYs
	var kneeSteps, satSteps []string
	for _, s := range c.series {
		xys := make(plotter.XYs, len(s.points))
		for i, pt := range s.points {
			xys[i] = plotter.XY{X: pt.Load, Y: pt.LatencyMs}
			maxX, maxY = math.Max(maxX, pt.Load), math.Max(maxY, pt.LatencyMs)
			if pt.Knee {
				knees = append(knees, xys[i])
				kneeSteps = appendOnce(kneeSteps, strconv.Itoa(int(pt.Index)+1))
			}
			if pt.Saturated {
				saturated = append(saturated, xys[i])
				satSteps = appendOnce(satSteps, strconv.Itoa(int(pt.Index)+1))
			}
		}
		if len(xys) == 0 {
			continue
		}
		// The curve runs from the lowest achieved load to the highest, as
		// the published ops–latency charts draw it; a curve's unthrottled
		// first step would otherwise be joined to its 10 % step.
		sort.SliceStable(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, err
		}
		line.Color, line.Width = s.color, vg.Points(2)
		points.GlyphStyle = draw.GlyphStyle{Color: s.color, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
		legend = append(legend, s.name)
	}
	if c.target > 0 {
		target := plotter.NewFunction(func(float64) float64 { return c.target })
		target.Color, target.Width = ColorTarget, vg.Points(1.5)
		target.Dashes = []vg.Length{vg.Points(7), vg.Points(4)}
		target.Samples = 2
		p.Add(target)
		p.Legend.Add(c.targetLabel, target)
		legend = append(legend, c.targetLabel)
	}
	// Marked steps (knee, saturated) are scatter glyphs over the series,
	// named with their step numbers unless several curves are overlaid.
	markName := func(what string, steps []string) string {
		if c.overlay {
			return what
		}
		return what + " (step " + strings.Join(steps, ", ") + ")"
	}
	legend, err := addMarks(p, legend, knees, markName("knee", kneeSteps), ringMark(ColorKnee))
	if err != nil {
		return nil, nil, err
	}
	if legend, err = addMarks(p, legend, saturated, markName("saturated", satSteps), crossMark(ColorSaturated)); err != nil {
		return nil, nil, err
	}
	if maxX <= 0 {
		maxX = 1
	}
	p.X.Max = maxX * 1.08
	p.Y.Max = math.Max(maxY, c.target) * 1.12
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	return p, legend, nil
}

// legendBox is the extent of a top-left legend drawn on c, with a margin
// (gonum's Legend.Rectangle ignores the offsets and mirrors Left).
func legendBox(l *plot.Legend, names []string, c draw.Canvas) (vg.Rectangle, bool) {
	if len(names) == 0 {
		return vg.Rectangle{}, false
	}
	var width, entry vg.Length
	for _, n := range names {
		width = max(width, l.ThumbnailWidth+l.TextStyle.Rectangle(" "+n).Max.X)
		entry = max(entry, l.TextStyle.Rectangle(n).Max.Y)
	}
	n := vg.Length(len(names))
	height := n*entry + (n-1)*l.Padding + l.TextStyle.FontExtents().Descent
	pad := vg.Points(6)
	left, top := c.Min.X+l.XOffs, c.Max.Y+l.YOffs
	return vg.Rectangle{
		Min: vg.Point{X: left - pad, Y: top - height - pad},
		Max: vg.Point{X: left + width + pad, Y: top + pad},
	}, true
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// draw lays the figure out on a canvas: the title and subtitle on top, the
// plot beneath.
func (c *chart) draw(cv vg.CanvasSizer) error {
	p, names, err := c.build()
	if err != nil {
		return err
	}
	dc := frame(cv, c.title, c.subtitle, vg.Points(6))
	drawBoxedLegend(p, names, dc)
	return nil
}

// drawBoxedLegend draws p on dc with its top-left legend (of the entries
// names) last, on a white panel, so that no line runs through its text.
func drawBoxedLegend(p *plot.Plot, names []string, dc draw.Canvas) {
	legend := p.Legend
	p.Legend = plot.NewLegend()
	p.Draw(dc)
	data := p.DataCanvas(dc)
	if box, ok := legendBox(&legend, names, data); ok {
		data.SetColor(color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xe6})
		data.Fill(box.Path())
		data.SetLineStyle(draw.LineStyle{Color: colorGrid, Width: vg.Points(0.8)})
		data.Stroke(box.Path())
	}
	legend.Draw(data)
}

// frame paints the figure's white ground and its centred title and
// subtitle, and returns the canvas left for the plots (bottom is extra
// margin below them).
func frame(cv vg.CanvasSizer, title, subtitle string, bottom vg.Length) draw.Canvas {
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Path())
	margin := vg.Points(14)
	dc = draw.Crop(dc, margin, -margin-bottom, margin*0.6, -margin)
	titleStyle := text.Style{Color: colorText, Font: fontOf(14, true), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	subStyle := text.Style{Color: colorSubtext, Font: fontOf(9.5, false), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	y := dc.Max.Y
	dc.FillText(titleStyle, vg.Point{X: dc.Center().X, Y: y}, title)
	y -= titleStyle.Height(title) + vg.Points(4)
	if subtitle != "" {
		dc.FillText(subStyle, vg.Point{X: dc.Center().X, Y: y}, subtitle)
		y -= subStyle.Height(subtitle)
	}
	dc.Max.Y = y - vg.Points(10)
	return dc
}

// drawer is a figure that draws itself on a canvas.
type drawer interface{ draw(vg.CanvasSizer) error }

// pngOf renders a figure as a PNG of w × h pixels.
func pngOf(c drawer, w, h int) ([]byte, error) {
	w, h = sizeOr(w, report.DefaultWidth), sizeOr(h, report.DefaultHeight)
	cv := vgimg.NewWith(vgimg.UseWH(pixels(w), pixels(h)), vgimg.UseDPI(dpi))
	if err := c.draw(cv); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// svgOf renders a figure as SVG of the same size in points as the PNG.
func svgOf(c drawer, w, h int) ([]byte, error) {
	w, h = sizeOr(w, report.DefaultWidth), sizeOr(h, report.DefaultHeight)
	cv := vgsvg.NewWith(vgsvg.UseWH(pixels(w), pixels(h)))
	if err := c.draw(cv); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	// The figure was laid out with Liberation Sans, metric-compatible with
	// Arial: let viewers without it fall back to Arial or Helvetica.
	out := bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	return out, nil
}

func sizeOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// pixels is the length of n pixels at the figure's resolution.
func pixels(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// commaTicks are about seven labelled ticks at round values (1, 2, 2.5 or 5
// times a power of ten) with an unlabelled tick between each, labelled with
// thousands separators ("40,000", not "40000" or "4e+04").
type commaTicks struct{}

func (commaTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := niceStep((hi - lo) / 7)
	var ticks []plot.Tick
	start := math.Ceil(lo/step) * step
	for i := 0; ; i++ {
		v := start + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v, step)})
		if half := v + step/2; half <= hi {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// niceStep rounds a step up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel renders v with as many decimals as the step needs.
func tickLabel(v, step float64) string {
	decimals := 0
	for d := step; math.Abs(d-math.Round(d)) > 1e-9 && decimals < 6; d *= 10 {
		decimals++
	}
	v = math.Round(v*math.Pow10(decimals)) / math.Pow10(decimals)
	return numfmt.Fixed(v, decimals)
}

// addMarks draws glyphs in style at xys over a plot's lines (a knee, a
// step or run that failed), under name in the plot's legend, and returns
// legend (the names drawBoxedLegend boxes) with name added; without
// points it draws nothing and returns legend as it is.
func addMarks(p *plot.Plot, legend []string, xys plotter.XYs, name string, style draw.GlyphStyle) ([]string, error) {
	if len(xys) == 0 {
		return legend, nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = style
	p.Add(sc)
	p.Legend.Add(name, sc)
	return append(legend, name), nil
}

// ringMark rings a point in col: a knee, a regressed run.
func ringMark(col color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: col, Radius: vg.Points(8), Shape: ringGlyph{width: vg.Points(2)}}
}

// crossMark crosses a point out in col: a saturated step, a step or run
// that failed.
func crossMark(col color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: col, Radius: vg.Points(6), Shape: crossGlyph{width: vg.Points(1.8)}}
}

// ringGlyph is a circle outline of a given line width (gonum's RingGlyph
// is hairline).
type ringGlyph struct{ width vg.Length }

func (g ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: g.width})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// crossGlyph is an × of a given line width.
type crossGlyph struct{ width vg.Length }

func (g crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: g.width})
	r := sty.Radius * 0.75
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	c.Stroke(p)
	p = nil
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}
