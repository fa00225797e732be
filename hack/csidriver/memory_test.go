package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

// memoryParams are a memory volume's parameters, with others added.
func memoryParams(more ...string) map[string]string {
	p := map[string]string{"storagebench.test/medium": "memory"}
	for i := 0; i+1 < len(more); i += 2 {
		p[more[i]] = more[i+1]
	}
	return p
}

// tmpfsSize checks that path is the root of a tmpfs mount and returns its
// size.
func tmpfsSize(t *testing.T, path string) int64 {
	t.Helper()
	if mounted, err := isMountPoint(path); !mounted || err != nil {
		t.Fatalf("%s is not a mount point: %v", path, err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type != unix.TMPFS_MAGIC {
		t.Fatalf("%s is a filesystem of type %#x, not a tmpfs", path, fs.Type)
	}
	return int64(fs.Blocks) * fs.Bsize
}

// mountsUnder lists the mount points under dir.
func mountsUnder(t *testing.T, dir string) []string {
	var under []string
	for _, p := range mountPoints(t) {
		if strings.HasPrefix(p, dir+"/") {
			under = append(under, p)
		}
	}
	return under
}

// directIO writes a page at offset 0 of path with O_DIRECT and reads it
// back the same way, as fio's direct=1 does; a missing file is created.
func directIO(path string) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned
	if err != nil {
		return err
	}
	defer func() { _ = unix.Munmap(buf) }()
	copy(buf, "direct")
	if _, err := unix.Pwrite(fd, buf, 0); err != nil {
		return err
	}
	clear(buf)
	if _, err := unix.Pread(fd, buf, 0); err != nil {
		return err
	}
	if !bytes.HasPrefix(buf, []byte("direct")) {
		return errors.New("read back something else")
	}
	return nil
}

func (h *harness) mustDelete(t *testing.T, id string) {
	t.Helper()
	if _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatalf("delete %s: %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(h.root, volumesDir, id)); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", id, err)
	}
}

// A filesystem memory volume is a tmpfs of its capacity at the usual data
// path, published, written up to its size, counted in its stats and
// unmounted when deleted.
func TestMemoryFilesystem(t *testing.T) {
	h := start(t, options{})
	params := memoryParams("storagebench.test/delay-publish", "10ms")
	v := h.mustCreate(t, volumeReq("mfs", false, 8<<20, params))
	if again := h.mustCreate(t, volumeReq("mfs", false, 8<<20, params)); again.GetCapacityBytes() != v.GetCapacityBytes() {
		t.Errorf("create again: %v, want %v", again, v)
	}
	_, err := h.ctl.CreateVolume(bg, volumeReq("mfs", false, 8<<20, nil))
	wantCode(t, err, codes.AlreadyExists) // on disk, not in memory
	data := h.data(volumesDir, "mfs")
	if size := tmpfsSize(t, data); size != 8<<20 {
		t.Errorf("tmpfs of %d bytes, want %d", size, 8<<20)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("data: %v, %v; want mode 0777", fi, err)
	}

	rw := h.mustPublish(t, "mfs", "rw", mountCap(rwo), false)
	writeFile(t, filepath.Join(rw, "through"), "the target")
	wantFile(t, filepath.Join(data, "through"), "the target")
	if err := directIO(filepath.Join(rw, "direct")); err != nil {
		t.Errorf("O_DIRECT on a file of a memory volume (tmpfs takes it from Linux 6.6 on): %v", err)
	}
	// Its size holds: 9 MiB do not fit in 8.
	if err := os.WriteFile(filepath.Join(rw, "big"), make([]byte, 9<<20), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("9 MiB into an 8 MiB memory volume: %v, want ENOSPC", err)
	}
	_ = os.Remove(filepath.Join(rw, "big"))
	stats, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "mfs", VolumePath: rw})
	if err != nil || len(stats.GetUsage()) != 2 || stats.GetUsage()[0].GetTotal() != 8<<20 || stats.GetUsage()[0].GetUsed() <= 0 {
		t.Errorf("stats %v, %v; want 8 MiB in all, some used", stats, err)
	}

	_, err = h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: "mfs"})
	wantCode(t, err, codes.FailedPrecondition)
	h.unpublish(t, "mfs", rw)
	h.mustDelete(t, "mfs")
	h.mustDelete(t, "mfs")
	if m := mountsUnder(t, h.root); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
}

