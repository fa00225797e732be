package fio

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requireFio fails (never skips) when the fio binary is missing: these tests
// are the proof that the parsing and percentile rule match real fio.
func requireFio(t *testing.T) Executor {
	t.Helper()
	path, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it (Debian package fio)")
	}
	return Executor{Binary: path, WorkDir: t.TempDir()}
}

func runFio(t *testing.T, e Executor, r Run, l Layout) *Result {
	t.Helper()
	job, err := Render(r, l)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), r.Name, job)
	if err != nil {
		t.Fatalf("fio run %s: %v", r.Name, err)
	}
	return res
}

// TestPercentilesFromBinsEqualFio runs real fio and checks, for every job
// and direction, that the percentiles computed from the json+ bins equal
// the percentiles fio printed, value for value.
func TestPercentilesFromBinsEqualFio(t *testing.T) {
	e := requireFio(t)
	runs := []Run{
		{Name: "randread-psync", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
			Runtime: 2 * time.Second, Seed: 11, Jobs: []Job{{IODepth: 1}, {IODepth: 1}}},
		{Name: "randrw-libaio", Engine: "libaio", Direct: true, BlockSizeBytes: 8192, ReadPercent: 70, Random: true,
			Runtime: 2 * time.Second, Seed: 22, Jobs: []Job{{IODepth: 8, ReadIOPS: 700, WriteIOPS: 300}}},
		{Name: "seqwrite", Engine: "libaio", Direct: true, BlockSizeBytes: 65536, ReadPercent: 0,
			Runtime: 2 * time.Second, Seed: 33, Jobs: []Job{{IODepth: 4}}},
	}
	checked := 0
	for _, r := range runs {
		dir := t.TempDir()
		res := runFio(t, e, r, Layout{Directory: dir, BytesPerJob: 32 << 20})
		for _, j := range res.Output.Jobs {
			for dirName, d := range map[string]DirResult{"read": j.Read, "write": j.Write} {
				if d.Latency.Count == 0 {
					continue
				}
				if len(d.Latency.Printed) != len(PercentileValues) {
					t.Fatalf("%s %s: fio printed %d percentiles, want %d", j.Name, dirName, len(d.Latency.Printed), len(PercentileValues))
				}
				got := d.Latency.Hist.Percentiles(PercentileValues)
				for i, p := range PercentileValues {
					key := strconv.FormatFloat(p, 'f', 6, 64)
					want, ok := d.Latency.Printed[key]
					if !ok {
						t.Fatalf("%s %s: fio printed no percentile %q", j.Name, dirName, key)
					}
					if got[i] != want {
						t.Errorf("%s %s p%s: from bins %d ns, fio printed %d ns", j.Name, dirName, key, got[i], want)
					}
					checked++
				}
			}
		}
	}
	if checked < 3*len(PercentileValues) {
		t.Fatalf("only %d percentiles compared", checked)
	}
}

func TestFioErrorsCarryFioText(t *testing.T) {
	e := requireFio(t)
	small := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small).CombinedOutput(); err != nil {
		t.Fatalf("mounting a 1 MiB tmpfs to provoke ENOSPC (tests run as root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", small).Run() })
	job, err := Render(Run{Name: "fill", Engine: "psync", BlockSizeBytes: 65536, ReadPercent: 0, Jobs: []Job{{IODepth: 1}}},
		Layout{Directory: small, BytesPerJob: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), "fill", job)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("want a *RunError, got %v", err)
	}
	if !strings.Contains(err.Error(), "No space left on device") {
		t.Fatalf("error does not carry fio's ENOSPC text: %v", err)
	}

	// A read-only file system: fio cannot lay out its file.
	ro := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro).CombinedOutput(); err != nil {
		t.Fatalf("mounting a read-only tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	job, err = Render(Run{Name: "readonly", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Runtime: time.Second, Jobs: []Job{{IODepth: 1}}},
		Layout{Directory: ro, BytesPerJob: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), "readonly", job)
	if err == nil || !strings.Contains(err.Error(), "Read-only file system") {
		t.Fatalf("want fio's 'Read-only file system', got %v", err)
	}
}

func TestInterruptedRunKeepsPartialResult(t *testing.T) {
	e := requireFio(t)
	job, err := Render(Run{Name: "long", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
		Runtime: 60 * time.Second, Jobs: []Job{{IODepth: 1, ReadIOPS: 200}}}, Layout{Directory: t.TempDir(), BytesPerJob: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	res, err := e.Run(ctx, "long", job)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatal("run not marked interrupted")
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("fio did not stop promptly on SIGTERM")
	}
	if res.Output.Jobs[0].Read.IOs == 0 {
		t.Fatal("interrupted run reported no I/O")
	}
}

func TestVersion(t *testing.T) {
	e := requireFio(t)
	v, err := e.Version(context.Background())
	if err != nil || !strings.HasPrefix(v, "fio-") {
		t.Fatalf("version %q, %v", v, err)
	}
	if _, err := (Executor{Binary: filepath.Join(t.TempDir(), "nofio")}).Version(context.Background()); err == nil {
		t.Fatal("missing binary not reported")
	}
}
