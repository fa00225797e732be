// Command record runs one real benchmark on this machine — the real
// manager, a real kube-apiserver, etcd and kube-controller-manager, the
// test harness standing in for the kubelet, real runners and fio on a local
// directory — and writes the finished StorageBenchmark as YAML. The README's
// picture is rendered from such a recording:
//
//	go run ./hack/record -o docs/images/oltp-curve.yaml
//
// With -stall it records a single 20 s rate step instead, during which it
// stops every client's fio jobs (SIGSTOP) for that long, and writes the
// benchmark with the step's ConfigMap, whose timeline shows the stall: a
// stall of the clients, with nothing outstanding, which only fio's status
// ticks see, as a lower bound (a pause of the storage is the end-to-end
// suite's, docs/images/timeline-stall.yaml):
//
//	go run ./hack/record -stall 3s -o _work/timeline-sigstop.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/manager"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/harness"
)

func main() {
	out := flag.String("o", "docs/images/oltp-curve.yaml", "where to write the finished benchmark")
	stall := flag.Duration("stall", 0, "record one rate step with every client's fio stopped this long, 8 s into its measurement")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	if err := run(*out, *stall); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(out string, stall time.Duration) error {
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
	mgr, err := manager.New(cluster.Config, manager.Options{MetricsAddr: "0", ProbeAddr: "0",
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
	if stall > 0 {
		b.Name = "oltp-stall"
		b.Spec.Load = v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Steps: []int64{600}},
			StepDuration: metav1.Duration{Duration: 20 * time.Second}, RampTime: &metav1.Duration{Duration: 2 * time.Second}}
	}
	if err := k.Create(ctx, b); err != nil {
		return err
	}
	stalled := stall == 0
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		if err := k.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "record: %s steps %s\n", b.Name, b.Status.Progress)
		if !stalled && b.Status.CurrentStep != nil && len(b.Status.Steps) == 0 && b.Status.StartTime != nil {
			// Stop fio about 8 s into the measurement (after the 2 s ramp).
			at := b.Status.StartTime.Add(10 * time.Second)
			time.Sleep(time.Until(at))
			if err := pause(runner, stall); err != nil {
				return err
			}
			stalled = true
		}
		if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed) {
			return errors.New(meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed).Message)
		}
		if meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) {
			b.ManagedFields = nil
			b.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark"}
			var obj any = b
			if stall > 0 {
				var cm corev1.ConfigMap
				if err := k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.StepName(b.Name, 0)}, &cm); err != nil {
					return err
				}
				// Its owner reference stays: the plugin reads a step's
				// ConfigMap only when the benchmark controls it.
				cm.ManagedFields = nil
				cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
				obj = map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{b, &cm}}
			}
			data, err := yaml.Marshal(obj)
			if err != nil {
				return err
			}
			return os.WriteFile(out, data, 0o644)
		}
	}
	return errors.New("the benchmark did not finish in 10 minutes")
}

// pause stops the fio job processes of the recording's runners (children
// of a fio the runner binary started) with SIGSTOP for d, then resumes
// them.
func pause(runner string, d time.Duration) error {
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return err
	}
	parent := map[int]int{}
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil || !strings.Contains(string(stat), "(fio)") {
			continue
		}
		// The parent is the second field after the parenthesised name.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			parent[pid] = ppid
		}
	}
	ours := func(pid int) bool {
		for range 4 {
			ppid := parent[pid]
			if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(ppid), "exe")); err == nil && exe == runner {
				return true
			}
			if _, isFio := parent[ppid]; !isFio {
				return false
			}
			pid = ppid
		}
		return false
	}
	// Only the job processes (fio's children): the main process goes on
	// ticking its status every second, as it does when storage stalls.
	var fios []int
	for pid, ppid := range parent {
		if _, jobOfFio := parent[ppid]; jobOfFio && ours(pid) {
			fios = append(fios, pid)
		}
	}
	if len(fios) == 0 {
		return errors.New("no fio of this recording's runners is running")
	}
	for _, pid := range fios {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	fmt.Fprintf(os.Stderr, "record: stopped %d fio processes for %s\n", len(fios), d)
	time.Sleep(d)
	for _, pid := range fios {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	return nil
}
