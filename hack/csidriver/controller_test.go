package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

func TestCreateDeleteIdempotent(t *testing.T) {
	h := start(t, options{})
	for _, block := range []bool{false, true} {
		name := map[bool]string{false: "pvc-fs", true: "pvc-blk"}[block]
		v := h.mustCreate(t, volumeReq(name, block, 4<<20, map[string]string{"csi.storage.k8s.io/pvc/name": "x", "other": "y"}))
		again := h.mustCreate(t, volumeReq(name, block, 4<<20, nil))
		if v.GetVolumeId() != name || again.GetVolumeId() != name || again.GetCapacityBytes() != 4<<20 {
			t.Fatalf("volumes %v, %v", v, again)
		}
		_, err := h.ctl.CreateVolume(bg, volumeReq(name, !block, 4<<20, nil))
		wantCode(t, err, codes.AlreadyExists)
		_, err = h.ctl.CreateVolume(bg, volumeReq(name, block, 8<<20, nil))
		wantCode(t, err, codes.AlreadyExists)
		fi, err := os.Stat(h.data(volumesDir, name))
		if err != nil || fi.IsDir() == block {
			t.Fatalf("data of %s: %v, %v", name, fi, err)
		}
		m, err := readMeta(h, name)
		if err != nil || m.Parameters["other"] != "y" || m.Block != block {
			t.Fatalf("record %+v, %v", m, err)
		}
		for range 2 {
			if _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: name}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(h.root, volumesDir, name)); !os.IsNotExist(err) {
			t.Fatalf("%s still there: %v", name, err)
		}
	}
	// A block volume is sparse.
	h.mustCreate(t, volumeReq("big", true, 1<<30, nil))
	fi, err := os.Stat(h.data(volumesDir, "big"))
	if err != nil || fi.Size() != 1<<30 {
		t.Fatalf("big: %v, %v", fi, err)
	}
	if used := fileBlocks(t, h.data(volumesDir, "big")); used > 0 {
		t.Errorf("a new block volume uses %d blocks", used)
	}
}

func readMeta(h *harness, id string) (*volumeMeta, error) {
	var m volumeMeta
	return &m, readJSON(filepath.Join(h.root, volumesDir, id, metaFile), &m)
}

func fileBlocks(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}

