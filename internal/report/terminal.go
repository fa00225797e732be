package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that reaches a report from outside the operator is not trusted to
// be printed as is: fio's and the runners' errors (a client pod's image
// may be a tenant's), condition messages quoting them, mount options,
// names and labels of objects a namespace editor writes, saved objects
// read with --from-file. Printed on a terminal, an ESC sequence in it
// could clear the screen, hide text ("\x1b[8m"), retitle the window or
// plant a hyperlink ("\x1b]8;;URL\x1b\\"), a carriage return could
// overwrite the start of a line, a newline could forge a line of its own,
// and a bidirectional override (U+202E …, "Trojan Source") could show
// text in another order than it is. SafeLine and SafeText make such text
// safe to print, and every text rendering of this package and of the
// kubectl plugin passes untrusted text through them. Machine formats
// (JSON, YAML) and images are not their business.
//
// The rule: these are replaced by a visible escape, each character on
// its own:
//
//   - the control characters (Unicode category Cc): C0 (U+0000–U+001F),
//     DEL (U+007F) and C1 (U+0080–U+009F); SafeText keeps newline and tab,
//     for text whose lines and tabs are its own;
//   - the bidirectional formatting characters (Bidi_Control: U+061C,
//     U+200E, U+200F, U+202A–U+202E, U+2066–U+2069);
//   - the line and paragraph separators U+2028 and U+2029;
//   - bytes that are not UTF-8.
//
// The escape is the one of a Go string literal: "\n", "\r", "\t", "\x1b"
// for C0 and DEL, "\u009b" or "\u202e" for a code point, "\xff" for a
// byte that is not UTF-8. Rather than U+FFFD, so that the operator sees
// what was there (an escape sequence that tried to do something is worth
// knowing about) and tells the characters apart, in plain ASCII that
// every terminal shows as is. A backslash is left as it is: the result is
// for reading, not for unquoting, and "\x1b" typed as text is as harmless
// as an escaped ESC.

// SafeLine returns s safe to print on a terminal as (part of) one line:
// every character of the rule escaped, newline and tab included, so that
// the text cannot start a line of its own or break a table's columns.
// Text without such characters is returned unchanged.
func SafeLine(s string) string { return safe(s, false) }

// SafeText is SafeLine for text of several lines: newlines and tabs are
// kept (a carriage return is not).
func SafeText(s string) string { return safe(s, true) }

// SafeLines applies SafeLine to every line of lines, in place, and
// returns them.
func SafeLines(lines []string) []string {
	for i, l := range lines {
		lines[i] = SafeLine(l)
	}
	return lines
}

// safe implements SafeLine and SafeText.
func safe(s string, multiline bool) string {
	i := unsafeAt(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r, multiline):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// unsafeAt is the index of the first byte of s that the rule escapes, or
// -1.
func unsafeAt(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c), multiline) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r, multiline) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports whether the rule escapes r.
func unsafeRune(r rune, multiline bool) bool {
	switch {
	case multiline && (r == '\n' || r == '\t'):
		return false
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case r < 0x600:
		return false
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}
