package runner

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
)

// Verification: each writing step's writes carry their block's pattern
// (verify.Pattern of the step's generation, its index + 1) and each job
// logs the I/Os it issues (fio.VerifyWrites). After the step the runner
// reads the logs into the generation last written to each block, then
// reads back every block written in the run so far, with O_DIRECT, and
// compares it with its pattern (verify.Classify says what a bad one is).
// fio's own verification cannot do this: a time-based job never reaches
// its read-back phase, and one read-back job checks one pattern, not a
// generation per block.
//
// A step that ended cleanly has completed every I/O it issued, so the
// log of issued writes is the log of completed ones.

// written is the generation last written to each block of each job.
type written struct {
	bs   int64
	jobs []jobBlocks
	// dir is where WrittenState is saved after each step (lost.go), ""
	// on a Block volume.
	dir string
	// inFlight, when set, is the generation of a step the client was lost
	// in: a block may hold it, whole or torn with the generation before
	// (VerifyLost).
	inFlight uint16
}

// jobBlocks is one job's blocks: in path (its file, or the device),
// from base, one generation each (0: never written).
type jobBlocks struct {
	path string
	// file is the job's file name, "" on a device.
	file string
	base int64
	gens []uint16
}

// MaxGeneration is the highest generation a block records: steps beyond
// it are not verified (a run has at most results.MaxSteps).
const MaxGeneration = math.MaxUint16

// newWritten tracks the blocks of layout's jobs.
func newWritten(l fio.Layout, jobs int, bs int64) *written {
	w := &written{bs: bs, dir: l.Directory}
	for j := range jobs {
		jb := jobBlocks{gens: make([]uint16, l.BytesPerJob/bs)}
		if l.Device != "" {
			jb.path, jb.base = l.Device, l.BaseOffset+int64(j)*l.BytesPerJob
		} else {
			jb.file = fmt.Sprintf("job%d.dat", j)
			jb.path = filepath.Join(l.Directory, jb.file)
		}
		w.jobs = append(w.jobs, jb)
	}
	return w
}

// record reads the I/O logs of a step of generation gen (fio.IOLog of
// prefix) into the blocks, and returns how many distinct blocks it
// wrote. A write outside a job's working set is an error: it would be
// a write beyond what the benchmark owns.
func (w *written) record(prefix string, gen uint16) (uint64, error) {
	var n uint64
	for j := range w.jobs {
		k, err := w.jobs[j].record(fio.IOLog(prefix, j), gen, w.bs)
		n += k
		if err != nil {
			return n, fmt.Errorf("job %d's I/O log: %w", j, err)
		}
	}
	return n, nil
}

// record reads one job's log: fio's iolog version 3, a header line, then
// per action "<ms> <file> <action> [<offset> <length>]".
func (jb *jobBlocks) record(log string, gen uint16, bs int64) (uint64, error) {
	f, err := os.Open(log)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	var n uint64
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[len(fields)-3] != "write" {
			continue
		}
		off, err1 := strconv.ParseInt(fields[len(fields)-2], 10, 64)
		length, err2 := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		first := (off - jb.base) / bs
		switch {
		case err1 != nil || err2 != nil:
			return n, fmt.Errorf("line %d: %q", line, sc.Text())
		case off < jb.base || (off-jb.base)%bs != 0 || length%bs != 0 || length <= 0 || first+length/bs > int64(len(jb.gens)):
			return n, fmt.Errorf("line %d: a write of %d bytes at %d, outside the job's %d blocks from %d", line, length, off, len(jb.gens), jb.base)
		}
		for b := first; b < first+length/bs; b++ {
			if jb.gens[b] != gen {
				jb.gens[b] = gen
				n++
			}
		}
	}
	return n, sc.Err()
}

// verifyChunk is the most a verification pass reads at once.
const verifyChunk = 1 << 20

// check reads back every written block and compares it with the pattern
// of its generation, until ctx ends: what it did not read is Unverified.
func (w *written) check(ctx context.Context, client int) results.Verification {
	start := time.Now()
	var v results.Verification
	chunk := max(verifyChunk/w.bs, 1)
	buf := alignedBuffer(int(chunk * w.bs))
	expected := make([]byte, w.bs)
	for j := range w.jobs {
		jb := &w.jobs[j]
		if err := jb.check(ctx, client, j, w.bs, w.inFlight, buf, expected, &v); err != nil && v.Error == "" {
			v.Error = fmt.Sprintf("job %d: %v", j, err)
		}
	}
	v.Duration = time.Since(start)
	return v
}