// Every RPC checks its input, and no name leaves the root.
func TestValidation(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("fs", false, 1<<20, nil))
	mnt := mountCap(rwo)
	rwx := csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	snapSource := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "nope"}}}
	withSource := volumeReq("clone", false, 0, nil)
	withSource.VolumeContentSource = snapSource
	for _, tc := range []struct {
		name string
		call func() error
		want codes.Code
		msg  string
	}{
		{"create escaping name", func() error { _, err := h.ctl.CreateVolume(bg, volumeReq("../x", false, 1, nil)); return err }, codes.InvalidArgument, "name"},
		{"create no name", func() error { _, err := h.ctl.CreateVolume(bg, volumeReq("", false, 1, nil)); return err }, codes.InvalidArgument, "name"},
		{"create no capabilities", func() error {
			_, err := h.ctl.CreateVolume(bg, &csi.CreateVolumeRequest{Name: "a"})
			return err
		}, codes.InvalidArgument, "capabilities"},
		{"create block rwx", func() error {
			_, err := h.ctl.CreateVolume(bg, &csi.CreateVolumeRequest{Name: "a", VolumeCapabilities: []*csi.VolumeCapability{blockCap(rwx)}})
			return err
		}, codes.InvalidArgument, "MULTI_NODE_MULTI_WRITER"},
		{"create unknown parameter", func() error {
			_, err := h.ctl.CreateVolume(bg, volumeReq("a", false, 1, map[string]string{"storagebench.test/delay-lunch": "1s"}))
			return err
		}, codes.InvalidArgument, "storagebench.test/delay-lunch"},
		{"create bad delay", func() error {
			_, err := h.ctl.CreateVolume(bg, volumeReq("a", false, 1, map[string]string{"storagebench.test/delay-create": "soon"}))
			return err
		}, codes.InvalidArgument, "storagebench.test/delay-create"},
		{"create limit below required", func() error {
			r := volumeReq("a", false, 2, nil)
			r.CapacityRange.LimitBytes = 1
			_, err := h.ctl.CreateVolume(bg, r)
			return err
		}, codes.InvalidArgument, "limit"},
		{"clone of unknown snapshot", func() error { _, err := h.ctl.CreateVolume(bg, withSource); return err }, codes.NotFound, "nope"},
		{"delete no id", func() error { _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{}); return err }, codes.InvalidArgument, "volume_id"},
		{"delete escaping id", func() error { _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: "../x"}); return err }, codes.InvalidArgument, "volume_id"},
		{"snapshot unknown volume", func() error {
			_, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "nope"})
			return err
		}, codes.NotFound, "nope"},
		{"snapshot escaping name", func() error {
			_, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "../s", SourceVolumeId: "fs"})
			return err
		}, codes.InvalidArgument, "name"},
		{"delete snapshot escaping id", func() error {
			_, err := h.ctl.DeleteSnapshot(bg, &csi.DeleteSnapshotRequest{SnapshotId: "a/../../b"})
			return err
		}, codes.InvalidArgument, "snapshot_id"},
		{"list bad token", func() error {
			_, err := h.ctl.ListSnapshots(bg, &csi.ListSnapshotsRequest{StartingToken: "../x"})
			return err
		}, codes.Aborted, "starting_token"},
		{"expand unknown", func() error {
			_, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "nope", CapacityRange: &csi.CapacityRange{RequiredBytes: 1}})
			return err
		}, codes.NotFound, "nope"},
		{"expand no range", func() error {
			_, err := h.ctl.ControllerExpandVolume(bg, &csi.ControllerExpandVolumeRequest{VolumeId: "fs"})
			return err
		}, codes.InvalidArgument, "capacity_range"},
		{"validate unknown", func() error {
			_, err := h.ctl.ValidateVolumeCapabilities(bg, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "nope", VolumeCapabilities: []*csi.VolumeCapability{mnt}})
			return err
		}, codes.NotFound, "nope"},
		{"publish unknown", func() error {
			_, err := h.node.NodePublishVolume(bg, &csi.NodePublishVolumeRequest{VolumeId: "nope", TargetPath: h.dir + "/t", VolumeCapability: mnt})
			return err
		}, codes.NotFound, "nope"},
		{"publish relative target", func() error {
			_, err := h.node.NodePublishVolume(bg, &csi.NodePublishVolumeRequest{VolumeId: "fs", TargetPath: "t", VolumeCapability: mnt})
			return err
		}, codes.InvalidArgument, "target_path"},
		{"publish block capability on filesystem", func() error {
			_, err := h.node.NodePublishVolume(bg, &csi.NodePublishVolumeRequest{VolumeId: "fs", TargetPath: h.dir + "/t", VolumeCapability: blockCap(rwo)})
			return err
		}, codes.InvalidArgument, "block"},
		{"unpublish escaping id", func() error {
			_, err := h.node.NodeUnpublishVolume(bg, &csi.NodeUnpublishVolumeRequest{VolumeId: "..", TargetPath: h.dir + "/t"})
			return err
		}, codes.InvalidArgument, "volume_id"},
		{"stats no path", func() error {
			_, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "fs"})
			return err
		}, codes.InvalidArgument, "volume_path"},
		{"stats missing path", func() error {
			_, err := h.node.NodeGetVolumeStats(bg, &csi.NodeGetVolumeStatsRequest{VolumeId: "fs", VolumePath: h.dir + "/none"})
			return err
		}, codes.NotFound, "volume_path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, tc.call(), tc.want, tc.msg)
		})
	}
	if _, err := os.Stat(filepath.Join(h.root, "x")); !os.IsNotExist(err) {
		t.Errorf("something was made outside the volumes: %v", err)
	}
	resp, err := h.ctl.ValidateVolumeCapabilities(bg, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "fs",
		VolumeCapabilities: []*csi.VolumeCapability{mountCap(rwx)}})
	if err != nil || resp.GetConfirmed() == nil {
		t.Errorf("rwx on a filesystem volume: %v, %v", resp, err)
	}
	resp, err = h.ctl.ValidateVolumeCapabilities(bg, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "fs",
		VolumeCapabilities: []*csi.VolumeCapability{blockCap(rwo)}})
	if err != nil || resp.GetConfirmed() != nil || resp.GetMessage() == "" {
		t.Errorf("block on a filesystem volume: %v, %v", resp, err)
	}
}

