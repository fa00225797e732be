package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// TestSchedules: a schedule with a failed and a completed run kept, its
// status written as the operator writes it, listed and printed.
func TestSchedules(t *testing.T) {
	ctx := context.Background()
	rec, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "oltp-nightly"},
		Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1alpha1.StorageBenchmarkTemplate{Spec: rec.Spec}}}
	if err := k8s.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(d).Truncate(time.Second)) }
	s.Status = v1alpha1.StorageBenchmarkScheduleStatus{
		LastScheduleTime: ptrTo(at(-2 * time.Hour)), LastSuccessfulTime: ptrTo(at(-90 * time.Minute)), NextScheduleTime: ptrTo(at(22 * time.Hour)),
		History: []v1alpha1.ScheduledRun{
			{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-29900000", ScheduledTime: at(-2 * time.Hour)}, State: v1alpha1.RunComplete,
				PeakIOPS: 61837, AtTargetIOPS: 49951, SLO: "AllMet"},
			{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-29898560", ScheduledTime: at(-26 * time.Hour)}, State: v1alpha1.RunFailed,
				Reason: "ClientLost"},
		},
	}
	if err := k8s.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := plugin(t, "schedules", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.Contains(lines[1], "oltp-nightly  0 2 * * *  UTC") || !strings.Contains(lines[1], "120m ago") || !strings.Contains(lines[1], "in 21h") {
		t.Errorf("schedules:\n%s", out)
	}

	out, errOut, code = plugin(t, "schedules", "oltp-nightly", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"Schedule:      0 2 * * * (UTC)",
		"State:         scheduled",
		"RUN                    SCHEDULED",
		"oltp-nightly-29900000",
		"Complete     61,837          49,951  AllMet",
		"Failed                               ClientLost",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("schedule lacks %q:\n%s", w, out)
		}
	}
	_, errOut, code = plugin(t, "schedules", "nope", "-n", ns)
	if code != exitError || !strings.Contains(errOut, `storagebenchmarkschedule "nope" not found in namespace "storagebench"`) {
		t.Errorf("missing schedule: exit %d, %q", code, errOut)
	}
	_, errOut, code = plugin(t, "schedules", "-n", "other")
	if code != exitOK || !strings.Contains(errOut, "No storagebenchmarkschedules found.") {
		t.Errorf("empty namespace: exit %d, %q", code, errOut)
	}
}

