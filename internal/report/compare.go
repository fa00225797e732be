package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// FormatText is compare's aligned text table.
const FormatText Format = "text"

// Comparison is what compare draws and tabulates: every benchmark judged on
// the same latency figure, load unit and latency target (the first
// benchmark's unless Options say otherwise), so that rows are comparable.
type Comparison struct {
	Benchmarks []v1alpha1.StorageBenchmark
	Selector   Selector
	Unit       Unit
	Target     time.Duration
	Figures    []Figures
}

// Figures are one benchmark's points of comparison, recomputed from its
// steps with the comparison's selector, unit and target (steps with fio
// errors are left out, as the analysis does).
type Figures struct {
	// Peak is the highest achieved load; PeakStep its index (-1: none).
	Peak     float64
	PeakStep int32
	// LatencyAtPeak is the selected latency at the peak (ok false when the
	// step has no I/O in the selected direction).
	LatencyAtPeak   time.Duration
	LatencyAtPeakOK bool
	// AtTarget is the highest achieved load whose latency is at or below
	// the target; AtTargetStep its index (-1: no step was).
	AtTarget        float64
	AtTargetStep    int32
	LatencyAtTarget time.Duration
	// KneeStep is the recorded knee (-1: none).
	KneeStep int32
}

// Compare resolves a comparison of benchmarks (at least one).
func Compare(sbs []v1alpha1.StorageBenchmark, o Options) (*Comparison, error) {
	if len(sbs) == 0 {
		return nil, fmt.Errorf("compare: no benchmark")
	}
	first := &sbs[0]
	c := &Comparison{Benchmarks: sbs, Selector: TargetSelector(first), Unit: UnitOf(first), Target: LatencyTarget(first)}
	if o.Metric != "" {
		c.Selector.Metric = o.Metric
	}
	if o.Operation != "" {
		c.Selector.Operation = o.Operation
	}
	for i := range sbs {
		c.Figures = append(c.Figures, figuresOf(&sbs[i], c.Selector, c.Unit, c.Target))
	}
	return c, nil
}

func figuresOf(sb *v1alpha1.StorageBenchmark, sel Selector, unit Unit, target time.Duration) Figures {
	f := Figures{PeakStep: -1, AtTargetStep: -1, KneeStep: -1}
	for i := range sb.Status.Steps {
		s := &sb.Status.Steps[i]
		if failed(s) {
			continue
		}
		x := unit.Achieved(s)
		if f.PeakStep < 0 || x > f.Peak {
			f.Peak, f.PeakStep = x, s.Index
			f.LatencyAtPeak, f.LatencyAtPeakOK = sel.Of(s)
		}
		if l, ok := sel.Of(s); ok && l <= target {
			if f.AtTargetStep < 0 || x > f.AtTarget || (x == f.AtTarget && l < f.LatencyAtTarget) {
				f.AtTarget, f.AtTargetStep, f.LatencyAtTarget = x, s.Index, l
			}
		}
		if s.Knee {
			f.KneeStep = s.Index
		}
	}
	return f
}

// delta renders v relative to base: "+12.3 %"; "baseline" for the first row.
func delta(v, base float64, first bool) string {
	if first {
		return "baseline"
	}
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", (v-base)/base*100)
}

// Table is the comparison's deltas at the peak and at the latency target,
// each relative to the first benchmark.
func (c *Comparison) Table() Table {
	u, sel, target := c.Unit.Label(), c.Selector, formatLatency(c.Target)
	t := Table{
		Header: []string{"benchmark", "class", "profile", "peak " + u, "Δ peak", sel.String() + " at peak", "Δ latency",
			u + " at ≤ " + target, "Δ at target", sel.String() + " there", "knee"},
		Numeric: []bool{false, false, false, true, true, true, true, true, true, true, true},
	}
	base := c.Figures[0]
	for i := range c.Benchmarks {
		sb, f := &c.Benchmarks[i], c.Figures[i]
		row := []string{sb.Name, orDash(className(sb)), profileName(sb)}
		if f.PeakStep < 0 {
			row = append(row, "-", "-", "-", "-")
		} else {
			row = append(row, fmt.Sprintf("%s (step %d)", c.Unit.Number(f.Peak), f.PeakStep+1), delta(f.Peak, base.Peak, i == 0))
			if f.LatencyAtPeakOK {
				row = append(row, formatLatency(f.LatencyAtPeak), delta(float64(f.LatencyAtPeak), float64(base.LatencyAtPeak), i == 0 || !base.LatencyAtPeakOK))
			} else {
				row = append(row, "-", "-")
			}
		}
		if f.AtTargetStep < 0 {
			row = append(row, "none", "-", "-")
		} else {
			row = append(row, fmt.Sprintf("%s (step %d)", c.Unit.Number(f.AtTarget), f.AtTargetStep+1), delta(f.AtTarget, base.AtTarget, i == 0 || base.AtTargetStep < 0),
				formatLatency(f.LatencyAtTarget))
		}
		if f.KneeStep >= 0 {
			row = append(row, fmt.Sprintf("step %d", f.KneeStep+1))
		} else {
			row = append(row, "-")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (c *Comparison) chart() chart {
	return compareChart(c.Benchmarks, c.Selector, c.Unit, ms(c.Target))
}

// PNG renders the overlaid curves.
func (c *Comparison) PNG(o Options) ([]byte, error) {
	ch := c.chart()
	return ch.png(o.Width, o.Height)
}

// SVG renders the overlaid curves.
func (c *Comparison) SVG(o Options) ([]byte, error) {
	ch := c.chart()
	return ch.svg(o.Width, o.Height)
}

func (c *Comparison) names() string {
	n := make([]string, len(c.Benchmarks))
	for i := range c.Benchmarks {
		n[i] = c.Benchmarks[i].Name
	}
	return strings.Join(n, " vs ")
}

// note says what the comparison is judged on.
func (c *Comparison) note() string {
	return fmt.Sprintf("Judged on %s against achieved %s with a latency target of %s; Δ is relative to %s.",
		c.Selector, c.Unit.Label(), formatLatency(c.Target), c.Benchmarks[0].Name)
}

// Render writes the comparison in a format: text, md, html, png or svg.
func (c *Comparison) Render(w io.Writer, f Format, o Options) error {
	switch f {
	case FormatPNG:
		b, err := c.PNG(o)
		return writeBytes(w, b, err)
	case FormatSVG:
		b, err := c.SVG(o)
		return writeBytes(w, b, err)
	case FormatText:
		t := c.Table()
		if err := t.Text(w); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, "\n"+c.note())
		return err
	case FormatMarkdown:
		var b bytes.Buffer
		fmt.Fprintf(&b, "# ops–latency: %s\n\n", c.names())
		img, err := imageMarkdown("ops–latency curves of "+c.names(), o.ImageRef, func() ([]byte, error) { return c.PNG(o) })
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s\n\n", img)
		t := c.Table()
		if err := t.Markdown(&b); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n%s\n", c.note())
		_, err = w.Write(b.Bytes())
		return err
	case FormatHTML:
		svg, err := c.SVG(o)
		if err != nil {
			return err
		}
		tbl, err := tableHTML(c.Table())
		if err != nil {
			return err
		}
		return pageTemplate.Execute(w, page{
			Title:   "ops–latency: " + c.names(),
			Meta:    []string{c.note()},
			Figure:  inlineSVG(svg),
			Tables:  []pageTable{{Heading: "At the peak and at the latency target", Table: tbl}},
			Summary: nil,
		})
	}
	return fmt.Errorf("compare: unsupported format %q", f)
}
