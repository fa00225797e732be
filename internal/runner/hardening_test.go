package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

func TestReadyValidate(t *testing.T) {
	cases := []struct {
		name string
		r    protocol.Ready
		want string
	}{
		{"measured offset", protocol.Ready{Client: 3, ClockOffset: -2 * time.Second, ClockOffsetUncertainty: time.Millisecond}, ""},
		{"negative client", protocol.Ready{Client: -1}, "client index -1"},
		{"client beyond the API limit", protocol.Ready{Client: results.MaxClients}, "client index 1000"},
		{"negative preconditioning", protocol.Ready{Precondition: -time.Second}, "negative preconditioning"},
		{"offset beyond a day", protocol.Ready{ClockOffset: protocol.MaxClockOffset + 1}, "clock offset"},
		{"offset beyond a day behind", protocol.Ready{ClockOffset: -protocol.MaxClockOffset - 1}, "clock offset"},
		{"negative uncertainty", protocol.Ready{ClockOffsetUncertainty: -1}, "uncertainty"},
		{"measured fio start-up", protocol.Ready{FioStartup: 80 * time.Millisecond}, ""},
		{"negative fio start-up", protocol.Ready{FioStartup: -1}, "fio start-up"},
		{"fio start-up beyond its bound", protocol.Ready{FioStartup: protocol.MaxFioStartup + 1}, "fio start-up"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Validate()
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// fixedClock reports a measured offset (or fails).
type fixedClock struct {
	offset time.Duration
	err    error
}

func (c fixedClock) ClockOffset(context.Context) (time.Duration, time.Duration, error) {
	return c.offset, time.Millisecond, c.err
}

// runOneStep runs one client through one short rate step and the done
// order, over a file exchange, and returns its ready report and result.
func runOneStep(t *testing.T, vol protocol.Volume, now func() time.Time, clock Clock) (protocol.Ready, results.ClientStep, error) {
	t.Helper()
	dir := t.TempDir()
	x := FileExchange{Dir: filepath.Join(dir, "exchange"), Poll: 5 * time.Millisecond}
	r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 2},
		Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(2 << 20)),
			IOEngine: ptr(workload.PSync), IODepth: ptr(int32(1))}),
		Volume: vol}, Coordinator: x, Publisher: x, WorkDir: filepath.Join(dir, "work"), Now: now, Clock: clock, Waiter: waiter(t), statfs: roomy}
	errc := make(chan error, 1)
	go func() { errc <- r.Run(context.Background()) }()
	var ready protocol.Ready
	awaitRunner(t, func() (ok bool, err error) { ready, ok, err = x.ReadReady(0); return ok, err })
	if ready.Error != "" {
		return ready, results.ClientStep{}, <-errc
	}
	start := time.Now().Add(time.Second).Truncate(time.Millisecond)
	if err := x.WriteOrder(protocol.StepOrder{StartAt: start, Step: plan.Step{OfferedIOPS: 50}, Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	var res results.ClientStep
	awaitRunner(t, func() (ok bool, err error) { res, ok, err = x.ReadResult(0, 0); return ok, err })
	if err := x.WriteOrder(protocol.StepOrder{Index: 1, Done: true}); err != nil {
		t.Fatal(err)
	}
	return ready, res, <-errc
}

// TestStepsStartOnTheConductorsClock runs a client whose clock is skewed:
// with the offset measured it starts at the ordered instant of the
// conductor's clock and reports its start on that clock.
func TestStepsStartOnTheConductorsClock(t *testing.T) {
	requireFio(t)
	cases := []struct {
		name       string
		skew       time.Duration
		clock      Clock
		wantOffset time.Duration
		wantError  string
	}{
		{"same clock", 0, nil, 0, ""},
		{"runner 4 s ahead", 4 * time.Second, fixedClock{offset: 4 * time.Second}, 4 * time.Second, ""},
		{"runner 3 s behind", -3 * time.Second, fixedClock{offset: -3 * time.Second}, -3 * time.Second, ""},
		{"offset not measured", 0, fixedClock{err: errors.New("no Date header")}, 0, "no Date header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := func() time.Time { return time.Now().Add(c.skew) }
			ready, res, err := runOneStep(t, protocol.Volume{Path: t.TempDir()}, now, c.clock)
			if err != nil {
				t.Fatal(err)
			}
			if ready.ClockOffset != c.wantOffset || ready.ClockOffsetError != c.wantError {
				t.Fatalf("ready report %+v", ready)
			}
			// fio holds its I/O until the instant; its timestamps are
			// whole milliseconds.
			if d := res.ActualStart.Sub(res.PlannedStart); d < -time.Millisecond || d > 100*time.Millisecond {
				t.Fatalf("started %s after the ordered instant (conductor's clock)", d)
			}
			if d := res.End.Sub(res.ActualStart); d < time.Second || d > 10*time.Second {
				t.Fatalf("end %s after start", d)
			}
		})
	}
}

