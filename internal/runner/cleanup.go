package runner

// Cleanup after the run. On an existing claim the runners remove what they
// wrote when they exit (workspace.remove), but a runner killed (OOM, node
// lost, SIGKILL) removes nothing, and the benchmark's directory would stay
// on the application's volume. So once the run has ended the operator runs
// `runner cleanup` in a pod of its own — the runner image, the same claim
// at the same path, the same user — which removes the benchmark's directory
// and everything in it with Cleanup, and reports what it removed and what
// is left.
//
// What is the benchmark's is decided as the runners decide it (notOwnDir):
// a real directory, owned by this process' uid, mode 0700. Anything else
// under the benchmark's name — somebody else's directory, a link, a file —
// is left exactly as it is. Inside it nothing is followed: a link is
// removed as a link, its target untouched, and every removal goes through
// the directory itself (os.Root), never through a path that could lead
// outside it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/storagebench/storagebench/internal/protocol"
)

// BenchmarkDirPrefix starts the name of every benchmark's directory on an
// existing claim: storagebench-<name>-<uid8> (spec.BenchmarkDirectory).
const BenchmarkDirPrefix = "storagebench-"

// CleanupReport is what `runner cleanup` reports: the operator reads it
// from the cleanup pod's termination message (protocol.CleanupReport).
type CleanupReport = protocol.CleanupReport

// MaxCleanupRemaining is how many remaining paths a report lists.
const MaxCleanupRemaining = protocol.MaxCleanupRemaining

// CheckBenchmarkDir refuses a benchmark directory name that is not a single
// path element starting with BenchmarkDirPrefix.
func CheckBenchmarkDir(sub string) error {
	switch {
	case sub == "":
		return errors.New("no benchmark directory named")
	case strings.ContainsAny(sub, `/\`+"\x00") || sub == "." || sub == ".." || len(sub) > 255:
		return fmt.Errorf("benchmark directory %q is not a single name in the volume", sub)
	case !strings.HasPrefix(sub, BenchmarkDirPrefix) || len(sub) == len(BenchmarkDirPrefix):
		return fmt.Errorf("benchmark directory %q does not start with %q and a name: it is not a benchmark's", sub, BenchmarkDirPrefix)
	}
	return nil
}

// Cleanup removes the benchmark's directory sub of the volume mounted at
// volume, and everything in it, when it is this runner user's own
// (notOwnDir); a missing directory is nothing left to remove. It never
// leaves the directory, never follows a link, and reports what it removed
// and what is left.
func Cleanup(volume, sub string) CleanupReport {
	rep := CleanupReport{Remaining: []string{}}
	if err := CheckBenchmarkDir(sub); err != nil {
		rep.Error = "refused: " + err.Error()
		return rep
	}
	root, err := os.OpenRoot(volume)
	if err != nil {
		rep.Error = fmt.Sprintf("volume %s: %v", volume, err)
		return rep
	}
	defer func() { _ = root.Close() }() // directories opened to read: nothing to flush
	dir, err := openOwnDir(root, sub)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return rep // nothing left
	case errors.Is(err, errNotOwnDir):
		rep.Error = fmt.Sprintf("refused: %v; what is not the runner's own under the benchmark's name is left as it is", err)
		rep.Remaining, rep.RemainingCount = []string{sub}, 1
		return rep
	case err != nil:
		rep.Error = err.Error()
		rep.Remaining, rep.RemainingCount = []string{sub}, 1
		return rep
	}
	c := cleaner{prefix: sub}
	c.removeTree(dir, ".")
	_ = dir.Close()
	if err := root.Remove(sub); err == nil {
		rep.RemovedDirs++
	} else if !errors.Is(err, fs.ErrNotExist) && len(c.errs) == 0 {
		c.failAt("removing", ".", err)
	}
	rep.RemovedFiles, rep.RemovedDirs = c.files, rep.RemovedDirs+c.dirs
	// What is left, as it is now.
	if left, err := openOwnDir(root, sub); err == nil {
		var l lister
		l.list(left, ".", sub)
		_ = left.Close()
		l.add(sub)
		rep.Remaining, rep.RemainingCount = l.paths, l.count
		if l.err != nil && len(c.errs) == 0 {
			c.failAt("listing", l.errAt, l.err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		rep.Remaining, rep.RemainingCount = []string{sub}, 1
		c.fail(err)
	}
	if rep.RemainingCount > 0 || len(c.errs) > 0 {
		rep.Error = c.message(rep.RemainingCount)
	}
	return rep
}

// cleaner removes a tree, counting what it removed and the first errors.
type cleaner struct {
	prefix      string // the tree's path in the volume, for the errors
	files, dirs int
	errs        []string
	more        int // errors beyond errs
}

// failAt notes that doing what to the tree's path rel failed.
func (c *cleaner) failAt(what, rel string, err error) {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err
	}
	c.fail(fmt.Errorf("%s %s: %w", what, path.Join(c.prefix, rel), err))
}

func (c *cleaner) fail(err error) {
	if len(c.errs) < 3 {
		c.errs = append(c.errs, err.Error())
		return
	}
	c.more++
}

func (c *cleaner) message(left int) string {
	msg := fmt.Sprintf("%d path(s) of the benchmark's directory left", left)
	if len(c.errs) > 0 {
		msg += ": " + strings.Join(c.errs, "; ")
	}
	if c.more > 0 {
		msg += fmt.Sprintf("; and %d more error(s)", c.more)
	}
	return msg
}

// removeTree removes what the directory rel of root holds, deepest first;
// rel itself stays. Links and other files are removed as they are; a
// directory is entered only when what is opened is the directory that was
// looked at (no link followed).
func (c *cleaner) removeTree(root *os.Root, rel string) {
	entries, err := readDir(root, rel)
	if err != nil {
		c.failAt("listing", rel, err)
	}
	for _, name := range entries {
		p := path.Join(rel, name)
		fi, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			c.failAt("looking at", p, err)
			continue
		case fi.IsDir():
			c.removeTree(root, p)
			if err := root.Remove(p); err == nil {
				c.dirs++
			} else if !errors.Is(err, fs.ErrNotExist) {
				c.failAt("removing", p, err)
			}
		default:
			if err := root.Remove(p); err == nil {
				c.files++
			} else if !errors.Is(err, fs.ErrNotExist) {
				c.failAt("removing", p, err)
			}
		}
	}
}

// readDir lists the names in the directory rel of root, which was seen to
// be a directory: when what is opened is something else (a link put in its
// place), nothing is listed.
func readDir(root *os.Root, rel string) ([]string, error) {
	before, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // opened to read: nothing to flush
	if now, err := f.Stat(); err != nil || !now.IsDir() || !os.SameFile(before, now) {
		return nil, errors.New("it changed while it was opened: not entered")
	}
	return f.Readdirnames(-1)
}

// lister lists what is left of a tree, deepest first.
type lister struct {
	paths []string
	count int
	// err is the first directory that could not be listed, at errAt.
	err   error
	errAt string
}

func (l *lister) add(p string) {
	if len(l.paths) < MaxCleanupRemaining {
		l.paths = append(l.paths, p)
	}
	l.count++
}

// list adds what the directory rel of root holds, named under prefix.
func (l *lister) list(root *os.Root, rel, prefix string) {
	names, err := readDir(root, rel)
	if err != nil && l.err == nil {
		l.err, l.errAt = err, rel
	}
	slices.Sort(names)
	for _, name := range names {
		p := path.Join(rel, name)
		if fi, err := root.Lstat(p); err == nil && fi.IsDir() {
			l.list(root, p, prefix)
		}
		l.add(path.Join(prefix, p))
	}
}
