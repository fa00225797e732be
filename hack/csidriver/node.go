package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// node is the CSI node service. There is no staging: NodePublishVolume bind
// mounts the volume's directory, or a loop device on its file, straight onto
// the target path. All nodes share this machine's mount namespace and the
// driver's root; each keeps its publications in its own file per volume.
type node struct {
	csi.UnimplementedNodeServer
	s  *store
	p  *pacer
	id string
}

// publishDir is the kind of the lock a node's operations on a volume take:
// apart from the controller's lock on it, which another process may well
// hold.
const publishDir = "publish"

// volumeRequest checks the volume id and path every node request carries and
// reads the volume, under its lock.
func (n *node) volumeRequest(id, pathField, path string) (m *volumeMeta, release func(), err error) {
	if path == "" || !filepath.IsAbs(path) {
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s %q: an absolute path is required", pathField, path)
	}
	return n.s.lockVolume("volume_id", publishDir, id, false)
}

func (n *node) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	block, err := checkCapabilities([]*csi.VolumeCapability{req.GetVolumeCapability()})
	if err != nil {
		return nil, err
	}
	target, ro := filepath.Clean(req.GetTargetPath()), req.GetReadonly()
	m, release, err := n.volumeRequest(req.GetVolumeId(), "target_path", req.GetTargetPath())
	if err != nil {
		return nil, err
	}
	defer release()
	if m.Block != block {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s is block %t", m.ID, m.Block)
	}
	st, err := n.s.nodeState(m.ID, n.id)
	if err != nil {
		return nil, err
	}
	if pub, ok := st.Publications[target]; ok {
		mounted, err := isMountPoint(target)
		switch {
		case err != nil:
			return nil, internal(err)
		case mounted && pub.ReadOnly != ro:
			return nil, status.Errorf(codes.AlreadyExists, "volume %s is published at %s with readonly %t", m.ID, target, pub.ReadOnly)
		case mounted:
			return &csi.NodePublishVolumeResponse{}, nil
		}
		if err := unpublish(st, target); err != nil { // a stale record
			return nil, internal(err)
		}
	}
	done, err := n.p.paceVolume(ctx, opPublish, m.Parameters)
	if err != nil {
		return nil, err
	}
	defer done()
	data, err := n.s.volumeData(m)
	if err != nil {
		return nil, err
	}
	pub, err := publish(data, m.Block, target, ro, st)
	if err != nil {
		return nil, internal(err)
	}
	st.Publications[target] = pub
	return &csi.NodePublishVolumeResponse{}, n.s.saveNodeState(m.ID, n.id, st)
}

// publish mounts a volume's data at target: a directory by a bind mount; a
// block file by a loop device whose node is bind mounted on a file at
// target. Read-write publications share one loop device; a read-only one
// gets its own, attached read-only, as a read-only mount does not keep a
// device node from being written.
func publish(data string, block bool, target string, ro bool, st *nodeState) (publication, error) {
	pub := publication{ReadOnly: ro}
	if !block {
		if err := os.MkdirAll(target, 0o750); err != nil {
			return pub, err
		}
		return pub, bindMount(data, target, ro)
	}
	for _, p := range st.Publications {
		if !ro && !p.ReadOnly && p.Loop != "" && loopBacks(p.Loop, data) {
			pub.Loop = p.Loop
		}
	}
	fresh := pub.Loop == ""
	var err error
	if fresh {
		if pub.Loop, err = attachLoop(data, ro); err != nil {
			return pub, err
		}
	}
	if err = os.MkdirAll(filepath.Dir(target), 0o750); err == nil {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o600); err == nil {
			_ = f.Close()
			err = bindMount(pub.Loop, target, ro)
		}
	}
	if err != nil && fresh {
		_ = detachLoop(pub.Loop)
	}
	return pub, err
}

// unpublish unmounts target, removes it, forgets its publication and detaches
// its loop device when no other publication uses it. It is idempotent.
func unpublish(st *nodeState, target string) error {
	mounted, err := isMountPoint(target)
	if err != nil {
		return err
	}
	if mounted {
		if err := unix.Unmount(target, 0); err != nil {
			return err
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	pub, ok := st.Publications[target]
	delete(st.Publications, target)
	if !ok || pub.Loop == "" {
		return nil
	}
	for _, p := range st.Publications {
		if p.Loop == pub.Loop {
			return nil
		}
	}
	return detachLoop(pub.Loop)
}

func (n *node) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	m, release, err := n.volumeRequest(req.GetVolumeId(), "target_path", req.GetTargetPath())
	if err != nil {
		return nil, err
	}
	defer release()
	st, err := n.s.nodeState(m.ID, n.id)
	if err != nil {
		return nil, err
	}
	if err := unpublish(st, filepath.Clean(req.GetTargetPath())); err != nil {
		return nil, internal(err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, n.s.saveNodeState(m.ID, n.id, st)
}

// NodeGetVolumeStats tells a filesystem volume's bytes and inodes (those of
// the filesystem holding the driver's root, or a memory volume's tmpfs) and
// a block volume's size.
func (n *node) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	m, release, err := n.volumeRequest(req.GetVolumeId(), "volume_path", req.GetVolumePath())
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := os.Stat(req.GetVolumePath()); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume_path: %v", err)
	}
	if m.Block {
		data, err := n.s.volumeData(m)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(data)
		if err != nil {
			return nil, internal(err)
		}
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Total: fi.Size(), Unit: csi.VolumeUsage_BYTES}}}, nil
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(req.GetVolumePath(), &fs); err != nil {
		return nil, internal(err)
	}
	bs := fs.Bsize
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(fs.Blocks) * bs, Available: int64(fs.Bavail) * bs, Used: int64(fs.Blocks-fs.Bfree) * bs},
		{Unit: csi.VolumeUsage_INODES, Total: int64(fs.Files), Available: int64(fs.Ffree), Used: int64(fs.Files - fs.Ffree)},
	}}, nil
}

// NodeExpandVolume makes this node's loop devices on a block volume take the
// size its file grew to; a filesystem volume has nothing to grow.
func (n *node) NodeExpandVolume(_ context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	m, release, err := n.volumeRequest(req.GetVolumeId(), "volume_path", req.GetVolumePath())
	if err != nil {
		return nil, err
	}
	defer release()
	if !m.Block {
		return &csi.NodeExpandVolumeResponse{CapacityBytes: m.Capacity}, nil
	}
	st, err := n.s.nodeState(m.ID, n.id)
	if err != nil {
		return nil, err
	}
	data, err := n.s.volumeData(m)
	if err != nil {
		return nil, err
	}
	for _, p := range st.Publications {
		if p.Loop != "" && loopBacks(p.Loop, data) {
			if err := refreshLoop(p.Loop); err != nil {
				return nil, internal(err)
			}
		}
	}
	fi, err := os.Stat(data)
	if err != nil {
		return nil, internal(err)
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: fi.Size()}, nil
}

func (n *node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: n.id}, nil
}

func (n *node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	var caps []*csi.NodeServiceCapability
	for _, t := range []csi.NodeServiceCapability_RPC_Type{
		csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
		csi.NodeServiceCapability_RPC_EXPAND_VOLUME,
	} {
		caps = append(caps, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{
			Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}