func TestSnapshotsAndClones(t *testing.T) {
	h := start(t, options{})
	// A filesystem volume with a file, snapshotted, then changed.
	h.mustCreate(t, volumeReq("fs", false, 1<<20, nil))
	file := filepath.Join(h.data(volumesDir, "fs"), "hello")
	writeFile(t, file, "before")
	snap, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-fs", SourceVolumeId: "fs"})
	if err != nil {
		t.Fatal(err)
	}
	s := snap.GetSnapshot()
	if !s.GetReadyToUse() || s.GetSizeBytes() != 1<<20 || s.GetCreationTime().AsTime().IsZero() || s.GetSourceVolumeId() != "fs" {
		t.Fatalf("snapshot %v", s)
	}
	if again, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-fs", SourceVolumeId: "fs"}); err != nil ||
		!again.GetSnapshot().GetCreationTime().AsTime().Equal(s.GetCreationTime().AsTime()) {
		t.Fatalf("snapshot again: %v, %v", again, err)
	}
	h.mustCreate(t, volumeReq("other", false, 1<<20, nil))
	_, err = h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-fs", SourceVolumeId: "other"})
	wantCode(t, err, codes.AlreadyExists)
	writeFile(t, file, "after")

	fromSnap := cloneReq("c1", false, 0, snapshotSource("snap-fs"))
	v := h.mustCreate(t, fromSnap)
	if v.GetContentSource().GetSnapshot().GetSnapshotId() != "snap-fs" || v.GetCapacityBytes() != 1<<20 {
		t.Errorf("clone of a snapshot: %v", v)
	}
	wantFile(t, filepath.Join(h.data(volumesDir, "c1"), "hello"), "before")
	v = h.mustCreate(t, cloneReq("c2", false, 2<<20, volumeSource("fs")))
	if v.GetContentSource().GetVolume().GetVolumeId() != "fs" || v.GetCapacityBytes() != 2<<20 {
		t.Errorf("clone of a volume: %v", v)
	}
	wantFile(t, filepath.Join(h.data(volumesDir, "c2"), "hello"), "after")
	// The same clone again is the same volume, with its source echoed.
	if v := h.mustCreate(t, fromSnap); v.GetContentSource().GetSnapshot().GetSnapshotId() != "snap-fs" {
		t.Errorf("clone again: %v", v)
	}
	_, err = h.ctl.CreateVolume(bg, cloneReq("c3", true, 0, snapshotSource("snap-fs")))
	wantCode(t, err, codes.OutOfRange)

	// A block volume with bytes at 1 MiB, cloned from its snapshot into a
	// bigger volume.
	h.mustCreate(t, volumeReq("blk", true, 2<<20, nil))
	payload := []byte("block payload")
	writeAt(t, h.data(volumesDir, "blk"), payload, 1<<20)
	if _, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-blk", SourceVolumeId: "blk"}); err != nil {
		t.Fatal(err)
	}
	h.mustCreate(t, cloneReq("c4", true, 4<<20, snapshotSource("snap-blk")))
	if got := readAt(t, h.data(volumesDir, "c4"), len(payload), 1<<20); !bytes.Equal(got, payload) {
		t.Errorf("clone of a block snapshot reads %q", got)
	}
	if fi, err := os.Stat(h.data(volumesDir, "c4")); err != nil || fi.Size() != 4<<20 {
		t.Errorf("clone of a block snapshot: %v, %v", fi, err)
	}
	_, err = h.ctl.CreateVolume(bg, cloneReq("c5", true, 1<<20, volumeSource("blk")))
	wantCode(t, err, codes.OutOfRange)
}

func cloneReq(name string, block bool, size int64, src *csi.VolumeContentSource) *csi.CreateVolumeRequest {
	r := volumeReq(name, block, size, nil)
	r.VolumeContentSource = src
	return r
}

