// Command record runs one real benchmark on this machine — the real
// manager, a real kube-apiserver, etcd and kube-controller-manager, the
// test harness standing in for the kubelet, real runners and fio on a local
// directory — and writes the finished StorageBenchmark as YAML. The README's
// picture is rendered from such a recording:
//
//	go run ./hack/record -o docs/images/oltp-curve.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/harness"
)

func main() {
	out := flag.String("o", "docs/images/oltp-curve.yaml", "where to write the finished benchmark")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	tmp, err := os.MkdirTemp("", "storagebench-record-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	runner := filepath.Join(tmp, "runner")
	if b, err := exec.Command("go", "build", "-o", runner, "./cmd/runner").CombinedOutput(); err != nil {
		return fmt.Errorf("building the runner: %w: %s", err, b)
	}
	cluster, err := harness.Start(harness.Options{CRDDirectoryPaths: []string{"config/crd/bases"}, Scheme: controllers.Scheme(),
		Executables: map[string]string{exchange.RunnerCommand: runner}})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	mgr, err := controllers.NewManager(cluster.Config, controllers.ManagerOptions{MetricsAddr: "0", ProbeAddr: "0",
		Reconciler: controllers.Reconciler{Jobs: controllers.JobOptions{Image: "storagebench-runner:local"}, StartLead: 2 * time.Second}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	k := cluster.Client
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-disk"}, Provisioner: harness.ProvisionerName}
	if err := k.Create(ctx, sc); err != nil {
		return err
	}
	b := &v1alpha1.StorageBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "oltp-local"},
		Spec: v1alpha1.StorageBenchmarkSpec{
			Storage: v1alpha1.StorageSpec{StorageClassName: ptr.To(sc.Name), Size: resource.MustParse("4Gi"),
				Sharing: v1alpha1.SharingShared, AccessMode: corev1.ReadWriteMany},
			Clients:  v1alpha1.ClientsSpec{Count: 3, JobsPerClient: 2},
			Workload: v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: ptr.To(resource.MustParse("256Mi"))},
			Load: v1alpha1.LoadSpec{Curve: &v1alpha1.CurveSteps{Percents: []int32{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
				StepDuration: metav1.Duration{Duration: 10 * time.Second}, RampTime: &metav1.Duration{Duration: 2 * time.Second}},
		},
	}
	if err := k.Create(ctx, b); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		if err := k.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "record: %s steps %s\n", b.Name, b.Status.Progress)
		if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed) {
			return errors.New(meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed).Message)
		}
		if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) {
			b.ManagedFields = nil
			b.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark"}
			data, err := yaml.Marshal(b)
			if err != nil {
				return err
			}
			return os.WriteFile(out, data, 0o644)
		}
	}
	return errors.New("the benchmark did not finish in 10 minutes")
}
