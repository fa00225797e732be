package report

import (
	"fmt"
	"strings"
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

// Default image size in pixels: 8 × 5 inches at 150 dpi.
const (
	DefaultWidth  = 1200
	DefaultHeight = 750
)

// Options tune a rendering.
type Options struct {
	// Metric is the latency metric plotted (an analysis.LatencySelector
	// metric that CheckSelector accepts); empty means the benchmark's
	// analysis.targetLatency metric (for compare, the first benchmark's).
	Metric string
	// Operation is the operation compare plots (read, write, total,
	// worst); empty means the first benchmark's target operation. A report
	// always plots a read and a write series.
	Operation string
	// Width and Height of the image in pixels; 0 means 1200 × 750.
	Width, Height int
	// ImageRef is the path Markdown references for the figure (the
	// caller writes the PNG there); empty embeds the PNG as a data URI.
	ImageRef string
}
