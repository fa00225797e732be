package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// workspace is what the runner created on a Filesystem volume, removed
// with Volume.RemoveWhenDone.
type workspace struct {
	// files are the job files that did not exist before the run.
	files []string
	// dirs are removed when empty, in order (deepest first).
	dirs []string
	// mount and sub are the volume and the subdirectory (Volume.Subdir)
	// the files and dirs are in, once makeSubdir made it: they are then
	// removed through it, and only while it is still a directory of the
	// runner's own (openOwnDir), as `runner cleanup` removes it.
	mount, sub string
}

// directory returns the directory the client's job files go in, creating
// Subdir and the client's directory on a shared volume when missing.
func (r *Runner) directory() (string, error) {
	v := r.Plan.Volume
	r.created.dirs, r.created.mount, r.created.sub = nil, "", ""
	dir := v.Path
	if v.Subdir != "" {
		var err error
		if dir, err = makeSubdir(v.Path, v.Subdir); err != nil {
			return "", err
		}
		r.created.dirs = append(r.created.dirs, dir)
		r.created.mount, r.created.sub = v.Path, filepath.Clean(v.Subdir)
	}
	if !v.Shared {
		return dir, nil
	}
	dir = filepath.Join(dir, fmt.Sprintf("client-%03d", r.Plan.Client))
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		r.created.dirs = append([]string{dir}, r.created.dirs...)
	case errors.Is(err, fs.ErrExist) && v.Subdir != "":
		// On somebody else's volume the client's directory is always
		// new: one that exists was put there by somebody else.
		return "", fmt.Errorf("the client's directory %s already exists on the volume: the runner works only in a directory it creates", dir)
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("creating the client's directory on the shared volume: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the client's directory %s is not a directory", dir)
	}
	return dir, nil
}

// makeSubdir creates mount/sub with mode 0700 where missing, never leaving
// the volume, and checks that no part of it is a symbolic link: fio opens
// its files by path, and a link could lead it outside the subdirectory.
func makeSubdir(mount, sub string) (string, error) {
	if !filepath.IsLocal(sub) || filepath.Clean(sub) == "." {
		return "", fmt.Errorf("volume subdirectory %q is not a relative path inside the volume", sub)
	}
	dir := filepath.Join(mount, sub)
	root, err := os.OpenRoot(mount)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", mount, err)
	}
	defer func() { _ = root.Close() }() // a directory opened to read: nothing to flush
	if err := root.MkdirAll(sub, 0o700); err != nil {
		return "", fmt.Errorf("cannot create directory %s as uid %d: %w", dir, os.Getuid(), err)
	}
	for p := filepath.Clean(sub); p != "."; p = filepath.Dir(p) {
		fi, err := root.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("volume subdirectory %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory (mode %s): the runner works only inside real directories", filepath.Join(mount, p), fi.Mode())
		}
	}
	// The directory itself must be this runner's user's, and closed to
	// everybody else, so nobody else can have placed files (or links) in
	// it for fio to write through.
	fi, err := root.Lstat(sub)
	if err != nil {
		return "", err
	}
	if why := notOwnDir(fi); why != "" {
		return "", fmt.Errorf("directory %s exists and is not this runner's (%s): the runner works only in a directory of its own", dir, why)
	}
	return dir, nil
}

// notOwnDir says why fi, from Lstat (a link not followed), is not a
// directory of this runner's own as makeSubdir creates it — a real
// directory, owned by the process' uid, with mode 0700, so nobody else can
// have put anything in it — or returns "" when it is one. makeSubdir, the
// runner's removal when it exits and `runner cleanup` all judge by it.
func notOwnDir(fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "a symbolic link, not a directory"
	case !fi.IsDir():
		return fmt.Sprintf("not a directory (mode %s)", fi.Mode())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm() != 0o700 {
		return fmt.Sprintf("owner %s, mode %#o; want uid %d, mode 0700", ownerOf(st), fi.Mode().Perm(), os.Getuid())
	}
	return ""
}

func ownerOf(st *syscall.Stat_t) string {
	if st == nil {
		return "unknown"
	}
	return fmt.Sprintf("uid %d", st.Uid)
}

// errNotOwnDir is the error of a directory that notOwnDir refuses.
var errNotOwnDir = errors.New("not this runner's directory")

// openOwnDir opens name, a directory in root, as a root of its own, only
// when it is a directory of this runner's own (notOwnDir), never through a
// link: what is opened is checked to be what was judged. It returns
// fs.ErrNotExist when name is missing, and an error wrapping errNotOwnDir
// when it is not the runner's.
func openOwnDir(root *os.Root, name string) (*os.Root, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if why := notOwnDir(fi); why != "" {
		return nil, fmt.Errorf("%s is %w (%s)", name, errNotOwnDir, why)
	}
	dir, err := root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if opened, err := dir.Stat("."); err != nil || !os.SameFile(fi, opened) {
		_ = dir.Close() // a directory opened to read: nothing to flush
		return nil, fmt.Errorf("%s is %w (it changed while it was opened)", name, errNotOwnDir)
	}
	return dir, nil
}

// remove deletes the files the runner created, then its directories when
// they are empty. Nothing else is touched: in a subdirectory (Volume.Subdir)
// only while it is still the runner's own, through it, never through a
// link.
func (w workspace) remove() error {
	if len(w.files) == 0 && len(w.dirs) == 0 {
		return nil
	}
	remove, removeDir := os.Remove, os.Remove
	if w.sub != "" {
		root, err := os.OpenRoot(w.mount)
		if err != nil {
			return fmt.Errorf("removing the benchmark's files: volume %s: %w", w.mount, err)
		}
		defer func() { _ = root.Close() }() // directories opened to read: nothing to flush
		dir, err := openOwnDir(root, w.sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // nothing left to remove
		case err != nil:
			return fmt.Errorf("not removing the benchmark's files from %s: %w", w.mount, err)
		}
		defer func() { _ = dir.Close() }()
		base := filepath.Join(w.mount, w.sub)
		remove = func(path string) error {
			rel, err := filepath.Rel(base, path)
			if err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("%s is not in %s", path, base)
			}
			return dir.Remove(rel)
		}
		removeDir = func(path string) error {
			if path == base {
				return root.Remove(w.sub)
			}
			return remove(path)
		}
	}
	var errs []error
	for _, f := range w.files {
		if err := remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, d := range w.dirs {
		err := removeDir(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing the benchmark's files: %w", errors.Join(errs...))
	}
	return nil
}
