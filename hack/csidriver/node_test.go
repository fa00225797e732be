package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// publish publishes a volume at dir/targets/name.
func (h *harness) publish(t *testing.T, id, name string, c *csi.VolumeCapability, ro bool) (string, error) {
	t.Helper()
	target := filepath.Join(h.dir, "targets", name)
	_, err := h.node.NodePublishVolume(bg, &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: target, VolumeCapability: c, Readonly: ro})
	return target, err
}

// unpublish unpublishes a target twice, as a retrying kubelet may, and checks
// it is gone.
func (h *harness) unpublish(t *testing.T, id, target string) {
	t.Helper()
	for range 2 {
		if _, err := h.node.NodeUnpublishVolume(bg, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
			t.Fatalf("unpublish %s: %v", target, err)
		}
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", target, err)
	}
	if mounted, err := isMountPoint(target); mounted || err != nil {
		t.Errorf("%s still mounted: %v", target, err)
	}
}

// mustPublish publishes a volume at dir/targets/name and checks it is mounted.
func (h *harness) mustPublish(t *testing.T, id, name string, c *csi.VolumeCapability, ro bool) string {
	t.Helper()
	target, err := h.publish(t, id, name, c, ro)
	if err != nil {
		t.Fatalf("publish %s: %v", target, err)
	}
	if mounted, err := isMountPoint(target); !mounted || err != nil {
		t.Fatalf("%s is not mounted: %v", target, err)
	}
	return target
}

func TestPublishFilesystem(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("fs", false, 1<<20, map[string]string{"storagebench.test/delay-publish": "10ms"}))
	rwx := mountCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	rw := h.mustPublish(t, "fs", "rw", rwx, false)
	writeFile(t, filepath.Join(rw, "through"), "the target")
	wantFile(t, filepath.Join(h.data(volumesDir, "fs"), "through"), "the target")
	if _, err := h.publish(t, "fs", "rw", rwx, false); err != nil {
		t.Errorf("publish again: %v", err)
	}
	_, err := h.publish(t, "fs", "rw", rwx, true)
	wantCode(t, err, codes.AlreadyExists)

	ro := h.mustPublish(t, "fs", "ro", rwx, true)
	wantFile(t, filepath.Join(ro, "through"), "the target")
	if err := os.WriteFile(filepath.Join(ro, "nope"), nil, 0o600); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write through a read-only publication: %v", err)
	}

	stats, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "fs", VolumePath: rw})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range stats.GetUsage() {
		if u.GetTotal() <= 0 || u.GetAvailable() <= 0 || u.GetUsed() <= 0 {
			t.Errorf("stats %v", u)
		}
	}
	if len(stats.GetUsage()) != 2 {
		t.Errorf("stats %v: want bytes and inodes", stats)
	}

	_, err = h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: "fs"})
	wantCode(t, err, codes.FailedPrecondition)
	h.unpublish(t, "fs", rw)
	h.unpublish(t, "fs", ro)
	if _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: "fs"}); err != nil {
		t.Error(err)
	}
}

