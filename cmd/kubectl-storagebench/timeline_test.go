package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// stepRecord is a step ConfigMap of oltp-ontap-nas whose timeline has 10
// seconds at 500 IOPS with nothing completed in seconds 4 and 5, its
// controller owner (by UID), as the operator writes its records.
func stepRecord(t *testing.T, k int, owner *v1alpha1.StorageBenchmark) *corev1.ConfigMap {
	t.Helper()
	tl := results.Timeline{WindowSeconds: 1, Idle: []results.Span{{StartMs: 4000, EndMs: 6000}}}
	for s := range 10 {
		w := results.Window{StartMs: uint64(s) * 1000, IOs: 500, IOPS: 500, Hist: fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(300_000), Count: 500}}}}
		if s == 4 || s == 5 {
			w = results.Window{StartMs: w.StartMs}
		}
		tl.Windows = append(tl.Windows, w)
	}
	data, err := json.Marshal(results.StepAggregate{Step: k, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: exchange.StepName("oltp-ontap-nas", k), Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: owner.Name, UID: owner.UID, Controller: ptrTo(true)}}},
		Data: map[string]string{exchange.KeyAggregate: string(data)},
	}
}

func TestReportTimeline(t *testing.T) {
	ctx := context.Background()
	var owner v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oltp-ontap-nas"}, &owner); err != nil {
		t.Fatal(err)
	}
	cm := stepRecord(t, 2, &owner)
	if err := k8s.Delete(ctx, cm.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, cm.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	wantSVG := []string{"oltp-ontap-nas · step 3 · every second", "longest stall 2 s, from 4 s"}

	out, errOut, code := plugin(t, "report", "oltp-ontap-nas", "-n", ns, "--timeline", "3", "-o", "svg")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range wantSVG {
		if !strings.Contains(out, w) {
			t.Errorf("svg from the cluster does not say %q", w)
		}
	}

	// Saved objects: the benchmark and its step ConfigMap in one List.
	sb, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	sb.Namespace, sb.UID = ns, owner.UID
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{sb, cm}}
	data, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(saved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = plugin(t, "report", "--from-file", saved, "--timeline", "3", "-o", "svg")
	if code != exitOK {
		t.Fatalf("from file: exit %d: %s", code, errOut)
	}
	for _, w := range wantSVG {
		if !strings.Contains(out, w) {
			t.Errorf("svg from the saved objects does not say %q", w)
		}
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--timeline", "5", "-o", "svg"}, "step 5 of oltp-ontap-nas has no record"},
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--timeline", "3", "-o", "md"}, "--timeline draws a figure"},
		{[]string{"report", "--from-file", saved, "--timeline", "4", "-o", "svg"}, "ConfigMap oltp-ontap-nas-step-003 not found"},
	} {
		_, errOut, code := plugin(t, c.args...)
		if code == exitOK || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want an error saying %q", c.args, code, errOut, c.msg)
		}
	}
}

// htmlTimelines splits an HTML report at its step headings: what precedes
// the first, and one section per step, keyed by its heading.
func htmlTimelines(t *testing.T, page string) (before string, sections map[string]string) {
	t.Helper()
	parts := strings.Split(page, "<h3>")
	sections = map[string]string{}
	for _, p := range parts[1:] {
		heading, body, ok := strings.Cut(p, "</h3>")
		if !ok {
			t.Fatalf("unclosed step heading: %.80q", p)
		}
		sections[heading] = body
	}
	return parts[0], sections
}

// checkSelfContained fails on anything a page would load from elsewhere,
// and on an inline SVG that is not well-formed XML.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, ref := range []string{"src=", "href=", "url(", "<link", "<script", "@import"} {
		if strings.Contains(page, ref) {
			t.Errorf("html refers to something outside it: %q", ref)
		}
	}
	rest := page
	for {
		i := strings.Index(rest, "<svg ")
		if i < 0 {
			return
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			t.Fatal("unclosed <svg>")
		}
		var doc struct{ XMLName xml.Name }
		if err := xml.Unmarshal([]byte(rest[i:i+j+len("</svg>")]), &doc); err != nil || doc.XMLName.Local != "svg" {
			t.Errorf("inline svg is not well-formed: %v", err)
		}
		rest = rest[i+j:]
	}
}

