package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/spec"
)

// planNS is where the plan tests dry run: nothing may appear in it.
const planNS = "plan"

// planBench is a valid benchmark on the class plan-fast; edit changes
// its spec text (a replacement of one line).
const planBench = `apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata:
  name: oltp-plan
spec:
  storage: {storageClassName: plan-fast, size: 10Gi}
  clients: {count: 3, jobsPerClient: 2}
  workload: {profile: oltp, workingSetPerClient: 1Gi}
  load:
    rate: {steps: [1001, 2000]}
    stepDuration: 30s
`

// planSetup creates the namespace and the class plan-fast once.
func planSetup(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: planNS}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "plan-fast"}, Provisioner: "csi.example.com"},
	} {
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// planOf runs plan on the benchmark text.
func planOf(t *testing.T, text string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return plugin(t, append([]string{"plan", "-f", f, "-n", planNS}, args...)...)
}

// TestPlan: a valid benchmark on an existing class: the division printed
// is plan.Divide's for the spec the API server stores, the job files
// carry each job's rates, the objects are the builders', and nothing was
// created.
func TestPlan(t *testing.T) {
	planSetup(t)
	ctx := context.Background()
	out, errOut, code := planOf(t, planBench)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	t.Logf("plan:\n%s", out)

	// What the library divides, for the spec as the API server defaults it.
	var sb v1alpha1.StorageBenchmark
	if err := yaml.Unmarshal([]byte(planBench), &sb); err != nil {
		t.Fatal(err)
	}
	sb.Namespace = planNS
	if err := k8s.Create(ctx, &sb, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	d, err := spec.Of(&sb)
	if err != nil {
		t.Fatal(err)
	}
	rows := stepRows(out)
	for _, s := range plan.Steps(d.Load) {
		loads, err := plan.Divide(s, d.Topology, d.Workload)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for c, jobs := range loads {
			for j, l := range jobs {
				want := fmt.Sprintf("%d %d IOPS offered %d %d %d %d IOPS %d IOPS", s.Index+1, s.OfferedIOPS, c, j, l.IODepth, l.ReadIOPS, l.WriteIOPS)
				if got := rows[[3]int{s.Index, c, j}]; got != want {
					t.Errorf("step %d client %d job %d: printed %q, want %q", s.Index+1, c, j, got, want)
				}
				sum += l.ReadIOPS + l.WriteIOPS
				if s.Index == 0 {
					rate := fmt.Sprintf("rate_iops=%d,%d", l.ReadIOPS, l.WriteIOPS)
					section := fmt.Sprintf("[step0-job%d]\n  filename=%s/job%d.dat\n  iodepth=%d\n  randseed=%d\n  %s\n",
						j, protocol.DataMountPath, j, l.IODepth, protocol.ClientSeed(sb.Name, c)+uint64(j), rate)
					if !strings.Contains(jobFileOf(out, c), section) {
						t.Errorf("client %d's job file lacks job %d's %s:\n%s", c, j, rate, jobFileOf(out, c))
					}
				}
			}
		}
		if sum != s.OfferedIOPS {
			t.Errorf("step %d: the jobs' shares add up to %d, not %d", s.Index+1, sum, s.OfferedIOPS)
		}
	}
	if len(rows) != 2*3*2 {
		t.Errorf("%d step rows, want 12", len(rows))
	}

	// The objects are named as the builders name them; the deadline is
	// the defaults' 30 min ready + 1 s lead + (2 steps + 1) × (1 s lead +
	// 5 s ramp + 30 s + 2 min result grace) = 2269 s.
	flat := squash(out)
	for i := range 3 {
		for _, w := range []string{
			"ServiceAccount " + exchange.ClientName(sb.Name, i) + " client " + fmt.Sprint(i) + "'s identity",
			"Role " + exchange.ClientName(sb.Name, i),
			"RoleBinding " + exchange.ClientName(sb.Name, i),
			"PersistentVolumeClaim " + exchange.ClientClaimName(sb.Name, i) + " 10Gi, class plan-fast, ReadWriteOnce, Filesystem",
			"ConfigMap " + exchange.ClientName(sb.Name, i) + " client " + fmt.Sprint(i) + "'s reports and results",
			"Job " + exchange.ClientName(sb.Name, i) + " image localhost/storagebench-runner:dev (pull IfNotPresent), memory limit 256Mi, activeDeadlineSeconds 2269, claim " +
				exchange.ClientClaimName(sb.Name, i),
		} {
			if !strings.Contains(flat, w) {
				t.Errorf("plan lacks %q", w)
			}
		}
	}
	for _, w := range []string{
		"the CRD's schema and CEL rules (server dry run): ok",
		"the operator's validation of the spec: ok",
		"storage: StorageClass plan-fast, provisioner csi.example.com; access mode ReadWriteOnce, volume mode Filesystem",
		"the operator's admission: ok",
		"ConfigMap " + exchange.PlanName(sb.Name) + " the plan every client reads",
		"ConfigMap " + exchange.StepName(sb.Name, 0) + " … " + exchange.StepName(sb.Name, 1) + " step records",
		"measuring: 2 steps × (5s ramp + 30s) = 1m10s",
		"longest run, every allowance used (the Jobs' activeDeadlineSeconds): 37m49s",
	} {
		if !strings.Contains(flat, w) {
			t.Errorf("plan lacks %q", w)
		}
	}

	// Nothing was created.
	for _, l := range []client.ObjectList{&corev1.PersistentVolumeClaimList{}, &batchv1.JobList{}, &corev1.ConfigMapList{},
		&corev1.ServiceAccountList{}, &v1alpha1.StorageBenchmarkList{}} {
		if err := k8s.List(ctx, l, client.InNamespace(planNS)); err != nil {
			t.Fatal(err)
		}
		if n := len(mustItems(t, l)); n != 0 {
			t.Errorf("%T: %d objects in namespace %s after plan", l, n, planNS)
		}
	}
}

func mustItems(t *testing.T, l client.ObjectList) []client.Object {
	t.Helper()
	var out []client.Object
	switch l := l.(type) {
	case *corev1.PersistentVolumeClaimList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.JobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.ConfigMapList:
		for i := range l.Items {
			if l.Items[i].Name != "kube-root-ca.crt" { // the API server's own
				out = append(out, &l.Items[i])
			}
		}
	case *corev1.ServiceAccountList:
		for i := range l.Items {
			if l.Items[i].Name != "default" { // the API server's own
				out = append(out, &l.Items[i])
			}
		}
	case *v1alpha1.StorageBenchmarkList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// stepRows reads the steps table: fields joined by one space, keyed by
// step (from 0), client and job.
func stepRows(out string) map[[3]int]string {
	rows := map[[3]int]string{}
	_, table, _ := strings.Cut(out, "STEP  ")
	table, _, _ = strings.Cut(table, "\n\n")
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		var k [3]int
		if len(f) != 11 { // step, "N IOPS offered", client, job, depth, read and write shares
			continue
		}
		if _, err := fmt.Sscanf(strings.Join([]string{f[0], f[4], f[5]}, " "), "%d %d %d", &k[0], &k[1], &k[2]); err != nil {
			continue
		}
		k[0]--
		rows[k] = strings.Join(f, " ")
	}
	return rows
}

// jobFileOf is client c's fio job file in plan's output.
func jobFileOf(out string, c int) string {
	_, rest, _ := strings.Cut(out, fmt.Sprintf("fio job file of client %d,", c))
	rest, _, _ = strings.Cut(rest, "\n\nfio job file")
	rest, _, _ = strings.Cut(rest, "\n\nObjects")
	return rest + "\n"
}

// squash makes every run of spaces in out one space (tables' columns).
func squash(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// TestPlanRefusals: what the operator (or the API server) would refuse
// ends plan with exitRefused and says which check refused and why.
func TestPlanRefusals(t *testing.T) {
	planSetup(t)
	for _, tc := range []struct {
		name, from, to string
		args           []string
		check, reason  string
	}{
		{"a missing class", "storageClassName: plan-fast", "storageClassName: nope", nil,
			"the operator's admission: REFUSED (StorageClassNotFound)", `StorageClass "nope" not found`},
		{"the CRD's CEL rules", "stepDuration: 30s", "stepDuration: 30s\n    rampTime: 40s", nil,
			"the CRD's schema and CEL rules (server dry run): REFUSED (Invalid)", "rampTime"},
		{"the operator's validation", "steps: [1001, 2000]", "steps: [3, 2000]", nil,
			"the operator's validation of the spec: REFUSED (InvalidSpec)", "fio jobs"},
		{"an image the policy does not allow", "count: 3,", "count: 3, image: registry.example/mine:1,", nil,
			"the operator's admission: REFUSED (ForbiddenByPolicy)", `spec.clients.image "registry.example/mine:1" is not allowed by the operator's policy`},
		{"an image the policy allows", "count: 3,", "count: 3, image: registry.example/mine:1,", []string{"--allowed-runner-images=registry.example/mine:1"},
			"the operator's admission: ok", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(planBench, tc.from, tc.to, 1)
			out, errOut, code := planOf(t, text, tc.args...)
			if !strings.Contains(out, tc.check) {
				t.Errorf("plan lacks %q:\n%s", tc.check, out)
			}
			switch {
			case tc.reason == "" && code != exitOK:
				t.Errorf("exit %d, want 0: %s", code, errOut)
			case tc.reason != "" && (code != exitRefused || !strings.Contains(errOut, tc.reason) || !strings.Contains(out, tc.reason)):
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitRefused, tc.reason)
			}
		})
	}
}
