package results

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/verify"
)

func TestVerificationValidated(t *testing.T) {
	good := func() *Verification {
		return &Verification{Clients: 1, BlocksWritten: 4, BlocksVerified: 8, BadBlockCount: 1, Bytes: 8 * 4096,
			BadBlocks: []BadBlock{{Client: 2, Job: 1, Offset: 4096, Kind: verify.Corrupted, Expected: "00", Received: "ff"}}}
	}
	for _, tc := range []struct {
		name   string
		change func(v *Verification)
		err    string
	}{
		{"as a runner reports it", func(*Verification) {}, ""},
		{"another client's block", func(v *Verification) { v.BadBlocks[0].Client = 3 }, "not of client 3's jobs"},
		{"more listed than counted", func(v *Verification) { v.BadBlockCount = 0 }, "listed of a count of 0"},
		{"more bad than verified", func(v *Verification) { v.BadBlockCount = 9; v.BadBlocks = nil }, "9 bad blocks of 8 verified"},
		{"an unknown kind", func(v *Verification) { v.BadBlocks[0].Kind = "Gone" }, "unknown kind"},
		{"too many listed", func(v *Verification) {
			v.BadBlockCount = MaxBadBlocks + 1
			v.BlocksVerified = 100
			for range MaxBadBlocks {
				v.BadBlocks = append(v.BadBlocks, v.BadBlocks[0])
			}
		}, "at most 16"},
		{"a count beyond the bound", func(v *Verification) { v.Bytes = MaxCount + 1 }, "exceeds"},
		{"long bytes", func(v *Verification) { v.BadBlocks[0].Received = strings.Repeat("ab", 17) }, "not in hex"},
		{"bytes not in hex", func(v *Verification) { v.BadBlocks[0].Expected = "<script>" }, "not in hex"},
		{"a file not a job's", func(v *Verification) { v.BadBlocks[0].File = "../../etc/passwd" }, "a file other than a job's"},
		{"another client's count", func(v *Verification) { v.Clients = 2 }, "of 2 clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := good()
			tc.change(v)
			c := ClientStep{Client: 2, Step: 0, Jobs: 2, Verification: v}
			err := c.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
}

func TestVerificationMerged(t *testing.T) {
	m := NewMerger(0)
	for c := range 3 {
		v := &Verification{Clients: 1, BlocksWritten: 10, BlocksVerified: 20, Bytes: 20 * 4096, Duration: time.Duration(1 + 1e9*c)}
		if c == 1 {
			v.BadBlockCount = MaxBadBlocks + 4
			for k := range MaxBadBlocks {
				v.BadBlocks = append(v.BadBlocks, BadBlock{Client: 1, Offset: int64(k) * 4096, Kind: verify.Corrupted})
			}
		}
		if err := m.Add(ClientStep{Client: c, Step: 0, Jobs: 1, Verification: v}); err != nil {
			t.Fatal(err)
		}
	}
	v := m.Result().Verification
	if v.Clients != 3 || v.BlocksWritten != 30 || v.BlocksVerified != 60 || v.BadBlockCount != MaxBadBlocks+4 || len(v.BadBlocks) != MaxBadBlocks ||
		v.Bytes != 60*4096 || v.Duration != 1+2e9 {
		t.Fatalf("merged %+v", v)
	}
}
