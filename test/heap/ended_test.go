package heap

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// endedLevels are the numbers of ended runs the manager starts among in
// BenchmarkManagerHeapEnded.
var endedLevels = []int{0, 100, 400}

// BenchmarkManagerHeapEnded shows what ended runs cost the manager: its
// heap as a function of the number of ended benchmarks in the cluster when
// it starts. One real run (endedClients clients × endedSteps steps, the
// fake runners of BenchmarkManagerHeap) is completed first; then copies of
// it are made (the benchmark with its status, its plan and its step
// ConfigMaps, each controlled by its copy), and the manager is started
// afresh among the original and 0, 100 and 400 copies. It reports, at
// each level, its live heap after a collection once it settled
// (settled-MiB-N: its storagebenchmark controller has nothing queued and
// reconciled every run) and its peak live heap (live-MiB-N, which this
// benchmark's own scrapes of the metrics endpoint, every second, drive);
// what each copy added to the settled heap (KiB-per-ended-run); and,
// beside it, the step records' data one run holds, which the manager would
// keep if it read them (record-KiB-per-run). The copies (benchmarks and
// ConfigMaps) must come out of each start untouched (an ended run's status
// is final: not rebuilt) and the manager must hold no step record
// (storagebench_manager_step_records 0).
func BenchmarkManagerHeapEnded(b *testing.B) {
	logf.SetLogger(logr.Discard())
	for range b.N {
		endedRuns(b)
	}
}

const (
	endedClients = 3
	endedSteps   = 10
)

func endedRuns(b *testing.B) {
	b.StopTimer()
	t := newBed(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The run every ended one is a copy of.
	s := scenario{clients: endedClients, steps: endedSteps, bound: 5 * time.Minute}
	mgr := startManager(b, t.kubeconfig, filepath.Join(t.dir, "manager-0.log"), "0")
	ref := benchmark(s, t.result.Jobs)
	if err := t.k8s.Create(ctx, ref); err != nil {
		b.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- bindClaims(ctx, t.k8s, namespace) }()
	go func() { errs <- runners(ctx, t.k8s, t.runnerCfg, namespace, benchName, s.clients, t.result) }()
	waitComplete(ctx, b, t.k8s, []*v1alpha1.StorageBenchmark{ref}, s.bound, mgr, errs, nil)
	_ = mgr.stop(b)
	cms, recordBytes := runConfigMaps(ctx, b, t.k8s, ref)
	doc, err := json.Marshal(ref)
	if err != nil {
		b.Fatal(err)
	}
	annotations := 0
	for _, cm := range cms {
		for k, v := range cm.Annotations {
			annotations += len(k) + len(v)
		}
	}
	b.Logf("the run to copy: %d steps, %d ConfigMaps to copy, %d KiB of step records; the benchmark is %d KiB of JSON, its ConfigMaps' annotations %d KiB",
		len(ref.Status.Steps), len(cms), recordBytes>>10, len(doc)>>10, annotations>>10)

	live := make([]float64, len(endedLevels))
	settled := make([]float64, len(endedLevels))
	made := 0
	for i, n := range endedLevels {
		copyRuns(ctx, b, t.k8s, ref, cms, made, n)
		made = n
		before := versions(ctx, b, t.k8s)
		if len(before) != n*(len(cms)+1) {
			b.Fatalf("%d copied objects, want %d runs of %d", len(before), n, len(cms)+1)
		}
		addr := freeLoopbackAddr(b)
		mgr := startManager(b, t.kubeconfig, filepath.Join(t.dir, fmt.Sprintf("manager-%d.log", n)), addr)
		records := settle(b, addr, n+1, mgr)
		settled[i] = float64(mgr.settled(b)) / (1 << 20)
		p := mgr.stop(b)
		if after := versions(ctx, b, t.k8s); !sameVersions(before, after) {
			b.Fatalf("with %d ended runs the manager wrote to the copies: %s", n, changed(before, after))
		}
		if records != 0 {
			b.Fatalf("with %d ended runs the manager holds %v step records, want none", n, records)
		}
		live[i] = float64(p.live) / (1 << 20)
		b.ReportMetric(live[i], fmt.Sprintf("live-MiB-%d", n))
		b.ReportMetric(settled[i], fmt.Sprintf("settled-MiB-%d", n))
		if p.heap >= heapLimit {
			b.Fatalf("the manager's peak heap %d MiB is not under %d MiB", p.heap>>20, heapLimit>>20)
		}
	}
	last := len(endedLevels) - 1
	per := (settled[last] - settled[0]) * 1024 / float64(endedLevels[last]-endedLevels[0])
	b.ReportMetric(per, "KiB-per-ended-run")
	b.ReportMetric(float64(recordBytes)/1024, "record-KiB-per-run")
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n| copies of the ended run at start | peak live heap MiB (metrics scraped every second) | live heap once settled MiB |\n|---|---|---|\n")
	for i, n := range endedLevels {
		fmt.Fprintf(&tab, "| %d | %.1f | %.1f |\n", n, live[i], settled[i])
	}
	fmt.Fprintf(&tab, "each ended run: %.1f KiB of heap; its step records hold %.1f KiB, none of it read\n", per, float64(recordBytes)/1024)
	fmt.Print(tab.String())
}

// waitComplete waits until every one of benches is Complete, polling them
// every second and calling polled (when not nil) after each poll; it fails
// on a benchmark's failure, on an error from errs, on the manager's exit
// or after bound.
func waitComplete(ctx context.Context, b *testing.B, k8s client.Client, benches []*v1alpha1.StorageBenchmark, bound time.Duration, mgr *manager, errs <-chan error, polled func()) {
	b.Helper()
	deadline := time.After(bound)
	for {
		select {
		case err := <-errs:
			if err != nil {
				b.Fatalf("%v; the manager's log:\n%s", err, mgr.tail())
			}
		case <-mgr.done:
			b.Fatalf("the manager exited: %v; its log:\n%s", mgr.err, mgr.tail())
		case <-deadline:
			for _, bench := range benches {
				b.Logf("%s: progress %q, %d clients ready", bench.Name, bench.Status.Progress, bench.Status.ClientsReady)
			}
			b.Fatalf("the benchmarks did not complete within %s; the manager's log:\n%s", bound, mgr.tail())
		case <-time.After(time.Second):
			complete := 0
			for _, bench := range benches {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(bench), bench); err != nil {
					b.Fatal(err)
				}
				if c := meta.FindStatusCondition(bench.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
					b.Fatalf("benchmark %s failed: %s: %s; the manager's log:\n%s", bench.Name, c.Reason, c.Message, mgr.tail())
				}
				if meta.IsStatusConditionTrue(bench.Status.Conditions, v1alpha1.ConditionComplete) {
					complete++
				}
			}
			if polled != nil {
				polled()
			}
			if complete == len(benches) {
				return
			}
		}
	}
}

