package runner

import (
	"context"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/workload"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
	tib = int64(1) << 40
)

func TestSpaceDemandCheck(t *testing.T) {
	g := uint64(gib)
	cases := []struct {
		name string
		d    spaceDemand
		s    fsSpace
		want []string // parts of the refusal; nil: it fits
		not  []string // what the refusal must not say
	}{
		{name: "fits", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1}, s: fsSpace{avail: 10 * g, size: 100 * g}},
		{name: "exact fit", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1}, s: fsSpace{avail: 2 * g, size: 100 * g}},
		{name: "one byte short", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1, dir: "/v/d"}, s: fsSpace{avail: 2*g - 1, size: 100 * g},
			want: []string{"not enough free space for the benchmark's files in /v/d", "they need 2 GiB (2147483648 bytes) more (2 job files × 1 GiB)",
				"and 2.0 GiB (2147483647 bytes) is free", "lower workload.workingSetPerClient, or give the volume more space (storage.size)"},
			not: []string{"clients.count", "application", "already"}},
		{name: "existing claim: the reserve stays free", d: spaceDemand{bytesPerJob: 6 * gib, jobs: 2, clients: 1, reserve: true}, s: fsSpace{avail: 20 * g, size: 100 * g},
			want: []string{"they need 12 GiB (12884901888 bytes) more", "20 GiB (21474836480 bytes) is free",
				"while 10 GiB (10737418240 bytes), 10 % of the file system's 100 GiB, must stay free for the application",
				"lower workload.workingSetPerClient, or free space on the claim"}},
		{name: "existing claim: the reserve exactly kept", d: spaceDemand{bytesPerJob: 6 * gib, jobs: 2, clients: 1, reserve: true}, s: fsSpace{avail: 22 * g, size: 100 * g}},
		{name: "the benchmark's own volume keeps no reserve", d: spaceDemand{bytesPerJob: 6 * gib, jobs: 2, clients: 1}, s: fsSpace{avail: 12 * g, size: 100 * g}},
		{name: "existing claim already fuller than the reserve allows", d: spaceDemand{bytesPerJob: mib, jobs: 1, clients: 1, reserve: true}, s: fsSpace{avail: 5 * g, size: 100 * g},
			want: []string{"1 job file × 1 MiB", "5 GiB (5368709120 bytes) is free", "10 GiB (10737418240 bytes)"}},
		{name: "the reserve rounds up", d: spaceDemand{bytesPerJob: 901, jobs: 1, clients: 1, reserve: true}, s: fsSpace{avail: 1001, size: 1001},
			want: []string{"while 101 B (101 bytes), 10 % of the file system's 1001 B, must stay free"}},
		{name: "the reserve rounded up, kept", d: spaceDemand{bytesPerJob: 900, jobs: 1, clients: 1, reserve: true}, s: fsSpace{avail: 1001, size: 1001}},
		{name: "shared: every client lays out here", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 4}, s: fsSpace{avail: 7 * g, size: 100 * g},
			want: []string{"they need 8 GiB (8589934592 bytes) more (4 clients sharing the volume × 2 job files × 1 GiB)",
				"lower workload.workingSetPerClient or clients.count, or give the volume more space"}},
		{name: "shared: what the others laid out already is not free any more, nor needed", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 4, present: 6 * g}, s: fsSpace{avail: 2 * g, size: 100 * g}},
		{name: "shared: what is laid out is said", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 4, present: 6 * g}, s: fsSpace{avail: g, size: 100 * g},
			want: []string{"need 2 GiB (2147483648 bytes) more (4 clients sharing the volume × 2 job files × 1 GiB, less 6 GiB already laid out)"}},
		{name: "nothing to allocate fits a full volume", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1, present: 3 * g, reserve: true}, s: fsSpace{avail: 0, size: 100 * g}},
		{name: "a file system that reports no size: the benchmark's own volume is used", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1}, s: fsSpace{}},
		{name: "a file system that reports no size: an existing claim is refused", d: spaceDemand{bytesPerJob: gib, jobs: 2, clients: 1, reserve: true, dir: "/v/d"}, s: fsSpace{},
			want: []string{"the file system of /v/d reports no size", "2 GiB (2147483648 bytes)", "it writes nothing on this claim"}},
		{name: "64 TiB × 1000 clients on a shared existing claim", d: spaceDemand{bytesPerJob: tib, jobs: 64, clients: 1000, reserve: true},
			s:    fsSpace{avail: 1 << 60, size: math.MaxUint64},
			want: []string{"they need 62.5 PiB (70368744177664000 bytes) more (1000 clients sharing the volume × 64 job files × 1 TiB)", "(1844674407370955162 bytes)"}},
		{name: "64 TiB × 1000 clients fit on an exabyte volume", d: spaceDemand{bytesPerJob: tib, jobs: 64, clients: 1000, reserve: true},
			s: fsSpace{avail: 1 << 60, size: 1 << 60}},
		{name: "absurd sizes saturate rather than wrap", d: spaceDemand{bytesPerJob: math.MaxInt64, jobs: 64, clients: 1000}, s: fsSpace{avail: math.MaxUint64 - 1, size: math.MaxUint64},
			want: []string{"(18446744073709551615 bytes) more"}},
		{name: "absurd sizes fit nothing smaller", d: spaceDemand{bytesPerJob: math.MaxInt64, jobs: 2, clients: 1}, s: fsSpace{avail: math.MaxUint64 - 2, size: math.MaxUint64},
			want: []string{"(18446744073709551614 bytes) more"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.d.check(c.s)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused a layout that fits: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("a layout of %d bytes (%d present) fits in %+v", c.d.total(), c.d.present, c.s)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("refusal %q says %q", err, n)
				}
			}
			if len(err.Error()) > protocol.MaxErrorBytes/2 {
				t.Errorf("refusal of %d bytes", len(err.Error()))
			}
		})
	}
}

