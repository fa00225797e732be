package figure

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/storagebench/storagebench/internal/report"
)

// Marks of a schedule's history. Tests look for them in the pixels.
var (
	// ColorFailed crosses a failed run at zero: it measured nothing, and
	// the cross is the curve's mark of a step that failed to keep up.
	ColorFailed = ColorSaturated
	// ColorRegressed rings a run that regressed against its baseline.
	ColorRegressed = ColorTarget
)

// The history's legend entries.
const (
	historyPeak      = "peak IOPS"
	historyAtTarget  = "IOPS at the latency target"
	historyFailed    = "failed run"
	historyRegressed = "regressed run"
)

// historyChart is a schedule's kept runs along their scheduled times: the
// peak IOPS and the IOPS at the latency target of each, so that a trend,
// a failure or a regression stands out among the runs around it.
type historyChart struct{ h report.ScheduleHistory }

// HistoryPNG renders a schedule's history.
func HistoryPNG(h report.ScheduleHistory, o report.Options) ([]byte, error) {
	return pngOf(historyChart{h}, o.Width, o.Height)
}

// HistorySVG renders a schedule's history.
func HistorySVG(h report.ScheduleHistory, o report.Options) ([]byte, error) {
	return svgOf(historyChart{h}, o.Width, o.Height)
}

// RenderHistory writes a schedule's history in a format: png, svg, or md
// (the figure and the table of runs; the JSON document is
// apireport.WriteScheduleDocument's).
func RenderHistory(w io.Writer, h report.ScheduleHistory, f report.Format, o report.Options) error {
	switch f {
	case report.FormatPNG:
		b, err := HistoryPNG(h, o)
		return writeBytes(w, b, err)
	case report.FormatSVG:
		b, err := HistorySVG(h, o)
		return writeBytes(w, b, err)
	case report.FormatMarkdown:
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s: scheduled runs\n\n", h.Name)
		img, err := imageMarkdown("peak IOPS and IOPS at the latency target of the runs of "+h.Name, o.ImageRef, func() ([]byte, error) { return HistoryPNG(h, o) })
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s\n\n## Runs\n\n", img)
		t := h.Table()
		if err := t.Markdown(&b); err != nil {
			return err
		}
		_, err = w.Write(b.Bytes())
		return err
	}
	return fmt.Errorf("schedule history: unsupported format %q", f)
}

// oldestFirst are the runs in the order they were scheduled.
func (c historyChart) oldestFirst() []report.HistoryRun {
	runs := slices.Clone(c.h.Runs)
	slices.SortStableFunc(runs, func(a, b report.HistoryRun) int { return a.Scheduled.Compare(b.Scheduled) })
	return runs
}

func (c historyChart) subtitle(runs []report.HistoryRun) string {
	if len(runs) == 0 {
		return "no kept runs"
	}
	at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }
	s := fmt.Sprintf("%d kept runs, scheduled %s to %s UTC", len(runs), at(runs[0].Scheduled), at(runs[len(runs)-1].Scheduled))
	if len(runs) == 1 {
		s = fmt.Sprintf("1 kept run, scheduled %s UTC", at(runs[0].Scheduled))
	}
	var failed, regressed int
	for i := range runs {
		if runs[i].Failed() {
			failed++
		}
		if runs[i].Regressed() {
			regressed++
		}
	}
	var marks []string
	if failed > 0 {
		marks = append(marks, fmt.Sprintf("%d failed", failed))
	}
	if regressed > 0 {
		marks = append(marks, fmt.Sprintf("%d regressed", regressed))
	}
	if len(marks) > 0 {
		s += " · " + strings.Join(marks, ", ")
	}
	return s
}

func (c historyChart) build(runs []report.HistoryRun) (*plot.Plot, []string, error) {
	p := styledPlot("scheduled time (UTC)", "IOPS")
	p.X.Tick.Marker = timeTicks{}
	var peak, atTarget, failed, regressed plotter.XYs
	maxY := 0.0
	for i := range runs {
		r := &runs[i]
		x := float64(r.Scheduled.Unix())
		if r.PeakIOPS > 0 {
			peak = append(peak, plotter.XY{X: x, Y: float64(r.PeakIOPS)})
		}
		if r.AtTargetIOPS > 0 {
			atTarget = append(atTarget, plotter.XY{X: x, Y: float64(r.AtTargetIOPS)})
		}
		maxY = max(maxY, float64(r.PeakIOPS), float64(r.AtTargetIOPS))
		if r.Failed() {
			failed = append(failed, plotter.XY{X: x})
		}
		if r.Regressed() {
			// The ring goes round the run's highest point.
			regressed = append(regressed, plotter.XY{X: x, Y: float64(max(r.PeakIOPS, r.AtTargetIOPS))})
		}
	}
	// The two series are lines through their points; the marks are
	// glyphs alone. An empty one is left out of the legend too.
	var legend []string
	series := []struct {
		name  string
		xys   plotter.XYs
		glyph draw.GlyphStyle
		line  bool
	}{
		{historyPeak, peak, draw.GlyphStyle{Color: ColorRead, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}, true},
		{historyAtTarget, atTarget, draw.GlyphStyle{Color: ColorWrite, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}, true},
		{historyFailed, failed, crossMark(ColorFailed), false},
		{historyRegressed, regressed, ringMark(ColorRegressed), false},
	}
	for _, s := range series {
		if !s.line {
			var err error
			if legend, err = addMarks(p, legend, s.xys, s.name, s.glyph); err != nil {
				return nil, nil, err
			}
			continue
		}
		if len(s.xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return nil, nil, err
		}
		line.Color, line.Width = s.glyph.Color, vg.Points(2)
		points.GlyphStyle = s.glyph
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
		legend = append(legend, s.name)
	}
	// Room above the highest point for the legend, which takes about a
	// fourteenth of the height per entry at the default size; and around
	// the first and last runs (an hour either side of a single one).
	p.Y.Max = max(maxY*(1.15+0.07*float64(len(legend))), 1)
	if n := len(runs); n > 0 {
		lo, hi := float64(runs[0].Scheduled.Unix()), float64(runs[n-1].Scheduled.Unix())
		pad := max((hi-lo)*0.05, time.Hour.Seconds())
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
	return p, legend, nil
}

func (c historyChart) draw(cv vg.CanvasSizer) error {
	runs := c.oldestFirst()
	p, legend, err := c.build(runs)
	if err != nil {
		return err
	}
	dc := frame(cv, c.h.Name+" · scheduled runs", c.subtitle(runs), vg.Points(6))
	drawBoxedLegend(p, legend, dc)
	return nil
}

// timeSteps are the spacings timeTicks chooses from.
var timeSteps = []time.Duration{
	15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour,
	28 * 24 * time.Hour, 56 * 24 * time.Hour, 91 * 24 * time.Hour, 182 * 24 * time.Hour, 364 * 24 * time.Hour,
}

// timeTicks label an axis of Unix seconds at round UTC instants, at most
// about seven: whole hours or days, as dates ("2025-06-03"), with the time
// of day ("06-03 14:00") when they are less than a day apart. gonum's
// TimeTicks places ticks at round numbers of seconds, which are not round
// instants.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if (hi-lo)/s.Seconds() <= 7 {
			step = s
			break
		}
	}
	format := "2006-01-02"
	if step < 24*time.Hour {
		format = "01-02 15:04"
	}
	sec := step.Seconds()
	var ticks []plot.Tick
	for v := math.Ceil(lo/sec) * sec; v <= hi; v += sec {
		ticks = append(ticks, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(format)})
	}
	return ticks
}
