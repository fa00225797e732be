package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/protocol"
)

// TestInProcessRemovalOnlyInItsOwnDirectory: the runner's own removal,
// when it exits, removes files only while the benchmark's directory is
// still a directory of its own, as `runner cleanup` decides: a directory
// swapped for a link to the application's files, or opened to others, is
// left alone, and so is everything it leads to.
func TestInProcessRemovalOnlyInItsOwnDirectory(t *testing.T) {
	const sub = "storagebench-t-0123abcd"
	cases := []struct {
		name   string
		change func(t *testing.T, mount, app string)
		want   string // in remove's error; "" removes
	}{
		{"unchanged: removed", func(*testing.T, string, string) {}, ""},
		{"swapped for a link to the application's directory", func(t *testing.T, mount, app string) {
			if err := os.Rename(filepath.Join(mount, sub), filepath.Join(mount, "moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(app, filepath.Join(mount, sub)); err != nil {
				t.Fatal(err)
			}
		}, "not this runner's"},
		{"opened to others", func(t *testing.T, mount, _ string) {
			if err := os.Chmod(filepath.Join(mount, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not this runner's"},
		{"gone: nothing to remove", func(t *testing.T, mount, _ string) {
			if err := os.RemoveAll(filepath.Join(mount, sub)); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mount := t.TempDir()
			app := filepath.Join(mount, "app")
			if err := os.Mkdir(app, 0o700); err != nil {
				t.Fatal(err)
			}
			appFiles := []string{filepath.Join(app, "job0.dat"), filepath.Join(app, "client-000", "job0.dat")}
			for _, f := range appFiles {
				if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, f, "application data")
			}
			for _, shared := range []bool{false, true} {
				r := spaceRunner(t, protocol.Volume{Path: mount, Shared: shared, Subdir: sub, RemoveWhenDone: true}, 1, 1, 1<<20)
				r.statfs = roomy
				l, err := r.layout()
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(l.Directory, "job0.dat"), "what fio wrote")
				c.change(t, mount, app)
				err = r.created.remove()
				for _, f := range appFiles {
					if b, err := os.ReadFile(f); err != nil || string(b) != "application data" {
						t.Fatalf("shared %v: the application's %s was touched: %q %v", shared, f, b, err)
					}
				}
				if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
					t.Fatalf("shared %v: remove: %v, want %q", shared, err, c.want)
				}
				if c.want == "" {
					if _, err := os.Lstat(filepath.Join(mount, sub)); err == nil {
						t.Fatalf("shared %v: the benchmark's directory is left", shared)
					}
				}
				// Start the next round from a clean volume.
				for _, p := range []string{filepath.Join(mount, sub), filepath.Join(mount, "moved")} {
					_ = os.Chmod(p, 0o700)
					if err := os.RemoveAll(p); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// cleanupCase sets up a volume for Cleanup and says what must come of it.
type cleanupCase struct {
	name string
	// skip, when it returns a reason, skips the case.
	skip func(t *testing.T) string
	// setup fills the volume vol (the benchmark's directory is vol/sub)
	// and returns the files outside it that must survive, with their
	// content, and the paths that must be gone.
	setup func(t *testing.T, vol, outside, sub string) (survive map[string]string, gone []string)
	// what the report must say
	files, dirs    int
	remaining      []string // "<sub>" stands for the benchmark's directory
	remainingCount int
	errorHas       string
	ok             bool
}

func dirs(t *testing.T, mode os.FileMode, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func notRoot(*testing.T) string {
	if os.Geteuid() == 0 {
		return "as root, who may remove anyway"
	}
	return ""
}

// immutable makes path immutable (chattr +i) until the test ends, or says
// why it cannot.
func immutable(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return "only root may make a file immutable"
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		return "no chattr"
	}
	if out, err := exec.Command(chattr, "+i", path).CombinedOutput(); err != nil {
		return fmt.Sprintf("chattr +i on this file system: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(chattr, "-i", path).Run() })
	return ""
}

func TestCleanup(t *testing.T) {
	twelve := func(t *testing.T, dir string) []string {
		var names []string
		for i := range 12 {
			names = append(names, fmt.Sprintf("job%02d.dat", i))
			mustWrite(t, filepath.Join(dir, names[i]), "x")
		}
		return names
	}
	stuckRemaining := func(sub string) []string {
		var r []string
		for i := range 10 {
			r = append(r, fmt.Sprintf("%s/stuck/job%02d.dat", sub, i))
		}
		return r
	}
	const sub = "storagebench-t-0123abcd"
	cases := []cleanupCase{
		{name: "nested files and directories", setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
			d := filepath.Join(vol, sub)
			dirs(t, 0o700, d)
			dirs(t, 0o755, filepath.Join(d, "client-000"), filepath.Join(d, "client-001"), filepath.Join(d, "a", "b", "c"), filepath.Join(d, "empty"))
			dirs(t, 0o500, filepath.Join(d, "a", "b", "c")) // a read-only directory of our own, empty
			for _, f := range []string{"client-000/job0.dat", "client-000/job1.dat", "client-001/job0.dat", "a/b/deep.dat"} {
				mustWrite(t, filepath.Join(d, f), "benchmark data")
			}
			mustWrite(t, filepath.Join(vol, "app.db"), "application data")
			mustWrite(t, filepath.Join(vol, sub+"-other"), "application data too")
			return map[string]string{filepath.Join(vol, "app.db"): "application data", filepath.Join(vol, sub+"-other"): "application data too"}, []string{d}
		}, files: 4, dirs: 7, ok: true},
		{name: "links are removed as links, their targets untouched", setup: func(t *testing.T, vol, outside, sub string) (map[string]string, []string) {
			d := filepath.Join(vol, sub)
			dirs(t, 0o700, d, filepath.Join(outside, "appdir"))
			mustWrite(t, filepath.Join(outside, "secret"), "outside the volume")
			mustWrite(t, filepath.Join(outside, "appdir", "job0.dat"), "outside the volume too")
			mustWrite(t, filepath.Join(vol, "app.db"), "application data")
			symlink(t, filepath.Join(outside, "secret"), filepath.Join(d, "to-a-file-outside"))
			symlink(t, filepath.Join(outside, "appdir"), filepath.Join(d, "client-000")) // a client's directory name
			symlink(t, "../app.db", filepath.Join(d, "to-the-volume"))
			symlink(t, ".", filepath.Join(d, "loop"))
			symlink(t, "nowhere", filepath.Join(d, "dangling"))
			return map[string]string{filepath.Join(outside, "secret"): "outside the volume", filepath.Join(outside, "appdir", "job0.dat"): "outside the volume too",
				filepath.Join(vol, "app.db"): "application data"}, []string{d}
		}, files: 5, dirs: 1, ok: true},
		{name: "a directory open to others is not ours", setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
			d := filepath.Join(vol, sub)
			dirs(t, 0o755, d)
			mustWrite(t, filepath.Join(d, "notes"), "theirs")
			return map[string]string{filepath.Join(d, "notes"): "theirs"}, nil
		}, remaining: []string{"<sub>"}, remainingCount: 1, errorHas: "not this runner's directory (owner uid " + fmt.Sprint(os.Getuid()) + ", mode 0755; want uid"},
		{name: "a directory of another user is not ours (as root, who may give it away)", skip: func(*testing.T) string {
			if os.Geteuid() != 0 {
				return "only root may give a directory to another user"
			}
			return ""
		}, setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
			d := filepath.Join(vol, sub)
			dirs(t, 0o700, d)
			mustWrite(t, filepath.Join(d, "notes"), "theirs")
			if err := os.Chown(d, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return map[string]string{filepath.Join(d, "notes"): "theirs"}, nil
		}, remaining: []string{"<sub>"}, remainingCount: 1, errorHas: "(owner uid 4242, mode 0700"},
		{name: "a link under the benchmark's name is not ours", setup: func(t *testing.T, vol, outside, sub string) (map[string]string, []string) {
			dirs(t, 0o700, filepath.Join(outside, "ours-elsewhere"))
			mustWrite(t, filepath.Join(outside, "ours-elsewhere", "job0.dat"), "elsewhere")
			symlink(t, filepath.Join(outside, "ours-elsewhere"), filepath.Join(vol, sub))
			return map[string]string{filepath.Join(outside, "ours-elsewhere", "job0.dat"): "elsewhere"}, nil
		}, remaining: []string{"<sub>"}, remainingCount: 1, errorHas: "a symbolic link, not a directory"},
		{name: "a file under the benchmark's name is not ours", setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
			mustWrite(t, filepath.Join(vol, sub), "a file")
			return map[string]string{filepath.Join(vol, sub): "a file"}, nil
		}, remaining: []string{"<sub>"}, remainingCount: 1, errorHas: "not a directory (mode -rw-r--r--)"},
		{name: "files that cannot be removed: a read-only parent (skipped as root, who may remove anyway)", skip: notRoot,
			setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
				d := filepath.Join(vol, sub)
				dirs(t, 0o700, d, filepath.Join(d, "stuck"))
				mustWrite(t, filepath.Join(d, "gone.dat"), "x")
				twelve(t, filepath.Join(d, "stuck"))
				dirs(t, 0o500, filepath.Join(d, "stuck"))
				t.Cleanup(func() { _ = os.Chmod(filepath.Join(d, "stuck"), 0o700) })
				return nil, []string{filepath.Join(d, "gone.dat")}
			}, files: 1, remaining: stuckRemaining(sub), remainingCount: 14, errorHas: "14 path(s) of the benchmark's directory left: removing " + sub + "/stuck/job"},
		{name: "files that cannot be removed: an immutable parent (as root, where chattr +i works)", skip: func(t *testing.T) string {
			if os.Geteuid() != 0 {
				return "only root may make a file immutable"
			}
			return ""
		}, setup: func(t *testing.T, vol, _, sub string) (map[string]string, []string) {
			d := filepath.Join(vol, sub)
			dirs(t, 0o700, d, filepath.Join(d, "stuck"))
			mustWrite(t, filepath.Join(d, "gone.dat"), "x")
			twelve(t, filepath.Join(d, "stuck"))
			if why := immutable(t, filepath.Join(d, "stuck")); why != "" {
				t.Skip(why)
			}
			return nil, []string{filepath.Join(d, "gone.dat")}
		}, files: 1, remaining: stuckRemaining(sub), remainingCount: 14, errorHas: "14 path(s) of the benchmark's directory left: removing " + sub + "/stuck/job"},
		{name: "a missing directory: nothing left", setup: func(t *testing.T, vol, _, _ string) (map[string]string, []string) {
			mustWrite(t, filepath.Join(vol, "app.db"), "application data")
			return map[string]string{filepath.Join(vol, "app.db"): "application data"}, nil
		}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != nil {
				if why := c.skip(t); why != "" {
					t.Skip(why)
				}
			}
			vol, outside := t.TempDir(), t.TempDir()
			survive, gone := c.setup(t, vol, outside, sub)
			rep := Cleanup(vol, sub)
			want := CleanupReport{RemovedFiles: c.files, RemovedDirs: c.dirs, Remaining: []string{}, RemainingCount: c.remainingCount}
			for _, r := range c.remaining {
				want.Remaining = append(want.Remaining, strings.ReplaceAll(r, "<sub>", sub))
			}
			got := rep
			got.Error = ""
			if !reflect.DeepEqual(got, want) {
				t.Errorf("report %+v, want %+v", rep, want)
			}
			if c.errorHas == "" && rep.Error != "" || !strings.Contains(rep.Error, c.errorHas) {
				t.Errorf("error %q, want %q", rep.Error, c.errorHas)
			}
			if rep.OK() != c.ok {
				t.Errorf("OK %v, want %v", rep.OK(), c.ok)
			}
			for f, content := range survive {
				if b, err := os.ReadFile(f); err != nil || string(b) != content {
					t.Errorf("%s was touched: %q %v", f, b, err)
				}
			}
			for _, f := range gone {
				if _, err := os.Lstat(f); err == nil {
					t.Errorf("%s is left", f)
				}
			}
			var line map[string]any
			if err := json.Unmarshal(rep.JSON(), &line); err != nil || len(line) != 5 {
				t.Errorf("report line %s: %v", rep.JSON(), err)
			}
		})
	}
}

// TestCleanupRefusesNamesThatAreNotABenchmarksDirectory: a name that is not
// a single element starting with storagebench- is refused, and nothing is
// touched.
func TestCleanupRefusesNamesThatAreNotABenchmarksDirectory(t *testing.T) {
	for _, sub := range []string{"", ".", "..", "../storagebench-x", "storagebench-x/../app", "storagebench-x/", "storagebench-x/client-000",
		"/storagebench-x", "./storagebench-x", "app", "storagebench-", "storagebench-x\\..", "storagebench-x\x00", strings.Repeat("storagebench-", 20)} {
		t.Run(fmt.Sprintf("%q", sub), func(t *testing.T) {
			parent := t.TempDir()
			vol := filepath.Join(parent, "vol")
			// Everything here would be removed were the name followed.
			for _, d := range []string{vol, filepath.Join(vol, "app"), filepath.Join(vol, "storagebench-x"), filepath.Join(parent, "storagebench-x")} {
				dirs(t, 0o700, d)
				mustWrite(t, filepath.Join(d, "data"), "keep")
			}
			rep := Cleanup(vol, sub)
			if rep.OK() || !strings.HasPrefix(rep.Error, "refused: ") || rep.RemovedFiles+rep.RemovedDirs != 0 {
				t.Fatalf("report %+v", rep)
			}
			for _, d := range []string{vol, filepath.Join(vol, "app"), filepath.Join(vol, "storagebench-x"), filepath.Join(parent, "storagebench-x")} {
				if b, err := os.ReadFile(filepath.Join(d, "data")); err != nil || string(b) != "keep" {
					t.Fatalf("%s was touched: %v", d, err)
				}
			}
		})
	}
	t.Run("a valid name", func(t *testing.T) {
		if err := CheckBenchmarkDir("storagebench-pg-1a2b3c4d"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCleanupWithoutTheVolume(t *testing.T) {
	rep := Cleanup(filepath.Join(t.TempDir(), "not-mounted"), "storagebench-x-0123abcd")
	if rep.OK() || !strings.Contains(rep.Error, "not-mounted") {
		t.Fatalf("report %+v", rep)
	}
}

// TestCleanupReportIsBounded: whatever the paths and the error, the line is
// JSON of at most protocol.MaxCleanupReportBytes, listing at most
// MaxCleanupRemaining paths and counting all.
func TestCleanupReportIsBounded(t *testing.T) {
	long := strings.Repeat("\x01<é>", 2000) // escaped by JSON to several times its length
	cases := []CleanupReport{
		{Remaining: []string{}, Error: ""},
		{Remaining: []string{"storagebench-x/a", "storagebench-x"}, RemainingCount: 2, Error: "2 path(s) left"},
		{Remaining: slices.Repeat([]string{"storagebench-x/" + long}, 30), RemainingCount: 1 << 40, Error: long},
		{Remaining: slices.Repeat([]string{"storagebench-x/short"}, 30), RemainingCount: 30, Error: long + long},
		{Remaining: []string{}, Error: strings.Repeat("\x00", 1<<20)},
	}
	for i, c := range cases {
		line := c.JSON()
		if len(line) > protocol.MaxCleanupReportBytes || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("case %d: a line of %d bytes", i, len(line))
		}
		var back CleanupReport
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if back.RemainingCount != c.RemainingCount || len(back.Remaining) > MaxCleanupRemaining || back.Remaining == nil {
			t.Fatalf("case %d: %+v", i, back)
		}
		if (back.Error == "") != (c.Error == "") {
			t.Fatalf("case %d: the error was lost", i)
		}
		if len(c.Remaining) <= MaxCleanupRemaining && len(c.Error) < 100 && !reflect.DeepEqual(back, c) {
			t.Fatalf("case %d: a short report changed: %+v", i, back)
		}
	}
}
