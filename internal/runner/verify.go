package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
	// broken says why the record of what was written is incomplete.
	broken error
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
const MaxGeneration = verify.MaxGeneration

// newWritten tracks the blocks of layout's jobs.
func newWritten(l fio.Layout, jobs int, bs int64) *written {
	w := &written{bs: bs, dir: l.Directory}
	for j := range jobs {
		jb := jobBlocks{gens: make([]uint16, l.BytesPerJob/bs)}
		if l.Device != "" {
			jb.path, jb.base = l.Device, l.BaseOffset+int64(j)*l.BytesPerJob
		} else {
			jb.file = fio.JobFile(j)
			jb.path = filepath.Join(l.Directory, jb.file)
		}
		w.jobs = append(w.jobs, jb)
	}
	return w
}

// follower reads a step's I/O logs as fio writes them, into the blocks:
// each log is a FIFO (nothing of it is kept on disk, however long the
// step), read by a goroutine of its own, which fio's job blocks on
// only if the reader falls behind a 64 KiB pipe.
type follower struct {
	paths []string
	done  chan followed
}

type followed struct {
	job int
	n   uint64
	err error
}

// follow makes the step's logs (fio.IOLog of prefix) FIFOs and starts
// reading them into the blocks as generation gen.
func (w *written) follow(prefix string, gen uint16) (*follower, error) {
	f := &follower{done: make(chan followed, len(w.jobs))}
	for j := range w.jobs {
		p := fio.IOLog(prefix, j)
		_ = os.Remove(p)
		if err := unix.Mkfifo(p, 0o600); err != nil {
			f.remove()
			return nil, fmt.Errorf("making job %d's I/O log: %w", j, err)
		}
		f.paths = append(f.paths, p)
	}
	for j := range w.jobs {
		go func() {
			n, err := w.jobs[j].record(f.paths[j], gen, w.bs)
			f.done <- followed{j, n, err}
		}()
	}
	return f, nil
}

// wait collects what the logs said once fio has ended: how many distinct
// blocks the step wrote, and the first job's error. A reader still
// waiting for fio to open its log (fio ended before it did) is released.
func (f *follower) wait() (uint64, error) {
	defer f.remove()
	var n uint64
	errs := make([]error, len(f.paths))
	for left := len(f.paths); left > 0; {
		select {
		case r := <-f.done:
			n += r.n
			if r.err != nil {
				errs[r.job] = fmt.Errorf("job %d's I/O log: %w", r.job, r.err)
			}
			left--
		case <-time.After(100 * time.Millisecond):
			for _, p := range f.paths {
				// Succeeds only while a reader waits in open: it then
				// reads an empty log.
				if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					_ = unix.Close(fd)
				}
			}
		}
	}
	return n, errors.Join(errs...)
}

func (f *follower) remove() {
	for _, p := range f.paths {
		_ = os.Remove(p)
	}
}

