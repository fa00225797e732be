package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/verify"
	"github.com/storagebench/storagebench/internal/workload"
)

// writeGeneration runs real fio writing random blocks of generation gen
// to layout's jobs for a second, their I/O logged, and records what it
// wrote into w.
func writeGeneration(t *testing.T, exe fio.Executor, l fio.Layout, w *written, gen uint16) uint64 {
	t.Helper()
	p, err := verify.Pattern(uint64(gen))
	if err != nil {
		t.Fatal(err)
	}
	name := "gen" + string(rune('0'+gen))
	run := fio.Run{Name: name, Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 0, Random: true,
		Runtime: time.Second, Seed: uint64(gen) * 7, Verify: &fio.VerifyWrites{Pattern: p, IOLogPrefix: filepath.Join(exe.WorkDir, name)},
		Jobs: []fio.Job{{IODepth: 4, WriteIOPS: 300}, {IODepth: 4, WriteIOPS: 300}}}
	job, err := fio.Render(run, l)
	if err != nil {
		t.Fatal(err)
	}
	follow, err := w.follow(filepath.Join(exe.WorkDir, name), gen)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exe.Run(context.Background(), name, job); err != nil {
		t.Fatal(err)
	}
	n, err := follow.wait()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// patterned counts the blocks of a job file that hold, whole, the pattern
// of their own offset, by generation: the ground truth of what was written.
func patterned(t *testing.T, path string) map[uint64]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]int{}
	for off := 0; off+4096 <= len(data); off += 4096 {
		gen := binary.BigEndian.Uint64(data[off:])
		want := make([]byte, 4096)
		verify.Fill(want, gen, int64(off))
		if gen != 0 && bytes.Equal(want, data[off:off+4096]) {
			out[gen]++
		}
	}
	return out
}