func TestPublishBlock(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("blk", true, 4<<20, nil))
	data := h.data(volumesDir, "blk")
	c := blockCap(rwo)
	a := h.mustPublish(t, "blk", "a", c, false)
	b := h.mustPublish(t, "blk", "b", c, false)
	if loops := loopsUnder(t, h.dir); len(loops) != 1 {
		t.Errorf("two read-write publications use loops %v, want one", loops)
	}
	payload := []byte("through the loop device")
	writeAt(t, a, payload, 3<<20)
	if got := readAt(t, data, len(payload), 3<<20); !bytes.Equal(got, payload) {
		t.Errorf("the volume's file reads %q", got)
	}
	if got := readAt(t, b, len(payload), 3<<20); !bytes.Equal(got, payload) {
		t.Errorf("the other publication reads %q", got)
	}

	ro := h.mustPublish(t, "blk", "ro", c, true)
	if got := readAt(t, ro, len(payload), 3<<20); !bytes.Equal(got, payload) {
		t.Errorf("the read-only publication reads %q", got)
	}
	if err := tryWrite(ro); err == nil {
		t.Error("a read-only block publication takes a write")
	} else {
		t.Logf("writing a read-only block publication: %v", err)
	}
	stats, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "blk", VolumePath: a})
	if err != nil || len(stats.GetUsage()) != 1 || stats.GetUsage()[0].GetTotal() != 4<<20 {
		t.Errorf("stats %v, %v", stats, err)
	}

	h.unpublish(t, "blk", a)
	if loops := loopsUnder(t, h.dir); len(loops) != 2 {
		t.Errorf("with b and ro published: loops %v", loops)
	}
	h.unpublish(t, "blk", b)
	h.unpublish(t, "blk", ro)
	if loops := loopsUnder(t, h.dir); len(loops) != 0 {
		t.Errorf("loops %v left", loops)
	}
}

// Expanding a published block volume grows its file; NodeExpandVolume then
// grows the loop device.
func TestExpandBlock(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("blk", true, 8<<20, map[string]string{"storagebench.test/delay-expand": "10ms"}))
	target := h.mustPublish(t, "blk", "a", blockCap(rwo), false)
	if got := deviceSize(t, target); got != 8<<20 {
		t.Fatalf("device size %d", got)
	}
	for range 2 {
		resp, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "blk", CapacityRange: &csi.CapacityRange{RequiredBytes: 16 << 20}})
		if err != nil || resp.GetCapacityBytes() != 16<<20 || !resp.GetNodeExpansionRequired() {
			t.Fatalf("expand: %v, %v", resp, err)
		}
	}
	if fi, err := os.Stat(h.data(volumesDir, "blk")); err != nil || fi.Size() != 16<<20 {
		t.Fatalf("file after expand: %v, %v", fi, err)
	}
	resp, err := h.node.NodeExpandVolume(bg, &csi.NodeExpandVolumeRequest{VolumeId: "blk", VolumePath: target})
	if err != nil || resp.GetCapacityBytes() != 16<<20 {
		t.Fatalf("node expand: %v, %v", resp, err)
	}
	if got := deviceSize(t, target); got != 16<<20 {
		t.Errorf("device size after node expand %d", got)
	}
	if m, err := readMeta(h, "blk"); err != nil || m.Capacity != 16<<20 {
		t.Errorf("record after expand: %+v, %v", m, err)
	}
	h.unpublish(t, "blk", target)
}

func deviceSize(t *testing.T, dev string) int64 {
	t.Helper()
	out, err := command("blockdev", "--getsize64", dev)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNodeInfo(t *testing.T) {
	h := start(t, options{nodeID: "node-b"})
	info, err := h.node.NodeGetInfo(bg, &csi.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != "node-b" {
		t.Errorf("NodeGetInfo: %v, %v", info, err)
	}
	caps, err := h.node.NodeGetCapabilities(bg, &csi.NodeGetCapabilitiesRequest{})
	if err != nil || len(caps.GetCapabilities()) != 2 {
		t.Errorf("NodeGetCapabilities: %v, %v", caps, err)
	}
}

// tryWrite writes a byte to a device and syncs it.
func tryWrite(dev string) error {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write([]byte{1}); err != nil {
		return err
	}
	return f.Sync()
}

// A loop device detached behind the driver's back (while it was down) is
// no reason to fail: detaching it again succeeds, so its pods can go.
func TestDetachLoopDetachedAlready(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	dev, err := attachLoop(file, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if loopBacks(dev, file) { // never another's device that took the number since
			_, _ = command("losetup", "--detach", dev)
		}
	})
	if _, err := command("losetup", "--detach", dev); err != nil {
		t.Fatal(err)
	}
	if err := detachLoop(dev); err != nil {
		t.Fatalf("detaching %s, detached already: %v", dev, err)
	}
}
