package run

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
)

func verifiedStep(i int, v *results.Verification) Step {
	return Step{Aggregate: results.StepAggregate{Step: i, Verification: v}}
}

func TestIntegrityOf(t *testing.T) {
	intact := func(n uint64) *results.Verification {
		return &results.Verification{Clients: 1, BlocksWritten: n, BlocksVerified: n, Bytes: n * 4096, Duration: time.Second}
	}
	bad := &results.Verification{Clients: 1, BlocksWritten: 10, BlocksVerified: 20, BadBlockCount: 2, Duration: time.Second,
		BadBlocks: []results.BadBlock{{Client: 1, Job: 0, Offset: 8192, Kind: verify.Stale, Generation: 2, FoundGeneration: 1},
			{Client: 1, Job: 0, Offset: 4096, Kind: verify.Corrupted, Generation: 2}}}
	unread := &results.Verification{Clients: 1, BlocksWritten: 10, BlocksVerified: 6, Unverified: 4, Error: "job 0: the pass stopped"}
	for _, tc := range []struct {
		name           string
		steps          []Step
		ended          bool
		judged, intact bool
		reason, msg    string
		verified       uint64
	}{
		{"running, intact so far", []Step{verifiedStep(0, intact(5))}, false, false, false, ReasonVerifying, "reading back", 5},
		{"ended, every step intact", []Step{verifiedStep(0, intact(5)), verifiedStep(1, intact(9))}, true, true, true, ReasonVerified, "14 read-backs of blocks over 2 steps", 14},
		{"a bad block is judged at once", []Step{verifiedStep(0, intact(5)), verifiedStep(1, bad)}, false, true, false, ReasonDataCorrupted,
			"step 2: 2 of 20 blocks read back wrong; the first, client 1 job 0 offset 8192, is Stale: it holds generation 1, not the 2 written last", 25},
		{"a step without a read-back", []Step{verifiedStep(0, intact(5)), verifiedStep(1, nil)}, true, true, false, ReasonNotVerified, "steps [2] lack a client's read-back", 5},
		{"blocks left unread", []Step{verifiedStep(0, unread)}, true, true, false, ReasonNotVerified, "4 of 10 blocks were not read back: job 0: the pass stopped", 6},
		{"no step", nil, true, true, false, ReasonNotVerified, "no step was recorded", 0},
		{"a client's read-back missing", []Step{{Aggregate: results.StepAggregate{Step: 0, Clients: 2, Verification: intact(5)}}}, true, true, false,
			ReasonNotVerified, "steps [1] lack a client's read-back", 5},
		{"a log that could not be read", []Step{verifiedStep(0, &results.Verification{Clients: 1, BlocksWritten: 3, Error: "not verified: the record … is incomplete"})},
			true, true, false, ReasonNotVerified, "not verified: the record", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := IntegrityOf(tc.steps, tc.ended)
			if in.Judged != tc.judged || in.Intact != tc.intact || in.Reason != tc.reason || !strings.Contains(in.Message, tc.msg) {
				t.Errorf("got %+v", in)
			}
			var verified uint64
			if in.Total != nil {
				verified = in.Total.BlocksVerified
			}
			if verified != tc.verified {
				t.Errorf("verified %d, want %d", verified, tc.verified)
			}
		})
	}
}

func TestStepFailureOnBadBlocks(t *testing.T) {
	v := &results.Verification{BlocksVerified: 9, BadBlockCount: 1, BadBlocks: []results.BadBlock{
		{Client: 0, Job: 1, File: "job1.dat", Offset: 12288, Kind: verify.Misdirected, Generation: 3, FoundOffset: 4096, FoundGeneration: 3}}}
	end := StepFailure([]Step{verifiedStep(0, &results.Verification{BlocksVerified: 3}), verifiedStep(1, v)})
	if end == nil || end.Reason != ReasonDataCorrupted ||
		end.Message != "step 2: 1 of 9 blocks read back wrong; the first, client 0 job1.dat offset 12288, is Misdirected: it holds the block written for offset 4096 (generation 3)" {
		t.Fatalf("got %+v", end)
	}
	if end := StepFailure([]Step{verifiedStep(0, &results.Verification{BlocksVerified: 3})}); end != nil {
		t.Fatalf("an intact read-back ended the run: %+v", end)
	}
}
