package apireport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/report"
)

// fixture loads testdata/NAME.yaml: a recorded StorageBenchmark.
func fixture(t *testing.T, name string) *v1alpha1.StorageBenchmark {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sbs, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(sbs) != 1 {
		t.Fatalf("%s: %d objects, want 1", name, len(sbs))
	}
	return &sbs[0]
}

func TestDecode(t *testing.T) {
	one, err := os.ReadFile("../testdata/oltp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	two, err := os.ReadFile("../testdata/throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.Marshal(fixture(t, "oltp"))
	if err != nil {
		t.Fatal(err)
	}
	asIndented, err := json.MarshalIndent(fixture(t, "oltp"), "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	oneS, twoS, js := string(one), string(two), string(asIndented)+"\n"
	list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(stripCommentLines(string(one))), "\n", "\n  ") + "\n"
	cases := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "one object", in: string(one), want: []string{"oltp-ontap-nas"}},
		{name: "json", in: string(asJSON), want: []string{"oltp-ontap-nas"}},
		{name: "two documents", in: string(one) + "---\n" + string(two), want: []string{"oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "list", in: list, want: []string{"oltp-ontap-nas"}},
		{name: "leading separator and comments", in: "# saved\n---\n" + string(two), want: []string{"seq-gcnv-extreme"}},
		{name: "other kind", in: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", wantErr: `kind "Secret"`},
		{name: "only a ConfigMap", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", wantErr: "no StorageBenchmark found"},
		{name: "list of other kinds", in: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n", wantErr: `kind "Pod" is not a StorageBenchmark`},
		{name: "empty", in: "# nothing\n", wantErr: "no StorageBenchmark"},
		{name: "not yaml", in: "kind: [", wantErr: "document 1"},
		// Streams as `kubectl get -o yaml`, `helm template` or a hand-edited
		// file produce them: separators with or without a leading one,
		// comments-only documents, JSON among YAML, errors naming the document.
		{name: "leading separator", in: "---\n" + oneS, want: []string{"oltp-ontap-nas"}},
		{name: "separators and a JSON document", in: "---\n" + oneS + "---\n" + js + "---\n" + twoS, want: []string{"oltp-ontap-nas", "oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "JSON first, no leading separator", in: js + "---\n" + twoS, want: []string{"oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "trailing separator", in: oneS + "---\n", want: []string{"oltp-ontap-nas"}},
		{name: "separator with trailing blanks and comment", in: oneS + "---  \t\n" + twoS + "--- # last\n" + oneS, want: []string{"oltp-ontap-nas", "seq-gcnv-extreme", "oltp-ontap-nas"}},
		{name: "empty and comments-only documents skipped", in: "---\n---\n# nothing here\n---\n" + twoS + "---\n\n---\n", want: []string{"seq-gcnv-extreme"}},
		{name: "CRLF line endings", in: strings.ReplaceAll("---\n"+oneS+"---\n"+twoS, "\n", "\r\n"), want: []string{"oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "separator-like text inside a document", in: "# --- not a separator\n" + oneS, want: []string{"oltp-ontap-nas"}},
		{name: "error names the document", in: oneS + "---\n" + js + "---\nkind: [\n", wantErr: "document 3: "},
		{name: "error numbering counts comments-only documents", in: "# saved by hand\n---\n" + oneS + "---\nkind: [\n", wantErr: "document 3: "},
		{name: "error in a JSON document", in: twoS + "---\n{\"kind\": \"StorageBenchmark\", \"spec\": [}\n", wantErr: "document 2: "},
		{name: "other kind in the stream", in: oneS + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", wantErr: `document 2: kind "Secret"`},
		{name: "list item in the stream", in: oneS + "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n", wantErr: `document 2, item 1: kind "Pod"`},
		{name: "error after a leading separator is in document 1", in: "---\nkind: [\n", wantErr: "document 1: "},
		{name: "malformed separator belongs to the document it ends", in: oneS + "----\n" + twoS, wantErr: "document 1: "},
		{name: "only separators", in: "---\n--- # nothing\n---\n", wantErr: "no StorageBenchmark"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sbs, err := Decode([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sb := range sbs {
				got = append(got, sb.Name)
				if len(sb.Status.Steps) == 0 {
					t.Errorf("%s: no steps decoded", sb.Name)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("names = %v, want %v", got, c.want)
			}
		})
	}
}

func stripCommentLines(s string) string { return string(stripComments([]byte(s))) }

func TestUnitsAndTargets(t *testing.T) {
	oltp, tp := FromAPI(fixture(t, "oltp")), FromAPI(fixture(t, "throughput"))
	if u := oltp.Unit; u != report.UnitIOPS {
		t.Errorf("oltp unit = %s", u)
	}
	if u := tp.Unit; u != report.UnitMiBps {
		t.Errorf("throughput unit = %s", u)
	}
	if s := oltp.Target; s != analysis.DefaultTargetSelector || s.String() != "mean latency" {
		t.Errorf("target selector %v %q", s, s)
	}
	if oltp.LatencyTarget != time.Millisecond || tp.LatencyTarget != 10*time.Millisecond {
		t.Errorf("targets %v %v", oltp.LatencyTarget, tp.LatencyTarget)
	}
	// Every figure of the status reaches the run: the knee step's selected
	// latencies as the curve plots them.
	kneeAPI := &fixture(t, "oltp").Status.Steps[5]
	cases := []struct {
		sel  analysis.LatencySelector
		want time.Duration
	}{
		{analysis.LatencySelector{Metric: "mean", Operation: "total"}, kneeAPI.Latency.Mean.Duration},
		{analysis.LatencySelector{Metric: "p99", Operation: "read"}, kneeAPI.Read.Latency.P99.Duration},
		{analysis.LatencySelector{Metric: "p99.9", Operation: "write"}, kneeAPI.Write.Latency.P999.Duration},
		{analysis.LatencySelector{Metric: "p50", Operation: "read"}, kneeAPI.Read.Latency.P50.Duration},
		{analysis.LatencySelector{Metric: "p90", Operation: "total"}, kneeAPI.Latency.P90.Duration},
		{analysis.LatencySelector{Metric: "p99", Operation: "worst"}, kneeAPI.Write.Latency.P99.Duration},
	}
	for _, c := range cases {
		points := oltp.Series(c.sel.String(), c.sel, oltp.Unit).Points
		if len(points) != 8 || points[5].Index != 5 || points[5].LatencyMs != ms(c.want) {
			t.Errorf("%v: points %+v, want %v at step 6", c.sel, points, c.want)
		}
	}
}

// ms is a duration in milliseconds, as the series hold latencies.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestSeries(t *testing.T) {
	oltp := fixture(t, "oltp")
	s := FromAPI(oltp).CurveSeries("p99")
	if len(s) != 2 || s[0].Name != "read p99" || s[1].Name != "write p99" {
		t.Fatalf("series %+v", s)
	}
	for _, ser := range s {
		if len(ser.Points) != 8 {
			t.Fatalf("%s: %d points", ser.Name, len(ser.Points))
		}
	}
	p := s[0].Points[7]
	if p.Load != 61837 || !p.Saturated || p.Knee || p.LatencyMs != ms(oltp.Status.Steps[7].Read.Latency.P99.Duration) {
		t.Errorf("last read point %+v", p)
	}
	if !s[1].Points[5].Knee {
		t.Error("knee not marked on step 6")
	}
	// A step with fio errors is left out; a read-only run has one series.
	failedRun := oltp.DeepCopy()
	failedRun.Status.Steps[2].Errors = []string{"fio: io_u error"}
	for i := range failedRun.Status.Steps {
		failedRun.Status.Steps[i].Write = nil
	}
	s = FromAPI(failedRun).CurveSeries("mean")
	if len(s) != 1 || len(s[0].Points) != 7 {
		t.Fatalf("series of a read-only run with a failed step: %+v", s)
	}
	tp := FromAPI(fixture(t, "throughput")).CurveSeries("mean")
	if got := tp[0].Points[4].Load; got < 1003 || got > 1003.5 {
		t.Errorf("MiB/s load = %v", got)
	}
}

func TestStepTable(t *testing.T) {
	tbl := FromAPI(fixture(t, "oltp")).StepTable()
	if len(tbl.Rows) != 8 {
		t.Fatalf("%d rows", len(tbl.Rows))
	}
	want := map[int][]string{
		0: {"1", "5,000 IOPS", "3,998", "1,000", "39.0", "313 µs", "619 µs", "522 µs", "1.05 ms", "800µs", ""},
		5: {"6", "50,000 IOPS", "39,961", "9,990", "390.2", "743 µs", "2.11 ms", "1.18 ms", "3.4 ms", "1.1ms", "knee"},
		7: {"8", "70,000 IOPS", "49,470", "12,367", "483.1", "4.81 ms", "18.4 ms", "6.91 ms", "24.1 ms", "1.5ms", "saturated"},
	}
	for i, w := range want {
		if got := strings.Join(tbl.Rows[i], "|"); got != strings.Join(w, "|") {
			t.Errorf("row %d:\n got %s\nwant %s", i, got, strings.Join(w, "|"))
		}
	}
	tp := FromAPI(fixture(t, "throughput")).StepTable()
	if got := tp.Rows[4][1]; got != "1,024 MiB/s" {
		t.Errorf("offered MiB/s = %q", got)
	}

	var text, md, html bytes.Buffer
	if err := tbl.Text(&text); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := tbl.HTML(&html); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[0], "step      offered  read IOPS") {
		t.Fatalf("text table:\n%s", text.String())
	}
	// Numbers align right: every row ends its "offered" column at the same place.
	col := strings.Index(lines[0], "offered") + len("offered")
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l[:col], "IOPS") {
			t.Errorf("misaligned row %q", l)
		}
	}
	if !strings.Contains(md.String(), "| 6 | 50,000 IOPS | 39,961 | 9,990 | 390.2 | 743 µs | 2.11 ms | 1.18 ms | 3.4 ms | 1.1ms | knee |") ||
		!strings.Contains(md.String(), "|---:|---:|") {
		t.Errorf("markdown table:\n%s", md.String())
	}
	if !strings.Contains(html.String(), `<td class="num">8</td><td class="num">70,000 IOPS</td>`) || strings.Count(html.String(), "<tr>") != 9 {
		t.Errorf("html table:\n%s", html.String())
	}
}

func TestSummaryAndStatus(t *testing.T) {
	cases := []struct {
		fixture string
		want    []string
	}{
		{"oltp", []string{
			"peak: 61,837 IOPS (step 8), 483.1 MiB/s (step 8), mean latency at peak 5.23 ms, p99 at peak 24.1 ms",
			"performance at the latency target (mean latency ≤ 1 ms): 49,951 IOPS (390.2 MiB/s) at 831 µs (step 6)",
			"knee: step 6 at 49,951 IOPS",
			"SLO read-p99-2ms-at-40k: Met — ",
			"SLO 60k-iops-at-1ms: NotMet — ",
			"SLOs: NotMet (SLOMet False)",
			"ended: step 8 (70000 IOPS offered)",
		}},
		{"throughput", []string{
			"performance at the latency target (mean latency ≤ 10 ms): 1,003.2 MiB/s (4,013 IOPS) at 6.42 ms (step 5)",
			"knee: step 4 at 767.0 MiB/s",
			"SLOs: AllMet (SLOMet True)",
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			sb := fixture(t, c.fixture)
			got := strings.Join(FromAPI(sb).SummaryLines(), "\n")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
			var b bytes.Buffer
			if err := WriteStatus(&b, sb, sb.Status.CompletionTime.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range []string{"Name:", "Status:     Completed", "Storage:", "Trident driver", "mount nfs", "step      offered", c.want[0]} {
				if !strings.Contains(out, w) {
					t.Errorf("status lacks %q:\n%s", w, out)
				}
			}
		})
	}
	// A failed run says why; a run without steps says so.
	failedRun := fixture(t, "oltp").DeepCopy()
	failedRun.Status.Summary, failedRun.Status.SLOs, failedRun.Status.StopReason = nil, nil, ""
	failedRun.Status.Steps = nil
	failedRun.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: "False", Reason: "ClientFailed", Message: "client 2: fio: No space left on device"},
		{Type: "Failed", Status: "True", Reason: "ClientFailed", Message: "client 2: fio: No space left on device"},
	}
	got := strings.Join(FromAPI(failedRun).SummaryLines(), "\n")
	if !strings.Contains(got, "no step finished yet") || !strings.Contains(got, "FAILED: ClientFailed: client 2: fio: No space left on device") {
		t.Errorf("failed summary:\n%s", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"oltp", "throughput"} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteDocument(&b, fixture(t, name), report.Options{Metric: "p99"}); err != nil {
				t.Fatal(err)
			}
			var doc Document
			dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			again, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if string(again)+"\n" != b.String() {
				t.Errorf("JSON does not round-trip:\n%s\nvs\n%s", again, b.String())
			}
			if len(doc.Series) != 2 || doc.Series[0].Selector != (analysis.LatencySelector{Metric: "p99", Operation: "read"}) || len(doc.Series[0].Points) != len(doc.Steps) {
				t.Errorf("series %+v", doc.Series)
			}
			if doc.Summary == nil || doc.LatencyTargetMs <= 0 || doc.Status != "Completed" {
				t.Errorf("document %+v", doc)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	oltp, tp := fixture(t, "oltp"), fixture(t, "throughput")
	// A second OLTP run, 10 % faster at every step.
	faster := oltp.DeepCopy()
	faster.Name = "oltp-ontap-san"
	faster.Status.Storage.StorageClassName = "ontap-san"
	for i := range faster.Status.Steps {
		s := &faster.Status.Steps[i]
		s.AchievedIOPS = s.AchievedIOPS * 11 / 10
		s.Latency.Mean.Duration = s.Latency.Mean.Duration * 9 / 10
	}
	c, err := Compare([]v1alpha1.StorageBenchmark{*oltp, *faster, *tp}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Selector != analysis.DefaultTargetSelector || c.Unit != report.UnitIOPS || c.Target != time.Millisecond {
		t.Fatalf("comparison on %v %v %v", c.Selector, c.Unit, c.Target)
	}
	tbl := c.Table()
	want := [][]string{
		{"oltp-ontap-nas", "ontap-nas", "oltp", "61,837 (step 8)", "baseline", "5.23 ms", "baseline", "49,951 (step 6)", "baseline", "831 µs", "step 6"},
		{"oltp-ontap-san", "ontap-san", "oltp", "68,020 (step 8)", "+10.0 %", "4.7 ms", "-10.0 %", "54,946 (step 6)", "+10.0 %", "747 µs", "step 6"},
		{"seq-gcnv-extreme", "gcnv-extreme", "mix-256k-75", "4,166 (step 6)", "-93.3 %", "12.6 ms", "+140.1 %", "none", "-", "-", "step 4"},
	}
	for i, w := range want {
		if got := strings.Join(tbl.Rows[i], "|"); got != strings.Join(w, "|") {
			t.Errorf("row %d:\n got %s\nwant %s", i, got, strings.Join(w, "|"))
		}
	}

	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "oltp-ontap-san    ontap-san     oltp") || !strings.HasSuffix(text.String(),
		"\nJudged on mean latency against achieved IOPS with a latency target of 1 ms; Δ is relative to oltp-ontap-nas.\n") {
		t.Errorf("text:\n%s", text.String())
	}
	if _, err := Compare(nil, report.Options{}); err == nil {
		t.Error("comparison of nothing")
	}
}

func TestProgress(t *testing.T) {
	base := fixture(t, "oltp")
	running := func(finished int, current int32) *v1alpha1.StorageBenchmark {
		sb := base.DeepCopy()
		sb.Status.Steps = sb.Status.Steps[:finished]
		sb.Status.CurrentStep = &current
		sb.Status.Summary, sb.Status.SLOs, sb.Status.CompletionTime = nil, nil, nil
		sb.Status.Progress = strconv.Itoa(finished) + "/8"
		sb.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "False", Reason: "Running"}, {Type: "Reconciling", Status: "True", Reason: "Running"}}
		return sb
	}
	per := 2*time.Minute + 15*time.Second
	mid := running(3, 3)
	// 45 s into step 4.
	at := mid.Status.Steps[2].StartTime.Add(per + 45*time.Second)
	preparing := running(0, 0)
	preparing.Status.CurrentStep, preparing.Status.StartTime = nil, nil
	preparing.Status.ClientsReady, preparing.Status.Conditions[0].Reason = 3, "Preparing"
	failedRun := running(5, 5)
	failedRun.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "False", Reason: "ClientLost", Message: "client pod 2 was deleted"}, {Type: "Failed", Status: "True", Reason: "ClientLost"}}
	cases := []struct {
		name     string
		sb       *v1alpha1.StorageBenchmark
		now      time.Time
		left     time.Duration
		fraction float64
		line     string
	}{
		{"mid-step", mid, at, 5*per - 45*time.Second, (3 + 45.0/135) / 8,
			"Running  step 4/8  [##########--------------]   42 %  ~10m left  last step 19,994 IOPS"},
		{"preparing", preparing, at, 8 * per, 0,
			"Preparing  0/8 steps  clients 3/5 ready  [------------------------]    0 %  ~18m of load to run"},
		{"complete", base, at, 0, 1,
			"Completed  8/8 steps  [########################]  100 %  last step 61,837 IOPS"},
		{"failed", failedRun, at, 0, 5.0 / 8,
			"ClientLost  5/8 steps  [###############---------]   62 %  last step 39,978 IOPS  — client pod 2 was deleted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ProgressOf(c.sb, c.now)
			if p.Left != c.left || p.Fraction < c.fraction-1e-9 || p.Fraction > c.fraction+1e-9 {
				t.Errorf("left %v fraction %v, want %v %v", p.Left, p.Fraction, c.left, c.fraction)
			}
			if got := p.Line(); got != c.line {
				t.Errorf("line\n got %q\nwant %q", got, c.line)
			}
		})
	}
	if report.Bar(-1, 4) != "[----]" || report.Bar(2, 4) != "[####]" || report.Bar(0.5, 4) != "[##--]" {
		t.Error("Bar")
	}
}

func TestListTable(t *testing.T) {
	oltp, tp := fixture(t, "oltp"), fixture(t, "throughput")
	fresh := v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "dev", CreationTimestamp: metav1.NewTime(oltp.CreationTimestamp.Add(-time.Minute))}}
	now := oltp.CreationTimestamp.Add(2 * time.Hour)
	tbl := ListTable([]v1alpha1.StorageBenchmark{*oltp, *tp, fresh}, now, true)
	var b bytes.Buffer
	if err := tbl.Text(&b); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"NAMESPACE     NAME              STATUS     CLASS         PROFILE      STEP           PEAK  P99 AT PEAK  SLO     AGE",
		"storagebench  oltp-ontap-nas    Completed  ontap-nas     oltp         8/8     61,837 IOPS      24.1 ms  NotMet  120m",
		"storagebench  seq-gcnv-extreme  Completed  gcnv-extreme  mix-256k-75  6/6   1,041.5 MiB/s      51.1 ms  AllMet  <invalid>",
		"dev           new               Pending",
	}
	got := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("list:\n%s", b.String())
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}
