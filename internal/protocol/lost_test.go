package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
)

// A report too long for a termination message drops bad blocks first,
// then missing clients, then cuts its texts; the counts stay.
func TestLostReportFitsATerminationMessage(t *testing.T) {
	r := LostReport{Clients: 900, Error: strings.Repeat("e", 5000)}
	for i := range 100 {
		r.Missing = append(r.Missing, 900+i)
	}
	v := &r.Verification
	v.Clients, v.BlocksVerified, v.BadBlockCount, v.Error = 900, 1e6, 40, strings.Repeat("x", 5000)
	for i := range results.MaxBadBlocks {
		v.BadBlocks = append(v.BadBlocks, results.BadBlock{Client: i, File: "job0.dat", Offset: int64(i) * 4096, Kind: verify.Corrupted,
			Expected: strings.Repeat("ab", 16), Received: strings.Repeat("cd", 16)})
	}
	line := r.JSON()
	if len(line) > MaxLostReportBytes || line[len(line)-1] != '\n' {
		t.Fatalf("%d bytes", len(line))
	}
	var got LostReport
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	if got.Clients != 900 || got.Verification.BadBlockCount != 40 || got.Verification.BlocksVerified != 1e6 || len(got.Verification.BadBlocks) == 0 {
		t.Errorf("counts lost, or bad blocks dropped before the texts were cut to their bound: %+v", got.Verification)
	}
	short := LostReport{Clients: 1, Verification: results.Verification{Clients: 1, BlocksVerified: 3}}
	if err := json.Unmarshal(short.JSON(), &got); err != nil || got.Verification.BlocksVerified != 3 {
		t.Errorf("a short report: %+v, %v", got, err)
	}
}