func TestReserveOf(t *testing.T) {
	for _, size := range []uint64{0, 1, 9, 10, 11, 100, 1001, 1 << 40, math.MaxUint64 - 1, math.MaxUint64} {
		// ⌈size × 10 / 100⌉, in big integers.
		want := new(big.Int).Mul(new(big.Int).SetUint64(size), big.NewInt(AppReservePercent))
		want.Add(want, big.NewInt(99)).Div(want, big.NewInt(100))
		if got := reserveOf(size); got != want.Uint64() {
			t.Errorf("reserveOf(%d) = %d, want %s", size, got, want)
		}
	}
}

func TestFreeSpaceOfARealDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := freeSpace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.size == 0 || s.avail > s.size {
		t.Fatalf("free space %+v", s)
	}
	if _, err := freeSpace(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing")) {
		t.Fatalf("a missing directory: %v", err)
	}
}

// TestPresentCountsWhatIsAllocated: a file fio will not allocate again
// counts up to a job's size; a sparse file, a link, another kind of file or
// a directory that is not a client's counts nothing.
func TestPresentCountsWhatIsAllocated(t *testing.T) {
	base := t.TempDir()
	write := func(path string, n int64) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	perJob := 512 * kib
	mine := filepath.Join(base, "client-000")
	write(filepath.Join(mine, "job0.dat"), mib) // counted up to perJob
	if err := os.WriteFile(filepath.Join(mine, "job1.dat"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(mine, "job1.dat"), mib); err != nil { // sparse: all to allocate
		t.Fatal(err)
	}
	write(filepath.Join(base, "elsewhere.dat"), mib)
	if err := os.Symlink(filepath.Join(base, "elsewhere.dat"), filepath.Join(mine, "job2.dat")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(base, "client-001", "job0.dat"), 256*kib)
	write(filepath.Join(base, "client-001", "job2.dat"), mib)
	write(filepath.Join(base, "client-007", "job0.dat"), mib) // beyond the plan's clients
	write(filepath.Join(base, "other", "job0.dat"), mib)      // not a client's directory
	if err := os.Symlink(filepath.Join(base, "client-001"), filepath.Join(base, "client-002")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		shared bool
		want   int64
	}{
		{"own files only", false, perJob},
		{"shared: the others' files too", true, perJob + 256*kib + perJob},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 3, JobsPerClient: 3}, Volume: protocol.Volume{Path: base, Shared: c.shared}}}
			if got := r.present(mine, perJob); got != uint64(c.want) {
				t.Fatalf("present %d bytes, want %d", got, c.want)
			}
		})
	}
}

// spaceRunner is a runner on vol, whose files would not fit when
// workingSet is too large.
func spaceRunner(t *testing.T, vol protocol.Volume, clients, jobs int32, workingSet int64) *Runner {
	t.Helper()
	return &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: clients, JobsPerClient: jobs},
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(workingSet), IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Volume:   vol}}
}