func snapshotSource(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func volumeSource(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func wantFile(t *testing.T, path, text string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != text {
		t.Errorf("%s: %q, %v; want %q", path, b, err, text)
	}
}

func writeAt(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt(b, off)
		if err == nil {
			err = f.Sync()
		}
		_ = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func readAt(t *testing.T, path string, n int, off int64) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestListSnapshots(t *testing.T) {
	h := start(t, options{})
	h.mustCreate(t, volumeReq("a", false, 1<<20, nil))
	h.mustCreate(t, volumeReq("b", false, 1<<20, nil))
	for _, s := range [][2]string{{"s1", "a"}, {"s2", "b"}, {"s3", "a"}} {
		if _, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: s[0], SourceVolumeId: s[1]}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(req *csi.ListSnapshotsRequest) (ids []string, next string) {
		t.Helper()
		resp, err := h.ctl.ListSnapshots(bg, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.GetEntries() {
			ids = append(ids, e.GetSnapshot().GetSnapshotId())
		}
		return ids, resp.GetNextToken()
	}
	for _, tc := range []struct {
		name      string
		req       *csi.ListSnapshotsRequest
		want      string
		wantToken string
	}{
		{"all", &csi.ListSnapshotsRequest{}, "s1 s2 s3", ""},
		{"by id", &csi.ListSnapshotsRequest{SnapshotId: "s2"}, "s2", ""},
		{"unknown id", &csi.ListSnapshotsRequest{SnapshotId: "s9"}, "", ""},
		{"unsafe id", &csi.ListSnapshotsRequest{SnapshotId: "../s1"}, "", ""},
		{"by source", &csi.ListSnapshotsRequest{SourceVolumeId: "a"}, "s1 s3", ""},
		{"id and other source", &csi.ListSnapshotsRequest{SnapshotId: "s2", SourceVolumeId: "a"}, "", ""},
		{"first page", &csi.ListSnapshotsRequest{MaxEntries: 2}, "s1 s2", "s3"},
		{"second page", &csi.ListSnapshotsRequest{MaxEntries: 2, StartingToken: "s3"}, "s3", ""},
		{"page by source", &csi.ListSnapshotsRequest{MaxEntries: 1, SourceVolumeId: "a"}, "s1", "s3"},
	} {
		ids, next := list(tc.req)
		if strings.Join(ids, " ") != tc.want || next != tc.wantToken {
			t.Errorf("%s: %v next %q, want %q next %q", tc.name, ids, next, tc.want, tc.wantToken)
		}
	}
	for range 2 {
		if _, err := h.ctl.DeleteSnapshot(bg, &csi.DeleteSnapshotRequest{SnapshotId: "s2"}); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := list(&csi.ListSnapshotsRequest{}); strings.Join(ids, " ") != "s1 s3" {
		t.Errorf("after deleting s2: %v", ids)
	}
}

// Three concurrent creates of a serial class with a delay finish one delay
// apart at least; a delete takes its delay.
func TestDelaySerial(t *testing.T) {
	h := start(t, options{})
	const delay = 200 * time.Millisecond
	params := map[string]string{"storagebench.test/delay-create": delay.String(), "storagebench.test/serial": "true",
		"storagebench.test/delay-delete": "100ms"}
	begin := time.Now()
	var (
		mu       sync.Mutex
		finished []time.Duration
		wg       sync.WaitGroup
	)
	for _, name := range []string{"v1", "v2", "v3"} {
		wg.Go(func() {
			if _, err := h.ctl.CreateVolume(bg, volumeReq(name, false, 1<<20, params)); err != nil {
				t.Error(err)
			}
			mu.Lock()
			finished = append(finished, time.Since(begin))
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Slice(finished, func(i, j int) bool { return finished[i] < finished[j] })
	t.Logf("finished at %v", finished)
	for i, f := range finished {
		// The i-th to finish waited for i others' delays, then its own.
		if f < time.Duration(i+1)*delay {
			t.Errorf("create %d finished at %v, before %v", i+1, f, time.Duration(i+1)*delay)
		}
	}
	begin = time.Now()
	if _, err := h.ctl.DeleteVolume(bg, &csi.DeleteVolumeRequest{VolumeId: "v1"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 100*time.Millisecond {
		t.Errorf("delete took %v, want 100ms at least", took)
	}
}
