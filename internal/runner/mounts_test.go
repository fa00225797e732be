package runner

import (
	"testing"

	"github.com/storagebench/storagebench/internal/protocol"
)

func TestMountOf(t *testing.T) {
	const mounts = `overlay / overlay rw,relatime,lowerdir=/l,upperdir=/u,workdir=/w 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
10.0.0.5:/trident_pvc_1234 /storagebench/data nfs4 rw,relatime,vers=4.1,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,retrans=2,sec=sys 0 0
/dev/sdb /storagebench/data/deeper ext4 rw,relatime 0 0
/dev/sdc /mnt/with\040space xfs rw,noatime 0 0
tmpfs /storagebench/datadir tmpfs rw 0 0
`
	tests := []struct {
		path string
		want protocol.Mount
		ok   bool
	}{
		{"/storagebench/data", protocol.Mount{Source: "10.0.0.5:/trident_pvc_1234", FSType: "nfs4", Options: "rw,relatime,vers=4.1,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,retrans=2,sec=sys"}, true},
		{"/storagebench/data/", protocol.Mount{Source: "10.0.0.5:/trident_pvc_1234", FSType: "nfs4", Options: "rw,relatime,vers=4.1,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,retrans=2,sec=sys"}, true},
		{"/storagebench/data/client-001", protocol.Mount{Source: "10.0.0.5:/trident_pvc_1234", FSType: "nfs4", Options: "rw,relatime,vers=4.1,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,retrans=2,sec=sys"}, true},
		{"/storagebench/data/deeper/x", protocol.Mount{Source: "/dev/sdb", FSType: "ext4", Options: "rw,relatime"}, true},
		{"/storagebench/datadir2", protocol.Mount{Source: "overlay", FSType: "overlay", Options: "rw,relatime,lowerdir=/l,upperdir=/u,workdir=/w"}, true},
		{"/mnt/with space/f", protocol.Mount{Source: "/dev/sdc", FSType: "xfs", Options: "rw,noatime"}, true},
	}
	for _, tt := range tests {
		got, ok := MountOf(mounts, tt.path)
		if ok != tt.ok || got != tt.want {
			t.Errorf("MountOf(%q) = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := MountOf("garbage\n\n", "/x"); ok {
		t.Error("MountOf found a mount in garbage")
	}
}

// The runner's own process has a root mount at least.
func TestVolumeMountReadsProc(t *testing.T) {
	m := volumeMount(t.TempDir())
	if m == nil || m.FSType == "" || m.Options == "" {
		t.Fatalf("volumeMount = %+v, want the temp dir's file system", m)
	}
}
