package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/storagebench/storagebench/internal/testenv"
)

// DefaultNodeName is the Node a Kubelet registers unless told otherwise.
const DefaultNodeName = "harness-node"

// podIP is the address pods and the node report: processes share the host's
// network, and only loopback is used.
const podIP = "127.0.0.1"

// KubeletOptions configure StartKubelet.
type KubeletOptions struct {
	// NodeName is the Node to register and run pods on; default
	// DefaultNodeName.
	NodeName string
	// NodeLabels are added to the Node's labels (kubernetes.io/hostname,
	// kubernetes.io/os and kubernetes.io/arch are always set), for pods with
	// a nodeSelector.
	NodeLabels map[string]string
	// Executables maps a container's command[0] (after $(VAR) expansion) to
	// the host binary to run in its place, e.g. "/usr/local/bin/runner" ->
	// "<repo>/bin/runner"; for a container without command, its image maps
	// to the entrypoint. An unmapped command[0] runs as it is (a host path,
	// or looked up in the host's PATH). The image is otherwise ignored.
	Executables map[string]string
	// WorkDir holds one directory per pod: its log, termination message,
	// emptyDir and projected volumes (required).
	WorkDir string
	// Logger receives the kubelet's log; default none.
	Logger logr.Logger
}

// Kubelet stands in for the scheduler and the kubelet of one Node.
//
// Scheduling: a pending pod of the default scheduler is bound to the node
// (pods/binding) once its nodeSelector matches the node's labels and every
// claim it mounts is Bound; for a WaitForFirstConsumer claim it first sets
// volume.kubernetes.io/selected-node, as the scheduler does. Until then the
// pod stays Pending with PodScheduled=False.
//
// Running: the pod's single container (init and sidecar containers are not
// supported) runs as a local process as root in a private mount namespace,
// where every volumeMount's mountPath is a bind mount of the volume's host
// directory (a claim's volume: the PersistentVolume's hostPath, shared by
// every pod of the claim; emptyDir: a per-pod directory; projected,
// configMap, secret, downwardAPI: files written per pod, the
// ServiceAccount token from the TokenRequest API), every volumeDevice's
// devicePath a bind mount of the volume's device, and the
// terminationMessagePath a per-pod file. The environment is the
// container's env and envFrom resolved as the kubelet does, plus
// KUBERNETES_SERVICE_HOST/PORT naming the API server, so
// rest.InClusterConfig() works. restartPolicy is treated as Never.
//
// Status: Pending (ContainerCreating), Running, then Succeeded or Failed with
// the exit code and the termination message (the file, or with
// FallbackToLogsOnError the log's tail). A deleted pod's processes get
// SIGTERM, then SIGKILL after the grace period; the pod gets its final status
// and is then deleted with grace period 0. Finalizers are left to their
// owners.
type Kubelet struct {
	opts    KubeletOptions
	log     logr.Logger
	client  client.Client
	reader  client.Reader
	apiHost string
	apiPort string
	unshare string
	mounts  *mountPoints
	mgr     *runner

	ctx    context.Context // canceled by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines waiting for processes

	mu   sync.Mutex
	pods map[types.NamespacedName]*podRun // current pod of each name
	logs map[types.NamespacedName]string  // log of the latest pod of each name
	// nodeEnv adds variables to a pod's processes, as a node whose
	// environment differs would (SetNodeEnv).
	nodeEnv func(*corev1.Pod) []string
}

// SetNodeEnv makes fn's variables part of the environment of every
// container started from now on (nil stops it): a test's stand-in for a
// node that differs from the others, such as one whose clock is off.
func (k *Kubelet) SetNodeEnv(fn func(*corev1.Pod) []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nodeEnv = fn
}

func (k *Kubelet) extraEnv(pod *corev1.Pod) []string {
	k.mu.Lock()
	fn := k.nodeEnv
	k.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn(pod)
}

// StartKubelet registers the Node and starts running pods, talking to the
// API server as cfg (which needs rights to bind pods, update their status,
// delete them and create ServiceAccount tokens).
func StartKubelet(cfg *rest.Config, opts KubeletOptions) (_ *Kubelet, err error) {
	if opts.WorkDir == "" {
		return nil, errors.New("KubeletOptions.WorkDir is required")
	}
	if opts.NodeName == "" {
		opts.NodeName = DefaultNodeName
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, err
	}
	api, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server address %q: %w", cfg.Host, err)
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, err
	}
	mgr, err := newManager(cfg, opts.Logger.WithName("kubelet"))
	if err != nil {
		return nil, err
	}
	k := &Kubelet{
		opts: opts, log: opts.Logger.WithName("kubelet"),
		client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		apiHost: api.Hostname(), apiPort: api.Port(), unshare: unshare,
		pods: map[types.NamespacedName]*podRun{}, logs: map[types.NamespacedName]string{},
	}
	if k.apiPort == "" {
		k.apiPort = "443"
	}
	if k.mounts, err = openMountPoints(); err != nil {
		return nil, err
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			k.cancel()
			err = errors.Join(err, k.mounts.close())
		}
	}()
	err = builder.ControllerManagedBy(mgr).Named("harness-kubelet").
		For(&corev1.Pod{}).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(k.podsOfClaim)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconcile.Func(k.reconcile))
	if err != nil {
		return nil, err
	}
	if err := k.registerNode(k.ctx); err != nil {
		return nil, err
	}
	if k.mgr, err = run(mgr); err != nil {
		return nil, err
	}
	return k, nil
}

