package fio

import (
	"regexp"
	"strconv"
	"strings"
)

// VerifyFailure is a block fio's verification read back wrong, as it
// reports one on its error stream.
type VerifyFailure struct {
	// Method is what failed ("pattern: verify failed", "verify: bad
	// magic header" …).
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
	// "pattern: verify failed at file F offset N, length L (requested
	// block: offset=O, length=B…)"; a header's failure is "verify: bad
	// magic header 0, wanted acca at file F offset N, length L (requested
	// block: …)".
	verifyFailed = regexp.MustCompile(`^(\S+: verify failed|verify: bad [a-z_ ]+?)(?: \S+, wanted \S+)? at file (.+) offset \d+, length \d+ \(requested block: offset=(\d+), length=(\d+)`)
	// "received data dumped as NAME.OFFSET.received", and expected,
	// hdr_fail; NAME is the file's, spaces and all.
	verifyDumped = regexp.MustCompile(`^(received|expected|hdr_fail) data dumped as (.+\.(\d+)\.(?:received|expected|hdr_fail))$`)
)

// ParseVerifyFailures reads fio's error stream for the blocks that failed
// verification (with continue_on_error=verify fio reports every one), each
// with the dumps of its offset (a header's failure dumps what was read as
// hdr_fail). Method is what failed: "pattern: verify failed", "crc32c:
// verify failed", "verify: bad magic header" …
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
		m := verifyDumped.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		off, err := strconv.ParseInt(m[3], 10, 64)
		if err != nil {
			continue
		}
		// The failure of the dump's offset, the latest: jobs writing to
		// one stream may interleave their lines.
		for i := len(out) - 1; i >= 0; i-- {
			if f := &out[i]; f.Offset == off {
				if m[1] == "expected" {
					f.ExpectedDump = m[2]
				} else {
					f.ReceivedDump = m[2]
				}
				break
			}
		}
	}
	return out
}
