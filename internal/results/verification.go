package results

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/storagebench/storagebench/internal/verify"
)

// Verification is what a client's verification pass read back after a
// writing step: every block the client wrote in the run so far, each
// against the generation it last wrote there. Merged over clients, the
// counts are summed and the first MaxBadBlocks bad blocks kept.
type Verification struct {
	// Clients is how many clients' read-backs it holds.
	Clients int `json:"clients"`
	// BlocksWritten is how many distinct blocks the step wrote.
	BlocksWritten uint64 `json:"blocksWritten"`
	// BlocksVerified is how many blocks the pass read back and compared:
	// every block written in the run so far.
	BlocksVerified uint64 `json:"blocksVerified"`
	// Unverified is how many of them the pass did not read, because it
	// reached its time bound (VerifyAllowance) or failed.
	Unverified uint64 `json:"unverified,omitempty"`
	// Overwritten is how many of them held, instead, what the step a
	// client was lost in wrote there (whole, or torn with what was there
	// before): a write in flight when the client died, which the storage
	// never acknowledged. Only a verification after a lost client counts
	// them.
	Overwritten uint64 `json:"overwritten,omitempty"`
	// BadBlockCount is how many blocks held something else than was
	// written; BadBlocks are the first MaxBadBlocks of them.
	BadBlockCount uint64     `json:"badBlockCount,omitempty"`
	BadBlocks     []BadBlock `json:"badBlocks,omitempty"`
	// Bytes is what the pass read; Duration how long it took (merged: the
	// longest client's, as the clients' passes run at once). Neither is
	// part of the step's figures.
	Bytes    uint64        `json:"bytes"`
	Duration time.Duration `json:"duration"`
	// Error says why the pass could not read everything (Unverified).
	Error string `json:"error,omitempty"`
}

// BadBlock is a block read back wrong, where and as what.
type BadBlock struct {
	Client int `json:"client"`
	Job    int `json:"job"`
	// File is the job's file, relative to the client's directory, or ""
	// on a block device; Offset is the block's, in that file or device.
	File   string      `json:"file,omitempty"`
	Offset int64       `json:"offset"`
	Kind   verify.Kind `json:"kind"`
	// Generation is the one last written there (the step's index + 1).
	Generation uint64 `json:"generation"`
	// FirstDiff is the first byte of the block that differs; Expected and
	// Received are, in hex, up to verify.DiffBytes bytes from it.
	FirstDiff int    `json:"firstDiff"`
	Expected  string `json:"expected"`
	Received  string `json:"received"`
	// FoundOffset and FoundGeneration are what a misdirected or stale
	// block describes itself as.
	FoundOffset     int64  `json:"foundOffset,omitempty"`
	FoundGeneration uint64 `json:"foundGeneration,omitempty"`
}

// MaxBadBlocks bounds the bad blocks a client reports and a step keeps
// one by one; the rest are counted.
const MaxBadBlocks = 16

// BadBlockOf is the result's form of a classified block.
func BadBlockOf(client, job int, file string, generation uint64, b *verify.BadBlock) BadBlock {
	return BadBlock{Client: client, Job: job, File: file, Offset: b.Offset, Kind: b.Kind, Generation: generation,
		FirstDiff: b.FirstDiff, Expected: hex.EncodeToString(b.Expected), Received: hex.EncodeToString(b.Received),
		FoundOffset: b.FoundOffset, FoundGeneration: b.FoundGeneration}
}

// Bad says whether the pass found a bad block.
func (v *Verification) Bad() bool { return v != nil && v.BadBlockCount > 0 }

// validate checks a client's verification: bounded, and counts that
// agree with each other, and bad blocks of the client's own.
func (v *Verification) validate(client int) error {
	if v == nil {
		return nil
	}
	if v.Clients != 1 {
		return fmt.Errorf("verification: of %d clients, not of this one", v.Clients)
	}
	return v.check(func(c int) bool { return c == client })
}

