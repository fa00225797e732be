package protocol

import (
	"github.com/storagebench/storagebench/internal/results"
)

// LostReport is what `runner verify-lost` reports, as one JSON line: the
// read-back of what the clients' finished steps wrote, after a client was
// lost mid-step (internal/runner's lost.go).
type LostReport struct {
	Verification results.Verification `json:"verification"`
	// Clients is how many clients' directories held what their finished
	// steps wrote; Missing lists those that did not (a runner that
	// finished no step, or removed its files when it stopped).
	Clients int   `json:"clients"`
	Missing []int `json:"missing,omitempty"`
	// Error says why a client's state could not be read (the first).
	Error string `json:"error,omitempty"`
}

// MaxLostReportBytes bounds the report's JSON line, newline included: a
// pod's termination message holds at most 4 KiB.
const MaxLostReportBytes = 4096

// JSON is the report as one line of JSON, newline included, at most
// MaxLostReportBytes long: bad blocks, then missing clients are dropped
// from their lists (the counts stay), then the texts cut.
func (r LostReport) JSON() []byte {
	r.Error = Truncate(r.Error, MaxErrorLine)
	r.Verification.Error = Truncate(r.Verification.Error, MaxErrorLine)
	v := &r.Verification
	return reportLine(MaxLostReportBytes, &r, func() {
		switch {
		case len(v.BadBlocks) > 0:
			v.BadBlocks = v.BadBlocks[:len(v.BadBlocks)-1]
		case len(r.Missing) > 0:
			r.Missing = r.Missing[:len(r.Missing)-1]
		default:
			r.Error, v.Error = Truncate(r.Error, len(r.Error)/2), Truncate(v.Error, len(v.Error)/2)
		}
	})
}
