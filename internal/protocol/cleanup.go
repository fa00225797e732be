package protocol

import (
	"bytes"
	"encoding/json"
)

// The cleanup pod's report. A benchmark on an existing claim writes files
// in a directory of its own there; once the run has ended the operator
// runs `runner cleanup` in a pod on the same claim, which removes that
// directory and reports, as one JSON line in its termination message, what
// it removed and what is left.

// Bounds of a cleanup report: the kubelet keeps at most 4096 bytes of a
// termination message.
const (
	// MaxCleanupReportBytes bounds the report's JSON line, newline included.
	MaxCleanupReportBytes = 4096
	// MaxCleanupRemaining is how many remaining paths a report lists.
	MaxCleanupRemaining = 10
	// maxCleanupPath and maxCleanupError cut a listed path and the error.
	maxCleanupPath  = 256
	maxCleanupError = 1024
)

// CleanupReport is what `runner cleanup` reports, as one JSON line.
type CleanupReport struct {
	// RemovedFiles counts what was removed other than directories: files,
	// links and the like. RemovedDirs counts directories, the benchmark's
	// own included.
	RemovedFiles int `json:"removedFiles"`
	RemovedDirs  int `json:"removedDirs"`
	// Remaining lists the first MaxCleanupRemaining paths left of the
	// benchmark's directory, relative to the volume, deepest first (a
	// directory after what it holds); RemainingCount counts all of them.
	Remaining      []string `json:"remaining"`
	RemainingCount int      `json:"remainingCount"`
	// Error says why something is left, or why nothing was removed; ""
	// when nothing is left.
	Error string `json:"error"`
}

// OK says nothing of the benchmark's directory is left and nothing was
// refused: `runner cleanup` then exits 0.
func (r CleanupReport) OK() bool { return r.RemainingCount == 0 && r.Error == "" }

// JSON is the report as one line of JSON, newline included, at most
// MaxCleanupReportBytes long: paths and the error are cut, then paths
// dropped from the list (RemainingCount still counts them), then the error
// cut further.
func (r CleanupReport) JSON() []byte {
	r.Error = Truncate(r.Error, maxCleanupError)
	listed := make([]string, 0, min(len(r.Remaining), MaxCleanupRemaining))
	for _, p := range r.Remaining[:min(len(r.Remaining), MaxCleanupRemaining)] {
		listed = append(listed, Truncate(p, maxCleanupPath))
	}
	r.Remaining = listed
	return reportLine(MaxCleanupReportBytes, &r, func() {
		if len(r.Remaining) > 0 {
			r.Remaining = r.Remaining[:len(r.Remaining)-1]
		} else {
			r.Error = Truncate(r.Error, len(r.Error)/2)
		}
	})
}

// reportLine is v as one line of JSON, newline included, HTML characters
// left as they are, at most limit bytes long: while it is longer, shrink
// makes v shorter. A pod's report goes so into its termination message.
func reportLine(limit int, v any, shrink func()) []byte {
	for {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil { // numbers and strings: cannot fail
			panic(err)
		}
		if b.Len() <= limit {
			return b.Bytes()
		}
		shrink()
	}
}
