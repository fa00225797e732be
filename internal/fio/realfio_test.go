package fio

import (
	"context"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/test/asroot"
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
		// A database log: its fdatasync calls have a histogram of their own.
		{Name: "log-fdatasync", Engine: "sync", BlockSizeBytes: 8192, ReadPercent: 0, Sync: "fdatasync", SyncEvery: 1,
			Runtime: 2 * time.Second, Seed: 44, Jobs: []Job{{IODepth: 1, WriteIOPS: 200}}},
	}
	checked, syncs := 0, 0
	for _, r := range runs {
		dir := t.TempDir()
		res := runFio(t, e, r, Layout{Directory: dir, BytesPerJob: 32 << 20})
		for _, j := range res.Output.Jobs {
			if r.Sync != "" {
				// One call after each write; the last write may miss its.
				if n, w := j.Sync.IOs, j.Write.IOs; n == 0 || n > w || w-n > 1 {
					t.Fatalf("%s: %d fdatasync calls after %d writes", j.Name, n, w)
				}
				syncs++
			}
			for dirName, d := range map[string]DirResult{"read": j.Read, "write": j.Write, "sync": j.Sync} {
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
	if checked < 5*len(PercentileValues) || syncs != 1 {
		t.Fatalf("only %d percentiles compared, %d jobs with sync calls", checked, syncs)
	}
}

func TestFioErrorsCarryFioText(t *testing.T) {
	e := requireFio(t)
	if asroot.Rerun(t) { // it mounts small file systems
		return
	}
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
	// Interrupt once fio runs its job: its first status report (written
	// after a second of I/O) says so. A SIGTERM during fio's start, before
	// it handles the signal, would kill it without a report.
	e.Timeline = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if fi, err := os.Stat(filepath.Join(e.WorkDir, "long.json")); err == nil && fi.Size() > 0 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
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

// sourceOrderThreshold evaluates fio's percentile threshold in the order its
// source is written, (long double) p / 100.0 * n, which is not what the fio
// binary computes. The test below uses it only to pick percentiles where
// the two orders disagree, so that real fio decides between them.
func sourceOrderThreshold(p float64, n uint64) *big.Float {
	q := new(big.Float).SetPrec(thresholdPrec).SetFloat64(p)
	q.Quo(q, new(big.Float).SetPrec(thresholdPrec).SetInt64(100))
	return q.Mul(q, new(big.Float).SetPrec(thresholdPrec).SetUint64(n))
}

// TestPercentileTiesFollowFioBinary runs fio for exactly 50 I/Os and asks it
// for the percentiles whose threshold in the source's order is a hair above
// the integer p × 50 / 100 (p30, p54 and p60). Whenever the cumulative count
// lands exactly on that integer (a tie), that order and the binary's pick
// different bins; every percentile must still equal fio's, and ties must
// have been seen, or the runs decided nothing.
func TestPercentileTiesFollowFioBinary(t *testing.T) {
	e := requireFio(t)
	const n = 50
	var ps []string
	var pv []float64
	for p := 2.0; p < 100; p += 2 {
		k := new(big.Float).SetUint64(uint64(p) * n / 100)
		if sourceOrderThreshold(p, n).Cmp(k) > 0 {
			pv = append(pv, p)
			ps = append(ps, strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	if len(pv) < 3 {
		t.Fatalf("only %d discriminating percentiles for %d samples", len(pv), n)
	}
	ties := 0
	for run := 0; run < 40 && ties < 3; run++ {
		dir := t.TempDir()
		job := strings.Join([]string{"[global]", "ioengine=psync", "rw=randread", "bs=4k", "size=4m",
			"norandommap=1", "randrepeat=0", "randseed=" + strconv.Itoa(run+1), "number_ios=" + strconv.Itoa(n),
			"percentile_list=" + strings.Join(ps, ":"),
			"[ties]", "filename=" + filepath.Join(dir, "ties.dat"), ""}, "\n")
		res, err := e.Run(context.Background(), "ties", job)
		if err != nil {
			t.Fatal(err)
		}
		d := res.Output.Jobs[0].Read
		if d.Latency.Count != n {
			t.Fatalf("fio did %d reads, want %d", d.Latency.Count, n)
		}
		got := d.Latency.Hist.Percentiles(pv)
		var cum uint64
		hit := map[uint64]bool{}
		for _, b := range d.Latency.Hist.Bins {
			cum += b.Count
			hit[cum] = true
		}
		for i, p := range pv {
			key := strconv.FormatFloat(p, 'f', 6, 64)
			want, ok := d.Latency.Printed[key]
			if !ok {
				t.Fatalf("fio printed no percentile %q: %v", key, d.Latency.Printed)
			}
			if got[i] != want {
				t.Errorf("run %d p%s: from bins %d ns, fio printed %d ns", run, key, got[i], want)
			}
			if hit[uint64(p)*n/100] {
				ties++
			}
		}
	}
	if ties == 0 {
		t.Fatal("no cumulative count landed on a threshold in 40 runs: the test decided nothing")
	}
	t.Logf("%d ties decided", ties)
}

// TestPoissonArrivalsSpaceIOsRandomly runs one rated job with uniform and
// one with Poisson arrivals on real fio, logging every completion's time
// (test-only log options appended to the rendered job). At 100 IOPS the
// uniform gaps stay near 10 ms (0.99 of them within 5..15 ms measured here,
// at fio's 1 ms log resolution), the Poisson gaps are exponential (0.46
// measured, 0.38 in theory); both keep the rate on average.
func TestPoissonArrivalsSpaceIOsRandomly(t *testing.T) {
	e := requireFio(t)
	for _, c := range []struct {
		poisson          bool
		minNear, maxNear float64
		job              Job
		name             string
	}{
		{false, 0.7, 1, Job{IODepth: 4, ReadIOPS: 100}, "uniform"},
		{true, 0, 0.6, Job{IODepth: 4, ReadIOPS: 100}, "poisson-iops"},
		{true, 0, 0.6, Job{IODepth: 4, ReadBytesPerSec: 100 * 4096}, "poisson-bytes"},
	} {
		r := Run{Name: c.name, Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
			Runtime: 3 * time.Second, Poisson: c.poisson, Seed: 5, Jobs: []Job{c.job}}
		job, err := Render(r, Layout{Directory: t.TempDir(), BytesPerJob: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		logs := t.TempDir()
		job += "write_lat_log=" + filepath.Join(logs, "lat") + "\nlog_avg_msec=0\n"
		res, err := e.Run(context.Background(), c.name, job)
		if err != nil {
			t.Fatal(err)
		}
		// ±15 % of 300 I/Os is over 2.5 standard deviations of a Poisson
		// count, and a loaded machine issues late, never early.
		if got := res.Output.Jobs[0].Read.IOs; got < 255 || got > 345 {
			t.Errorf("%s: %d reads in 3 s at 100 IOPS, want 300 ± 15 %%", c.name, got)
		}
		data, err := os.ReadFile(filepath.Join(logs, "lat_clat.1.log"))
		if err != nil {
			t.Fatal(err)
		}
		var times []float64
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			ms, err := strconv.ParseFloat(strings.TrimSpace(strings.SplitN(line, ",", 2)[0]), 64)
			if err != nil {
				t.Fatalf("%s: log line %q: %v", c.name, line, err)
			}
			times = append(times, ms)
		}
		// The share of completion gaps within half the nominal gap (10 ms)
		// of it: nearly all for even spacing, e^-0.5 − e^-1.5 ≈ 0.38 for
		// exponential gaps. Unlike a coefficient of variation it does not
		// swing on the few long gaps a loaded machine adds.
		near := 0
		for i := 1; i < len(times); i++ {
			if g := times[i] - times[i-1]; g >= 5 && g <= 15 {
				near++
			}
		}
		share := float64(near) / float64(len(times)-1)
		t.Logf("%s: %.2f of completion gaps within 5..15 ms", c.name, share)
		if share < c.minNear || share > c.maxNear {
			t.Errorf("%s: %.2f of completion gaps within 5..15 ms, want %.2f..%.2f", c.name, share, c.minNear, c.maxNear)
		}
	}
}

// TestBeganIsWhenTheMeasurementStarted checks Result.Began against the
// instants around the run: fio takes a while to start its jobs, then
// measures for exactly the runtime, so Began lies after the launch and a
// runtime before the run returned.
func TestBeganIsWhenTheMeasurementStarted(t *testing.T) {
	e := requireFio(t)
	e.Timeline = true
	const runtime = 3 * time.Second
	launched := time.Now()
	res := runFio(t, e, Run{Name: "began", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
		Runtime: runtime, Jobs: []Job{{IODepth: 1, ReadIOPS: 200}, {IODepth: 1, ReadIOPS: 200}}},
		Layout{Directory: t.TempDir(), BytesPerJob: 4 << 20})
	returned := time.Now()
	if res.Began.IsZero() {
		t.Fatal("no start instant from a run with a timeline")
	}
	// Milliseconds: fio's timestamps are whole milliseconds.
	if started := res.Began.Sub(launched); started < -time.Millisecond || started > time.Second {
		t.Errorf("measurement began %s after the launch; want within [0, 1s]", started)
	}
	if tail := returned.Sub(res.Began.Add(runtime)); tail < -time.Millisecond {
		t.Errorf("the run returned %s before its measurement could have ended", -tail)
	}
	t.Logf("began %s after the launch; returned %s after the measurement ended", res.Began.Sub(launched), returned.Sub(res.Began.Add(runtime)))
}

// TestMain makes the test binary a Run.Waiter, as the runner binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WaitUntilCommand {
		if err := WaitUntil(context.Background(), os.Args[2:], os.Stdout); err != nil {
			_, _ = os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHeldRunIsReleasedOnTheInstant launches fio ahead of an instant: no
// job is released before it, Released says when each was while the run
// goes on, and the result says when the first was.
func TestHeldRunIsReleasedOnTheInstant(t *testing.T) {
	e := requireFio(t)
	e.Timeline = true
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 2
	at := time.Now().Add(1500 * time.Millisecond)
	run := Run{Name: "held", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
		Runtime: 2 * time.Second, StartAt: at, Waiter: self,
		Jobs: []Job{{IODepth: 1, ReadIOPS: 100}, {IODepth: 1, ReadIOPS: 100}}}
	job, err := Render(run, Layout{Directory: t.TempDir(), BytesPerJob: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := e.Run(context.Background(), run.Name, job)
		done <- ran{res, err}
	}()
	var seen, last time.Time
	for deadline := time.After(time.Minute); seen.IsZero(); time.Sleep(time.Millisecond) {
		if t, ok := Released(e.WorkDir, run.Name, jobs); ok {
			seen, last = time.Now(), t
		}
		select {
		case r := <-done:
			done <- r
			if seen.IsZero() {
				t.Fatalf("fio ended before Released saw its jobs released: %v", r.err)
			}
		case <-deadline:
			t.Fatal("no release seen within a minute")
		default:
		}
	}
	if seen.Before(at) || last.Before(at) {
		t.Errorf("released at %s, seen %s, before the instant %s", last, seen, at)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if res.Released.IsZero() || res.Released.Before(at) || res.Released.After(last) {
		t.Errorf("result says the first job was released at %s; the instant was %s, the last released at %s", res.Released, at, last)
	}
	// fio's own clock: the measurement began as the jobs were released.
	if d := res.Began.Sub(res.Released); d < -time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("measurement began %s after the release", d)
	}
	if left, _ := filepath.Glob(filepath.Join(e.WorkDir, "*.prerun.txt")); len(left) > 0 {
		t.Errorf("the waiters' records were left behind: %v", left)
	}
	if _, ok := Released(e.WorkDir, run.Name, jobs); ok {
		t.Error("Released still answers for a run that ended")
	}
}

// TestRelativePaths runs fio from a relative binary path into a relative
// work directory: fio works in that directory, and both still resolve.
func TestRelativePaths(t *testing.T) {
	abs := requireFio(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs.Binary, filepath.Join("bin", "fio")); err != nil {
		t.Fatal(err)
	}
	e := Executor{Binary: filepath.Join("bin", "fio"), WorkDir: "work"}
	res := runFio(t, e, Run{Name: "relative", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100,
		Runtime: 500 * time.Millisecond, Jobs: []Job{{IODepth: 1, ReadIOPS: 100}}},
		Layout{Directory: filepath.Join(dir, "data"), BytesPerJob: 1 << 20})
	if res.Output == nil || len(res.Output.Jobs) != 1 {
		t.Fatalf("no report: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "relative.fio")); err != nil {
		t.Errorf("the job file is not in the work directory: %v", err)
	}
}

// TestStoppingAHeldRun stops fio while its jobs wait for their instant:
// the run ends then, not at the instant, and no waiter is left behind.
func TestStoppingAHeldRun(t *testing.T) {
	e := requireFio(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(30 * time.Second)
	job, err := Render(Run{Name: "stopped", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100,
		Runtime: time.Second, StartAt: at, Waiter: self, Jobs: []Job{{IODepth: 1}, {IODepth: 1}}},
		Layout{Directory: t.TempDir(), BytesPerJob: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Stop it once both jobs wait.
		for range 10_000 {
			if files, _ := filepath.Glob(filepath.Join(e.WorkDir, "stopped-job*.prerun.txt")); len(files) == 2 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	res, err := e.Run(ctx, "stopped", job)
	if time.Now().After(at) {
		t.Fatal("the run ended at the instant it was held for, not when stopped")
	}
	if err == nil && !res.Interrupted {
		t.Fatalf("a stopped run reported neither an error nor an interruption: %+v", res)
	}
	instant := strconv.FormatInt(at.UnixNano(), 10)
	out, _ := exec.Command("pgrep", "-f", instant).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("waiters left running: pids %s", out)
	}
}
