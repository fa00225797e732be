package main

import (
	"context"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A snapshot is a full copy of its volume's data, ready as soon as
// CreateSnapshot returns.

func (c *controller) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	name, vol := req.GetName(), req.GetSourceVolumeId()
	release, err := c.s.lockID("name", snapshotsDir, name, false)
	if err != nil {
		return nil, err
	}
	defer release()
	if old, err := c.s.snapshot(name); err == nil {
		if old.SourceVolume != vol {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists of volume %s", name, old.SourceVolume)
		}
		return &csi.CreateSnapshotResponse{Snapshot: old.csi()}, nil
	} else if status.Code(err) != codes.NotFound {
		return nil, err
	}
	v, releaseVol, err := c.s.lockVolume("source_volume_id", volumesDir, vol, true)
	if err != nil {
		return nil, err
	}
	defer releaseVol()
	done, err := c.p.paceVolume(ctx, opSnapshot, v.Parameters)
	if err != nil {
		return nil, err
	}
	defer done()
	m := &snapshotMeta{ID: name, SourceVolume: vol, Size: v.Capacity, Block: v.Block, Parameters: v.Parameters,
		SnapshotParameters: req.GetParameters(), Created: time.Now().UTC()}
	src, err := c.s.volumeData(v)
	if err != nil {
		return nil, err
	}
	// On the root's disk, whatever the volume's medium.
	err = c.s.create(snapshotsDir, name, m, func(data string) error {
		return copyData(src, data)
	})
	if err != nil {
		return nil, err
	}
	return &csi.CreateSnapshotResponse{Snapshot: m.csi()}, nil
}

func (m *snapshotMeta) csi() *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: m.ID, SourceVolumeId: m.SourceVolume, SizeBytes: m.Size,
		CreationTime: timestamppb.New(m.Created), ReadyToUse: true}
}

func (c *controller) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	release, err := c.s.lockID("snapshot_id", snapshotsDir, id, false)
	if err != nil {
		return nil, err
	}
	defer release()
	return &csi.DeleteSnapshotResponse{}, c.s.remove(snapshotsDir, id)
}

// ListSnapshots lists the snapshots in id order, filtered by snapshot id and
// source volume. A page's next_token is the id of the first snapshot it
// left off.
func (c *controller) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries is negative")
	}
	token := req.GetStartingToken()
	if token != "" && checkName("starting_token", token) != nil {
		return nil, status.Errorf(codes.Aborted, "starting_token %q is not a snapshot id", token)
	}
	ids := []string{req.GetSnapshotId()}
	if ids[0] == "" {
		var err error
		if ids, err = c.s.ids(snapshotsDir); err != nil {
			return nil, err
		}
	} else if checkName("snapshot_id", ids[0]) != nil {
		return &csi.ListSnapshotsResponse{}, nil // no such snapshot
	}
	resp := &csi.ListSnapshotsResponse{}
	for _, id := range ids {
		if id < token {
			continue
		}
		m, err := c.s.snapshot(id)
		if status.Code(err) == codes.NotFound {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, err
		}
		if vol := req.GetSourceVolumeId(); vol != "" && m.SourceVolume != vol {
			continue
		}
		if n := req.GetMaxEntries(); n > 0 && len(resp.Entries) == int(n) {
			resp.NextToken = id
			break
		}
		resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: m.csi()})
	}
	return resp, nil
}
