package figure

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// run loads ../testdata/NAME.yaml, a recorded StorageBenchmark, as a run.
func run(t *testing.T, name string) *report.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sbs, err := apireport.Decode(b)
	if err != nil || len(sbs) != 1 {
		t.Fatalf("%s: %d objects, %v", name, len(sbs), err)
	}
	return apireport.FromAPI(&sbs[0])
}

// decodePNG decodes a PNG and checks its size.
func decodePNG(t *testing.T, b []byte, w, h int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got.X != w || got.Y != h {
		t.Fatalf("PNG is %dx%d, want %dx%d", got.X, got.Y, w, h)
	}
	return img
}

// colourCounts counts the pixels of each colour wanted and the non-white
// ones.
func colourCounts(img image.Image, wanted ...color.RGBA) (counts []int, inked int) {
	counts = make([]int, len(wanted))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c != (color.RGBA{255, 255, 255, 255}) {
				inked++
			}
			for i, w := range wanted {
				if c == w {
					counts[i]++
				}
			}
		}
	}
	return counts, inked
}

func TestPNG(t *testing.T) {
	cases := []struct {
		fixture string
		opts    report.Options
		w, h    int
	}{
		{"oltp", report.Options{}, report.DefaultWidth, report.DefaultHeight},
		{"oltp", report.Options{Metric: "p99", Width: 800, Height: 500}, 800, 500},
		{"throughput", report.Options{Metric: "p99.9"}, report.DefaultWidth, report.DefaultHeight},
	}
	for _, c := range cases {
		t.Run(c.fixture+"-"+c.opts.Metric, func(t *testing.T) {
			b, err := PNG(run(t, c.fixture), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			img := decodePNG(t, b, c.w, c.h)
			counts, inked := colourCounts(img, ColorRead, ColorWrite, ColorTarget, ColorKnee, ColorSaturated)
			total := c.w * c.h
			if inked < total/100 || inked > total/2 {
				t.Errorf("%d of %d pixels inked: blank or flooded", inked, total)
			}
			for i, name := range []string{"read", "write", "target", "knee", "saturated"} {
				if counts[i] < 40 {
					t.Errorf("%d pixels of the %s colour", counts[i], name)
				}
			}
		})
	}
}

// svgTexts parses an SVG as XML and returns its text elements' contents
// and its paths' (d, style) attributes.
func svgTexts(t *testing.T, b []byte) (texts []string, paths [][2]string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var inText bool
	var cur strings.Builder
	sawSVG := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "svg":
				sawSVG = true
			case "text":
				inText = true
				cur.Reset()
			case "path":
				var p [2]string
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "d":
						p[0] = a.Value
					case "style":
						p[1] = a.Value
					}
				}
				paths = append(paths, p)
			}
		case xml.CharData:
			if inText {
				cur.Write(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText = false
				texts = append(texts, cur.String())
			}
		}
	}
	if !sawSVG {
		t.Fatal("no <svg> element")
	}
	return texts, paths
}

func count(texts []string, want string) int {
	n := 0
	for _, s := range texts {
		if s == want {
			n++
		}
	}
	return n
}

var horizontalPath = regexp.MustCompile(`^M([0-9.]+),([0-9.]+)L([0-9.]+),([0-9.]+)$`)

// targetLine finds the dashed target line: a horizontal path in the target
// colour at least minWidth points long.
func targetLine(paths [][2]string, minWidth float64) bool {
	for _, p := range paths {
		if !strings.Contains(p[1], "stroke:#D62728") || !strings.Contains(p[1], "stroke-dasharray:7,4") {
			continue
		}
		m := horizontalPath.FindStringSubmatch(p[0])
		if m == nil || m[2] != m[4] {
			continue
		}
		x0, _ := strconv.ParseFloat(m[1], 64)
		x1, _ := strconv.ParseFloat(m[3], 64)
		if x1-x0 >= minWidth {
			return true
		}
	}
	return false
}