// A block memory volume is a sparse file on a tmpfs of its capacity, behind
// a loop device that takes O_DIRECT and every byte of its size.
func TestMemoryBlock(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("mblk", true, 4<<20, memoryParams()))
	mnt := filepath.Join(h.root, volumesDir, "mblk", memoryDir)
	data := filepath.Join(mnt, dataName)
	if size := tmpfsSize(t, mnt); size != 4<<20 {
		t.Errorf("tmpfs of %d bytes, want %d", size, 4<<20)
	}
	if fi, err := os.Stat(data); err != nil || fi.Size() != 4<<20 || fileBlocks(t, data) != 0 {
		t.Fatalf("data %v, %v: want a sparse file of 4 MiB", fi, err)
	}
	target := h.mustPublish(t, "mblk", "a", blockCap(rwo), false)
	if loops := loopsUnder(t, mnt); len(loops) != 1 {
		t.Fatalf("loops on the tmpfs: %v", loops)
	}
	if err := directIO(target); err != nil {
		t.Errorf("O_DIRECT on a loop device over a tmpfs file: %v", err)
	}
	// Every byte of the volume fits on its tmpfs.
	full := bytes.Repeat([]byte{0xa5}, 4<<20)
	writeAt(t, target, full, 0)
	if got := readAt(t, data, len(full), 0); !bytes.Equal(got, full) {
		t.Error("the file does not read what the device took")
	}
	stats, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "mblk", VolumePath: target})
	if err != nil || len(stats.GetUsage()) != 1 || stats.GetUsage()[0].GetTotal() != 4<<20 {
		t.Errorf("stats %v, %v", stats, err)
	}
	h.unpublish(t, "mblk", target)
	if loops := loopsUnder(t, mnt); len(loops) != 0 {
		t.Errorf("loops left: %v", loops)
	}
	h.mustDelete(t, "mblk")
	if m := mountsUnder(t, h.root); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
}

// The memory volumes' capacities add up to at most --memory-limit: one
// beyond it is OutOfRange, one beyond what is left ResourceExhausted, an
// expansion beyond it OutOfRange; disk volumes do not count, and a deleted
// memory volume gives its share back.
func TestMemoryLimit(t *testing.T) {
	h := start(t, options{memoryLimit: "16Mi"})
	h.mustCreate(t, volumeReq("m1", false, 8<<20, memoryParams()))
	h.mustCreate(t, volumeReq("m2", true, 6<<20, memoryParams()))
	h.mustCreate(t, volumeReq("disk", false, 64<<20, nil))
	for _, tc := range []struct {
		name string
		call func() error
		want codes.Code
		msg  string
	}{
		{"beyond what is left", func() error {
			_, err := h.ctl.CreateVolume(bg, volumeReq("m3", true, 4<<20, memoryParams()))
			return err
		}, codes.ResourceExhausted, "the other memory volumes take 14680064 of the driver's 16777216 bytes (--memory-limit)"},
		{"beyond the limit", func() error {
			_, err := h.ctl.CreateVolume(bg, volumeReq("m3", false, 32<<20, memoryParams()))
			return err
		}, codes.OutOfRange, "exceeds the driver's limit on memory volumes, 16777216 bytes"},
		{"clone beyond what is left", func() error {
			r := cloneReq("m3", false, 8<<20, volumeSource("m1"))
			r.Parameters = memoryParams()
			_, err := h.ctl.CreateVolume(bg, r)
			return err
		}, codes.ResourceExhausted, "does not fit"},
		{"expand beyond what is left", func() error {
			_, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "m1", CapacityRange: &csi.CapacityRange{RequiredBytes: 12 << 20}})
			return err
		}, codes.OutOfRange, "does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, tc.call(), tc.want, tc.msg)
		})
	}
	if m, err := readMeta(h, "m1"); err != nil || m.Capacity != 8<<20 {
		t.Errorf("m1 after a refused expansion: %+v, %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(h.root, volumesDir, "m3")); !os.IsNotExist(err) {
		t.Errorf("a refused volume is there: %v", err)
	}
	// Within the limit to the byte.
	resp, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "m1", CapacityRange: &csi.CapacityRange{RequiredBytes: 10 << 20}})
	if err != nil || resp.GetCapacityBytes() != 10<<20 {
		t.Fatalf("expand to the limit: %v, %v", resp, err)
	}
	h.mustDelete(t, "m2")
	h.mustCreate(t, volumeReq("m3", true, 6<<20, memoryParams()))
}

