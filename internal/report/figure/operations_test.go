package figure

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// operationsRun loads ../testdata/volume-operations.yaml, a recorded
// VolumeOperationsBenchmark.
func operationsRun(t *testing.T) *report.OperationsRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "volume-operations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := apireport.DecodeOperations(b)
	if err != nil || len(ops) != 1 {
		t.Fatalf("%d objects, %v", len(ops), err)
	}
	r := apireport.OperationsFromAPI(&ops[0])
	if len(r.Curves) < 2 {
		t.Fatalf("the fixture has %d curves: want at least 2", len(r.Curves))
	}
	return r
}

// withFailures is the recorded run with the last operation's last step
// failed in part and a knee on its first curve, so that every mark is
// drawn whatever the recording holds.
func withFailures(t *testing.T) *report.OperationsRun {
	r := operationsRun(t)
	c := &r.Curves[len(r.Curves)-1]
	s := &c.Steps[len(c.Steps)-1]
	s.Failed, s.Succeeded = 1, s.Succeeded-1
	s.Reason = "claim lost"
	r.Curves[0].Knee = r.Curves[0].Steps[len(r.Curves[0].Steps)-1].Concurrency
	return r
}

func TestOperationsPNG(t *testing.T) {
	r := withFailures(t)
	b, err := OperationsPNG(r, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("FIGURE_OUT"); dir != "" {
		_ = os.WriteFile(dir+"/operations.png", b, 0o644)
	}
	img := decodePNG(t, b, report.DefaultWidth, report.DefaultHeight)
	wanted := append([]report.OperationCurve(nil), r.Curves...)
	colours := make([]colourName, 0, len(wanted)+2)
	for i := range wanted {
		colours = append(colours, colourName{wanted[i].Operation, OperationsPalette[i%len(OperationsPalette)]})
	}
	colours = append(colours, colourName{"knee", ColorKnee}, colourName{"failures", ColorFailed})
	rgba := make([]color.RGBA, len(colours))
	for i, c := range colours {
		rgba[i] = c.c
	}
	counts, inked := colourCounts(img, rgba...)
	total := report.DefaultWidth * report.DefaultHeight
	if inked < total/100 || inked > total/2 {
		t.Errorf("%d of %d pixels inked: blank or flooded", inked, total)
	}
	for i, c := range colours {
		if counts[i] < 40 {
			t.Errorf("%d pixels of the %s colour", counts[i], c.name)
		}
	}
	// Without failures or a knee, neither mark is drawn (the crosses' grey
	// is also among the text's anti-aliased pixels: count what they add).
	plain := operationsRun(t)
	for i := range plain.Curves {
		plain.Curves[i].Knee = 0
	}
	marks, _ := colourCounts(decodePNG(t, must(t)(OperationsPNG(plain, report.Options{})), report.DefaultWidth, report.DefaultHeight), ColorKnee, ColorFailed)
	if marks[0] != 0 {
		t.Errorf("a run without a knee has %d knee pixels", marks[0])
	}
	if failed := counts[len(counts)-1]; failed < marks[1]+60 {
		t.Errorf("the crosses add %d pixels of their colour, want at least 60", failed-marks[1])
	}
	small := decodePNG(t, must(t)(OperationsPNG(plain, report.Options{Width: 800, Height: 500})), 800, 500)
	if small.Bounds().Dx() != 800 {
		t.Error("size not honoured")
	}
}

type colourName struct {
	name string
	c    color.RGBA
}

func TestOperationsSVG(t *testing.T) {
	r := withFailures(t)
	svg := must(t)(OperationsSVG(r, report.Options{}))
	texts, paths := svgTexts(t, svg)
	last := &r.Curves[len(r.Curves)-1]
	want := []string{
		r.Name + " · class " + r.Class,
		"operations started at once (concurrency)", "latency (s)",
		"max of each step (dashed)",
		fmt.Sprintf("knee (%s at %d)", r.Curves[0].Operation, r.Curves[0].Knee),
		fmt.Sprintf("step with failures (%s at %d)", last.Operation, last.Steps[len(last.Steps)-1].Concurrency),
	}
	for i := range r.Curves {
		c := &r.Curves[i]
		entry := c.Operation + " p50"
		if c.PerOperation != nil {
			entry += " · " + c.PerOperation.ShortSlope()
			if !strings.Contains(entry, "/op") {
				t.Errorf("legend entry %q does not give the time per operation", entry)
			}
		}
		want = append(want, entry)
	}
	for _, w := range want {
		if count(texts, w) != 1 {
			t.Errorf("text %q appears %d times; texts: %q", w, count(texts, w), texts)
		}
	}
	// The x axis is labelled at each concurrency stepped.
	for _, s := range r.Curves[0].Steps {
		if count(texts, fmt.Sprint(s.Concurrency)) < 1 {
			t.Errorf("no tick label %d", s.Concurrency)
		}
	}
	// Each operation's max is a dashed line in its colour, its p50 a solid
	// one: one of each per operation, plus the legend's dashed sample.
	for i := range r.Curves {
		col := fmt.Sprintf("stroke:#%02X%02X%02X", OperationsPalette[i].R, OperationsPalette[i].G, OperationsPalette[i].B)
		dashed, solid := 0, 0
		for _, p := range paths {
			if !strings.Contains(p[1], col+";") || !strings.Contains(p[0], "L") {
				continue
			}
			if strings.Contains(p[1], "stroke-dasharray:5,3") {
				dashed++
			} else if strings.Count(p[0], "L") >= len(r.Curves[i].Steps)-1 {
				solid++
			}
		}
		if dashed != 1 || solid < 1 {
			t.Errorf("%s: %d dashed and %d solid lines in %s, want 1 dashed (max) and a solid one (p50, its legend sample)", r.Curves[i].Operation, dashed, solid, col)
		}
	}
	// A run still running says so in the subtitle.
	running := operationsRun(t)
	running.State, running.Phase = report.StateRunning, "Running"
	texts, _ = svgTexts(t, must(t)(OperationsSVG(running, report.Options{})))
	found := false
	for _, s := range texts {
		if strings.HasSuffix(s, " · Running") {
			found = true
		}
	}
	if !found {
		t.Errorf("subtitle of a running run does not say Running: %q", texts)
	}
	// A run without a knee and failures has no such legend entry.
	plain := operationsRun(t)
	for i := range plain.Curves {
		plain.Curves[i].Knee = 0
	}
	svg = must(t)(OperationsSVG(plain, report.Options{}))
	for _, absent := range []string{">knee (", ">step with failures ("} {
		if bytes.Contains(svg, []byte(absent)) {
			t.Errorf("SVG of a clean run has %q", absent)
		}
	}
}

func TestOperationsMarkdownAndHTML(t *testing.T) {
	r := withFailures(t)
	var b bytes.Buffer
	if err := RenderOperations(&b, r, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "## Verdicts") {
		t.Error("markdown of a run without objectives or notes has verdicts")
	}
	r.Objectives = []report.SLO{{Name: "bind-within-3s", Verdict: "NotMet", Message: "p99 3.5 s > 3 s"}}
	b.Reset()
	if err := RenderOperations(&b, r, report.FormatMarkdown, report.Options{ImageRef: "ops.png"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	want := []string{
		"# " + r.Name + ": volume operations\n",
		"- **storage** " + r.StorageLine() + "\n",
		"- **operations** " + r.PlanLine() + "\n",
		"![latency against concurrency of each operation of " + r.Name + "](ops.png)",
		"| at once | succeeded | failed | timed out | p50 | p90 | p99 | max | per minute |   | reason |",
		"claim lost |",
		"\n## Verdicts\n\n- SLO bind-within-3s: NotMet — p99 3.5 s > 3 s\n",
	}
	for i := range r.Curves {
		want = append(want, "\n## "+r.Curves[i].Operation+"\n", r.Curves[i].SlopeLine())
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	// A row per step in every table.
	steps := 0
	for i := range r.Curves {
		steps += len(r.Curves[i].Steps)
	}
	if n := len(regexp.MustCompile(`(?m)^\| [0-9]+ \| `).FindAllString(md, -1)); n != steps {
		t.Errorf("%d step rows, want %d", n, steps)
	}
	b.Reset()
	if err := RenderOperations(&b, r, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatal("markdown without an image file does not embed the PNG")
	}
	raw, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, raw, report.DefaultWidth, report.DefaultHeight)

	b.Reset()
	if err := RenderOperations(&b, r, report.FormatHTML, report.Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, w := range []string{"<!DOCTYPE html>", "<svg ", "<h2>" + r.Curves[0].Operation + "</h2>", "<li>" + r.Curves[0].SlopeLine() + "</li>", "<td>claim lost</td>"} {
		if !strings.Contains(h, w) {
			t.Errorf("html lacks %q", w)
		}
	}
	if strings.Contains(h, "<?xml") || strings.Count(h, "<tr>") != steps+len(r.Curves) {
		t.Errorf("html: XML prolog inside the page, or %d rows for %d steps and %d headers", strings.Count(h, "<tr>"), steps, len(r.Curves))
	}
	if err := RenderOperations(&b, r, report.FormatJSON, report.Options{}); err == nil {
		t.Error("json rendered here: want an unsupported format (apireport writes it)")
	}
}

func TestConcurrencyTicks(t *testing.T) {
	labels := func(ticks concurrencyTicks, hi float64) string {
		var out []string
		for _, tk := range ticks.Ticks(0, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		ticks concurrencyTicks
		hi    float64
		want  string
	}{
		{concurrencyTicks{1, 2, 4}, 4.32, "0 1 2 4"},
		{concurrencyTicks{1, 5, 10, 25, 50}, 54, "0 1 5 10 25 50"},
		// 1 is too close to 0 on an axis to 100: its label is left out.
		{concurrencyTicks{1, 2, 50, 100}, 108, "0 2 50 100"},
		{nil, 17.2, "0.0 2.5 5.0 7.5 10.0 12.5 15.0"},
	} {
		if got := labels(c.ticks, c.hi); got != c.want {
			t.Errorf("ticks %v to %v: %q, want %q", c.ticks, c.hi, got, c.want)
		}
	}
}