// record reads one job's log to its end: fio's iolog version 3, a header
// line, then per action "<µs> <file> <action> [<offset> <length>]". Each
// write marks its blocks with gen; it returns how many blocks changed. A
// write outside the job's working set is an error (it would be a write
// beyond what the benchmark owns), and the rest of the log is read but
// not applied: fio must never wait on a reader that gave up. A write not
// aligned to the blocks (fio logs a short write's remainder so) marks
// nothing: its block was marked by the write it completes.
func (jb *jobBlocks) record(log string, gen uint16, bs int64) (uint64, error) {
	f, err := os.Open(log)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	rd := bufio.NewReaderSize(f, 64<<10)
	var n uint64
	var bad error
	for line := 1; ; line++ {
		text, long, err := rd.ReadLine()
		for long && err == nil { // no line of fio's is this long: skip it
			_, long, err = rd.ReadLine()
			text = nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, errors.Join(bad, err)
		}
		fields := strings.Fields(string(text))
		if bad != nil || len(fields) < 5 || fields[len(fields)-3] != "write" {
			continue
		}
		off, err1 := strconv.ParseInt(fields[len(fields)-2], 10, 64)
		length, err2 := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		switch {
		case err1 != nil || err2 != nil:
			bad = fmt.Errorf("line %d: %q", line, text)
			continue
		case off < jb.base || length <= 0 || off+length > jb.base+int64(len(jb.gens))*bs:
			bad = fmt.Errorf("line %d: a write of %d bytes at %d, outside the job's %d blocks from %d", line, length, off, len(jb.gens), jb.base)
			continue
		case (off-jb.base)%bs != 0 || length%bs != 0:
			continue
		}
		for b := (off - jb.base) / bs; b < (off-jb.base+length)/bs; b++ {
			if jb.gens[b] != gen {
				jb.gens[b] = gen
				n++
			}
		}
	}
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
// blocks of up to len(buf) bytes. A block past the end of the file or
// device is one the storage lost: bad. One it could not read (an I/O
// error, the pass's time up) is unverified, and the pass goes on with
// the next run unless its time is up.
func (jb *jobBlocks) check(ctx context.Context, client, job int, bs int64, inFlight uint16, buf, expected []byte, v *results.Verification) error {
	var f *os.File
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	compare := func(b int64, got []byte) { jb.compare(client, job, b, bs, inFlight, got, expected, v) }
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
		if err := ctx.Err(); err != nil {
			keep(fmt.Errorf("the pass stopped before it read every block: %w", err))
			v.Unverified += uint64(n)
			b += n
			continue
		}
		if f == nil {
			// O_DIRECT: the storage's blocks, not the client's page cache.
			var err error
			if f, err = os.OpenFile(jb.path, os.O_RDONLY|unix.O_DIRECT, 0); err != nil {
				keep(err)
				f = nil
				v.Unverified += uint64(n)
				b += n
				continue
			}
		}
		got, err := f.ReadAt(buf[:n*bs], jb.base+b*bs)
		full := int64(got) / bs
		v.Bytes += uint64(full * bs)
		for k := range full {
			compare(b+k, buf[k*bs:(k+1)*bs])
		}
		switch {
		case full == n:
		case errors.Is(err, io.EOF):
			for k := full; k < n; k++ { // written, acknowledged, gone
				compare(b+k, nil)
			}
		default:
			keep(err)
			v.Unverified += uint64(n - full)
		}
		b += n
	}
	return first
}

// compare checks block b, read as got, against the pattern of its
// generation (in expected's room), into v.
func (jb *jobBlocks) compare(client, job int, b, bs int64, inFlight uint16, got, expected []byte, v *results.Verification) {
	gen, off := jb.gens[b], jb.base+b*bs
	verify.Fill(expected, uint64(gen), off)
	v.BlocksVerified++
	if inFlight != 0 && verify.Overwritten(got, expected, uint64(inFlight), off) {
		v.Overwritten++
		return
	}
	if bad := verify.Classify(off, expected, got); bad != nil {
		v.BadBlockCount++
		if len(v.BadBlocks) < results.MaxBadBlocks {
			v.BadBlocks = append(v.BadBlocks, results.BadBlockOf(client, job, jb.file, uint64(gen), bad))
		}
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

// verifyStep reads back, within the order's allowance, every block the
// run wrote, once the step's logs said what it wrote (n distinct blocks,
// or logErr). A log that could not be read leaves the blocks' record
// incomplete: from then on no step is verified (a block the record
// missed would read back as a false corruption), and each says why.
func (r *Runner) verifyStep(ctx context.Context, order protocol.StepOrder, n uint64, logErr error) *results.Verification {
	w := r.written
	if logErr != nil && w.broken == nil {
		w.broken = fmt.Errorf("step %d: %w", order.Index+1, logErr)
		// The saved record would go stale: a verifier after a lost client
		// must find none (NotVerified), not an old one (false corruption).
		w.forget()
	}
	if w.broken != nil {
		return &results.Verification{BlocksWritten: n, Clients: 1,
			Error: protocol.Truncate(fmt.Sprintf("not verified: the record of what the run wrote is incomplete since %v", w.broken), results.MaxVerifyText)}
	}
	if w.dir != "" {
		// Before the read-back: a client lost in it, or in the next
		// step, leaves what the finished steps wrote (lost.go).
		if err := w.save(w.dir, uint16(order.Index+1)); err != nil {
			w.forget()
			return &results.Verification{BlocksWritten: n, Clients: 1, Error: protocol.Truncate(err.Error(), results.MaxVerifyText)}
		}
	}
	// Stopped (SIGTERM), the pass ends at once: the step is published
	// with what was read, the rest counted unverified.
	vctx, cancel := context.WithTimeout(ctx, order.VerifyWithin)
	defer cancel()
	v := w.check(vctx, r.Plan.Client)
	v.BlocksWritten, v.Clients = n, 1
	v.Error = protocol.Truncate(v.Error, results.MaxVerifyText)
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