// Snapshots of memory volumes are copies on disk; clones go into memory or
// onto disk from either; expansion grows the tmpfs (and the device).
func TestMemorySnapshotsClonesExpand(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("mfs", false, 1<<20, memoryParams()))
	writeFile(t, filepath.Join(h.data(volumesDir, "mfs"), "hello"), "from memory")
	if _, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-fs", SourceVolumeId: "mfs"}); err != nil {
		t.Fatal(err)
	}
	wantFile(t, filepath.Join(h.data(snapshotsDir, "snap-fs"), "hello"), "from memory")
	if m := mountsUnder(t, filepath.Join(h.root, snapshotsDir)); len(m) != 0 {
		t.Errorf("a snapshot in memory: %v", m)
	}
	for _, tc := range []struct {
		name   string
		src    *csi.VolumeContentSource
		params map[string]string
	}{
		{"mem-from-snap", snapshotSource("snap-fs"), memoryParams()},
		{"mem-from-mem", volumeSource("mfs"), memoryParams()},
		{"disk-from-mem", volumeSource("mfs"), nil},
	} {
		r := cloneReq(tc.name, false, 2<<20, tc.src)
		r.Parameters = tc.params
		h.mustCreate(t, r)
		data := h.data(volumesDir, tc.name)
		wantFile(t, filepath.Join(data, "hello"), "from memory")
		if mounted, _ := isMountPoint(data); mounted != (tc.params != nil) {
			t.Errorf("%s: data mounted %t", tc.name, mounted)
		} else if mounted && tmpfsSize(t, data) != 2<<20 {
			t.Errorf("%s: tmpfs of %d bytes", tc.name, tmpfsSize(t, data))
		}
	}
	// A source bigger than the memory volume (a disk volume's size is not
	// enforced) is refused, and leaves nothing behind.
	h.mustCreate(t, volumeReq("disk", false, 1<<20, nil))
	writeFile(t, filepath.Join(h.data(volumesDir, "disk"), "big"), strings.Repeat("x", 2<<20))
	r := cloneReq("too-small", false, 1<<20, volumeSource("disk"))
	r.Parameters = memoryParams()
	_, err := h.ctl.CreateVolume(bg, r)
	wantCode(t, err, codes.OutOfRange)
	if _, err := os.Stat(filepath.Join(h.root, volumesDir, ".new-too-small")); !os.IsNotExist(err) {
		t.Errorf("the refused clone's directory is left: %v", err)
	}

	// Expanding a filesystem memory volume grows its tmpfs.
	resp, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "mfs", CapacityRange: &csi.CapacityRange{RequiredBytes: 4 << 20}})
	if err != nil || resp.GetCapacityBytes() != 4<<20 || resp.GetNodeExpansionRequired() {
		t.Fatalf("expand: %v, %v", resp, err)
	}
	if size := tmpfsSize(t, h.data(volumesDir, "mfs")); size != 4<<20 {
		t.Errorf("tmpfs of %d bytes after expand", size)
	}
	wantFile(t, filepath.Join(h.data(volumesDir, "mfs"), "hello"), "from memory")

	// A block memory volume: snapshot, clone, and expansion while published.
	h.mustCreate(t, volumeReq("mblk", true, 2<<20, memoryParams()))
	target := h.mustPublish(t, "mblk", "a", blockCap(rwo), false)
	payload := []byte("block payload")
	writeAt(t, target, payload, 1<<20)
	if _, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-blk", SourceVolumeId: "mblk"}); err != nil {
		t.Fatal(err)
	}
	r = cloneReq("mblk-clone", true, 4<<20, snapshotSource("snap-blk"))
	r.Parameters = memoryParams()
	h.mustCreate(t, r)
	clone := filepath.Join(h.root, volumesDir, "mblk-clone", memoryDir, dataName)
	if got := readAt(t, clone, len(payload), 1<<20); !bytes.Equal(got, payload) {
		t.Errorf("the clone reads %q", got)
	}
	if fi, err := os.Stat(clone); err != nil || fi.Size() != 4<<20 {
		t.Errorf("clone: %v, %v", fi, err)
	}
	resp, err = h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "mblk", CapacityRange: &csi.CapacityRange{RequiredBytes: 8 << 20}})
	if err != nil || resp.GetCapacityBytes() != 8<<20 || !resp.GetNodeExpansionRequired() {
		t.Fatalf("expand block: %v, %v", resp, err)
	}
	if size := tmpfsSize(t, filepath.Join(h.root, volumesDir, "mblk", memoryDir)); size != 8<<20 {
		t.Errorf("tmpfs of %d bytes after expand", size)
	}
	if _, err := h.node.NodeExpandVolume(bg, &csi.NodeExpandVolumeRequest{VolumeId: "mblk", VolumePath: target}); err != nil {
		t.Fatal(err)
	}
	if got := deviceSize(t, target); got != 8<<20 {
		t.Errorf("device size after expand %d", got)
	}
	writeAt(t, target, bytes.Repeat([]byte{1}, 8<<20), 0) // all of it fits
	if got := readAt(t, target, 1, 8<<20-1); got[0] != 1 {
		t.Errorf("the device's last byte reads %d", got[0])
	}
	h.unpublish(t, "mblk", target)
	for _, id := range []string{"mblk", "mblk-clone", "mfs", "mem-from-snap", "mem-from-mem", "disk-from-mem", "disk"} {
		h.mustDelete(t, id)
	}
	if m := mountsUnder(t, h.root); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
}

