package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// hostile is what a tenant's runner or a namespace editor could put in a
// message: a screen clear, an OSC 8 hyperlink, concealed text, a
// right-to-left override, a C1 CSI, a carriage return and a forged line.
const hostile = "\x1b[2J\x1b]8;;http://x\x1b\\evil\x1b[8m \u202egnp.exe\u2066\u009b31m\x7f\r\n\tfake line\xff"

// terminalUnsafe describes the first thing in out that a terminal would
// act on rather than show ("" for none): ESC and every other C0 control
// but newline and tab (an SVG holds tabs of its own), DEL, C1 controls,
// bidirectional controls, and bytes that are not UTF-8.
func terminalUnsafe(out string) string {
	if i := strings.IndexByte(out, 0x1b); i >= 0 {
		return "an ESC byte: " + around(out, i)
	}
	for i, r := range out {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD"):
			return "a byte that is not UTF-8: " + around(out, i)
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return "a control character: " + around(out, i)
		case unicode.Is(unicode.Bidi_Control, r):
			return "a bidirectional control: " + around(out, i)
		}
	}
	return ""
}

// around quotes out around byte i.
func around(s string, i int) string { return fmt.Sprintf("%q", s[max(i-30, 0):min(i+30, len(s))]) }

// hostileStatus puts hostile text in everything a runner or a client's
// error reaches: a step's errors, the Ready and Failed conditions (the run
// failed), an SLO's message, the stop reason and the mounts the clients
// saw.
func hostileStatus(st *v1alpha1.StorageBenchmarkStatus) {
	st.Steps[3].Errors = []string{"fio: " + hostile}
	for _, c := range []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "ClientFailed", Message: "client x: " + hostile},
		{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: "ClientFailed", Message: "client x: " + hostile},
	} {
		c.LastTransitionTime = metav1.Now()
		c.ObservedGeneration = 1
		meta.SetStatusCondition(&st.Conditions, c)
	}
	meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionComplete)
	st.SLOs[0].Message = hostile
	st.StopReason = hostile
	st.Storage.Mounts[0].Options = "rw," + hostile
}

// TestHostileTextIsNotPrinted runs the commands that print a benchmark on
// a terminal, on a benchmark whose status carries terminal escapes, from
// the cluster and saved (with names that carry them too, which only a
// file can): none reaches standard output or standard error.
func TestHostileTextIsNotPrinted(t *testing.T) {
	if err := put(context.Background(), "oltp", "hostile", live, hostileStatus); err != nil {
		t.Fatal(err)
	}
	sb, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	sb.APIVersion, sb.Kind = v1alpha1.GroupVersion.String(), "StorageBenchmark"
	sb.Name = "oltp\x1b[8m-hidden"
	hostileStatus(&sb.Status)
	sb.Status.Storage.StorageClassName = "ontap\u202e-nas"
	// As JSON, with DEL and the C1 controls escaped: YAML refuses them raw.
	b, err := json.Marshal(sb)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(b)
	for r := rune(0x7f); r <= 0x9f; r++ {
		saved = strings.ReplaceAll(saved, string(r), fmt.Sprintf(`\u%04x`, r))
	}
	file := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(file, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	oltp := filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"status", "hostile", "-n", live}, exitOK},
		{[]string{"list", "-n", live}, exitOK},
		{[]string{"watch", "hostile", "-n", live}, exitFailed},
		{[]string{"wait", "hostile", "-n", live, "--timeout", "0"}, exitFailed},
		{[]string{"report", "hostile", "-n", live, "-o", "md"}, exitOK},
		{[]string{"status", "-f", file}, exitOK},
		{[]string{"list", "-f", file}, exitOK},
		{[]string{"watch", "-f", file, sb.Name}, exitFailed},
		{[]string{"wait", "-f", file, sb.Name, "--timeout", "0"}, exitFailed},
		{[]string{"report", "-f", file, "-o", "md"}, exitOK},
		{[]string{"report", "-f", file, "-o", "html"}, exitOK},
		{[]string{"report", "-f", file, "-o", "svg"}, exitOK},
		{[]string{"compare", "-f", file, "-f", oltp}, exitOK},
		{[]string{"compare", "-f", file, "-f", oltp, "-o", "md"}, exitOK},
		{[]string{"compare", "-f", file, "-f", oltp, "-o", "html"}, exitOK},
		{[]string{"report", "-f", file, "--timeline", "4", "-o", "svg"}, exitError},
	} {
		out, errOut, code := plugin(t, c.args...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d: %s", c.args, code, c.code, errOut)
		}
		if what := terminalUnsafe(out); what != "" {
			t.Errorf("%q: standard output holds %s", c.args, what)
		}
		if what := terminalUnsafe(errOut); what != "" {
			t.Errorf("%q: standard error holds %s", c.args, what)
		}
	}

	// The text is still shown, escaped, on the line it belongs to.
	message := `client x: \x1b[2J\x1b]8;;http://x\x1b\evil\x1b[8m \u202egnp.exe\u2066\u009b31m\x7f\r\n\tfake line` + "\uFFFD" // JSON holds no byte that is not UTF-8
	out, _, _ := plugin(t, "status", "-f", file)
	for _, want := range []string{
		`Name:       oltp\x1b[8m-hidden` + "\n",
		"Status:     ClientFailed — " + message + "\n",
		`Storage:    ontap\u202e-nas (csi.trident.netapp.io)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	_, errOut, _ := plugin(t, "wait", "hostile", "-n", live, "--timeout", "0")
	if want := "error: storagebenchmark hostile failed: ClientFailed: " + message + "\n"; errOut != want {
		t.Errorf("wait: stderr\n%q, want\n%q", errOut, want)
	}
}