// roomy is a file system with 1 PiB free of 2 PiB, for the tests whose
// subject is not free space: on a host with less than the application's
// reserve free, a layout under a subdirectory would otherwise be refused,
// rightly, and the test would fail on the host, not on the code.
func roomy(string) (fsSpace, error) { return fsSpace{avail: 1 << 50, size: 2 << 50}, nil }

type layoutCase struct {
	name    string
	shared  bool
	subdir  string
	clients int32
	ws      int64
	want    string // "" fits
}

// TestLayoutRefusesWhatDoesNotFit: the layout is refused before anything is
// written when the files would not fit in the file system's free space
// (times the clients sharing it), or would eat the application's reserve
// on an existing claim.
func TestLayoutRefusesWhatDoesNotFit(t *testing.T) {
	probe, err := freeSpace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const bs = 1 << 20 // well above the profile's block size, a multiple of it
	round := func(v uint64) int64 { return max(int64(v)/bs*bs, bs) }
	// Between the figures below and what the file system has free there is
	// room for what other processes write meanwhile (several GiB here).
	cases := []layoutCase{
		{"64 TiB on an existing claim", false, "storagebench-t-0123abcd", 1, 64 * tib, "must stay free for the application"},
		{"64 TiB on the benchmark's own volume", false, "", 1, 64 * tib, "give the volume more space"},
		{"a working set that fits", false, "", 1, round(probe.avail / 4), ""},
		{"fits once, not three times on a shared volume", true, "", 3, round(probe.avail * 2 / 5), "3 clients sharing the volume"},
		{"fits once on a shared volume", true, "", 1, round(probe.avail * 2 / 5), ""},
	}
	if r := reserveOf(probe.size); probe.avail > r+probe.size/20 {
		// What leaves half the reserve free: fits the free space, not the
		// application's reserve.
		ws := round(probe.avail - r/2)
		cases = append(cases,
			layoutCase{"fits the free space, not the reserve of an existing claim", false, "storagebench-t-0123abcd", 1, ws, "must stay free for the application"},
			layoutCase{"the same on the benchmark's own volume", false, "", 1, ws, ""})
	} else {
		t.Logf("the test's file system has less than %d %% free: the reserve cases are left out", AppReservePercent+5)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mount := t.TempDir()
			r := spaceRunner(t, protocol.Volume{Path: mount, Shared: c.shared, Subdir: c.subdir, RemoveWhenDone: c.subdir != ""}, c.clients, 2, c.ws)
			_, err := r.layout()
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused %d bytes per client on %+v: %v", c.ws, probe, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "not enough free space") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("layout of %d bytes per client on %+v: %v, want a refusal saying %q", c.ws, probe, err, c.want)
			}
			// Nothing but the (empty) directories was written.
			_ = filepath.WalkDir(mount, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("%s written", path)
				}
				return nil
			})
		})
	}
}

// fakeFio is a fio that answers --version and fails anything else, leaving
// a mark that it was asked.
func fakeFio(t *testing.T) (bin, mark string) {
	t.Helper()
	dir := t.TempDir()
	bin, mark = filepath.Join(dir, "fio"), filepath.Join(dir, "asked-to-run")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo fio-3.33; exit 0; fi\n: > '" + mark + "'\necho 'fake fio: not laying anything out' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, mark
}

// TestRunReportsTheSpaceRefusal: a client whose files do not fit reports it
// in its ready report, as a preparation error, before fio lays out or
// preconditions anything, and removes the directory it created.
func TestRunReportsTheSpaceRefusal(t *testing.T) {
	for _, precond := range []bool{false, true} {
		name := map[bool]string{false: "layout", true: "precondition"}[precond]
		t.Run(name, func(t *testing.T) {
			bin, mark := fakeFio(t)
			dir, mount := t.TempDir(), t.TempDir()
			x := FileExchange{Dir: filepath.Join(dir, "exchange")}
			r := spaceRunner(t, protocol.Volume{Path: mount, Shared: true, Subdir: "storagebench-t-0123abcd", RemoveWhenDone: true}, 2, 4, 64*tib)
			r.Plan.Fio, r.Plan.Precond = bin, precond
			r.Coordinator, r.Publisher, r.WorkDir = x, x, filepath.Join(dir, "work")
			err := r.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "not enough free space") {
				t.Fatalf("run ended with %v, want the space refusal", err)
			}
			ready, ok, rerr := x.ReadReady(0)
			if rerr != nil || !ok {
				t.Fatalf("no ready report: %v", rerr)
			}
			for _, w := range []string{"not enough free space", "2 clients sharing the volume × 4 job files × 16 TiB", "must stay free for the application",
				"lower workload.workingSetPerClient or clients.count, or free space on the claim"} {
				if !strings.Contains(ready.Error, w) {
					t.Errorf("ready error %q does not say %q", ready.Error, w)
				}
			}
			if _, err := os.Stat(mark); err == nil {
				t.Error("fio was run to lay out or precondition the files")
			}
			if entries, err := os.ReadDir(mount); err != nil || len(entries) != 0 {
				t.Errorf("left on the volume: %v %v", entries, err)
			}
		})
	}
}

