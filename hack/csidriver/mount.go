package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// bindMount mounts src (a directory or a device node) onto target, read-only
// when ro: a bind mount takes the read-only flag only on a remount.
func bindMount(src, target string, ro bool) error {
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount %s on %s: %w", src, target, err)
	}
	if !ro {
		return nil
	}
	if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		_ = unix.Unmount(target, 0)
		return fmt.Errorf("remount %s read-only: %w", target, err)
	}
	return nil
}

// isMountPoint reports whether path is the root of a mount (a missing path
// is not), as statx tells it.
func isMountPoint(path string) (bool, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, 0, &st)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("statx %s: %w", path, err)
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return false, fmt.Errorf("statx %s: the kernel does not tell mount roots", path)
	}
	return st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
}

// attachLoop attaches file to a free loop device and returns the device.
func attachLoop(file string, ro bool) (string, error) {
	args := []string{"--find", "--show"}
	if ro {
		args = append(args, "--read-only")
	}
	out, err := command("losetup", append(args, file)...)
	return strings.TrimSpace(out), err
}

// detachLoop detaches a loop device; one detached already (while the
// driver was down, say) is not an error, or its volume's pods could never
// be unpublished.
func detachLoop(dev string) error {
	if _, err := os.Stat(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := command("losetup", "--detach", dev)
	return err
}

// refreshLoop makes a loop device take its file's new size.
func refreshLoop(dev string) error {
	_, err := command("losetup", "--set-capacity", dev)
	return err
}

// loopBacks reports whether dev is a loop device attached to file.
func loopBacks(dev, file string) bool {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	return err == nil && strings.TrimSpace(string(b)) == file
}
