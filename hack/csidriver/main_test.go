package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// harness is a driver served over a unix socket in a temporary directory,
// with clients for its services.
type harness struct {
	dir, root string
	id        csi.IdentityClient
	ctl       csi.ControllerClient
	node      csi.NodeClient
	stop      func() // stops the driver; the test's cleanup calls it too
}

// start serves the driver in a new temporary directory (or, when o.root is
// set, on that root) with o's other flags defaulted. Every mount and loop
// device left under the directory is undone when the test ends.
func start(t *testing.T, o options) *harness {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { cleanHost(t, dir) })
	if o.root == "" {
		o.root = filepath.Join(dir, "root")
	}
	o.endpoint = "unix://" + filepath.Join(dir, "csi.sock")
	for _, d := range []struct {
		v   *string
		def string
	}{
		{&o.nodeID, "node-a"}, {&o.driverName, "csi.storagebench.test"}, {&o.mode, "both"},
	} {
		if *d.v == "" {
			*d.v = d.def
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	conn := dial(t, filepath.Join(dir, "csi.sock"))
	return &harness{dir: dir, root: o.root, stop: stop,
		id: csi.NewIdentityClient(conn), ctl: csi.NewControllerClient(conn), node: csi.NewNodeClient(conn)}
}

// dial connects to a socket once it exists.
func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(path); err == nil {
			break
		} else if i == 500 {
			t.Fatalf("no socket at %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// cleanHost undoes the mounts under dir and detaches the loop devices on its
// files, whatever a test left.
func cleanHost(t *testing.T, dir string) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	points := mountPoints(t)
	slices.Reverse(points) // the last mounted first
	for _, p := range points {
		if strings.HasPrefix(p, dir+"/") {
			t.Logf("cleanup: unmounting %s", p)
			_ = unix.Unmount(p, unix.MNT_DETACH)
		}
	}
	for _, loop := range loopsUnder(t, dir) {
		t.Logf("cleanup: detaching %s", loop)
		_ = detachLoop(loop)
	}
}

// mountPoints lists this mount namespace's mount points (those the tests
// make have no characters mountinfo escapes).
func mountPoints(t *testing.T) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Error(err)
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mount-point options …
		if f := strings.Fields(line); len(f) > 4 {
			points = append(points, f[4])
		}
	}
	return points
}

// loopsUnder lists the loop devices whose backing file is under dir.
func loopsUnder(t *testing.T, dir string) []string {
	out, err := command("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE")
	if err != nil {
		t.Error(err)
	}
	var loops []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], dir+"/") {
			loops = append(loops, f[0])
		}
	}
	return loops
}

var bg = context.Background()

func mountCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
}

func blockCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
}

const rwo = csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER

// volumeReq is a CreateVolume request for a filesystem or block volume of
// size bytes.
func volumeReq(name string, block bool, size int64, params map[string]string) *csi.CreateVolumeRequest {
	c := mountCap(rwo)
	if block {
		c = blockCap(rwo)
	}
	return &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{c},
		CapacityRange: &csi.CapacityRange{RequiredBytes: size}, Parameters: params}
}

// mustCreate creates a volume or fails the test.
func (h *harness) mustCreate(t *testing.T, req *csi.CreateVolumeRequest) *csi.Volume {
	t.Helper()
	resp, err := h.ctl.CreateVolume(bg, req)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", req.GetName(), err)
	}
	return resp.GetVolume()
}

func (h *harness) data(kind, id string) string { return filepath.Join(h.root, kind, id, dataName) }

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// wantStatus checks an error's code and that its message says msg.
func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	wantCode(t, err, code)
	if !strings.Contains(status.Convert(err).Message(), msg) {
		t.Errorf("message %q does not say %q", status.Convert(err).Message(), msg)
	}
}

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"unix:///run/x/csi.sock", "/run/x/csi.sock"},
		{"unix:/run/csi.sock", "/run/csi.sock"},
		{"/run/csi.sock", "/run/csi.sock"},
		{"unix://relative/csi.sock", ""},
		{"tcp://127.0.0.1:10000", ""},
	} {
		got, err := parseEndpoint(tc.in)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("parseEndpoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestIdentity(t *testing.T) {
	for _, mode := range []string{"both", "node"} {
		t.Run(mode, func(t *testing.T) {
			h := start(t, options{mode: mode, driverName: "csi.example.test"})
			info, err := h.id.GetPluginInfo(bg, &csi.GetPluginInfoRequest{})
			if err != nil || info.GetName() != "csi.example.test" || info.GetVendorVersion() != version {
				t.Fatalf("GetPluginInfo: %v, %v", info, err)
			}
			caps, err := h.id.GetPluginCapabilities(bg, &csi.GetPluginCapabilitiesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			controller := false
			for _, c := range caps.GetCapabilities() {
				controller = controller || c.GetService().GetType() == csi.PluginCapability_Service_CONTROLLER_SERVICE
			}
			if controller != (mode == "both") {
				t.Errorf("controller service advertised %t in mode %s", controller, mode)
			}
			if p, err := h.id.Probe(bg, &csi.ProbeRequest{}); err != nil || !p.GetReady().GetValue() {
				t.Errorf("Probe: %v, %v", p, err)
			}
			_, err = h.ctl.ControllerGetCapabilities(bg, &csi.ControllerGetCapabilitiesRequest{})
			if mode == "node" {
				wantCode(t, err, codes.Unimplemented)
			} else if err != nil {
				t.Error(err)
			}
		})
	}
}

// A restarted driver finds its volumes and snapshots on its root.
func TestRestartKeepsState(t *testing.T) {
	h := start(t, options{})
	vol := h.mustCreate(t, volumeReq("pvc-1", false, 1<<20, map[string]string{"x": "y"}))
	if _, err := h.ctl.CreateSnapshot(bg, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	h.stop()
	h2 := start(t, options{root: h.root})
	again := h2.mustCreate(t, volumeReq("pvc-1", false, 1<<20, nil))
	if again.GetVolumeId() != vol.GetVolumeId() || again.GetCapacityBytes() != vol.GetCapacityBytes() {
		t.Errorf("after restart: %v, want %v", again, vol)
	}
	list, err := h2.ctl.ListSnapshots(bg, &csi.ListSnapshotsRequest{})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetSnapshot().GetSourceVolumeId() != "pvc-1" {
		t.Errorf("snapshots after restart: %v, %v", list, err)
	}
}

// listen replaces a stale socket but no other file.
func TestListen(t *testing.T) {
	dir := t.TempDir()
	sock, file := filepath.Join(dir, "stale.sock"), filepath.Join(dir, "file")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = l.Close()
	if l, err = listen(sock); err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	_ = l.Close()
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := listen(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("listen over a plain file: %v", err)
	}
}
