package verify

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/fio"
)

// block is what fio writes for generation gen at offset: the pattern's
// unit repeated.
func block(gen uint64, offset int64, size int) []byte {
	unit := make([]byte, unitBytes)
	binary.BigEndian.PutUint64(unit[:8], gen)
	binary.LittleEndian.PutUint64(unit[8:], uint64(offset))
	return bytes.Repeat(unit, size/unitBytes)
}

func TestClassify(t *testing.T) {
	const size = 4096
	want := block(2, 8192, size)
	flipped := bytes.Clone(want)
	flipped[100] ^= 0xff
	torn := bytes.Clone(want)
	copy(torn[2048:], block(1, 8192, size)[2048:]) // half an older write
	for _, tc := range []struct {
		name     string
		received []byte
		wantKind Kind
		check    func(t *testing.T, b *BadBlock)
	}{
		{"intact", want, "", nil},
		{"a byte changed, even in the generation's field", flipped, Corrupted, func(t *testing.T, b *BadBlock) {
			if b.FirstDiff != 100 || b.Received[0] != want[100]^0xff || b.Expected[0] != want[100] || len(b.Expected) != DiffBytes {
				t.Errorf("diff at %d: %x for %x", b.FirstDiff, b.Received, b.Expected)
			}
		}},
		{"another offset's block of this generation", block(2, 0, size), Misdirected, func(t *testing.T, b *BadBlock) {
			if b.FoundOffset != 0 || b.FirstDiff != 9 { // 8192 is 00 20 … little-endian
				t.Errorf("found offset %d, first diff %d", b.FoundOffset, b.FirstDiff)
			}
		}},
		{"an older generation's block of this offset", block(1, 8192, size), Stale, func(t *testing.T, b *BadBlock) {
			if b.FoundGeneration != 1 || b.FirstDiff != 7 {
				t.Errorf("found generation %d, first diff %d", b.FoundGeneration, b.FirstDiff)
			}
		}},
		{"a newer generation than expected is no stale block", block(3, 8192, size), Corrupted, nil},
		{"another offset's block of an older generation", block(1, 0, size), Misdirected, func(t *testing.T, b *BadBlock) {
			if b.FoundOffset != 0 || b.FoundGeneration != 1 {
				t.Errorf("found offset %d, generation %d", b.FoundOffset, b.FoundGeneration)
			}
		}},
		{"half of an older write: torn, not stale", torn, Corrupted, nil},
		{"zeros (never written, or trimmed)", make([]byte, size), Corrupted, nil},
		{"short", want[:100], Corrupted, func(t *testing.T, b *BadBlock) {
			if b.FirstDiff != 100 || len(b.Received) != 0 {
				t.Errorf("short read: diff at %d, received %x", b.FirstDiff, b.Received)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Classify(8192, want, tc.received)
			if tc.wantKind == "" {
				if b != nil {
					t.Fatalf("Classify() = %+v, want nil", b)
				}
				return
			}
			if b == nil || b.Kind != tc.wantKind || b.Offset != 8192 {
				t.Fatalf("Classify() = %+v, want %s at 8192", b, tc.wantKind)
			}
			if tc.check != nil {
				tc.check(t, b)
			}
		})
	}
}

// TestBadBlocksOfRealFio: real fio writes a file twice with verification
// patterns (generations 1 and 2); then one block's byte is changed, one
// block is overwritten with another's data, and one is put back as the
// first generation wrote it. fio's read-back verification must report
// exactly those three blocks, and each must be classified as what was done
// to it.
func TestBadBlocksOfRealFio(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	const bs, blocks = 4096, 16
	run := func(rw string, gen uint64, extra string) string {
		t.Helper()
		pattern, err := Pattern(gen)
		if err != nil {
			t.Fatal(err)
		}
		job := "[global]\nioengine=psync\nfilename=" + data + "\nsize=64k\nbs=4k\nrw=" + rw +
			"\nverify=pattern\nverify_pattern=" + pattern + "\n" + extra + "[j]\n"
		jobFile := filepath.Join(dir, rw+".fio")
		if err := os.WriteFile(jobFile, []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--output-format=json", "--output="+filepath.Join(dir, rw+".json"), jobFile)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run() // a failed verification is an error exit
		return stderr.String()
	}
	run("write", 1, "do_verify=0\n")
	first, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	run("write", 2, "do_verify=0\n")
	b, err := os.ReadFile(data)
	if err != nil || len(b) != bs*blocks {
		t.Fatalf("%d bytes written: %v", len(b), err)
	}
	b[2*bs+100] ^= 0xff                  // block 2: a byte changed
	copy(b[3*bs:4*bs], b[0:bs])          // block 3: block 0's write put there
	copy(b[5*bs:6*bs], first[5*bs:6*bs]) // block 5: the first generation's
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := run("read", 2, "continue_on_error=verify\nverify_dump=1\n")
	failures := fio.ParseVerifyFailures(stderr)
	got := map[int64]*BadBlock{}
	for _, f := range failures {
		rec, err1 := os.ReadFile(filepath.Join(dir, f.ReceivedDump))
		exp, err2 := os.ReadFile(filepath.Join(dir, f.ExpectedDump))
		if err1 != nil || err2 != nil {
			t.Fatalf("dumps of %+v: %v %v", f, err1, err2)
		}
		got[f.Offset] = Classify(f.Offset, exp, rec)
	}
	want := map[int64]Kind{2 * bs: Corrupted, 3 * bs: Misdirected, 5 * bs: Stale}
	if len(got) != len(want) {
		t.Fatalf("fio reported %d bad blocks %v, want %v\n%s", len(got), got, want, strings.TrimSpace(stderr))
	}
	for off, kind := range want {
		if b := got[off]; b == nil || b.Kind != kind {
			t.Errorf("block at %d: %+v, want %s", off, b, kind)
		}
	}
	if b := got[3*bs]; b != nil && b.FoundOffset != 0 {
		t.Errorf("the misdirected block was written for %d, want 0", b.FoundOffset)
	}
	if b := got[5*bs]; b != nil && b.FoundGeneration != 1 {
		t.Errorf("the stale block is of generation %d, want 1", b.FoundGeneration)
	}
}

// Zeros are never a pattern: a block never written (or trimmed) is
// corrupted wherever it is, and generation 0 is refused.
func TestZeros(t *testing.T) {
	for _, offset := range []int64{0, 8192} {
		if b := Classify(offset, block(1, offset, 4096), make([]byte, 4096)); b == nil || b.Kind != Corrupted {
			t.Errorf("zeros at %d: %+v, want Corrupted", offset, b)
		}
	}
	// A block that is not whole units is no pattern either.
	old := block(1, 8192, 4096)[:4088]
	if b := Classify(8192, block(2, 8192, 4096)[:4088], old); b == nil || b.Kind != Corrupted {
		t.Errorf("a block of 4088 bytes: %+v, want Corrupted", b)
	}
	if _, err := Pattern(0); err == nil {
		t.Error("Pattern(0) accepted generation 0")
	}
}

func TestOverwritten(t *testing.T) {
	const off = 8192
	old, newer := block(2, off, 4096), block(3, off, 4096)
	torn := append(append([]byte{}, newer[:512]...), old[512:]...)
	tornOdd := append(append([]byte{}, old[:1024]...), newer[1024:2048]...)
	tornOdd = append(tornOdd, old[2048:]...)
	other := block(3, off+4096, 4096)
	interleaved := append([]byte{}, old...)
	copy(interleaved[16:32], newer[16:32])
	changed := append([]byte{}, newer...)
	changed[300] ^= 1
	for _, tc := range []struct {
		name  string
		block []byte
		want  bool
	}{
		{"the newer write, whole", newer, true},
		{"torn: its first sector", torn, true},
		{"torn: a middle part", tornOdd, true},
		{"interleaved finer than a sector", interleaved, false},
		{"as written before: not overwritten", old, false},
		{"the newer generation of another offset", other, false},
		{"the newer write with a changed byte", changed, false},
		{"zeros", make([]byte, 4096), false},
		{"a short block", newer[:4000], false},
	} {
		if got := Overwritten(tc.block, old, 3, off); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestJunkIsCorrupted: a block of one repeated unit is a pattern only
// where it names a generation a run writes and a block's offset.
func TestJunkIsCorrupted(t *testing.T) {
	want := block(2, 8192, 4096)
	for _, fillByte := range []byte{0xff, 0xaa, 0x01} {
		junk := bytes.Repeat([]byte{fillByte}, 4096)
		if b := Classify(8192, want, junk); b == nil || b.Kind != Corrupted || b.FoundOffset != 0 || b.FoundGeneration != 0 {
			t.Errorf("a block of 0x%02x: %+v", fillByte, b)
		}
	}
	// An offset that is no block's (not aligned), of a plausible
	// generation: corrupted too.
	if b := Classify(8192, want, block(2, 8192+100, 4096)); b == nil || b.Kind != Corrupted {
		t.Errorf("an unaligned offset: %+v", b)
	}
	if b := Classify(8192, want, block(2, 4096, 4096)); b == nil || b.Kind != Misdirected || b.FoundOffset != 4096 {
		t.Errorf("another block's: %+v", b)
	}
}
