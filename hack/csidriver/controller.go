package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultCapacity is a volume's size when the request names none.
const defaultCapacity = 1 << 30

// controller is the CSI controller service: volumes and snapshots under the
// store's root.
type controller struct {
	csi.UnimplementedControllerServer
	s *store
	p *pacer
}

// source is the data a new volume starts from.
type source struct {
	snapshot, volume string // one of them
	block            bool
	size             int64
	data             string // its data's path
}

func (c *controller) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	name := req.GetName()
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	block, err := checkCapabilities(req.GetVolumeCapabilities())
	if err != nil {
		return nil, err
	}
	b, err := parseBehaviour(req.GetParameters())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	m := &volumeMeta{ID: name, Block: block, Parameters: req.GetParameters(), Created: time.Now().UTC()}
	if m.SourceSnapshot, m.SourceVolume, err = sourceIDs(req.GetVolumeContentSource()); err != nil {
		return nil, err
	}
	release, err := c.s.locks.lock(key(volumesDir, name), false)
	if err != nil {
		return nil, err
	}
	defer release()
	if old, err := c.s.volume(name); err == nil {
		return existingVolume(old, m, req.GetCapacityRange())
	} else if status.Code(err) != codes.NotFound {
		return nil, err
	}
	src, release, err := c.source(m.SourceSnapshot, m.SourceVolume)
	if err != nil {
		return nil, err
	}
	defer release()
	kind, fallback := opCreate, int64(defaultCapacity)
	if src != nil {
		kind, fallback = opClone, src.size
	}
	if m.Capacity, err = capacityOf(req.GetCapacityRange(), fallback); err != nil {
		return nil, err
	}
	if src != nil && (src.block != block || src.size > m.Capacity) {
		return nil, status.Errorf(codes.OutOfRange, "the source (block %t, %d bytes) does not fit a volume of block %t, %d bytes", src.block, src.size, block, m.Capacity)
	}
	if b.memory {
		unreserve, err := c.s.reserveMemory(name, m.Capacity)
		if err != nil {
			return nil, err
		}
		defer unreserve()
	}
	done, err := c.p.pace(ctx, kind, b)
	if err != nil {
		return nil, err
	}
	defer done()
	err = c.s.create(volumesDir, name, m, func(data string) error {
		if b.memory {
			from := ""
			if src != nil {
				from = src.data
			}
			return makeMemoryData(filepath.Dir(data), block, m.Capacity, from)
		}
		if src == nil {
			return makeData(data, block, m.Capacity)
		}
		if err := copyData(src.data, data); err != nil || !block {
			return err
		}
		return os.Truncate(data, m.Capacity)
	})
	if err != nil {
		return nil, err
	}
	return &csi.CreateVolumeResponse{Volume: m.csi()}, nil
}

// sourceIDs reads a CreateVolume's content source: a snapshot's or a
// volume's id, or neither.
func sourceIDs(cs *csi.VolumeContentSource) (snapshot, volume string, err error) {
	switch {
	case cs == nil:
		return "", "", nil
	case cs.GetSnapshot() != nil:
		snapshot = cs.GetSnapshot().GetSnapshotId()
		return snapshot, "", checkName("volume_content_source.snapshot.snapshot_id", snapshot)
	case cs.GetVolume() != nil:
		volume = cs.GetVolume().GetVolumeId()
		return "", volume, checkName("volume_content_source.volume.volume_id", volume)
	}
	return "", "", status.Error(codes.InvalidArgument, "volume_content_source names neither a snapshot nor a volume")
}

// source locks (shared) and reads a new volume's source; nil when there is
// none. release gives the lock back.
func (c *controller) source(snapshot, volume string) (src *source, release func(), err error) {
	if snapshot == "" && volume == "" {
		return nil, func() {}, nil
	}
	kind, id := snapshotsDir, snapshot
	if volume != "" {
		kind, id = volumesDir, volume
	}
	if release, err = c.s.locks.lock(key(kind, id), true); err != nil {
		return nil, nil, err
	}
	src = &source{snapshot: snapshot, volume: volume, data: c.s.data(kind, id)}
	if volume != "" {
		var m *volumeMeta
		if m, err = c.s.volume(id); err == nil {
			src.data, err = c.s.volumeData(m) // a memory volume's is elsewhere
		}
		src.block, src.size = m.Block, m.Capacity
	} else {
		var m *snapshotMeta
		m, err = c.s.snapshot(id)
		src.block, src.size = m.Block, m.Size
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	return src, release, nil
}

// existingVolume answers a CreateVolume for a name that exists: the same
// volume again, or AlreadyExists when the request asks for another.
func existingVolume(old, want *volumeMeta, r *csi.CapacityRange) (*csi.CreateVolumeResponse, error) {
	fits := old.Capacity >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || old.Capacity <= r.GetLimitBytes())
	if old.Block != want.Block || !fits || old.SourceSnapshot != want.SourceSnapshot || old.SourceVolume != want.SourceVolume ||
		old.inMemory() != want.inMemory() {
		return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with another size, type, medium or source", old.ID)
	}
	return &csi.CreateVolumeResponse{Volume: old.csi()}, nil
}