// NodeName is the Node the Kubelet runs pods on.
func (k *Kubelet) NodeName() string { return k.opts.NodeName }

// Stop stops scheduling and starting pods, ends every pod process (SIGTERM,
// SIGKILL after 5 s), removes the mount points it had to create on the host
// and deletes its Node. Pod objects keep their last status.
func (k *Kubelet) Stop() error {
	if k.mgr == nil {
		return nil
	}
	errs := []error{k.mgr.stop()}
	k.mgr = nil
	k.mu.Lock()
	runs := make([]*podRun, 0, len(k.pods))
	for _, r := range k.pods {
		runs = append(runs, r)
	}
	k.mu.Unlock()
	for _, r := range runs {
		r.signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, r := range runs {
		select {
		case <-r.exited():
		case <-time.After(time.Until(deadline)):
			r.signal(syscall.SIGKILL)
		}
	}
	k.cancel() // status writes of the last exits may be cut short
	k.wg.Wait()
	errs = append(errs, k.mounts.close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.opts.NodeName}}
	errs = append(errs, client.IgnoreNotFound(k.client.Delete(ctx, node)))
	return errors.Join(errs...)
}

// KillPod kills a running pod's process group with SIGKILL, as the node's
// OOM killer or a crash would, and waits for the pod's Failed status (exit
// code 137) to be written.
func (k *Kubelet) KillPod(namespace, name string) error {
	k.mu.Lock()
	r := k.pods[types.NamespacedName{Namespace: namespace, Name: name}]
	k.mu.Unlock()
	if r == nil || !r.signal(syscall.SIGKILL) {
		return fmt.Errorf("pod %s/%s has no running process", namespace, name)
	}
	select {
	case <-r.done:
		return nil
	case <-k.ctx.Done():
		return k.ctx.Err()
	}
}

// Logs returns the stdout and stderr (interleaved) of the latest pod of that
// name this Kubelet ran, also after the pod was deleted.
func (k *Kubelet) Logs(namespace, name string) (string, error) {
	k.mu.Lock()
	path, ok := k.logs[types.NamespacedName{Namespace: namespace, Name: name}]
	k.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("pod %s/%s never ran here", namespace, name)
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

// Dump writes the end of every log Logs would return, pod by pod.
func (k *Kubelet) Dump(w io.Writer) {
	k.mu.Lock()
	keys := make([]types.NamespacedName, 0, len(k.logs))
	for key := range k.logs {
		keys = append(keys, key)
	}
	logs := make([]string, len(keys))
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	for i, key := range keys {
		logs[i] = k.logs[key]
	}
	k.mu.Unlock()
	for i, key := range keys {
		text, err := tailFile(logs[i], 100, 16<<10)
		if err != nil {
			text = err.Error()
		}
		fmt.Fprintf(w, "=== pod %s log (end, full log: %s)\n%s\n", key, logs[i], text)
	}
}

func (k *Kubelet) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := k.reader.Get(ctx, req.NamespacedName, pod); apierrors.IsNotFound(err) {
		k.forget(req.NamespacedName, "")
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	k.forget(req.NamespacedName, pod.UID)
	switch {
	case pod.Spec.NodeName == "":
		return k.schedule(ctx, pod)
	case pod.Spec.NodeName != k.opts.NodeName:
		return reconcile.Result{}, nil
	case pod.DeletionTimestamp != nil:
		return reconcile.Result{}, k.finishDeletion(ctx, pod)
	}
	return k.startPod(ctx, pod)
}

// forget drops the run of a pod that is gone (or replaced by a pod of the same
// name but another UID than keep): its process is killed and its volumes
// removed; its log stays.
func (k *Kubelet) forget(key types.NamespacedName, keep types.UID) {
	k.mu.Lock()
	r := k.pods[key]
	if r == nil || r.uid == keep {
		k.mu.Unlock()
		return
	}
	delete(k.pods, key)
	k.mu.Unlock()
	r.signal(syscall.SIGKILL)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		<-r.exited()
		_ = os.RemoveAll(filepath.Join(r.dir, "volumes"))
		_ = os.RemoveAll(filepath.Join(r.dir, "home"))
	}()
}

// registerNode creates (or updates) the Node: Ready, big, untainted.
func (k *Kubelet) registerNode(ctx context.Context) error {
	labels := map[string]string{
		"kubernetes.io/hostname": k.opts.NodeName,
		"kubernetes.io/os":       goruntime.GOOS,
		"kubernetes.io/arch":     goruntime.GOARCH,
	}
	for key, v := range k.opts.NodeLabels {
		labels[key] = v
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.opts.NodeName, Labels: labels}}
	if err := k.client.Create(ctx, node); apierrors.IsAlreadyExists(err) {
		if err := k.reader.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		node.Labels = labels
		if err := k.client.Update(ctx, node); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("registering node %s: %w", k.opts.NodeName, err)
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("1000"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	now := metav1.Now()
	node.Status = corev1.NodeStatus{
		Capacity:    resources,
		Allocatable: resources,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "harness kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: podIP},
			{Type: corev1.NodeHostName, Address: k.opts.NodeName},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: testenv.KubernetesVersion, OperatingSystem: goruntime.GOOS, Architecture: goruntime.GOARCH,
			ContainerRuntimeVersion: "harness://0",
		},
	}
	return k.client.Status().Update(ctx, node)
}