func TestReportHTMLTimelines(t *testing.T) {
	ctx := context.Background()
	const name = "oltp-timelines"
	if err := put(ctx, "oltp", name, live, nil); err != nil {
		t.Fatal(err)
	}
	var owner v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: live, Name: name}, &owner); err != nil {
		t.Fatal(err)
	}
	// Steps 1 and 3 have a timeline, step 2's record has none (its runners
	// sent none), steps 4 to 8 have no record.
	var cms []*corev1.ConfigMap
	for _, k := range []int{0, 1, 2} {
		cm := stepRecord(t, k, &owner)
		cm.Name, cm.Namespace = exchange.StepName(name, k), live
		if k == 1 {
			data, err := json.Marshal(results.StepAggregate{Step: k})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data[exchange.KeyAggregate] = string(data)
		}
		if err := k8s.Delete(ctx, cm.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, cm.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		cms = append(cms, cm)
	}
	offered := []string{"5,000", "10,000", "20,000", "30,000", "40,000", "50,000", "60,000", "70,000"}
	check := func(t *testing.T, page, where string) {
		t.Helper()
		checkSelfContained(t, page)
		before, sections := htmlTimelines(t, page)
		// The curve, then the step table and summary, then the timelines.
		if strings.Count(before, "<svg ") != 1 || !strings.Contains(before, "<h2>Steps</h2>") || !strings.HasSuffix(before, "<h2>Timelines</h2>\n") {
			t.Errorf("before the timelines: %d svg, want the curve, the step table, then the Timelines heading", strings.Count(before, "<svg "))
		}
		if strings.Count(page, "<svg ") != 3 || len(sections) != 8 {
			t.Errorf("%d svg and %d step sections, want 3 (the curve and 2 timelines) and 8", strings.Count(page, "<svg "), len(sections))
		}
		for i, o := range offered {
			body, ok := sections[fmt.Sprintf("Step %d: offered %s IOPS", i+1, o)]
			if !ok {
				t.Errorf("no section for step %d", i+1)
				continue
			}
			var want string
			switch i {
			case 0, 2:
				want = fmt.Sprintf(">%s · step %d · every second</text>", name, i+1)
			case 1:
				want = `<p class="note">No timeline: step 2 of ` + name + ` has no timeline (its runners did not send one)</p>`
			default:
				want = fmt.Sprintf(`<p class="note">No timeline: ConfigMap %s not found in %s</p>`, exchange.StepName(name, i), where)
			}
			if !strings.Contains(body, want) {
				t.Errorf("step %d's section lacks %q:\n%.300s", i+1, want, body)
			}
			if (i == 0 || i == 2) != strings.Contains(body, "<svg ") {
				t.Errorf("step %d: an inline svg where none belongs, or none where one does", i+1)
			}
		}
		if !strings.Contains(sections["Step 3: offered 20,000 IOPS"], ">longest stall 2 s, from 4 s") {
			t.Error("step 3's timeline does not shade its stall")
		}
		if strings.Contains(page, "Timelines not available") {
			t.Error("html says timelines were not available")
		}
	}

	out, errOut, code := plugin(t, "report", name, "-n", live, "-o", "html")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	check(t, out, "namespace "+live)

	// The same from saved objects: the benchmark and its ConfigMaps.
	sb, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	sb.Name, sb.Namespace, sb.UID = name, live, owner.UID
	items := []any{sb}
	for _, cm := range cms {
		items = append(items, cm)
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(saved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "run.html")
	if _, errOut, code = plugin(t, "report", "--from-file", saved, "--file", html); code != exitOK {
		t.Fatalf("from file: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	check(t, string(b), saved)

	// Saved objects without ConfigMaps: the report, with a note instead.
	oltp := filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")
	out, errOut, code = plugin(t, "report", "--from-file", oltp, "-o", "html")
	if code != exitOK {
		t.Fatalf("without ConfigMaps: exit %d: %s", code, errOut)
	}
	checkSelfContained(t, out)
	before, sections := htmlTimelines(t, out)
	note := `<h2>Timelines</h2>
<p class="note">Timelines not available: ` + oltp + ` holds no ConfigMaps (save the steps&#39; ConfigMaps with the benchmark: kubectl get sbench,cm -o yaml)</p>`
	if !strings.Contains(out, note) || len(sections) != 0 || strings.Count(out, "<svg ") != 1 || !strings.Contains(before, `<td class="num">70,000 IOPS</td>`) {
		t.Errorf("html without ConfigMaps: want the curve, the steps and the note %q, no step sections; got %d svg, %d sections", note, strings.Count(out, "<svg "), len(sections))
	}
}

// TestReportHTMLRecordedStall renders the README's recorded run, whose one
// step's ConfigMap holds a real timeline with a stall.
func TestReportHTMLRecordedStall(t *testing.T) {
	out, errOut, code := plugin(t, "report", "--from-file", filepath.Join("..", "..", "docs", "images", "timeline-stall.yaml"), "-o", "html")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkSelfContained(t, out)
	_, sections := htmlTimelines(t, out)
	// The end-to-end suite's paused volume: the recording holds step 1's
	// ConfigMap (a 3 s pause), not step 2's.
	body, ok := sections["Step 1: offered 400 IOPS"]
	if len(sections) != 2 || !ok {
		t.Fatalf("step sections %d, want step 1 (400 IOPS) and step 2", len(sections))
	}
	if !strings.Contains(sections["Step 2: offered 500 IOPS"], "No timeline: ConfigMap pause-step-001 not found") {
		t.Errorf("step 2 without its ConfigMap: %q", sections["Step 2: offered 500 IOPS"])
	}
	for _, w := range []string{">pause · step 1 · every second</text>", ">longest stall 3.25 s, from 2.17 s; p99.9 within a second of it: 3.24 s</text>", ">seconds after the ramp</text>"} {
		if !strings.Contains(body, w) {
			t.Errorf("step 1's timeline lacks %q", w)
		}
	}
	if strings.Count(out, "<svg ") != 2 {
		t.Errorf("%d svg, want the curve and one timeline", strings.Count(out, "<svg "))
	}
}