// TestVerificationOfRealFio writes two generations with real fio, then
// damages the files behind its back: a changed byte, a block copied over
// another, a block of the first generation put back. The read-back must
// find exactly those three, each of its kind, and every other block
// written intact.
func TestVerificationOfRealFio(t *testing.T) {
	requireFio(t)
	dir := t.TempDir()
	exe := fio.Executor{WorkDir: t.TempDir()}
	l := fio.Layout{Directory: dir, BytesPerJob: 1 << 20}
	w := newWritten(l, 2, 4096)

	n1 := writeGeneration(t, exe, l, w, 1)
	v := w.check(context.Background(), 3)
	if v.BadBlockCount != 0 || v.Unverified != 0 || v.BlocksVerified != n1 || n1 < 100 {
		t.Fatalf("after generation 1 (%d blocks written): %+v", n1, v)
	}
	truth := patterned(t, filepath.Join(dir, "job0.dat"))[1] + patterned(t, filepath.Join(dir, "job1.dat"))[1]
	if uint64(truth) != n1 {
		t.Fatalf("the I/O logs say %d blocks were written, the files hold %d of generation 1", n1, truth)
	}
	job0 := filepath.Join(dir, "job0.dat")
	old, _ := os.ReadFile(job0)

	n2 := writeGeneration(t, exe, l, w, 2)
	v = w.check(context.Background(), 3)
	if v.BadBlockCount != 0 || n2 < 100 {
		t.Fatalf("after generation 2 (%d blocks written): %+v", n2, v)
	}
	// Blocks of job 0 by generation: one rewritten in generation 2, two
	// others of generation 2.
	var stale, a, b int64 = -1, -1, -1
	for blk, gen := range w.jobs[0].gens {
		off := int64(blk) * 4096
		switch {
		case gen == 2 && binary.BigEndian.Uint64(old[off:]) == 1 && stale < 0:
			stale = off
		case gen == 2 && a < 0:
			a = off
		case gen == 2 && b < 0:
			b = off
		}
	}
	if stale < 0 || b < 0 {
		t.Fatalf("no block rewritten in generation 2, or too few of it: %d %d %d", stale, a, b)
	}
	f, err := os.OpenFile(job0, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(job0)
	if _, err := f.WriteAt(old[stale:stale+4096], stale); err != nil { // generation 1 put back
		t.Fatal(err)
	}
	if _, err := f.WriteAt(cur[a:a+4096], b); err != nil { // a's block at b
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{cur[a+100] ^ 0xff}, a+100); err != nil { // a byte of a
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	v = w.check(context.Background(), 3)
	if v.BadBlockCount != 3 || len(v.BadBlocks) != 3 || v.BlocksVerified != v.BlocksWritten+w.distinct() {
		t.Fatalf("want exactly 3 bad blocks of %d verified: %+v", w.distinct(), v)
	}
	want := map[int64]verify.Kind{stale: verify.Stale, a: verify.Corrupted, b: verify.Misdirected}
	for _, bad := range v.BadBlocks {
		if want[bad.Offset] != bad.Kind || bad.Client != 3 || bad.Job != 0 || bad.File != "job0.dat" {
			t.Errorf("bad block %+v; want %s", bad, want[bad.Offset])
		}
		switch bad.Kind {
		case verify.Stale:
			if bad.FoundGeneration != 1 || bad.Generation != 2 {
				t.Errorf("stale block: %+v", bad)
			}
		case verify.Misdirected:
			if bad.FoundOffset != a {
				t.Errorf("misdirected block found as %d, want %d", bad.FoundOffset, a)
			}
		case verify.Corrupted:
			if bad.FirstDiff != 100 {
				t.Errorf("corrupted block differs first at %d, want 100", bad.FirstDiff)
			}
		}
	}
}

// distinct is how many blocks were ever written.
func (w *written) distinct() uint64 {
	var n uint64
	for _, jb := range w.jobs {
		for _, g := range jb.gens {
			if g != 0 {
				n++
			}
		}
	}
	return n
}

// TestVerifiedLocalRun runs two clients through two writing steps that
// verify: every block written reads back, the figures are the steps'
// own (the read-back's reads are not in them), and nothing is ordered
// ahead.
func TestVerifiedLocalRun(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "verified", Dir: t.TempDir(), Verify: true,
		Workload: spec(t, "rand-write", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(4 << 20))}),
		Topology: plan.Topology{Clients: 2, JobsPerClient: 1},
		Load:     plan.Load{Rate: &plan.RateSteps{Steps: []int64{200, 400}}, StepDuration: 5 * time.Second}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 {
		t.Fatalf("%d steps", len(out.Steps))
	}
	var prev uint64
	for i, s := range out.Steps {
		v, a := s.Aggregate.Verification, s.Aggregate
		if v == nil {
			t.Fatalf("step %d has no verification", i)
		}
		if v.BadBlockCount != 0 || v.Unverified != 0 || v.BlocksWritten == 0 || v.BlocksVerified < v.BlocksWritten || v.BlocksVerified < prev {
			t.Errorf("step %d: %+v", i, v)
		}
		// Every block verified was read once, and none of those reads is
		// a benchmark read.
		if v.Bytes != v.BlocksVerified*uint64(l.Workload.BlockSizeBytes) || a.Read.IOs != 0 {
			t.Errorf("step %d: read back %d bytes for %d blocks; benchmark reads %d", i, v.Bytes, v.BlocksVerified, a.Read.IOs)
		}
		if s.Order.VerifyWithin != time.Minute {
			t.Errorf("step %d: verify within %s", i, s.Order.VerifyWithin)
		}
		prev = v.BlocksVerified
		if i > 0 && !s.Order.StartAt.After(out.Steps[i-1].Order.End()) {
			t.Errorf("step %d ordered to start at %s, not after step %d's end %s and its read-back", i, s.Order.StartAt, i-1, out.Steps[i-1].Order.End())
		}
	}
}

// TestReadBackPastTheEnd: blocks written and then gone (the file cut
// short) are bad, not unverified; a pass out of time counts the rest
// unverified, exactly.
func TestReadBackPastTheEnd(t *testing.T) {
	dir := t.TempDir()
	l := fio.Layout{Directory: dir, BytesPerJob: 16 * 4096}
	w := newWritten(l, 1, 4096)
	data := make([]byte, 16*4096)
	for b := range 16 {
		verify.Fill(data[b*4096:(b+1)*4096], 1, int64(b)*4096)
		w.jobs[0].gens[b] = 1
	}
	path := filepath.Join(dir, "job0.dat")
	if err := os.WriteFile(path, data[:2*4096+100], 0o644); err != nil { // 2 blocks and a bit
		t.Fatal(err)
	}
	v := w.check(context.Background(), 0)
	if v.BlocksVerified != 16 || v.BadBlockCount != 14 || v.Unverified != 0 || v.BadBlocks[0].Offset != 2*4096 || v.BadBlocks[0].Kind != verify.Corrupted {
		t.Fatalf("a file cut to 2 blocks: %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v = w.check(ctx, 0)
	if v.BlocksVerified != 0 || v.Unverified != 16 || !strings.Contains(v.Error, "stopped") {
		t.Fatalf("out of time: %+v", v)
	}
}
