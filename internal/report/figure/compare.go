package figure

import (
	"bytes"
	"fmt"
	"io"

	"github.com/storagebench/storagebench/internal/report"
)

func comparisonChart(c *report.Comparison) chart {
	return compareChart(c.Runs, c.Selector, c.Unit, ms(c.Target))
}

// ComparisonPNG renders the compared runs' overlaid curves.
func ComparisonPNG(c *report.Comparison, o report.Options) ([]byte, error) {
	ch := comparisonChart(c)
	return pngOf(&ch, o.Width, o.Height)
}

// ComparisonSVG renders the compared runs' overlaid curves.
func ComparisonSVG(c *report.Comparison, o report.Options) ([]byte, error) {
	ch := comparisonChart(c)
	return svgOf(&ch, o.Width, o.Height)
}

// RenderComparison writes a comparison in a format: text, md, html, png or
// svg.
func RenderComparison(w io.Writer, c *report.Comparison, f report.Format, o report.Options) error {
	switch f {
	case report.FormatPNG:
		b, err := ComparisonPNG(c, o)
		return writeBytes(w, b, err)
	case report.FormatSVG:
		b, err := ComparisonSVG(c, o)
		return writeBytes(w, b, err)
	case report.FormatText:
		return c.WriteText(w)
	case report.FormatMarkdown:
		var b bytes.Buffer
		fmt.Fprintf(&b, "# ops–latency: %s\n\n", c.Names())
		img, err := imageMarkdown("ops–latency curves of "+c.Names(), o.ImageRef, func() ([]byte, error) { return ComparisonPNG(c, o) })
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s\n\n", img)
		t := c.Table()
		if err := t.Markdown(&b); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n%s\n", c.Note())
		_, err = w.Write(b.Bytes())
		return err
	case report.FormatHTML:
		svg, err := ComparisonSVG(c, o)
		if err != nil {
			return err
		}
		tbl, err := tableHTML(c.Table())
		if err != nil {
			return err
		}
		return pageTemplate.Execute(w, page{
			Title:   "ops–latency: " + c.Names(),
			Meta:    []string{c.Note()},
			Figure:  inlineSVG(svg),
			Tables:  []pageTable{{Heading: "At the peak and at the latency target", Table: tbl}},
			Summary: nil,
		})
	}
	return fmt.Errorf("compare: unsupported format %q", f)
}
