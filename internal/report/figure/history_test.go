package figure

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/report"
)

// nightly is a week of nightly runs, newest first as a schedule keeps
// them: the fourth night failed, the sixth regressed.
func nightly() report.ScheduleHistory {
	day := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	h := report.ScheduleHistory{Name: "oltp-nightly"}
	for d := range 7 {
		r := report.HistoryRun{Name: "oltp-nightly-" + day.AddDate(0, 0, d).Format("0102"), Scheduled: day.AddDate(0, 0, d),
			State: report.StateComplete, PeakIOPS: 60000 + int64(d)*300, AtTargetIOPS: 48000 + int64(d)*200, SLO: "AllMet", Regression: "NotRegressed"}
		switch d {
		case 3:
			r = report.HistoryRun{Name: r.Name, Scheduled: r.Scheduled, State: report.StateFailed, Reason: "ClientLost"}
		case 5:
			r.PeakIOPS, r.AtTargetIOPS, r.Regression, r.RegressedMetrics = 41000, 30000, "Regressed", []string{"iops", "p99"}
		}
		h.Runs = append([]report.HistoryRun{r}, h.Runs...)
	}
	return h
}

func TestHistoryFigure(t *testing.T) {
	h := nightly()
	b, err := HistoryPNG(h, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("FIGURE_OUT"); dir != "" {
		_ = os.WriteFile(dir+"/history.png", b, 0o644)
	}
	img := decodePNG(t, b, report.DefaultWidth, report.DefaultHeight)
	counts, _ := colourCounts(img, ColorRead, ColorWrite, ColorFailed, ColorRegressed)
	if counts[0] < 300 || counts[1] < 300 {
		t.Errorf("peak series %d pixels, at-target series %d: want both drawn", counts[0], counts[1])
	}
	// One cross and one ring on the figure, one of each in the legend.
	if counts[2] < 60 || counts[3] < 100 {
		t.Errorf("failed cross %d pixels, regressed ring %d: want both marked", counts[2], counts[3])
	}
	small := decodePNG(t, must(t)(HistoryPNG(h, report.Options{Width: 640, Height: 400})), 640, 400)
	if small.Bounds().Dx() != 640 {
		t.Error("size not honoured")
	}

	svg := string(must(t)(HistorySVG(h, report.Options{})))
	var doc struct{ XMLName xml.Name }
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Fatalf("not an SVG document: %v", err)
	}
	for _, want := range []string{
		">oltp-nightly · scheduled runs</text>",
		">7 kept runs, scheduled 2025-06-01 02:00 to 2025-06-07 02:00 UTC · 1 failed, 1 regressed</text>",
		">peak IOPS</text>", ">IOPS at the latency target</text>", ">failed run</text>", ">regressed run</text>",
		">scheduled time (UTC)</text>", ">IOPS</text>",
		">2025-06-03</text>", ">60,000</text>",
	} {
		if strings.Count(svg, want) != 1 {
			t.Errorf("SVG says %q %d times, want once", want, strings.Count(svg, want))
		}
	}

	// Without a failure or a regression, neither is in the legend; a
	// single run gets a day's worth of axis, ticked by the hour.
	one := report.ScheduleHistory{Name: "once", Runs: []report.HistoryRun{{Name: "once-1", Scheduled: time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC), State: report.StateComplete, PeakIOPS: 1000}}}
	svg = string(must(t)(HistorySVG(one, report.Options{})))
	for _, absent := range []string{">failed run<", ">regressed run<", ">IOPS at the latency target<"} {
		if strings.Contains(svg, absent) {
			t.Errorf("SVG of a single good run has %q", absent)
		}
	}
	for _, want := range []string{">1 kept run, scheduled 2025-06-01 02:00 UTC</text>", ">06-01 02:00</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG of a single run lacks %q", want)
		}
	}
}

func TestHistoryMarkdown(t *testing.T) {
	var b strings.Builder
	if err := RenderHistory(&b, nightly(), report.FormatMarkdown, report.Options{ImageRef: "nightly.png"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# oltp-nightly: scheduled runs\n\n![peak IOPS and IOPS at the latency target of the runs of oltp-nightly](nightly.png)\n\n## Runs\n\n",
		"| RUN | SCHEDULED | STATE | PEAK IOPS | AT TARGET IOPS | SLO | REGRESSION |",
		"| oltp-nightly-0607 | 2025-06-07T02:00:00Z | Complete | 61,800 | 49,200 | AllMet | NotRegressed |",
		"| oltp-nightly-0606 | 2025-06-06T02:00:00Z | Complete | 41,000 | 30,000 | AllMet | Regressed (iops, p99) |",
		"| oltp-nightly-0604 | 2025-06-04T02:00:00Z | Failed |   |   | ClientLost |   |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Newest first, as the schedule keeps them.
	if strings.Index(md, "oltp-nightly-0607") > strings.Index(md, "oltp-nightly-0601") {
		t.Error("rows are not newest first")
	}
	b.Reset()
	if err := RenderHistory(&b, nightly(), report.FormatMarkdown, report.Options{}); err != nil || !strings.Contains(b.String(), "](data:image/png;base64,") {
		t.Errorf("markdown without an image file does not embed the PNG (%v)", err)
	}
	if err := RenderHistory(&b, nightly(), report.FormatHTML, report.Options{}); err == nil {
		t.Error("html rendered: want an unsupported format")
	}
}

// must returns a function that fails the test on an error, else returns
// the bytes.
func must(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