// TestReportSchedule draws a schedule's history: a week of nightly runs,
// one failed and one regressed. Its schedules are in namespace live, so
// that TestSchedules lists its own alone.
func TestReportSchedule(t *testing.T) {
	ctx := context.Background()
	rec, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: live, Name: "oltp-week"},
		Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1alpha1.StorageBenchmarkTemplate{Spec: rec.Spec}}}
	if err := k8s.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	s.Status = v1alpha1.StorageBenchmarkScheduleStatus{}
	for d := range 7 {
		at := metav1.NewTime(day.AddDate(0, 0, d))
		r := v1alpha1.ScheduledRun{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-week-" + at.Format("0102"), ScheduledTime: at},
			State: v1alpha1.RunComplete, PeakIOPS: 61000 + int64(d)*100, AtTargetIOPS: 49000 + int64(d)*100, SLO: "AllMet", Regression: "NotRegressed"}
		switch d {
		case 0:
			r.Regression = "NoBaseline"
		case 2:
			r = v1alpha1.ScheduledRun{ScheduledRunRef: r.ScheduledRunRef, State: v1alpha1.RunFailed, Reason: "ClientLost"}
		case 4:
			r.PeakIOPS, r.AtTargetIOPS, r.SLO, r.Regression = 42000, 31000, "NotMet", "Regressed"
			r.RegressedMetrics, r.RegressionMessage = []string{"iops"}, "step 6 (50000 IOPS offered): IOPS 49,000 → 31,000 (-36.7 %), p = 1e-09"
		}
		s.Status.History = append([]v1alpha1.ScheduledRun{r}, s.Status.History...)
	}
	if err := k8s.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := plugin(t, "report", "sbsched/oltp-week", "-n", live, "-o", "svg")
	if code != exitOK {
		t.Fatalf("svg: exit %d: %s", code, errOut)
	}
	for _, w := range []string{">oltp-week · scheduled runs</text>", ">7 kept runs, scheduled 2025-06-01 02:00 to 2025-06-07 02:00 UTC · 1 failed, 1 regressed</text>",
		">peak IOPS</text>", ">IOPS at the latency target</text>", ">failed run</text>", ">regressed run</text>", ">2025-06-04</text>"} {
		if !strings.Contains(out, w) {
			t.Errorf("svg lacks %q", w)
		}
	}

	dir := t.TempDir()
	if _, errOut, code = plugin(t, "report", "storagebenchmarkschedule/oltp-week", "-n", live, "--file", filepath.Join(dir, "week.png"), "--width", "900", "--height", "600"); code != exitOK {
		t.Fatalf("png: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "week.png"))
	if err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() != 900 || img.Bounds().Dy() != 600 {
		t.Errorf("png: %v", err)
	}

	md := filepath.Join(dir, "week.md")
	if _, errOut, code = plugin(t, "report", "schedule/oltp-week", "-n", live, "--file", md); code != exitOK {
		t.Fatalf("md: exit %d: %s", code, errOut)
	}
	if b, err = os.ReadFile(md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"![peak IOPS and IOPS at the latency target of the runs of oltp-week](week.png)",
		"| oltp-week-0607 | 2025-06-07T02:00:00Z | Complete | 61,600 | 49,600 | AllMet | NotRegressed |",
		"| oltp-week-0605 | 2025-06-05T02:00:00Z | Complete | 42,000 | 31,000 | NotMet | Regressed (iops) |",
		"| oltp-week-0603 | 2025-06-03T02:00:00Z | Failed |   |   | ClientLost |   |",
		"| oltp-week-0601 | 2025-06-01T02:00:00Z | Complete | 61,000 | 49,000 | AllMet | NoBaseline |",
	} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("markdown lacks %q:\n%s", w, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "week.png")); err != nil {
		t.Errorf("the figure beside the markdown: %v", err)
	}

	out, errOut, code = plugin(t, "report", "sbsched/oltp-week", "-n", live, "-o", "json")
	var doc apireport.ScheduleDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("json: exit %d, %s, %v", code, errOut, err)
	}
	if doc.Name != "oltp-week" || doc.Schedule != "0 2 * * *" || len(doc.History) != 7 || doc.History[2].RegressionMessage == "" || doc.History[4].Reason != "ClientLost" {
		t.Errorf("json: %+v", doc)
	}

	// The schedules command shows the regression verdict too.
	out, _, _ = plugin(t, "schedules", "oltp-week", "-n", live)
	if !strings.Contains(out, "Complete     42,000          31,000  NotMet      Regressed (iops)\n") {
		t.Errorf("schedules lacks the regression column:\n%s", out)
	}

	oltp := filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "sbsched/oltp-week", "-n", live, "-o", "html"}, `error: a schedule's history: unknown output format "html": want one of md, svg, png, json` + "\n"},
		{[]string{"report", "sbsched/oltp-week", "-n", live, "--timeline", "2"}, "error: --timeline does not apply to a schedule's history (it draws the runs' peak IOPS and IOPS at the latency target)\n"},
		{[]string{"report", "sbsched/nope", "-n", live}, `error: storagebenchmarkschedule "nope" not found in namespace "live"` + "\n"},
		{[]string{"report", "sbsched/oltp-week", "-f", oltp}, "error: report sbsched/NAME reads the cluster: --from-file is not supported\n"},
		{[]string{"report", "widget/oltp-week", "-n", live}, `error: report draws a storagebenchmark (NAME), a storagebenchmarkschedule's history (sbsched/NAME) or a volumeoperationsbenchmark (sbops/NAME), not "widget/oltp-week"` + "\n"},
	} {
		if _, errOut, code := plugin(t, c.args...); code != exitError || errOut != c.want {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
	// A benchmark may be named the same way.
	if out, _, code := plugin(t, "report", "sbench/oltp-ontap-nas", "-n", ns, "-o", "json"); code != exitOK || !strings.Contains(out, `"name": "oltp-ontap-nas"`) {
		t.Errorf("report sbench/NAME: exit %d", code)
	}

	// A schedule that keeps no runs has nothing to draw; its JSON history
	// is empty.
	empty := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: live, Name: "oltp-new"}, Spec: s.Spec}
	if err := k8s.Create(ctx, empty); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, errOut, code := plugin(t, "report", "sbsched/oltp-new", "-n", live, "-o", "png", "--file", filepath.Join(dir, "new.png")); code != exitError || errOut != "error: storagebenchmarkschedule oltp-new keeps no runs yet: nothing to draw\n" {
		t.Errorf("no runs: exit %d, %q", code, errOut)
	}
	if out, _, code := plugin(t, "report", "sbsched/oltp-new", "-n", live, "-o", "json"); code != exitOK || !strings.Contains(out, `"history": []`) {
		t.Errorf("no runs, json: exit %d\n%s", code, out)
	}
}

func ptrTo[T any](v T) *T { return &v }
