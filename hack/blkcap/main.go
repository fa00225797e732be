// Command blkcap gives the local cluster's capped volumes a known limit: it
// writes a PersistentVolume's caps into the block I/O cgroup (cgroup v1
// blkio.throttle.*) of every container of every pod on this node that uses
// the volume, once per container, so a benchmark on the volume has a ground
// truth to recover. hack/cluster/up.sh starts it next to the kubelet.
//
// A volume is capped when its PV carries either annotation (each a positive
// integer, applied to reads and to writes separately, as cgroup v1 throttles
// each direction on its own):
//
//	storagebench.io/max-iops:             I/Os per second
//	storagebench.io/max-bytes-per-second: bytes per second
//
// and its local path is a block device (the cap names the device's
// major:minor). cgroup v1's throttle is flat: a limit binds only the tasks
// directly in the cgroup it is written to, not a parent such as kubepods, and
// writing it again restarts its time slice and lets extra I/O through. So the
// cap goes into each container's own cgroup, written once: blkcap polls the
// pod's cgroup directory every few milliseconds and caps a container's cgroup
// as soon as it appears, before the container's process can have issued I/O
// through the API-driven start of a benchmark, and leaves a cgroup that
// already holds the cap alone (a restarted blkcap does not write it again).
//
// Every cap written is appended to -record as one JSON line (when, pod,
// cgroup, device, caps), which the e2e suite reads to prove the cap was in
// place before the first measured step.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The PV annotations that cap a volume.
const (
	AnnotationMaxIOPS  = "storagebench.io/max-iops"
	AnnotationMaxBytes = "storagebench.io/max-bytes-per-second"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig")
	node := flag.String("node", "", "this node's name")
	root := flag.String("cgroup-root", "/sys/fs/cgroup/blkio", "the blkio cgroup hierarchy")
	record := flag.String("record", "", "append every cap written here, one JSON line each")
	every := flag.Duration("poll", 5*time.Millisecond, "how often to look for new container cgroups")
	var hv harvestOptions
	flag.StringVar(&hv.listen, "harvest-listen", "", "serve the capped volumes' disk statistics under NetApp Harvest's volume series on this address (harvest.go); empty: off")
	flag.StringVar(&hv.addrFile, "harvest-addr-file", "", "write the address -harvest-listen got here")
	flag.DurationVar(&hv.poll, "harvest-poll", time.Second, "how often the disk statistics are read: the series' resolution")
	flag.StringVar(&hv.svm, "harvest-svm", "testbed", "the svm label of the series")
	flag.String("build", "", "the binary's digest (up.sh restarts blkcap when it changes)")
	flag.Parse()
	if *kubeconfig == "" || *node == "" || *record == "" {
		log.Fatal("blkcap: -kubeconfig, -node and -record are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, *kubeconfig, *node, *root, *record, *every, hv)
	stop()
	if err != nil {
		log.Fatal("blkcap: ", err)
	}
}

// harvestOptions are the -harvest-* flags.
type harvestOptions struct {
	listen, addrFile, svm string
	poll                  time.Duration
}

func run(ctx context.Context, kubeconfig, node, root, record string, every time.Duration, hv harvestOptions) error {
	if _, err := os.Stat(filepath.Join(root, "kubepods")); err != nil {
		return fmt.Errorf("no kubelet cgroups under %s (blkcap needs cgroup v1's blkio hierarchy): %w", root, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(record, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	c := &capper{root: root, record: json.NewEncoder(out), pods: map[types.UID]capped{}, done: map[string]bool{}}

	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	}))
	inf := f.Core().V1().Pods().Informer()
	resolve := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			c.watch(ctx, cs, p)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    resolve,
		UpdateFunc: func(_, obj any) { resolve(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				c.forget(p.UID)
			}
		},
	}); err != nil {
		return err
	}
	if hv.listen != "" {
		pf := informers.NewSharedInformerFactory(cs, 0)
		h, reg := newHarvest(pf.Core().V1().PersistentVolumes().Lister(), node, hv.svm)
		pf.Start(ctx.Done())
		defer pf.Shutdown()
		go func() {
			if err := serveHarvest(ctx, h, reg, hv.listen, hv.addrFile, hv.poll); err != nil {
				log.Printf("blkcap: Harvest's series: %v", err)
			}
		}()
	}
	f.Start(ctx.Done())
	log.Printf("blkcap: capping volumes of pods on node %s (cgroups under %s)", node, root)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			f.Shutdown()
			return nil
		case <-t.C:
			c.capNew()
		}
	}
}

// Cap is one device's limits.
type Cap struct {
	Device            string `json:"device"` // major:minor
	MaxIOPS           int64  `json:"maxIOPS,omitempty"`
	MaxBytesPerSecond int64  `json:"maxBytesPerSecond,omitempty"`
}

type capped struct {
	namespace, name string
	caps            []Cap
}

type capper struct {
	root   string
	record *json.Encoder

	mu   sync.Mutex
	pods map[types.UID]capped
	done map[string]bool // container cgroup directories capped
}

