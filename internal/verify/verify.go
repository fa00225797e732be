// Package verify is the pure core of data verification: how each block a
// client writes describes itself, and what a block read back that does not
// match says about what happened to it.
//
// A verified write fills its block with fio's verify_pattern of Pattern:
// 16-byte units, each the write's generation (8 bytes, big-endian, as fio
// writes a hex pattern) followed by the block's offset (8 bytes,
// little-endian, fio's %o), repeated to the block's end. A read-back
// verification (fio's verify=pattern) then finds three kinds of bad block
// by comparing what it read with what it expected:
//
//   - Misdirected: a whole, intact block written for another offset (the
//     storage put a write, or read, in the wrong place), of whatever
//     generation;
//   - Stale: a whole, intact block of this offset from an older
//     generation (a write the storage acknowledged and lost);
//   - Corrupted: anything else: bytes changed, a torn block, zeros (a block
//     never written, or trimmed).
//
// Generations start at 1, so no pattern is all zeros.
//
// Patterns are not random data: storage that compresses or deduplicates
// stores them in far less space, so a verified run's figures are not a
// plain run's; docs say so.
package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// unitBytes is one unit of the pattern: generation, then offset.
const unitBytes = 16

// MaxGeneration is the highest generation a run writes (a block's record
// holds 16 bits).
const MaxGeneration = 1<<16 - 1

// Pattern is fio's verify_pattern for writes of generation gen (from 1):
// the generation as 8 hex bytes, then each block's offset (%o).
func Pattern(gen uint64) (string, error) {
	if gen == 0 {
		return "", fmt.Errorf("generation 0: generations start at 1, so that zeros are never a pattern")
	}
	return fmt.Sprintf("0x%016x%%o", gen), nil
}

// Fill writes into block what a write of generation gen at offset
// carries (Pattern(gen)): units of the generation, big-endian, then the
// offset, little-endian, to the block's last whole unit.
func Fill(block []byte, gen uint64, offset int64) {
	var unit [unitBytes]byte
	binary.BigEndian.PutUint64(unit[:8], gen)
	binary.LittleEndian.PutUint64(unit[8:], uint64(offset))
	for i := 0; i+unitBytes <= len(block); i += unitBytes {
		copy(block[i:], unit[:])
	}
}

// Kind is what happened to a bad block.
type Kind string

// The kinds of bad block.
const (
	Corrupted   Kind = "Corrupted"
	Misdirected Kind = "Misdirected"
	Stale       Kind = "Stale"
)

// BadBlock is a block whose content is not what was written there.
type BadBlock struct {
	Offset int64
	Kind   Kind
	// FirstDiff is the first byte, from the block's start, that differs.
	FirstDiff int
	// Expected and Received are up to DiffBytes bytes from FirstDiff.
	Expected, Received []byte
	// FoundOffset is the offset a misdirected block was written for;
	// FoundGeneration the generation of a stale or misdirected one.
	FoundOffset     int64
	FoundGeneration uint64
}

// DiffBytes is how many differing bytes a BadBlock keeps.
const DiffBytes = 16

// Classify says what a block at offset, expected to hold expected, held
// instead (received). Both are the block's whole content; nil when they
// are equal.
func Classify(offset int64, expected, received []byte) *BadBlock {
	first := -1
	for i := range min(len(expected), len(received)) {
		if expected[i] != received[i] {
			first = i
			break
		}
	}
	if first < 0 && len(expected) == len(received) {
		return nil
	}
	if first < 0 {
		first = min(len(expected), len(received))
	}
	b := &BadBlock{Offset: offset, Kind: Corrupted, FirstDiff: first,
		Expected: bytes.Clone(expected[first:min(len(expected), first+DiffBytes)]),
		Received: bytes.Clone(received[first:min(len(received), first+DiffBytes)])}
	gen, off, whole := uniform(received)
	wantGen, wantOff, ok := uniform(expected)
	// A block of one repeated unit describes a block only where it names
	// a generation a run could have written and an offset of a block:
	// 0xff… or 0xaa… is junk, not a misplaced write.
	if !whole || !ok || len(expected) != len(received) || gen > MaxGeneration || off < 0 || off%int64(len(received)) != wantOff%int64(len(received)) {
		return b
	}
	switch {
	case off != wantOff:
		b.Kind, b.FoundOffset, b.FoundGeneration = Misdirected, off, gen
	case gen < wantGen:
		b.Kind, b.FoundGeneration = Stale, gen
	}
	return b
}

// uniform reads block as the pattern: every unit the same generation (not
// 0) and offset. ok is false when it is not a whole pattern.
func uniform(block []byte) (gen uint64, offset int64, ok bool) {
	if len(block) == 0 || len(block)%unitBytes != 0 || binary.BigEndian.Uint64(block[:8]) == 0 {
		return 0, 0, false
	}
	unit := block[:unitBytes]
	for i := unitBytes; i < len(block); i += unitBytes {
		if !bytes.Equal(block[i:i+unitBytes], unit) {
			return 0, 0, false
		}
	}
	return binary.BigEndian.Uint64(unit[:8]), int64(binary.LittleEndian.Uint64(unit[8:])), true
}

// Overwritten says whether block, expected to hold expected (the pattern
// of its generation at offset), holds instead what a write of generation
// gen at offset put there, whole or torn: every 512-byte sector wholly
// the one or the other, at least one the newer. A write in flight when
// its client died may land so (storage writes whole sectors); nothing was
// acknowledged for it.
func Overwritten(block, expected []byte, gen uint64, offset int64) bool {
	if len(block) != len(expected) || len(block)%sectorBytes != 0 || gen == 0 {
		return false
	}
	var sector [sectorBytes]byte
	Fill(sector[:], gen, offset)
	newer := false
	for i := 0; i < len(block); i += sectorBytes {
		s := block[i : i+sectorBytes]
		switch {
		case bytes.Equal(s, sector[:]):
			newer = true
		case !bytes.Equal(s, expected[i:i+sectorBytes]):
			return false
		}
	}
	return newer
}

// sectorBytes is the unit a storage writes whole.
const sectorBytes = 512
