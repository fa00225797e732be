package protocol

import (
	"fmt"
	"unicode/utf8"
)

// MaxErrorBytes bounds the free text a runner reports (fio's error message,
// why it could not prepare): both the runner and the operator, which cannot
// trust the runner, cut longer text with Truncate.
const MaxErrorBytes = 4 << 10

// Truncate returns s when it is at most n bytes long; otherwise the longest
// prefix that fits, cut at a UTF-8 boundary, followed by
// "… (truncated, N bytes)" (N is len(s)), the whole at most n bytes long. A
// truncated text is therefore left as it is when truncated again.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	suffix := fmt.Sprintf("… (truncated, %d bytes)", len(s))
	if n < len(suffix) {
		suffix = ""
	}
	limit := max(n-len(suffix), 0)
	cut := limit
	// s[cut] is the first byte left out: step back over a split character
	// (at most UTFMax-1 bytes, even in invalid UTF-8).
	for cut > 0 && limit-cut < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}