func TestSVG(t *testing.T) {
	cases := []struct {
		fixture string
		metric  string
		series  []string
		labels  []string
	}{
		{"oltp", "", []string{"read mean", "write mean"}, []string{
			"oltp-ontap-nas · class ontap-nas · profile oltp", "achieved IOPS (reads + writes)", "mean latency (ms)",
			"latency target 1 ms (mean latency)", "knee (step 6)", "saturated (step 8)", "60,000"}},
		{"oltp", "p99", []string{"read p99", "write p99"}, []string{"p99 latency (ms)", "latency target 1 ms (mean latency)"}},
		{"throughput", "", []string{"read mean", "write mean"}, []string{
			"seq-gcnv-extreme · class gcnv-extreme · profile mix-256k-75", "achieved throughput (MiB/s, reads + writes)",
			"mean latency (ms)", "latency target 10 ms (mean latency)", "knee (step 4)", "saturated (step 6)", "1,000"}},
	}
	for _, c := range cases {
		t.Run(c.fixture+"-"+c.metric, func(t *testing.T) {
			b, err := SVG(run(t, c.fixture), report.Options{Metric: c.metric})
			if err != nil {
				t.Fatal(err)
			}
			texts, paths := svgTexts(t, b)
			for _, l := range c.labels {
				if count(texts, l) != 1 {
					t.Errorf("text %q appears %d times; texts: %q", l, count(texts, l), texts)
				}
			}
			// The legend has exactly one entry per series.
			n := 0
			for _, s := range texts {
				if strings.HasPrefix(s, "read ") || strings.HasPrefix(s, "write ") {
					n++
				}
			}
			if n != len(c.series) {
				t.Errorf("%d series legend entries, want %d: %q", n, len(c.series), texts)
			}
			for _, s := range c.series {
				if count(texts, s) != 1 {
					t.Errorf("legend entry %q appears %d times", s, count(texts, s))
				}
			}
			if !targetLine(paths, 400) {
				t.Error("no horizontal dashed target line across the plot")
			}
			if !bytes.Contains(b, []byte("font-family:'Liberation Sans',Arial")) {
				t.Error("no font fallback")
			}
		})
	}
}

