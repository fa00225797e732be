package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/storagebench/storagebench/internal/testenv"
)

// DefaultControllers are the kube-controller-manager controllers a Cluster
// runs: Jobs and their pods, garbage collection, volume binding and
// protection, namespace deletion, the default ServiceAccount and
// kube-root-ca.crt ConfigMap every namespace gets, the pod garbage
// collector (which fails and deletes terminating pods never scheduled), and
// ResourceQuota usage, without which quota admission refuses everything.
var DefaultControllers = []string{
	"job-controller",
	"ttl-after-finished-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
	"persistentvolume-binder-controller",
	"persistentvolume-protection-controller",
	"persistentvolumeclaim-protection-controller",
	"pod-garbage-collector-controller",
	"resourcequota-controller",
}

// Options configure Start. The zero value is usable.
type Options struct {
	// CRDDirectoryPaths are directories (or files) of CRDs to install, e.g.
	// config/crd/bases. A missing path is an error.
	CRDDirectoryPaths []string
	// Scheme is Cluster.Client's scheme; default client-go's. Add the
	// project's API types to it to use them with Cluster.Client.
	Scheme *runtime.Scheme
	// Executables is passed to the Kubelet (see KubeletOptions.Executables).
	Executables map[string]string
	// Capacity is passed to the Provisioner (see ProvisionerOptions.Capacity).
	Capacity CapacityFunc
	// Controllers replaces DefaultControllers.
	Controllers []string
	// WorkDir holds certificates, logs, volumes and pod directories; default
	// a new temporary directory, removed by Stop unless KeepWorkDir.
	WorkDir string
	// KeepWorkDir leaves WorkDir in place after Stop, for post-mortems.
	KeepWorkDir bool
	// Logger receives the Kubelet's and Provisioner's logs; default none.
	Logger logr.Logger
	// NoKubelet starts no Kubelet: no Node exists and pods stay Pending,
	// unscheduled. For tests that play the pods' side themselves (the soak
	// plays each client Job's runner in-process, test/soak) and need the
	// control plane, the Provisioner and the controller manager only.
	NoKubelet bool
}

// Cluster is a running control plane with a Kubelet and a Provisioner. Start
// one per test suite; tests share it and isolate themselves by namespace.
type Cluster struct {
	// Env is the envtest environment running etcd and kube-apiserver.
	Env *envtest.Environment
	// Config authenticates as a member of system:masters.
	Config *rest.Config
	// Client is an uncached client with Config and Options.Scheme.
	Client client.Client
	// Kubelet runs the pods (on node NodeName); nil with Options.NoKubelet.
	Kubelet *Kubelet
	// Provisioner provisions volumes for classes naming ProvisionerName.
	Provisioner *Provisioner
	// WorkDir holds everything the cluster writes (see Options.WorkDir).
	WorkDir string

	kcm         *daemon
	envStopped  bool
	ownsWorkDir bool
	keepWorkDir bool
}

// Start starts etcd, kube-apiserver, kube-controller-manager, a Provisioner
// and a Kubelet (unless Options.NoKubelet), and returns once the controller
// manager has set up the default namespace (its ServiceAccount and
// kube-root-ca.crt ConfigMap).
// Call Stop when done, also when a test fails; on error nothing is left
// running.
func Start(opts Options) (c *Cluster, err error) {
	began := time.Now()
	assets, err := testenv.AssetsDir()
	if err != nil {
		return nil, err
	}
	kcmPath := filepath.Join(assets, "kube-controller-manager")
	if _, err := os.Stat(kcmPath); err != nil {
		return nil, fmt.Errorf("kube-controller-manager not found: run `make k8s-binaries`: %w", err)
	}
	c = &Cluster{WorkDir: opts.WorkDir, keepWorkDir: opts.KeepWorkDir}
	if c.WorkDir == "" {
		if c.WorkDir, err = os.MkdirTemp("", "storagebench-harness-"); err != nil {
			return nil, err
		}
		c.ownsWorkDir = true
	} else if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()

	if err := c.startAPIServer(assets, opts.CRDDirectoryPaths); err != nil {
		return c, err
	}
	if err := c.startControllerManager(kcmPath, opts.Controllers); err != nil {
		return c, err
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return c, err
	}
	if err := c.waitForControllerManager(); err != nil {
		return c, err
	}
	c.Provisioner, err = StartProvisioner(c.Config, ProvisionerOptions{
		Capacity: opts.Capacity,
		WorkDir:  filepath.Join(c.WorkDir, "volumes"),
		Logger:   opts.Logger,
	})
	if err != nil {
		return c, err
	}
	if !opts.NoKubelet {
		c.Kubelet, err = StartKubelet(c.Config, KubeletOptions{
			Executables: opts.Executables,
			WorkDir:     filepath.Join(c.WorkDir, "pods"),
			Logger:      opts.Logger,
		})
		if err != nil {
			return c, err
		}
	}
	opts.Logger.Info("cluster started", "took", time.Since(began), "workDir", c.WorkDir)
	return c, nil
}