// check reads back one job's written blocks, in runs of consecutive
// blocks of up to len(buf) bytes.
func (jb *jobBlocks) check(ctx context.Context, client, job int, bs int64, inFlight uint16, buf, expected []byte, v *results.Verification) (err error) {
	var f *os.File
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	chunk := int64(len(buf)) / bs
	for b := int64(0); b < int64(len(jb.gens)); {
		if jb.gens[b] == 0 {
			b++
			continue
		}
		n := int64(1)
		for b+n < int64(len(jb.gens)) && n < chunk && jb.gens[b+n] != 0 {
			n++
		}
		if err == nil {
			err = ctx.Err()
		}
		if err == nil && f == nil {
			// O_DIRECT: the storage's blocks, not the client's page cache.
			f, err = os.OpenFile(jb.path, os.O_RDONLY|unix.O_DIRECT, 0)
		}
		if err == nil {
			_, err = f.ReadAt(buf[:n*bs], jb.base+b*bs)
		}
		if err != nil {
			// Counted, not read: the pass ran out of time or failed.
			v.Unverified += uint64(n)
			b += n
			continue
		}
		v.Bytes += uint64(n * bs)
		for k := range n {
			gen, off := jb.gens[b+k], jb.base+(b+k)*bs
			fill(expected, uint64(gen), off)
			v.BlocksVerified++
			got := buf[k*bs : (k+1)*bs]
			if inFlight != 0 && verify.Overwritten(got, expected, uint64(inFlight), off) {
				v.Overwritten++
				continue
			}
			if bad := verify.Classify(off, expected, got); bad != nil {
				v.BadBlockCount++
				if len(v.BadBlocks) < results.MaxBadBlocks {
					v.BadBlocks = append(v.BadBlocks, results.BadBlockOf(client, job, jb.file, uint64(gen), bad))
				}
			}
		}
		b += n
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("the pass stopped before it read every block: %w", err)
	}
	return err
}

// fill writes the pattern of generation gen at offset into block, as fio
// writes verify.Pattern(gen): units of the generation, big-endian, then
// the offset, little-endian.
func fill(block []byte, gen uint64, offset int64) {
	var unit [16]byte
	binary.BigEndian.PutUint64(unit[:8], gen)
	binary.LittleEndian.PutUint64(unit[8:], uint64(offset))
	for i := 0; i+len(unit) <= len(block); i += len(unit) {
		copy(block[i:], unit[:])
	}
}

// alignedBuffer is n bytes aligned for O_DIRECT (4 KiB, which also
// serves 512-byte sectors).
func alignedBuffer(n int) []byte {
	const align = 4096
	b := make([]byte, n+align)
	skip := 0
	if r := int(uintptrOf(b) % align); r != 0 {
		skip = align - r
	}
	return b[skip : skip+n]
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// verifyStep records what step order (run as fio run name) wrote and
// reads back every block written so far, within the order's allowance.
func (r *Runner) verifyStep(ctx context.Context, order protocol.StepOrder, name string) *results.Verification {
	prefix := filepath.Join(r.WorkDir, name)
	defer func() {
		for j := range r.written.jobs {
			_ = os.Remove(fio.IOLog(prefix, j))
		}
	}()
	if order.Index+1 > MaxGeneration {
		return &results.Verification{Error: fmt.Sprintf("step %d is beyond the %d generations a block records: not verified", order.Index+1, MaxGeneration)}
	}
	n, err := r.written.record(prefix, uint16(order.Index+1))
	if err == nil && r.written.dir != "" {
		// Before the read-back: a client lost in it, or in the next
		// step, leaves what the finished steps wrote (lost.go).
		err = r.written.save(r.written.dir, uint16(order.Index+1))
	}
	if err != nil {
		return &results.Verification{BlocksWritten: n, Error: protocol.Truncate(err.Error(), protocol.MaxErrorBytes)}
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), order.VerifyWithin)
	defer cancel()
	v := r.written.check(vctx, r.Plan.Client)
	v.BlocksWritten = n
	v.Error = protocol.Truncate(v.Error, protocol.MaxErrorBytes)
	return &v
}

// verifyWrites is step s's run's VerifyWrites, when the plan verifies.
func (r *Runner) verifyWrites(index int, name string) *fio.VerifyWrites {
	if r.written == nil || index+1 > MaxGeneration {
		return nil
	}
	p, err := verify.Pattern(uint64(index + 1))
	if err != nil {
		return nil
	}
	return &fio.VerifyWrites{Pattern: p, IOLogPrefix: filepath.Join(r.WorkDir, name)}
}
