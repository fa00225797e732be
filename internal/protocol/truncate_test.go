package protocol

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short text is kept", "fio: ENOSPC", 4096, "fio: ENOSPC"},
		{"exactly n bytes is kept", "abcd", 4, "abcd"},
		{"long text is cut with a note", long, 40, strings.Repeat("x", 13) + "… (truncated, 5000 bytes)"},
		{"a multi-byte character is not split", "ab" + strings.Repeat("é", 30), 30, "abé… (truncated, 62 bytes)"},
		{"n below the note's length cuts bare", "héllo world", 2, "h"},
		{"zero", "abc", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Truncate(c.in, c.n)
			if got != c.want {
				t.Fatalf("Truncate(%d bytes, %d) = %q, want %q", len(c.in), c.n, got, c.want)
			}
			if len(got) > c.n && len(c.in) > c.n {
				t.Fatalf("%d bytes, limit %d", len(got), c.n)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("%q is not valid UTF-8", got)
			}
			if again := Truncate(got, c.n); again != got {
				t.Fatalf("truncating again changed %q to %q", got, again)
			}
		})
	}
}