// TestSubdirConfinesAndCleansUp runs a client confined to a subdirectory of
// a volume holding other data: the other data survives, the client's files
// are removed when it is done.
func TestSubdirConfinesAndCleansUp(t *testing.T) {
	requireFio(t)
	cases := []struct {
		name          string
		shared        bool
		preexisting   os.FileMode // the subdirectory exists with this mode, with files of its own
		remove        bool
		wantSubdirEnd bool
		wantErr       string
	}{
		{"new subdirectory removed", false, 0, true, false, ""},
		{"shared: client directory and subdirectory removed", true, 0, true, false, ""},
		{"kept without RemoveWhenDone", false, 0, false, true, ""},
		{"an existing subdirectory open to others is refused", false, 0o755, true, true, "is not this runner's"},
		{"an existing job file is never written", false, 0o700, true, true, "job1.dat already exists on the volume"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mount := t.TempDir()
			outside := filepath.Join(mount, "job0.dat") // same name as a job file, outside the subdirectory
			mustWrite(t, outside, "tenant data")
			sub := filepath.Join(mount, "bench", "run1")
			notes, theirs := filepath.Join(sub, "notes.txt"), filepath.Join(sub, "job1.dat")
			if c.preexisting != 0 {
				if err := os.MkdirAll(sub, c.preexisting); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(sub, c.preexisting); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, notes, "theirs")
				mustWrite(t, theirs, "theirs too")
			}
			_, res, err := runOneStep(t, protocol.Volume{Path: mount, Shared: c.shared, Subdir: "bench/run1", RemoveWhenDone: c.remove}, time.Now, nil)
			if b, rerr := os.ReadFile(outside); rerr != nil || string(b) != "tenant data" {
				t.Fatalf("a file outside the subdirectory was touched: %q %v", b, rerr)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want %q", err, c.wantErr)
				}
				for f, want := range map[string]string{notes: "theirs", theirs: "theirs too"} {
					if b, rerr := os.ReadFile(f); rerr != nil || string(b) != want {
						t.Fatalf("%s was touched: %q %v", f, b, rerr)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Read.IOs == 0 {
				t.Fatal("no I/O")
			}
			_, err = os.Stat(sub)
			if exists := err == nil; exists != c.wantSubdirEnd {
				t.Fatalf("subdirectory exists after the run: %v, want %v", exists, c.wantSubdirEnd)
			}
			if _, err := os.Stat(filepath.Join(mount, "bench")); err != nil {
				t.Fatalf("the subdirectory's parent was removed: %v", err)
			}
			if !c.remove {
				fi, err := os.Stat(sub)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("subdirectory mode %v, want 0700 (%v)", fi.Mode(), err)
				}
			}
		})
	}
}

func TestSubdirIsConfined(t *testing.T) {
	mount := t.TempDir()
	mustWrite(t, filepath.Join(mount, "afile"), "x")
	if err := os.Symlink("..", filepath.Join(mount, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(mount, "here")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ subdir, want string }{
		{"../elsewhere", "not a relative path inside the volume"},
		{"/etc", "not a relative path inside the volume"},
		{".", "not a relative path inside the volume"},
		{"up/x", "cannot create directory " + filepath.Join(mount, "up/x")},
		{"here", "is not a directory"},
		{"afile/sub", "cannot create directory " + filepath.Join(mount, "afile/sub") + " as uid"},
		{"ok/deeper", ""},
	}
	for _, c := range cases {
		t.Run(c.subdir, func(t *testing.T) {
			r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
				Workload: spec(t, "rand-read", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(1 << 20))}),
				Volume:   protocol.Volume{Path: mount, Subdir: c.subdir}}, statfs: roomy}
			l, err := r.layout()
			if c.want == "" {
				if err != nil || l.Directory != filepath.Join(mount, c.subdir) {
					t.Fatalf("layout %+v, %v", l, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(mount), "x")); err == nil {
		t.Fatal("a directory was created outside the volume")
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// layoutWatchingClock is a Clock that notes whether the client's first file
// was already laid out when the measurement began.
type layoutWatchingClock struct {
	file      string
	laidOutAt chan bool
}

func (c layoutWatchingClock) ClockOffset(context.Context) (time.Duration, time.Duration, error) {
	_, err := os.Stat(c.file)
	c.laidOutAt <- err == nil
	return 0, time.Millisecond, nil
}

// TestClockMeasuredWhileLayingOut: the clock offset, which waits for the
// API server's second to change, is measured while the files are laid
// out, not after.
func TestClockMeasuredWhileLayingOut(t *testing.T) {
	requireFio(t)
	vol := t.TempDir()
	clock := layoutWatchingClock{file: filepath.Join(vol, "job0.dat"), laidOutAt: make(chan bool, 1)}
	ready, _, err := runOneStep(t, protocol.Volume{Path: vol}, time.Now, clock)
	if err != nil {
		t.Fatal(err)
	}
	if ready.ClockOffsetUncertainty != time.Millisecond {
		t.Fatalf("the measured offset was not reported: %+v", ready)
	}
	if <-clock.laidOutAt {
		t.Error("the clock was measured after the layout")
	}
}
