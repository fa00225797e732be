package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// Verification across a lost client. On a Filesystem volume the runner
// keeps, beside its job files, the generation last written to each block
// by the steps that ended (WrittenState), saved atomically after each
// step's I/O logs are read and before its read-back. A client that is
// killed, or whose node is lost, in the middle of a step leaves it on the
// volume, where any pod that mounts the volume reads it: VerifyLost
// then checks every block a finished step wrote.
//
// What it can prove: every write of a finished step (fio completed it)
// reads back as written, or as the lost step overwrote it: whole, a
// pattern of the lost step's generation at its own offset, or torn
// between the two (a write in flight when the client died is not
// acknowledged, and may land partly). What it cannot: which writes of the
// lost step completed, so a lost step's acknowledged write that the
// storage lost is not seen; and on a Block volume there is no state to
// read (the client's memory held it).

// WrittenState is the file, in the client's directory, holding the
// generations written by the finished steps.
const WrittenState = ".storagebench-written"

// writtenMagic starts the state file; its last byte is the format's
// version. The format: magic, the generation of the last finished step
// (uint32), jobs (uint32), block size and blocks per job (uint64), then
// each job's generations (uint16 each), all little-endian, then the
// CRC-32C of everything before it.
const writtenMagic = "SBWRIT\x00\x01"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// save writes the blocks' generations, after the step of generation gen,
// to dir's WrittenState: to a temporary file, synced, then renamed over
// it, and the directory synced, so a reader finds the previous state or
// this one whole.
func (w *written) save(dir string, gen uint16) error {
	var b bytes.Buffer
	b.WriteString(writtenMagic)
	var blocks uint64
	if len(w.jobs) > 0 {
		blocks = uint64(len(w.jobs[0].gens))
	}
	for _, v := range []any{uint32(gen), uint32(len(w.jobs)), uint64(w.bs), blocks} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	for _, jb := range w.jobs {
		_ = binary.Write(&b, binary.LittleEndian, jb.gens)
	}
	_ = binary.Write(&b, binary.LittleEndian, crc32.Checksum(b.Bytes(), castagnoli))
	tmp := filepath.Join(dir, WrittenState+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		// Ours, left by a client that died while saving.
		_ = os.Remove(tmp)
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o644)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, WrittenState))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("saving what the steps wrote: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// forget removes the saved record, which no longer says what was
// written; a verifier then finds none.
func (w *written) forget() {
	if w.dir != "" {
		_ = os.Remove(filepath.Join(w.dir, WrittenState))
	}
}

// MaxStateBytes bounds the state file a verifier reads: the most blocks
// a client may verify, 2 bytes each, and the header.
const MaxStateBytes = 2*(1<<22) + 64

// loadWritten reads dir's WrittenState: the blocks of the job files in
// dir and the generation of the last finished step.
func loadWritten(dir string) (*written, uint16, error) {
	f, err := os.Open(filepath.Join(dir, WrittenState))
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxStateBytes+1))
	if err != nil {
		return nil, 0, err
	}
	const header = len(writtenMagic) + 4 + 4 + 8 + 8
	if len(data) > MaxStateBytes || len(data) < header+4 || string(data[:len(writtenMagic)]) != writtenMagic {
		return nil, 0, fmt.Errorf("%s is not a state this runner writes", WrittenState)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, 0, fmt.Errorf("%s does not match its checksum: the volume did not return it as written", WrittenState)
	}
	h := body[len(writtenMagic):]
	gen := binary.LittleEndian.Uint32(h)
	jobs := binary.LittleEndian.Uint32(h[4:])
	bs := binary.LittleEndian.Uint64(h[8:])
	blocks := binary.LittleEndian.Uint64(h[16:])
	gens := body[header:]
	switch {
	case gen == 0 || gen > MaxGeneration || jobs == 0 || jobs > results.MaxJobsPerClient || bs < 512 || bs > 16<<20 || bs%16 != 0:
		return nil, 0, fmt.Errorf("%s: generation %d, %d jobs, blocks of %d bytes: not a state this runner writes", WrittenState, gen, jobs, bs)
	case blocks > MaxStateBytes/2 || uint64(len(gens)) != 2*uint64(jobs)*blocks:
		return nil, 0, fmt.Errorf("%s: %d bytes of generations for %d jobs of %d blocks", WrittenState, len(gens), jobs, blocks)
	}
	w := newWritten(fio.Layout{Directory: dir, BytesPerJob: int64(blocks) * int64(bs)}, int(jobs), int64(bs))
	r := bytes.NewReader(gens)
	for j := range w.jobs {
		_ = binary.Read(r, binary.LittleEndian, w.jobs[j].gens) // its length checked above
	}
	return w, uint16(gen), nil
}

// VerifyLost checks, after a client was lost, the blocks its finished
// steps wrote to the job files in dir (its directory on the volume), as
// WrittenState records them, within ctx: each must read back as written,
// or as the step after them (the lost one) overwrote it. client names the
// client in the bad blocks.
func VerifyLost(ctx context.Context, dir string, client int) (results.Verification, error) {
	w, gen, err := loadWritten(dir)
	if err != nil {
		return results.Verification{}, err
	}
	if gen < MaxGeneration {
		w.inFlight = gen + 1
	}
	v := w.check(ctx, client)
	v.Clients = 1
	return v, nil
}
