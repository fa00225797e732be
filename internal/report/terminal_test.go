package report

import (
	"strings"
	"testing"
	"unicode"
)

func TestSafeLine(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"", "", ""},
		{"plain text, µs ≤ 1 ms — 61,837 IOPS", "plain text, µs ≤ 1 ms — 61,837 IOPS", "plain text, µs ≤ 1 ms — 61,837 IOPS"},
		{"\x1b[2J\x1b]8;;http://x\x1b\\evil", `\x1b[2J\x1b]8;;http://x\x1b\evil`, `\x1b[2J\x1b]8;;http://x\x1b\evil`},
		{"a\x1b[8mhidden", `a\x1b[8mhidden`, `a\x1b[8mhidden`},
		{"one\ntwo\tthree\rfour", `one\ntwo\tthree\rfour`, "one\ntwo\tthree\\rfour"},
		{"\x00\x07\x08\x7f", `\x00\x07\x08\x7f`, `\x00\x07\x08\x7f`},
		{"c1 \u0085\u009b31m", `c1 \u0085\u009b31m`, `c1 \u0085\u009b31m`},
		{"abc\u202efdp.exe", `abc\u202efdp.exe`, `abc\u202efdp.exe`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c`, `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`, `line\u2028sep\u2029`},
		{"bad \xff\xc3 utf-8 \xe2\x80", `bad \xff\xc3 utf-8 \xe2\x80`, `bad \xff\xc3 utf-8 \xe2\x80`},
		// A backslash is text: left as it is.
		{`C:\x1b`, `C:\x1b`, `C:\x1b`},
		// Arabic, Hebrew and other scripts are text.
		{"שלום مرحبا", "שלום مرحبا", "שלום مرحبا"},
	} {
		if got := SafeLine(c.in); got != c.line {
			t.Errorf("SafeLine(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := SafeText(c.in); got != c.text {
			t.Errorf("SafeText(%q) = %q, want %q", c.in, got, c.text)
		}
		// Escaping again changes nothing.
		if got := SafeLine(SafeLine(c.in)); got != c.line {
			t.Errorf("SafeLine twice (%q) = %q, want %q", c.in, got, c.line)
		}
	}
	// Every control and bidirectional character is escaped; nothing else
	// below U+3000 is.
	for r := rune(0); r < 0x3000; r++ {
		want := unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
		if got := SafeLine(string(r)) != string(r); got != want {
			t.Errorf("%U escaped: %v, want %v", r, got, want)
		}
	}
	// Text that needs nothing escaped is not copied.
	s := strings.Repeat("x", 64)
	if got := SafeLine(s); got != s {
		t.Errorf("SafeLine changed plain text")
	}
}

// TestTablesEscape: a table's cells are escaped in every format, and text
// columns stay aligned.
func TestTablesEscape(t *testing.T) {
	tbl := Table{Header: []string{"NAME", "STATUS", "AGE"}, Rows: [][]string{{"a\x1b[2J", "Fail\ned", "1m"}, {"bb", "ok", "2m"}}}
	var b strings.Builder
	if err := tbl.Text(&b); err != nil {
		t.Fatal(err)
	}
	want := "NAME      STATUS    AGE\n" +
		`a\x1b[2J  Fail\ned  1m` + "\n" +
		"bb        ok        2m\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := tbl.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `| a\x1b[2J | Fail\ned | 1m |`+"\n") {
		t.Errorf("markdown:\n%s", b.String())
	}
	b.Reset()
	if err := tbl.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<td>a\x1b[2J</td><td>Fail\ned</td>`) {
		t.Errorf("html:\n%s", b.String())
	}
	b.Reset()
	if err := keyValues(&b, [][2]string{{"Name", "x"}, {"Status", "Failed — a\tb\nForged:  line"}}); err != nil {
		t.Fatal(err)
	}
	if want := "Name:    x\nStatus:  Failed — a\\tb\\nForged:  line\n"; b.String() != want {
		t.Errorf("key values:\n%q\nwant\n%q", b.String(), want)
	}
}