// A restarted driver finds its memory volumes with their data, published
// or not. A tmpfs gone while the driver was down (csi.sh down unmounts
// everything under the root; a reboot) comes back empty when the volume is
// next used.
func TestMemoryRestart(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("mfs", false, 1<<20, memoryParams()))
	h.mustCreate(t, volumeReq("mblk", true, 2<<20, memoryParams()))
	writeFile(t, filepath.Join(h.data(volumesDir, "mfs"), "kept"), "across restarts")
	target := h.mustPublish(t, "mblk", "a", blockCap(rwo), false)
	payload := []byte("kept too")
	writeAt(t, target, payload, 4096)
	h.stop()

	h2 := start(t, options{root: h.root})
	h2.mustCreate(t, volumeReq("mfs", false, 1<<20, memoryParams()))
	wantFile(t, filepath.Join(h2.data(volumesDir, "mfs"), "kept"), "across restarts")
	if got := readAt(t, target, len(payload), 4096); !bytes.Equal(got, payload) {
		t.Errorf("the published device reads %q after a restart", got)
	}
	h2.unpublish(t, "mblk", target)

	// Both tmpfs unmounted behind the driver's back.
	for _, p := range []string{h2.data(volumesDir, "mfs"), filepath.Join(h2.root, volumesDir, "mblk", memoryDir)} {
		if err := unix.Unmount(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	fs := h2.mustPublish(t, "mfs", "fs", mountCap(rwo), false)
	if entries, err := os.ReadDir(fs); err != nil || len(entries) != 0 {
		t.Errorf("a lost filesystem memory volume: %v, %v; want it empty", entries, err)
	}
	if size := tmpfsSize(t, h2.data(volumesDir, "mfs")); size != 1<<20 {
		t.Errorf("tmpfs of %d bytes", size)
	}
	blk := h2.mustPublish(t, "mblk", "b", blockCap(rwo), false)
	if got := deviceSize(t, blk); got != 2<<20 {
		t.Errorf("a lost block memory volume: device of %d bytes", got)
	}
	if got := readAt(t, blk, len(payload), 4096); bytes.Equal(got, payload) {
		t.Error("a lost block memory volume still has its data")
	}
	h2.unpublish(t, "mfs", fs)
	h2.unpublish(t, "mblk", blk)
	h2.mustDelete(t, "mfs")
	h2.mustDelete(t, "mblk")
	if m := mountsUnder(t, h2.root); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
}