// runConfigMaps returns the plan and step ConfigMaps bench controls, and
// the bytes of data its step ConfigMaps hold.
func runConfigMaps(ctx context.Context, b *testing.B, k8s client.Client, bench *v1alpha1.StorageBenchmark) ([]corev1.ConfigMap, int) {
	b.Helper()
	var l corev1.ConfigMapList
	if err := k8s.List(ctx, &l, client.InNamespace(namespace), client.MatchingLabels{exchange.LabelBenchmark: bench.Name}); err != nil {
		b.Fatal(err)
	}
	var out []corev1.ConfigMap
	bytes := 0
	for _, cm := range l.Items {
		ref := metav1.GetControllerOf(&cm)
		role := cm.Labels[exchange.LabelRole]
		if ref == nil || ref.UID != bench.UID || (role != exchange.RolePlan && role != exchange.RoleStep) {
			continue
		}
		if role == exchange.RoleStep {
			for _, v := range cm.Data {
				bytes += len(v)
			}
		}
		out = append(out, cm)
	}
	if len(out) != endedSteps+1 {
		b.Fatalf("the run has %d plan and step ConfigMaps, want %d", len(out), endedSteps+1)
	}
	return out, bytes
}

// endedName is the name of the i-th copy.
func endedName(i int) string { return fmt.Sprintf("ended-%04d", i) }

// copyRuns makes copies from through to−1 of the ended run ref: each a
// benchmark with ref's spec and status, and ref's plan and step ConfigMaps
// renamed, relabelled and controlled by it.
func copyRuns(ctx context.Context, b *testing.B, k8s client.Client, ref *v1alpha1.StorageBenchmark, cms []corev1.ConfigMap, from, to int) {
	b.Helper()
	if err := parallel(ctx, 8, to-from, func(k int) error { return copyRun(ctx, k8s, ref, cms, endedName(from+k)) }); err != nil {
		b.Fatal(err)
	}
}

