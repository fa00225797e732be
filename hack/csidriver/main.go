// Command csidriver is a small CSI driver for the local test cluster, whose
// kubelets are host processes sharing this machine's mount namespace. One
// process per node serves the node service (and, on one of them, the
// controller service) next to the kubernetes-csi sidecars; all of them share
// --root, where the volumes, snapshots and a JSON record of each live, so a
// restarted driver keeps its state (store.go).
//
// A filesystem volume is a directory under the root, bind mounted onto the
// pod's target path; a block volume is a sparse file, attached to a loop
// device whose node is bind mounted onto the target (node.go). Snapshots and
// clones are full copies (snapshot.go, controller.go). StorageClass
// parameters under storagebench.test/ make operations take a commanded time
// and run one at a time, a ground truth for the benchmarks (params.go), and
// can put a volume's data on a tmpfs, a device whose latency does not depend
// on the machine's disk (memory.go).
//
// With --registration-dir the driver registers itself with the kubelet
// (registration.go), so no node-driver-registrar is needed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// options are the flags.
type options struct {
	endpoint, root, nodeID, driverName, mode string
	registrationPath, registrationDir        string
	memoryLimit                              string
}

func main() {
	var o options
	host, _ := os.Hostname()
	flag.StringVar(&o.endpoint, "endpoint", "unix:///run/csi-storagebench/csi.sock", "the CSI endpoint to serve")
	flag.StringVar(&o.root, "root", "/var/lib/csi-storagebench", "the driver's state: volumes, snapshots and their records")
	flag.StringVar(&o.nodeID, "node-id", host, "this node's name")
	flag.StringVar(&o.driverName, "driver-name", "csi.storagebench.test", "the driver's name")
	flag.StringVar(&o.mode, "mode", "both", "the services to serve: controller, node or both")
	flag.StringVar(&o.registrationPath, "kubelet-registration-path", "", "the CSI endpoint as the kubelet reaches it (default: --endpoint's path)")
	flag.StringVar(&o.registrationDir, "registration-dir", "", "serve the kubelet's plugin registration in this directory (e.g. /var/lib/kubelet/plugins_registry); empty: off")
	flag.StringVar(&o.memoryLimit, "memory-limit", "", "the most the memory volumes' capacities add up to, a quantity such as 4Gi (default: a quarter of the machine's memory)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal("csidriver: ", err)
	}
}

// run serves the driver until ctx ends.
func run(ctx context.Context, o options) error {
	path, err := parseEndpoint(o.endpoint)
	if err != nil {
		return err
	}
	controllerMode, nodeMode := o.mode == "controller" || o.mode == "both", o.mode == "node" || o.mode == "both"
	if !controllerMode && !nodeMode {
		return fmt.Errorf("--mode %q: want controller, node or both", o.mode)
	}
	if o.driverName == "" || strings.ContainsRune(o.driverName, '/') {
		return fmt.Errorf("--driver-name %q: want a name", o.driverName)
	}
	if err := checkName("--node-id", o.nodeID); nodeMode && err != nil {
		return errors.New(status.Convert(err).Message())
	}
	s, err := newStore(o.root)
	if err != nil {
		return err
	}
	if s.memory.limit, err = memoryLimit(o.memoryLimit); err != nil {
		return err
	}
	p := newPacer()
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCall))
	csi.RegisterIdentityServer(srv, &identity{name: o.driverName, controller: controllerMode})
	if controllerMode {
		csi.RegisterControllerServer(srv, &controller{s: s, p: p})
	}
	if nodeMode {
		csi.RegisterNodeServer(srv, &node{s: s, p: p, id: o.nodeID})
	}
	servers := []endpoint{{srv, path}}
	if o.registrationDir != "" {
		reg := grpc.NewServer()
		kubeletPath := o.registrationPath
		if kubeletPath == "" {
			kubeletPath = path
		}
		registerapi.RegisterRegistrationServer(reg, &registrar{name: o.driverName, endpoint: kubeletPath})
		servers = append(servers, endpoint{reg, filepath.Join(o.registrationDir, o.driverName+"-reg.sock")})
	}
	return serve(ctx, servers)
}

// endpoint is a server and the unix socket it serves on.
type endpoint struct {
	srv  *grpc.Server
	path string
}

// serve serves each server on its socket, in order, until ctx ends or one
// fails, then stops them all, letting pending calls finish for a while.
func serve(ctx context.Context, servers []endpoint) error {
	errc := make(chan error, len(servers))
	for _, e := range servers {
		l, err := listen(e.path)
		if err != nil {
			errc <- err
			break
		}
		log.Printf("csidriver: serving on %s", e.path)
		go func() { errc <- e.srv.Serve(l) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	for _, e := range servers {
		t := time.AfterFunc(10*time.Second, e.srv.Stop)
		e.srv.GracefulStop()
		t.Stop()
		_ = os.Remove(e.path)
	}
	return err
}

// listen listens on a unix socket at path, replacing a stale socket.
func listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	return net.Listen("unix", path)
}

// parseEndpoint reads a unix:// endpoint (or a bare absolute path) as a
// socket path.
func parseEndpoint(endpoint string) (string, error) {
	path := endpoint
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(endpoint, "unix:"); ok {
		path = rest
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("--endpoint %q: want unix:///absolute/path", endpoint)
	}
	return filepath.Clean(path), nil
}

// logCall logs every call with its duration and, when it fails, its status.
func logCall(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	if err != nil {
		log.Printf("csidriver: %s %v: %v", info.FullMethod, time.Since(start).Round(time.Millisecond), err)
	} else {
		log.Printf("csidriver: %s %v", info.FullMethod, time.Since(start).Round(time.Millisecond))
	}
	return resp, err
}