// watch learns the caps of a pod's volumes once its claims are bound.
func (c *capper) watch(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	c.mu.Lock()
	_, known := c.pods[p.UID]
	c.mu.Unlock()
	if known {
		return
	}
	var caps []Cap
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := cs.CoreV1().PersistentVolumeClaims(p.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			return // not bound yet: the pod's next update tries again
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return
		}
		if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != pvc.UID {
			// A claim naming a PV that is not bound to it (a user may
			// write any volumeName) gets nothing of it.
			continue
		}
		cp, err := CapOf(pv, deviceOf)
		if err != nil {
			log.Printf("blkcap: pod %s/%s: %v", p.Namespace, p.Name, err)
			continue
		}
		if cp != nil {
			caps = append(caps, *cp)
		}
	}
	if len(caps) == 0 {
		return
	}
	c.mu.Lock()
	c.pods[p.UID] = capped{namespace: p.Namespace, name: p.Name, caps: caps}
	c.mu.Unlock()
	log.Printf("blkcap: pod %s/%s: will cap %+v", p.Namespace, p.Name, caps)
}

func (c *capper) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
	for dir := range c.done {
		if strings.Contains(dir, "/pod"+string(uid)+"/") {
			delete(c.done, dir)
		}
	}
}

// capNew caps every container cgroup of a watched pod not capped yet.
func (c *capper) capNew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, p := range c.pods {
		for _, dir := range ContainerCgroups(c.root, uid) {
			if c.done[dir] {
				continue
			}
			failed := false
			for _, cp := range p.caps {
				wrote, err := WriteCap(dir, cp)
				if err != nil {
					log.Printf("blkcap: %s: %v (tried again next round)", dir, err)
					failed = true
					continue
				}
				if wrote {
					_ = c.record.Encode(struct {
						Time      time.Time `json:"time"`
						Namespace string    `json:"namespace"`
						Pod       string    `json:"pod"`
						Cgroup    string    `json:"cgroup"`
						Cap
					}{time.Now(), p.namespace, p.name, dir, cp})
				}
			}
			if !failed {
				c.done[dir] = true
			}
		}
	}
}

// CapOf returns the cap a PV's annotations set on its local block device;
// nil without cap annotations. device maps a path to its major:minor.
func CapOf(pv *corev1.PersistentVolume, device func(string) (string, error)) (*Cap, error) {
	iops, err := positive(pv.Annotations, AnnotationMaxIOPS)
	if err != nil {
		return nil, err
	}
	bps, err := positive(pv.Annotations, AnnotationMaxBytes)
	if err != nil {
		return nil, err
	}
	if iops == 0 && bps == 0 {
		return nil, nil
	}
	if pv.Spec.Local == nil {
		return nil, fmt.Errorf("PV %s is capped but not a local volume", pv.Name)
	}
	dev, err := device(pv.Spec.Local.Path)
	if err != nil {
		return nil, fmt.Errorf("PV %s: %w", pv.Name, err)
	}
	return &Cap{Device: dev, MaxIOPS: iops, MaxBytesPerSecond: bps}, nil
}

func positive(ann map[string]string, key string) (int64, error) {
	s, ok := ann[key]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("annotation %s=%q is not a positive integer", key, s)
	}
	return n, nil
}

// deviceOf is the major:minor of a block device.
func deviceOf(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("%s is not a block device", path)
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), nil
}

// ContainerCgroups lists the container cgroups of a pod under the kubelet's
// cgroupfs layout: kubepods[/burstable|/besteffort]/pod<uid>/<container>.
func ContainerCgroups(root string, uid types.UID) []string {
	var dirs []string
	for _, qos := range []string{"", "burstable", "besteffort"} {
		pod := filepath.Join(root, "kubepods", qos, "pod"+string(uid))
		entries, err := os.ReadDir(pod)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(pod, e.Name())+"/")
			}
		}
	}
	return dirs
}

// WriteCap writes the cap into a cgroup's throttle files, reads and writes
// alike; wrote is false when the cgroup already held exactly this cap (it is
// never written twice: that would restart the throttle's time slice).
func WriteCap(dir string, c Cap) (wrote bool, err error) {
	files := []struct {
		name  string
		value int64
	}{
		{"blkio.throttle.read_iops_device", c.MaxIOPS},
		{"blkio.throttle.write_iops_device", c.MaxIOPS},
		{"blkio.throttle.read_bps_device", c.MaxBytesPerSecond},
		{"blkio.throttle.write_bps_device", c.MaxBytesPerSecond},
	}
	for _, f := range files {
		if f.value == 0 {
			continue
		}
		path := filepath.Join(dir, f.name)
		line := c.Device + " " + strconv.FormatInt(f.value, 10)
		cur, err := os.ReadFile(path)
		if err != nil {
			return wrote, err
		}
		if holds(string(cur), line) {
			continue
		}
		if err := os.WriteFile(path, []byte(line), 0); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return wrote, nil // the container is gone
			}
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}

func holds(file, line string) bool {
	for _, l := range strings.Split(file, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