func copyRun(ctx context.Context, k8s client.Client, ref *v1alpha1.StorageBenchmark, cms []corev1.ConfigMap, name string) error {
	c := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: *ref.Spec.DeepCopy()}
	if err := k8s.Create(ctx, c); err != nil {
		return err
	}
	c.Status = *ref.Status.DeepCopy()
	if err := k8s.Status().Update(ctx, c); err != nil {
		return fmt.Errorf("the status of %s: %w", name, err)
	}
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: name, UID: c.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for _, cm := range cms {
		cp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            name + strings.TrimPrefix(cm.Name, ref.Name),
			Labels:          map[string]string{},
			Annotations:     cm.Annotations,
			OwnerReferences: []metav1.OwnerReference{owner},
		}, Data: cm.Data, BinaryData: cm.BinaryData}
		for k, v := range cm.Labels {
			if v == ref.Name {
				v = name
			}
			cp.Labels[k] = v
		}
		if err := k8s.Create(ctx, cp); err != nil {
			return err
		}
	}
	return nil
}

// versions are the copies' resourceVersions (benchmarks, plan and step
// ConfigMaps) by kind and name.
func versions(ctx context.Context, b *testing.B, k8s client.Client) map[string]string {
	b.Helper()
	var benches v1alpha1.StorageBenchmarkList
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &benches, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	if err := k8s.List(ctx, &cms, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	out := map[string]string{}
	for _, x := range benches.Items {
		if strings.HasPrefix(x.Name, "ended-") {
			out["StorageBenchmark/"+x.Name] = x.ResourceVersion
		}
	}
	for _, x := range cms.Items {
		if strings.HasPrefix(x.Name, "ended-") {
			out["ConfigMap/"+x.Name] = x.ResourceVersion
		}
	}
	return out
}

func sameVersions(a, z map[string]string) bool { return changed(a, z) == "" }

// changed names the first few copies whose version differs.
func changed(a, z map[string]string) string {
	var out []string
	for k, v := range a {
		if z[k] != v && len(out) < 5 {
			out = append(out, k)
		}
	}
	if len(a) != len(z) {
		out = append(out, fmt.Sprintf("%d copies before, %d after", len(a), len(z)))
	}
	return strings.Join(out, ", ")
}

// settle waits until the manager's storagebenchmark controller has
// reconciled successfully at least n times, has nothing queued and has not
// changed its count for 5 s, and returns the step records the manager
// holds then. A reconcile error fails it.
func settle(b *testing.B, addr string, n int, mgr *manager) float64 {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	last, quietSince := -1.0, time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-mgr.done:
			b.Fatalf("the manager exited: %v; its log:\n%s", mgr.err, mgr.tail())
		case <-time.After(time.Second):
		}
		families, err := metricFamilies(addr)
		if err != nil {
			continue // not serving yet
		}
		value := func(name string, labels map[string]string) float64 {
			var v float64
			for _, m := range families[name].GetMetric() {
				if hasLabels(m, labels) {
					v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
			return v
		}
		controller := map[string]string{"controller": "storagebenchmark"}
		if e := value("controller_runtime_reconcile_errors_total", controller); e > 0 {
			b.Fatalf("the manager failed %v reconciles among ended runs; its log:\n%s", e, mgr.tail())
		}
		done := value("controller_runtime_reconcile_total", map[string]string{"controller": "storagebenchmark", "result": "success"})
		queued := value("workqueue_depth", map[string]string{"name": "storagebenchmark"})
		if done != last || queued > 0 {
			last, quietSince = done, time.Now()
			continue
		}
		if done >= float64(n) && time.Since(quietSince) >= 5*time.Second {
			records, err := gauge(addr, "storagebench_manager_step_records")
			if err != nil {
				b.Fatal(err)
			}
			return records
		}
	}
	b.Fatalf("the manager did not settle within 5 minutes (%v successful reconciles, want at least %d); its log:\n%s", last, n, mgr.tail())
	return 0
}

// hasLabels reports whether m carries every label of want.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}
