package apireport

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
)

// hostile is what a tenant's runner or a namespace editor could put in a
// message: a screen clear, an OSC 8 hyperlink and a right-to-left override.
const hostile = "\x1b[2J\x1b]8;;http://x\x1b\\evil \u202egnp.exe\u009b31m\x7f\r\n\tfake line\xff"

// hostileBenchmark is the recorded OLTP run, failed, with hostile text in
// everything a runner or a client's error reaches: a step's errors, the
// Ready and Failed conditions, an SLO's message, the stop reason and the
// mounts the clients saw.
func hostileBenchmark(t *testing.T) *v1alpha1.StorageBenchmark {
	t.Helper()
	sb := fixture(t, "oltp")
	st := &sb.Status
	st.Steps[3].Errors = []string{"fio: " + hostile, hostile}
	for _, c := range []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "ClientFailed", Message: "client x: " + hostile},
		{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: "ClientFailed", Message: "client x: " + hostile},
		{Type: v1alpha1.ConditionStorageWarning, Status: metav1.ConditionTrue, Reason: "Warn", Message: hostile},
	} {
		c.LastTransitionTime = metav1.Now()
		meta.SetStatusCondition(&st.Conditions, c)
	}
	meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionComplete)
	st.SLOs[0].Message = hostile
	st.StopReason = hostile
	st.Storage.Mounts[0].Options = "rw," + hostile
	return sb
}

// checkTerminalSafe fails on anything in out that a terminal would act on
// rather than show: ESC and every other C0 control but newline, DEL, C1
// controls, bidirectional controls, and bytes that are not UTF-8.
func checkTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if strings.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("%s: an ESC byte reaches the output:\n%q", what, out)
	}
	for i, r := range out {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD"):
			t.Errorf("%s: invalid UTF-8 at byte %d: %q", what, i, out[max(i-20, 0):min(i+20, len(out))])
		case r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			t.Errorf("%s: control character %U at byte %d: %q", what, r, i, out[max(i-20, 0):min(i+20, len(out))])
		case unicode.Is(unicode.Bidi_Control, r):
			t.Errorf("%s: bidirectional control %U at byte %d: %q", what, r, i, out[max(i-20, 0):min(i+20, len(out))])
		}
	}
}

// TestHostileTextIsNotPrinted prints a benchmark whose status carries
// terminal escapes through the renderings the plugin prints on a
// terminal.
func TestHostileTextIsNotPrinted(t *testing.T) {
	sb := hostileBenchmark(t)
	now := time.Date(2025, 6, 3, 10, 0, 0, 0, time.UTC)

	var b strings.Builder
	if err := WriteStatus(&b, sb, now); err != nil {
		t.Fatal(err)
	}
	status := b.String()
	checkTerminalSafe(t, "status", status)
	// The text is still there, visibly escaped, on the line it belongs to.
	for _, want := range []string{
		`Status:     ClientFailed — client x: \x1b[2J\x1b]8;;http://x\x1b\evil \u202egnp.exe\u009b31m\x7f\r\n\tfake line\xff` + "\n",
		`FAILED: ClientFailed: client x: \x1b[2J`,
		`SLO read-p99-2ms-at-40k: Met — \x1b[2J`,
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(status, "\nfake line") {
		t.Errorf("a message's newline starts a line of its own:\n%s", status)
	}

	b.Reset()
	tbl := ListTable([]v1alpha1.StorageBenchmark{*sb}, now, true)
	if err := tbl.Text(&b); err != nil {
		t.Fatal(err)
	}
	checkTerminalSafe(t, "list", b.String())

	checkTerminalSafe(t, "watch", ProgressOf(sb, now).Line())

	c, err := Compare([]v1alpha1.StorageBenchmark{*sb, *fixture(t, "oltp")}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkTerminalSafe(t, "compare", b.String())

	b.Reset()
	r := FromAPI(sb)
	for _, tbl := range []report.Table{r.StepTable()} {
		if err := tbl.Markdown(&b); err != nil {
			t.Fatal(err)
		}
		if err := tbl.HTML(&b); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range append(r.SummaryLines(), r.StorageLines()...) {
		b.WriteString(l + "\n")
	}
	checkTerminalSafe(t, "report lines", b.String())

	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "storagebench"}}
	s.Spec.Schedule = "0 2 * * *"
	s.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: "Stuck", Message: hostile}}
	s.Status.History = []v1alpha1.ScheduledRun{{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "nightly-1", ScheduledTime: metav1.NewTime(now)},
		State: v1alpha1.RunFailed, Reason: hostile, Regression: hostile, RegressedMetrics: []string{hostile}}}
	b.Reset()
	if err := WriteScheduleStatus(&b, s, now); err != nil {
		t.Fatal(err)
	}
	checkTerminalSafe(t, "schedule", b.String())
}
