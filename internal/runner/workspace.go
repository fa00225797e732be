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
}

// directory returns the directory the client's job files go in, creating
// Subdir and the client's directory on a shared volume when missing.
func (r *Runner) directory() (string, error) {
	v := r.Plan.Volume
	r.created.dirs = nil
	dir := v.Path
	if v.Subdir != "" {
		var err error
		if dir, err = makeSubdir(v.Path, v.Subdir); err != nil {
			return "", err
		}
		r.created.dirs = append(r.created.dirs, dir)
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
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm() != 0o700 {
		return "", fmt.Errorf("directory %s exists and is not this runner's (owner %v, mode %s; want uid %d, 0700): the runner works only in a directory of its own",
			dir, ownerOf(st), fi.Mode().Perm(), os.Getuid())
	}
	return dir, nil
}

func ownerOf(st *syscall.Stat_t) string {
	if st == nil {
		return "unknown"
	}
	return fmt.Sprintf("uid %d", st.Uid)
}

// remove deletes the files the runner created, then its directories when
// they are empty. Nothing else is touched.
func (w workspace) remove() error {
	var errs []error
	for _, f := range w.files {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, d := range w.dirs {
		err := os.Remove(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing the benchmark's files: %w", errors.Join(errs...))
	}
	return nil
}