func (c *Cluster) startAPIServer(assets string, crds []string) error {
	c.Env = &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       crds,
		ErrorIfCRDPathMissing:   len(crds) > 0,
		ControlPlaneStopTimeout: 15 * time.Second,
	}
	api := c.Env.ControlPlane.GetAPIServer()
	// envtest disables the ServiceAccount admission plugin because nothing
	// creates default ServiceAccounts there; the controller manager does here,
	// and pods must get their kube-api-access volume as in a real cluster.
	api.Configure().Disable("disable-admission-plugins")
	log, err := os.Create(filepath.Join(c.WorkDir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	api.Out, api.Err = log, log
	cfg, err := c.Env.Start()
	if err != nil {
		return fmt.Errorf("starting envtest: %w", err)
	}
	c.Config = cfg
	return nil
}

func (c *Cluster) startControllerManager(path string, controllers []string) error {
	user, err := c.Env.AddUser(envtest.User{Name: "harness:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(c.WorkDir, "kube-controller-manager.kubeconfig")
	caPath := filepath.Join(c.WorkDir, "ca.crt")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(caPath, c.Config.CAData, 0o644); err != nil {
		return err
	}
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	args := []string{
		"--kubeconfig=" + kubeconfigPath,
		"--leader-elect=false",
		"--controllers=" + strings.Join(controllers, ","),
		"--root-ca-file=" + caPath,
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--controller-start-interval=0",
		"--v=2",
	}
	c.kcm, err = startDaemon(path, args, c.ControllerManagerLogPath())
	return err
}

// waitForControllerManager waits for the default ServiceAccount and the
// kube-root-ca.crt ConfigMap in the default namespace: proof the controller
// manager runs and its controllers have synced.
func (c *Cluster) waitForControllerManager() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if c.kcm.exited() {
			return false, errors.New("kube-controller-manager exited")
		}
		sa := &corev1.ServiceAccount{}
		if err := c.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, sa); err != nil {
			return false, nil //nolint:nilerr // not there yet
		}
		cm := &corev1.ConfigMap{}
		err := c.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "kube-root-ca.crt"}, cm)
		return err == nil, nil
	})
	if err != nil {
		log, _ := tailFile(c.ControllerManagerLogPath(), 40, 8192)
		return fmt.Errorf("waiting for kube-controller-manager: %w; its log ends:\n%s", err, log)
	}
	return nil
}

// Stop stops the Kubelet (killing every pod process), the Provisioner
// (detaching its loop devices), kube-controller-manager, kube-apiserver and
// etcd, then removes WorkDir unless it was given or KeepWorkDir is set. It is
// safe to call on a partly started Cluster and more than once.
func (c *Cluster) Stop() error {
	var errs []error
	if c.Kubelet != nil {
		errs = append(errs, c.Kubelet.Stop())
	}
	if c.Provisioner != nil {
		errs = append(errs, c.Provisioner.Stop())
	}
	if c.kcm != nil {
		errs = append(errs, c.kcm.stop(10*time.Second))
	}
	if c.Env != nil && !c.envStopped {
		errs = append(errs, c.Env.Stop())
		c.envStopped = true
	}
	if c.ownsWorkDir && !c.keepWorkDir && c.WorkDir != "" {
		errs = append(errs, os.RemoveAll(c.WorkDir))
		c.WorkDir = ""
	}
	return errors.Join(errs...)
}

// ControllerManagerLogPath is kube-controller-manager's log file.
func (c *Cluster) ControllerManagerLogPath() string {
	return filepath.Join(c.WorkDir, "kube-controller-manager.log")
}

// Dump writes what helps explain a failed test: the end of
// kube-controller-manager's log and every pod's log (Kubelet.Dump).
func (c *Cluster) Dump(w io.Writer) {
	log, err := tailFile(c.ControllerManagerLogPath(), 60, 16<<10)
	if err != nil {
		log = err.Error()
	}
	fmt.Fprintf(w, "=== kube-controller-manager log (end, full log: %s)\n%s\n", c.ControllerManagerLogPath(), log)
	if c.Kubelet != nil {
		c.Kubelet.Dump(w)
	}
}

// VolumePath returns the host path behind a bound claim: the directory of a
// Filesystem volume, or the device of a Block volume.
func (c *Cluster) VolumePath(ctx context.Context, namespace, claim string) (string, error) {
	return volumePath(ctx, c.Client, namespace, claim)
}