func TestMarkdownAndHTML(t *testing.T) {
	sb := run(t, "oltp")
	var md bytes.Buffer
	if err := Render(&md, sb, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, w := range []string{
		"# oltp-ontap-nas: ops–latency curve",
		"| step | offered | read IOPS | write IOPS | MiB/s | read mean | read p99 | write mean | write p99 | skew |   |",
		"| 1 | 5,000 IOPS | 3,998 | 1,000 | 39.0 | 313 µs | 619 µs | 522 µs | 1.05 ms | 800µs |   |",
		"| 8 | 70,000 IOPS | 49,470 | 12,367 | 483.1 | 4.81 ms | 18.4 ms | 6.91 ms | 24.1 ms | 1.5ms | saturated |",
		"- knee: step 6 at 49,951 IOPS",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	// Without ImageRef the figure is embedded: a PNG data URI.
	m := regexp.MustCompile(`!\[[^]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no embedded PNG")
	}
	raw, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, raw, report.DefaultWidth, report.DefaultHeight)
	md.Reset()
	if err := Render(&md, sb, report.FormatMarkdown, report.Options{ImageRef: "oltp.png"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "![ops–latency curve of oltp-ontap-nas](oltp.png)") || strings.Contains(md.String(), "base64") {
		t.Error("markdown does not reference the image file")
	}

	var page bytes.Buffer
	if err := Render(&page, sb, report.FormatHTML, report.Options{Metric: "p99"}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	for _, w := range []string{"<!DOCTYPE html>", "<svg ", "read p99</text>", `<td class="num">6</td><td class="num">50,000 IOPS</td>`, "<td>knee</td>",
		"<li>knee: step 6 at 49,951 IOPS</li>", "performance at the latency target (mean latency ≤ 1 ms)"} {
		if !strings.Contains(h, w) {
			t.Errorf("html lacks %q", w)
		}
	}
	if strings.Contains(h, "<?xml") || strings.Count(h, "<tr>") != 9 {
		t.Error("html: XML prolog inside the page or rows missing")
	}
}

func TestTicks(t *testing.T) {
	for raw, want := range map[float64]float64{0.9: 1, 1.3: 2, 2.2: 2.5, 3: 5, 7: 10, 8400: 10000, 0.013: 0.02} {
		if got := niceStep(raw); got < want*0.999999 || got > want*1.000001 {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
	var labels []string
	for _, tk := range (commaTicks{}).Ticks(0, 66780) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0 10,000 20,000 30,000 40,000 50,000 60,000" {
		t.Errorf("labels %v", labels)
	}
	labels = nil
	for _, tk := range (commaTicks{}).Ticks(0, 17.2) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0.0 2.5 5.0 7.5 10.0 12.5 15.0" {
		t.Errorf("labels %v", labels)
	}
}

func TestCompare(t *testing.T) {
	oltp := run(t, "oltp")
	// A second OLTP run, 10 % faster at every step.
	faster := run(t, "oltp")
	faster.Name, faster.Class = "oltp-ontap-san", "ontap-san"
	for i := range faster.Steps {
		s := &faster.Steps[i]
		s.AchievedIOPS = float64(int64(s.AchievedIOPS) * 11 / 10)
		s.Latency.Mean = s.Latency.Mean * 9 / 10
	}
	// p99 of reads, as a figure.
	c, err := report.CompareRuns([]*report.Run{oltp, faster}, report.Options{Metric: "p99", Operation: "read"})
	if err != nil {
		t.Fatal(err)
	}
	svg, err := ComparisonSVG(c, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	texts, paths := svgTexts(t, svg)
	for _, w := range []string{"oltp-ontap-nas (ontap-nas, oltp)", "oltp-ontap-san (ontap-san, oltp)", "p99 read latency (ms)", "latency target 1 ms", "ops–latency: oltp-ontap-nas vs oltp-ontap-san"} {
		if count(texts, w) != 1 {
			t.Errorf("text %q appears %d times", w, count(texts, w))
		}
	}
	if !targetLine(paths, 400) {
		t.Error("no target line")
	}
	b, err := ComparisonPNG(c, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts, _ := colourCounts(decodePNG(t, b, report.DefaultWidth, report.DefaultHeight), ComparePalette[0], ComparePalette[1])
	if counts[0] < 40 || counts[1] < 40 {
		t.Errorf("series colours: %v pixels", counts)
	}
	var md bytes.Buffer
	if err := RenderComparison(&md, c, report.FormatMarkdown, report.Options{ImageRef: "cmp.png"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "](cmp.png)") || !strings.Contains(md.String(), "| oltp-ontap-san | ontap-san | oltp |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// A run whose steps carry the storage's own figures draws the clients'
// mean latency beside the storage's, and tables them.
func TestStorageViewBesideClients(t *testing.T) {
	r := run(t, "oltp")
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Latency == nil {
			continue
		}
		s.Backend = &report.StorageView{IOPS: s.AchievedIOPS, Latency: s.Latency.Mean * 2 / 3, Gap: s.Latency.Mean - s.Latency.Mean*2/3, Resolution: time.Minute}
	}
	r.Steps[0].Backend = &report.StorageView{TooShort: true, Resolution: time.Minute}
	b, err := PNG(r, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts, _ := colourCounts(decodePNG(t, b, report.DefaultWidth, report.DefaultHeight), ColorClientMean, ColorStorageMean)
	for i, name := range []string{"clients' mean", "storage's mean"} {
		if counts[i] < 40 {
			t.Errorf("%d pixels of the %s colour", counts[i], name)
		}
	}
	tb := r.StepTable()
	col := slices.Index(tb.Header, "storage mean")
	if col < 0 || tb.Header[col-1] != "storage IOPS" || tb.Header[col+1] != "outside storage" {
		t.Fatalf("header %v: want storage IOPS, storage mean, outside storage", tb.Header)
	}
	if tb.Rows[0][col-1] != "too short" || tb.Rows[0][col] != "" {
		t.Errorf("a step too short to join reads %q %q", tb.Rows[0][col-1], tb.Rows[0][col])
	}
	s := r.Steps[1]
	if want := numfmt.Duration(s.Backend.Latency); tb.Rows[1][col] != want {
		t.Errorf("step 2's storage mean %q, want %q", tb.Rows[1][col], want)
	}
	plain := run(t, "oltp").StepTable()
	if slices.Contains(plain.Header, "storage mean") {
		t.Error("a run without the storage's figures has their columns")
	}
}
