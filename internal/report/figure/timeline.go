package figure

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/storagebench/storagebench/internal/report"
)

// ColorStall shades a step's longest stall on a timeline.
var ColorStall = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x40}

// timelineChart is a step's timeline: IOPS above, p99 latency below, window
// by window, with the longest stall shaded in both.
type timelineChart struct{ t report.StepTimeline }

// TimelinePNG renders a step's timeline.
func TimelinePNG(t report.StepTimeline, o report.Options) ([]byte, error) {
	return pngOf(timelineChart{t}, o.Width, o.Height)
}

// TimelineSVG renders a step's timeline.
func TimelineSVG(t report.StepTimeline, o report.Options) ([]byte, error) {
	return svgOf(timelineChart{t}, o.Width, o.Height)
}

func (c timelineChart) panel(yLabel string, y func(report.TimelinePoint) (float64, bool), col color.RGBA) (*plot.Plot, error) {
	p := plot.New()
	p.BackgroundColor = color.Transparent
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = fontOf(10, false)
		ax.Label.TextStyle.Color = colorText
		ax.Tick.Label.Font = fontOf(9, false)
		ax.Tick.Label.Color = colorText
		ax.Color, ax.Tick.Color = colorSubtext, colorSubtext
		ax.Tick.Marker = commaTicks{}
		ax.Min = 0
	}
	p.X.Label.Text = "seconds after the ramp"
	p.Y.Label.Text = yLabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = colorGrid, colorGrid
	p.Add(grid)
	var runs []plotter.XYs
	maxY, gap := 0.0, true
	for _, pt := range c.t.Points {
		v, ok := y(pt)
		if !ok {
			gap = true
			continue
		}
		if gap {
			runs = append(runs, nil)
			gap = false
		}
		// Each window's value is drawn at its middle.
		runs[len(runs)-1] = append(runs[len(runs)-1], plotter.XY{X: (pt.StartSeconds + pt.EndSeconds) / 2, Y: v})
		maxY = max(maxY, v)
	}
	if n := len(c.t.Points); n > 0 {
		p.X.Max = c.t.Points[n-1].EndSeconds
	}
	p.Y.Max = max(maxY*1.1, 1)
	if s := c.t.Stall; s.Duration > 0 {
		x0, x1 := s.Start.Seconds(), (s.Start + s.Duration).Seconds()
		band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: p.Y.Max}, {X: x0, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		band.Color, band.Width = ColorStall, 0
		p.Add(band)
	}
	// A window without a value (no I/O, so no latency) breaks the line.
	for _, run := range runs {
		line, points, err := plotter.NewLinePoints(run)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = col, vg.Points(1.6)
		points.Color, points.Shape, points.Radius = col, draw.CircleGlyph{}, vg.Points(1.8)
		p.Add(line, points)
	}
	return p, nil
}

func (c timelineChart) draw(cv vg.CanvasSizer) error {
	iops, err := c.panel("IOPS", func(p report.TimelinePoint) (float64, bool) { return p.IOPS, true }, ColorRead)
	if err != nil {
		return err
	}
	p99, err := c.panel("p99 latency (ms)", func(p report.TimelinePoint) (float64, bool) { return ms(p.P99), p.P99 > 0 }, ColorWrite)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s · step %d · every %d s", c.t.Name, c.t.Step+1, c.t.WindowSeconds)
	if c.t.WindowSeconds == 1 {
		title = fmt.Sprintf("%s · step %d · every second", c.t.Name, c.t.Step+1)
	}
	dc := frame(cv, title, c.t.StallLine(), 0)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12)}
	plots := [][]*plot.Plot{{iops}, {p99}}
	canvases := plot.Align(plots, tiles, dc)
	iops.Draw(canvases[0][0])
	p99.Draw(canvases[1][0])
	return nil
}