// ValidateMerged checks a verification merged over clients clients (a
// verifier's report) as validate checks a client's.
func (v *Verification) ValidateMerged(clients int) error {
	if v.Clients != clients || clients < 0 || clients > MaxClients {
		return fmt.Errorf("verification: of %d clients, reported as of %d", v.Clients, clients)
	}
	return v.check(func(c int) bool { return c >= 0 && c < MaxClients })
}

func (v *Verification) check(ofClient func(int) bool) error {
	for _, n := range []uint64{v.BlocksWritten, v.BlocksVerified, v.Unverified, v.Overwritten, v.BadBlockCount, v.Bytes} {
		if n > MaxCount {
			return fmt.Errorf("verification: a count of %d exceeds %d", n, uint64(MaxCount))
		}
	}
	switch {
	case v.Duration < 0:
		return fmt.Errorf("verification: negative duration %s", v.Duration)
	case len(v.BadBlocks) > MaxBadBlocks:
		return fmt.Errorf("verification: %d bad blocks listed, at most %d", len(v.BadBlocks), MaxBadBlocks)
	case uint64(len(v.BadBlocks)) > v.BadBlockCount:
		return fmt.Errorf("verification: %d bad blocks listed of a count of %d", len(v.BadBlocks), v.BadBlockCount)
	case v.BadBlockCount > v.BlocksVerified:
		return fmt.Errorf("verification: %d bad blocks of %d verified", v.BadBlockCount, v.BlocksVerified)
	case len(v.Error) > MaxVerifyText:
		return fmt.Errorf("verification: error of %d bytes, at most %d", len(v.Error), MaxVerifyText)
	}
	for _, b := range v.BadBlocks {
		if !ofClient(b.Client) || b.Job < 0 || b.Job >= MaxJobsPerClient || b.Offset < 0 || b.FirstDiff < 0 {
			return fmt.Errorf("verification: bad block at %d: not of client %d's jobs", b.Offset, b.Client)
		}
		if !jobFile.MatchString(b.File) || !hexBytes.MatchString(b.Expected) || !hexBytes.MatchString(b.Received) {
			return fmt.Errorf("verification: bad block at %d: a file other than a job's, or bytes not in hex", b.Offset)
		}
		if !slices.Contains([]verify.Kind{verify.Corrupted, verify.Misdirected, verify.Stale}, b.Kind) {
			return fmt.Errorf("verification: bad block at %d: unknown kind %q", b.Offset, b.Kind)
		}
	}
	return nil
}

// MaxVerifyText bounds a verification's free text.
const MaxVerifyText = 512

var (
	// jobFile is a bad block's file: a job's, or none on a device.
	jobFile = regexp.MustCompile(`^(job[0-9]{1,2}\.dat)?$`)
	// hexBytes are up to verify.DiffBytes bytes in hex.
	hexBytes = regexp.MustCompile(`^([0-9a-f]{2}){0,16}$`)
)

// mergeVerification adds a client's verification to the step's.
func mergeVerification(into **Verification, v *Verification) {
	if v == nil {
		return
	}
	if *into == nil {
		*into = &Verification{}
	}
	(*into).Add(v)
}

// Add merges o, another client's verification, into v: counts summed, the longest duration, the first MaxBadBlocks bad
// blocks and the first error kept.
func (v *Verification) Add(o *Verification) {
	v.Clients += o.Clients
	v.BlocksWritten += o.BlocksWritten
	v.BlocksVerified += o.BlocksVerified
	v.Unverified += o.Unverified
	v.Overwritten += o.Overwritten
	v.BadBlockCount += o.BadBlockCount
	v.Bytes += o.Bytes
	v.Duration = max(v.Duration, o.Duration)
	for _, b := range o.BadBlocks {
		if len(v.BadBlocks) < MaxBadBlocks {
			v.BadBlocks = append(v.BadBlocks, b)
		}
	}
	if v.Error == "" && o.Error != "" {
		v.Error = o.Error
	}
}
