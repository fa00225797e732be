package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// stateDir coordinates the Kubelets of every process on the machine (go test
// runs packages in parallel): they share the mount points they create.
const stateDir = "/run/storagebench-harness"

// mountPoints creates the host paths that bind mounts need as mount points
// (pods' mount namespaces share the host's file systems, so /storagebench/data
// must exist on the host, empty) and removes them when the last Kubelet on the
// machine stops. Created paths are listed in a registry file, changed under an
// exclusive lock; every running Kubelet holds a shared lock on another file,
// and the one that can take it exclusively at Stop is the last.
type mountPoints struct {
	alive *os.File // shared-locked while the Kubelet runs
}

func openMountPoints() (*mountPoints, error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	alive, err := os.OpenFile(filepath.Join(stateDir, "alive"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	// Blocks while the last Kubelet of another process removes mount points.
	if err := syscall.Flock(int(alive.Fd()), syscall.LOCK_SH); err != nil {
		return nil, errors.Join(err, alive.Close())
	}
	return &mountPoints{alive: alive}, nil
}

// withRegistry runs fn with the registry file locked exclusively.
func withRegistry(fn func(*os.File) error) error {
	f, err := os.OpenFile(filepath.Join(stateDir, "created"), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // closing releases the lock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	return fn(f)
}

// ensure makes path exist, as an empty file or a directory, creating missing
// parents, and records what it created.
func (m *mountPoints) ensure(path string, file bool) error {
	return withRegistry(func(registry *os.File) error {
		parts := strings.Split(filepath.Clean(path), string(filepath.Separator))
		cur := string(filepath.Separator)
		for i, part := range parts {
			if part == "" {
				continue
			}
			cur = filepath.Join(cur, part)
			if _, err := os.Lstat(cur); err == nil {
				continue
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			var err error
			if file && i == len(parts)-1 {
				err = os.WriteFile(cur, nil, 0o666)
			} else {
				err = os.Mkdir(cur, 0o755)
			}
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(registry, cur); err != nil {
				return err
			}
		}
		return nil
	})
}

// close removes the recorded mount points, children first, if no other
// Kubelet runs; only empty directories and empty files are removed.
func (m *mountPoints) close() error {
	defer func() { _ = m.alive.Close() }()
	if err := syscall.Flock(int(m.alive.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil //nolint:nilerr // another Kubelet runs and still needs them
	}
	return withRegistry(func(registry *os.File) error {
		var paths []string
		for sc := bufio.NewScanner(registry); sc.Scan(); {
			paths = append(paths, sc.Text())
		}
		var errs []error
		for i := len(paths) - 1; i >= 0; i-- {
			if info, err := os.Lstat(paths[i]); err != nil || (!info.IsDir() && info.Size() > 0) {
				continue
			}
			if err := os.Remove(paths[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return errors.Join(append(errs, registry.Truncate(0))...)
	})
}