// csi is the volume as CSI tells it, with the content source it was made from.
func (m *volumeMeta) csi() *csi.Volume {
	v := &csi.Volume{VolumeId: m.ID, CapacityBytes: m.Capacity}
	switch {
	case m.SourceSnapshot != "":
		v.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
			Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: m.SourceSnapshot}}}
	case m.SourceVolume != "":
		v.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
			Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: m.SourceVolume}}}
	}
	return v
}

// capacityOf is the size a capacity range asks for: the required bytes, or
// fallback (bounded by the limit) when it names none.
func capacityOf(r *csi.CapacityRange, fallback int64) (int64, error) {
	req, limit := r.GetRequiredBytes(), r.GetLimitBytes()
	switch {
	case req < 0 || limit < 0:
		return 0, status.Error(codes.InvalidArgument, "capacity_range: negative bytes")
	case limit > 0 && req > limit:
		return 0, status.Errorf(codes.InvalidArgument, "capacity_range: required %d > limit %d", req, limit)
	case req > 0:
		return req, nil
	case limit > 0 && fallback > limit:
		return limit, nil
	}
	return fallback, nil
}

// checkCapabilities checks a request's volume capabilities and tells whether
// they ask for a block volume. A filesystem volume may be shared by every
// node, as all nodes share this machine's filesystem; a block volume only
// by one.
func checkCapabilities(caps []*csi.VolumeCapability) (block bool, err error) {
	if len(caps) == 0 {
		return false, status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	for i, c := range caps {
		var b bool
		switch c.GetAccessType().(type) {
		case *csi.VolumeCapability_Block:
			b = true
		case *csi.VolumeCapability_Mount:
		default:
			return false, status.Error(codes.InvalidArgument, "a volume capability names neither block nor mount")
		}
		if i > 0 && b != block {
			return false, status.Error(codes.InvalidArgument, "volume capabilities mix block and mount")
		}
		block = b
		switch mode := c.GetAccessMode().GetMode(); mode {
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
		case csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:
			if block {
				return false, status.Errorf(codes.InvalidArgument, "access mode %s is not supported for block volumes", mode)
			}
		default:
			return false, status.Errorf(codes.InvalidArgument, "access mode %s is not supported", mode)
		}
	}
	return block, nil
}

func (c *controller) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	release, err := c.s.lockID("volume_id", volumesDir, id, false)
	if err != nil {
		return nil, err
	}
	defer release()
	m, err := c.s.volume(id)
	if status.Code(err) == codes.NotFound {
		return &csi.DeleteVolumeResponse{}, nil
	} else if err != nil {
		return nil, err
	}
	if busy, err := c.s.published(id); err != nil || busy {
		if err == nil {
			err = status.Errorf(codes.FailedPrecondition, "volume %s is published", id)
		}
		return nil, err
	}
	done, err := c.p.paceVolume(ctx, opDelete, m.Parameters)
	if err != nil {
		return nil, err
	}
	defer done()
	return &csi.DeleteVolumeResponse{}, c.s.remove(volumesDir, id)
}

func (c *controller) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	size, err := capacityOf(req.GetCapacityRange(), 0)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	m, release, err := c.s.lockVolume("volume_id", volumesDir, id, false)
	if err != nil {
		return nil, err
	}
	defer release()
	// A block volume's loop devices learn its new size on the nodes.
	resp := &csi.ControllerExpandVolumeResponse{CapacityBytes: m.Capacity, NodeExpansionRequired: m.Block}
	if size <= m.Capacity {
		return resp, nil
	}
	memory := m.inMemory()
	if memory {
		unreserve, err := c.s.reserveMemory(id, size)
		if status.Code(err) == codes.ResourceExhausted {
			// CSI's one answer to a size the plugin does not allow.
			err = status.Error(codes.OutOfRange, status.Convert(err).Message())
		}
		if err != nil {
			return nil, err
		}
		defer unreserve()
	}
	done, err := c.p.paceVolume(ctx, opExpand, m.Parameters)
	if err != nil {
		return nil, err
	}
	defer done()
	data, err := c.s.volumeData(m)
	if err != nil {
		return nil, err
	}
	if memory {
		// The tmpfs first: the file may then grow on it.
		mnt, _ := memoryPaths(c.s.dir(volumesDir, id), m.Block)
		if err := resizeTmpfs(mnt, size); err != nil {
			return nil, internal(err)
		}
	}
	if m.Block {
		if err := os.Truncate(data, size); err != nil {
			return nil, internal(err)
		}
	}
	m.Capacity = size
	resp.CapacityBytes = size
	return resp, c.s.saveVolume(m)
}

func (c *controller) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	id := req.GetVolumeId()
	if err := checkName("volume_id", id); err != nil {
		return nil, err
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	m, err := c.s.volume(id)
	if err != nil {
		return nil, err
	}
	block, err := checkCapabilities(req.GetVolumeCapabilities())
	if err == nil && block != m.Block {
		err = status.Errorf(codes.InvalidArgument, "volume %s is block %t", id, m.Block)
	}
	if err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

func (c *controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}
