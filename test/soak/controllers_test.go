package soak

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/storagebench/storagebench/internal/testenv"
	"github.com/storagebench/storagebench/test/harness"
)

// workloadControllers are the kube-controller-manager controllers the
// soak's workload keeps busy: Jobs and their pods, the garbage collector,
// volume binding and protection. They run in a kube-controller-manager of
// the soak's own whose API clients may send 400 requests a second: a
// controller manager's clients are rate-limited in real time (20 a second
// by default, per controller), and the simulated time outpaces that
// several hundredfold, so with the default the garbage collector falls
// behind by hours within a simulated day, and the trimmed runs' children
// it has not deleted yet would pile up in the manager's cache, which a
// real cluster's never holds. The harness's own controller manager runs
// the others (service accounts, the root CA, namespaces, quotas).
var workloadControllers = []string{
	"job-controller",
	"ttl-after-finished-controller",
	"garbage-collector-controller",
	"persistentvolume-binder-controller",
	"persistentvolume-protection-controller",
	"persistentvolumeclaim-protection-controller",
	"pod-garbage-collector-controller",
}

// harnessControllers are harness.DefaultControllers without the workload's.
func harnessControllers() []string {
	return slices.DeleteFunc(slices.Clone(harness.DefaultControllers), func(c string) bool {
		return slices.Contains(workloadControllers, c)
	})
}

// startWorkloadControllers starts the soak's kube-controller-manager; the
// returned function stops it.
func (s *soak) startWorkloadControllers() (func(), error) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		return nil, err
	}
	user, err := s.cluster.Env.AddUser(envtest.User{Name: "soak:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir := s.cluster.WorkDir
	kubeconfigPath := filepath.Join(dir, "soak-kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "soak-kube-controller-manager.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(filepath.Join(assets, "kube-controller-manager"),
		"--kubeconfig="+kubeconfigPath,
		"--leader-elect=false",
		"--controllers="+strings.Join(workloadControllers, ","),
		"--root-ca-file="+filepath.Join(dir, "ca.crt"),
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--controller-start-interval=0",
		"--kube-api-qps=400",
		"--kube-api-burst=800",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the soak's kube-controller-manager: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}, nil
}
