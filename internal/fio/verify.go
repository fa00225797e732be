package fio

import (
	"regexp"
	"strconv"
	"strings"
)

// VerifyFailure is a block fio's verification read back wrong, as it
// reports one on its error stream.
type VerifyFailure struct {
	// Method is the verification that failed (pattern, crc32c, …).
	Method string
	File   string
	// Offset and Length are the block's, as fio requested it.
	Offset, Length int64
	// ReceivedDump and ExpectedDump are the files, in fio's working
	// directory, that hold what was read and what was expected
	// (verify_dump=1); empty when fio wrote none.
	ReceivedDump, ExpectedDump string
}

var (
	verifyFailed = regexp.MustCompile(`^(\S+): verify failed at file (.+) offset \d+, length \d+ \(requested block: offset=(\d+), length=(\d+)`)
	verifyDumped = regexp.MustCompile(`^(received|expected) data dumped as (\S+)$`)
)

// ParseVerifyFailures reads fio's error stream for the blocks that failed
// verification (with continue_on_error=verify fio reports every one), each
// with the dumps that follow its line.
func ParseVerifyFailures(stderr string) []VerifyFailure {
	var out []VerifyFailure
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if m := verifyFailed.FindStringSubmatch(line); m != nil {
			off, err1 := strconv.ParseInt(m[3], 10, 64)
			n, err2 := strconv.ParseInt(m[4], 10, 64)
			if err1 == nil && err2 == nil {
				out = append(out, VerifyFailure{Method: m[1], File: m[2], Offset: off, Length: n})
			}
			continue
		}
		if m := verifyDumped.FindStringSubmatch(line); m != nil && len(out) > 0 {
			if f := &out[len(out)-1]; m[1] == "received" {
				f.ReceivedDump = m[2]
			} else {
				f.ExpectedDump = m[2]
			}
		}
	}
	return out
}