// TestBlockDeviceSmallerThanTheJobs: a Block layout is refused when its
// jobs' ranges end past the device's end.
func TestBlockDeviceSmallerThanTheJobs(t *testing.T) {
	cases := []struct {
		name string
		d    deviceDemand
		size uint64
		want string
	}{
		{"fits", deviceDemand{bytesPerJob: gib, jobs: 2, clients: 1}, uint64(2 * gib), ""},
		{"one byte short", deviceDemand{bytesPerJob: gib, jobs: 2, clients: 1, device: "/dev/x"}, uint64(2*gib - 1),
			"block device /dev/x holds 2.0 GiB (2147483647 bytes), less than the 2 GiB (2147483648 bytes) the benchmark's jobs touch (2 jobs × 1 GiB from offset 0): lower workload.workingSetPerClient, or use a larger volume"},
		{"shared: consecutive ranges", deviceDemand{bytesPerJob: gib, jobs: 2, clients: 3}, uint64(5 * gib), "3 clients sharing the device × 2 jobs × 1 GiB"},
		{"shared: fits", deviceDemand{bytesPerJob: gib, jobs: 2, clients: 3}, uint64(6 * gib), ""},
		{"64 TiB × 1000 clients", deviceDemand{bytesPerJob: tib, jobs: 64, clients: 1000}, 1 << 62, ""},
		{"saturated", deviceDemand{bytesPerJob: math.MaxInt64, jobs: 64, clients: 1000}, math.MaxUint64 - 1, "(18446744073709551615 bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.d.check(c.size)
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	t.Run("the size of a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f")
		mustWrite(t, f, "12345")
		if n, err := deviceSize(f); err != nil || n != 5 {
			t.Fatalf("size %d, %v", n, err)
		}
		if _, err := deviceSize(f + "x"); err == nil {
			t.Fatal("no error for a missing device")
		}
	})
	t.Run("layout on a real block device (an unattached loop device, where one can be opened)", func(t *testing.T) {
		dev := ""
		for _, p := range []string{"/dev/loop0", "/dev/loop1", "/dev/loop7"} {
			fi, err := os.Stat(p)
			if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
				continue
			}
			if n, err := deviceSize(p); err == nil && n < uint64(64*tib) {
				dev = p
				break
			}
		}
		if dev == "" {
			t.Skip("no block device below 64 TiB that this user may open")
		}
		r := spaceRunner(t, protocol.Volume{Path: dev, Block: true}, 1, 2, 64*tib)
		if _, err := r.layout(); err == nil || !strings.Contains(err.Error(), "block device "+dev+" holds") {
			t.Fatalf("layout of 64 TiB on %s: %v", dev, err)
		}
	})
}

// TestSpaceRefusalReachesTheConductor: the refusal fails the run as any
// preparation error does, naming the client, and nothing is written.
func TestSpaceRefusalReachesTheConductor(t *testing.T) {
	requireFio(t)
	l := &Local{Name: "nospace", Dir: t.TempDir(), Precondition: true,
		Workload: spec(t, "rand-write", workload.Overrides{WorkingSetBytesPerClient: ptr(64 * tib)}),
		Topology: plan.Topology{Clients: 2, JobsPerClient: 2},
		Load:     plan.Load{Rate: &plan.RateSteps{Steps: []int64{100}}, StepDuration: 5 * time.Second}}
	out, err := l.Run(context.Background())
	if err == nil || out == nil || !strings.Contains(out.Failure, "could not prepare: not enough free space") ||
		!strings.Contains(out.Failure, "2 clients sharing the volume × 2 job files × 32 TiB") {
		t.Fatalf("run: %v; outcome %+v", err, out)
	}
	if len(out.Steps) != 0 {
		t.Fatalf("steps ran: %+v", out.Steps)
	}
	_ = filepath.WalkDir(l.VolumePath(), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("%s written", path)
		}
		return nil
	})
}
