package figure

import (
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/results"
)

// stalledTimeline is 12 seconds at 1,000 IOPS of 200 µs, with nothing
// completed in seconds 5 to 7 and the waiting I/Os completing at 3 s in
// second 8.
func stalledTimeline() results.Timeline {
	t := results.Timeline{WindowSeconds: 1, Idle: []results.Span{{StartMs: 5000, EndMs: 8000}}}
	for k := range 12 {
		w := results.Window{StartMs: uint64(k) * 1000, IOs: 1000, IOPS: 1000, Hist: fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(200_000), Count: 1000}}}}
		switch {
		case k >= 5 && k < 8:
			w = results.Window{StartMs: w.StartMs}
		case k == 8:
			w.Hist.Bins = append(w.Hist.Bins, fio.Bin{Index: fio.IndexOf(3_000_000_000), Count: 50})
			w.IOs, w.IOPS = 1050, 1050
		}
		t.Windows = append(t.Windows, w)
	}
	return t
}

func TestTimelineFigure(t *testing.T) {
	tl := report.TimelineOf("oltp", 2, stalledTimeline())
	if tl.Stall.Duration != 3*time.Second || tl.Stall.Start != 5*time.Second {
		t.Fatalf("stall %+v, want 3 s from 5 s", tl.Stall)
	}
	b, err := TimelinePNG(tl, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b, report.DefaultWidth, report.DefaultHeight)
	// The stall band is ColorStall over white.
	a := float64(ColorStall.A) / 255
	blend := func(c uint8) uint8 { return uint8(float64(c)*a + 255*(1-a) + 0.5) }
	band := color.RGBA{R: blend(ColorStall.R), G: blend(ColorStall.G), B: blend(ColorStall.B), A: 0xff}
	counts, inked := colourCounts(img, ColorRead, ColorWrite, band)
	if counts[0] < 200 || counts[1] < 200 {
		t.Errorf("IOPS line %d pixels, p99 line %d: want both drawn", counts[0], counts[1])
	}
	if counts[2] < 2000 {
		t.Errorf("stall band %d pixels of %v: want it shaded in both panels", counts[2], band)
	}
	if inked < 10000 {
		t.Errorf("only %d pixels inked", inked)
	}
	svg, err := TimelineSVG(tl, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"oltp · step 3 · every second", "longest stall 3 s, from 5 s", "p99.9 within a second of it: 3 s"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG does not say %q", want)
		}
	}
}

func TestHTMLTimelines(t *testing.T) {
	r := run(t, "oltp")
	page := func(tl *report.Timelines) string {
		t.Helper()
		var b strings.Builder
		if err := HTML(&b, r, report.Options{}, tl); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// Without timelines (as Render draws the page) there is no section.
	if h := page(nil); strings.Contains(h, "Timelines") || strings.Count(h, "<svg ") != 1 {
		t.Error("a page without timelines has a Timelines section")
	}
	h := page(&report.Timelines{Unavailable: "no <ConfigMaps>"})
	if !strings.Contains(h, "<h2>Timelines</h2>\n<p class=\"note\">Timelines not available: no &lt;ConfigMaps&gt;</p>") || strings.Contains(h, "<h3>") {
		t.Error("timelines not available: want the note, escaped, and no step section")
	}
	h = page(&report.Timelines{
		ByStep:  map[int]report.StepTimeline{2: report.TimelineOf("oltp-ontap-nas", 2, stalledTimeline())},
		Missing: map[int]string{0: "ConfigMap oltp-ontap-nas-step-000 not found"},
	})
	if strings.Count(h, "<h3>") != 8 || strings.Count(h, "<svg ") != 2 {
		t.Errorf("%d step sections and %d svg, want 8 and 2", strings.Count(h, "<h3>"), strings.Count(h, "<svg "))
	}
	for _, w := range []string{
		"<h3>Step 1: offered 5,000 IOPS</h3>\n<p class=\"note\">No timeline: ConfigMap oltp-ontap-nas-step-000 not found</p>",
		"<h3>Step 2: offered 10,000 IOPS</h3>\n<p class=\"note\">No timeline.</p>",
		"<h3>Step 3: offered 20,000 IOPS</h3>\n<figure>\n<svg ",
		">oltp-ontap-nas · step 3 · every second</text>",
	} {
		if !strings.Contains(h, w) {
			t.Errorf("html lacks %q", w)
		}
	}
}
