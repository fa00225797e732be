package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/results"
)

// regressionRun creates benchmark name in namespace live from the recorded
// oltp run (its spec changed by spec, when set) with the records of its
// eight steps, as the operator writes them: 30 seconds each near the
// offered rate, with a p99 that grows with the load, varying from second
// to second by seed. Step slowStep (from 0; -1 for none) ran 30 % slower
// with its p99 doubled. It returns the benchmark and its records, as saved
// objects (with their kinds).
func regressionRun(t *testing.T, name string, seed, slowStep int, spec func(*v1alpha1.StorageBenchmarkSpec)) []any {
	t.Helper()
	return regressionRunWith(t, name, seed, slowStep, spec, nil)
}

// regressionRunWith is regressionRun with the recorded status changed by
// status, when set.
func regressionRunWith(t *testing.T, name string, seed, slowStep int, spec func(*v1alpha1.StorageBenchmarkSpec), status func(*v1alpha1.StorageBenchmarkStatus)) []any {
	t.Helper()
	ctx := context.Background()
	if err := putWith(ctx, "oltp", name, live, spec, status); err != nil {
		t.Fatal(err)
	}
	sb := &v1alpha1.StorageBenchmark{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: live, Name: name}, sb); err != nil {
		t.Fatal(err)
	}
	sb.APIVersion, sb.Kind = v1alpha1.GroupVersion.String(), "StorageBenchmark"
	saved := []any{sb}
	for k, st := range sb.Status.Steps {
		tl := results.Timeline{WindowSeconds: 1}
		for s := range 30 {
			iops := float64(st.OfferedIOPS) * (0.99 + 0.01*float64((s*5+seed*3)%7-3)/3)
			latency := 300e3 * (1 + 0.3*float64(k)) * (1 + 0.05*float64((s*3+seed)%5-2)/2)
			if k == slowStep {
				iops, latency = iops*0.7, latency*2
			}
			n := uint64(iops)
			tl.Windows = append(tl.Windows, results.Window{StartMs: uint64(s) * 1000, IOs: n, IOPS: iops,
				Hist: fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(uint64(latency)), Count: n}}}})
		}
		order, err := exchange.Encode(protocol.StepOrder{Index: k, Step: plan.Step{Index: k, OfferedIOPS: st.OfferedIOPS}, Duration: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		agg, err := exchange.Encode(results.StepAggregate{Step: k, Timeline: tl})
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: exchange.StepName(name, k), Namespace: live,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: sb.APIVersion, Kind: sb.Kind, Name: name, UID: sb.UID, Controller: ptrTo(true)}}},
			Data: map[string]string{exchange.KeyOrder: order, exchange.KeyAggregate: agg},
		}
		recreate(t, cm)
		saved = append(saved, cm)
	}
	return saved
}

// recreate creates an object afresh (a test run again in the same process
// finds it).
func recreate(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Delete(ctx, obj.DeepCopyObject().(client.Object)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil {
		t.Fatal(err)
	}
}

// regressionRuns creates the runs the regression tests compare, and saves
// reg-base, reg-same and reg-slow with their records in a file.
func regressionRuns(t *testing.T) (saved string) {
	t.Helper()
	var items []any
	items = append(items, regressionRun(t, "reg-base", 1, -1, nil)...)
	items = append(items, regressionRun(t, "reg-same", 2, -1, nil)...)
	items = append(items, regressionRun(t, "reg-slow", 3, 2, nil)...)
	// reg-slow again, judged with larger minimum effects by its spec.
	regressionRun(t, "reg-lenient", 3, 2, func(s *v1alpha1.StorageBenchmarkSpec) {
		s.Regression = &v1alpha1.RegressionSpec{Baseline: v1alpha1.RegressionBaseline{Benchmark: ptrTo("reg-base")}, MinIOPSDropPercent: 40, MinP99RisePercent: 150}
	})
	regressionRun(t, "reg-fewer-clients", 3, 2, func(s *v1alpha1.StorageBenchmarkSpec) { s.Clients.Count = 4 })
	ctx := context.Background()
	for _, r := range []struct {
		name string
		edit func(*v1alpha1.StorageBenchmarkStatus)
	}{{"reg-running", running(3, 3)}, {"reg-failed", failedAt(4)}, {"reg-norecords", nil}} {
		if err := put(ctx, "oltp", r.name, live, r.edit); err != nil {
			t.Fatal(err)
		}
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	saved = filepath.Join(t.TempDir(), "runs.yaml")
	if err := os.WriteFile(saved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return saved
}

// lastLine is the output's last line.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

const limits = "(significance 0.01, at least 10 % fewer IOPS or 25 % higher p99)"

func TestCompareBaseline(t *testing.T) {
	regressionRuns(t)
	compare := func(args ...string) (string, string, int) {
		t.Helper()
		return plugin(t, append([]string{"compare", "-n", live}, args...)...)
	}

	out, errOut, code := compare("reg-same", "--baseline", "reg-base")
	if code != exitOK {
		t.Fatalf("same runs: exit %d: %s\n%s", code, errOut, out)
	}
	// One baseline run: IOPS is judged on the per-second samples (a note
	// says so), p99 is not judged (each row says why).
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1+16+3 || lines[0] != "step  load                metric  baseline runs  baseline median  current median  change  adjusted p  verdict" ||
		lines[18] != "Note (IOPS of steps 1–8): judged on the per-second samples of 1 baseline run: a run-level test needs at least 3 baseline runs" {
		t.Errorf("want a header, 16 rows, a blank line, a note and the verdict:\n%s", out)
	}
	if got, want := lastLine(out), "Not regressed: none of 8 tests on 8 steps regressed against 1 baseline run of StorageBenchmark/reg-base "+limits; got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}

	out, errOut, code = compare("reg-slow", "--baseline", "reg-base")
	if code != exitRegressed || errOut != "" {
		t.Fatalf("slower run: exit %d, want %d; stderr %q\n%s", code, exitRegressed, errOut, out)
	}
	for _, w := range []string{
		"   3  20000 IOPS offered  IOPS                1           19,800          13,860   -30.0 %     1.1e-10  Regressed\n",
		"   3  20000 IOPS offered  p99                 1           481 µs          963 µs  +100.0 %              NotJudged: p99 needs at least 3 baseline runs: tail latency varies between runs of unchanged storage more than one run's seconds show (1 given)\n",
		"   2  10000 IOPS offered  IOPS                1            9,900           9,900    +0.0 %           1  NotRegressed\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("slower run lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "  Regressed\n"); n != 1 {
		t.Errorf("%d tests regressed, want step 3's IOPS:\n%s", n, out)
	}
	if l := lastLine(out); !strings.HasPrefix(l, "Regressed: step 3 (20000 IOPS offered): IOPS 19,800 → 13,860 (-30.0 %), p = 1.1e-10") ||
		!strings.HasSuffix(l, "; 1 of 8 tests regressed against 1 baseline run of StorageBenchmark/reg-base "+limits) {
		t.Errorf("verdict %q", l)
	}

	out, _, code = compare("reg-slow", "--baseline", "reg-base", "-o", "json")
	var doc report.RegressionComparison
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitRegressed {
		t.Fatalf("json: exit %d, %v:\n%s", code, err, out)
	}
	if doc.Baseline != "StorageBenchmark/reg-base" || !reflect.DeepEqual(doc.Runs, []string{"reg-base"}) || doc.Current != "reg-slow" || !doc.Result.Regressed ||
		len(doc.Result.Tests) != 16 || doc.Result.BaselineRuns != 1 || doc.Options != (analysis.RegressionOptions{}).WithDefaults() {
		t.Errorf("json document: %s (%v) and %s, options %+v, regressed %v, %d tests against %d runs", doc.Baseline, doc.Runs, doc.Current, doc.Options,
			doc.Result.Regressed, len(doc.Result.Tests), doc.Result.BaselineRuns)
	}
	for i, x := range doc.Result.Tests {
		iops := x.Metric == analysis.MetricIOPS
		if x.Regressed != (iops && x.Index == 2) || x.Planned != i/2 || x.Judged != iops || x.BaselineRuns != 1 {
			t.Errorf("test %d: step %d %s, planned %d, judged %v, regressed %v, %d baseline runs", i, x.Index, x.Metric, x.Planned, x.Judged, x.Regressed, x.BaselineRuns)
		}
	}

	// reg-lenient's spec.regression asks for larger effects; the flags
	// override it.
	out, _, code = compare("reg-lenient", "--baseline", "reg-base")
	if want := "Not regressed: none of 8 tests on 8 steps regressed against 1 baseline run of StorageBenchmark/reg-base (significance 0.01, at least 40 % fewer IOPS or 150 % higher p99)"; code != exitOK || lastLine(out) != want {
		t.Errorf("spec.regression's options: exit %d, %q; want %q", code, lastLine(out), want)
	}
	out, _, code = compare("reg-lenient", "--baseline", "reg-base", "--min-iops-drop", "25", "--significance", "0.001")
	if code != exitRegressed || !strings.HasPrefix(lastLine(out), "Regressed: step 3 (20000 IOPS offered): IOPS 19,800 → 13,860 (-30.0 %)") ||
		!strings.HasSuffix(lastLine(out), "1 of 8 tests regressed against 1 baseline run of StorageBenchmark/reg-base (significance 0.001, at least 25 % fewer IOPS or 150 % higher p99)") {
		t.Errorf("flags over spec.regression: exit %d, %q", code, lastLine(out))
	}

	// Runs that measured another thing are refused, unless forced.
	_, errOut, code = compare("reg-fewer-clients", "--baseline", "reg-base")
	if want := "error: reg-fewer-clients and StorageBenchmark/reg-base measured another clients: compare runs of the same workload, clients and load (or pass --force)\n"; code != exitError || errOut != want {
		t.Errorf("another fingerprint: exit %d, %q; want %q", code, errOut, want)
	}
	out, errOut, code = compare("reg-fewer-clients", "--baseline", "reg-base", "--force")
	if code != exitRegressed || errOut != "warning: reg-fewer-clients and StorageBenchmark/reg-base measured another clients: compared anyway (--force)\n" || !strings.HasPrefix(lastLine(out), "Regressed: ") {
		t.Errorf("forced: exit %d, %q, %q", code, errOut, lastLine(out))
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reg-slow", "--baseline", "reg-base", "--significance", "0.5"}, "error: --significance 0.5: invalid analysis options: Significance must be more than 0 and at most 0.2, got 0.5\n"},
		{[]string{"reg-slow", "--baseline", "reg-base", "--min-iops-drop", "100"}, "error: --min-iops-drop 100: invalid analysis options: MinIOPSDropPercent must be more than 0 and less than 100, got 100\n"},
		{[]string{"reg-slow", "--baseline", "reg-base", "--min-p99-rise", "0"}, "error: --min-p99-rise 0: the value must be more than 0 (leave the flag out for the default)\n"},
		{[]string{"reg-slow", "--baseline", "reg-slow"}, "error: --baseline reg-slow: a run cannot be its own baseline\n"},
		{[]string{"reg-slow", "--baseline", "reg-running"}, "error: --baseline: storagebenchmark reg-running is Running, not Complete: only a completed run can be a baseline\n"},
		{[]string{"reg-failed", "--baseline", "reg-base"}, "error: storagebenchmark reg-failed is Failed, not Complete: only a completed run is compared, as the operator compares it\n"},
		{[]string{"reg-slow", "--baseline", "reg-norecords"}, "error: step 1 of reg-norecords has no record (ConfigMap reg-norecords-step-000 not found)\n"},
		{[]string{"reg-slow", "--baseline", "nope"}, `error: --baseline: storagebenchmark "nope" not found in namespace "live"` + "\n"},
		{[]string{"reg-slow", "--baseline", "widget/x"}, "error: --baseline widget/x: want a benchmark's name or configmap/NAME\n"},
		{[]string{"reg-slow", "reg-same", "--baseline", "reg-base"}, "error: compare --baseline judges one benchmark against its baseline: name exactly one, not 2\n"},
		{[]string{"reg-slow", "--baseline", "reg-base", "-o", "png"}, `error: compare --baseline: unknown output format "png": want one of text, json` + "\n"},
		{[]string{"reg-slow", "--baseline", "reg-base", "--latency", "p99"}, "error: --latency does not apply to compare --baseline (it judges the per-second IOPS and p99 of every step)\n"},
		{[]string{"reg-slow", "reg-base", "--min-iops-drop", "20"}, "error: --min-iops-drop does not apply to compare without --baseline\n"},
	} {
		if _, errOut, code := compare(c.args...); code != exitError || errOut != c.want {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestBaseline(t *testing.T) {
	saved := regressionRuns(t)
	ctx := context.Background()
	out, errOut, code := plugin(t, "baseline", "reg-base", "-n", live)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(out), &cm); err != nil {
		t.Fatalf("not a ConfigMap: %v\n%.400s", err, out)
	}
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Name != "reg-base-baseline" || cm.Namespace != live ||
		!reflect.DeepEqual(cm.Labels, map[string]string{"storagebench.io/baseline": "true"}) || len(cm.Data) != 1 || strings.Contains(out, "creationTimestamp") {
		t.Errorf("manifest:\n%.400s", out)
	}
	b, err := analysis.DecodeBaseline([]byte(cm.Data["baseline.json"]))
	if err != nil {
		t.Fatal(err)
	}
	var sb v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: live, Name: "reg-base"}, &sb); err != nil {
		t.Fatal(err)
	}
	if b.Source != "live/reg-base" || b.Fingerprint != sb.Spec.RegressionFingerprint() || len(b.Steps) != 8 ||
		b.Steps[2].Label != "20000 IOPS offered" || len(b.Steps[2].IOPS) != 30 || len(b.Steps[2].P99Ns) != 30 {
		t.Errorf("baseline from %s, fingerprint %s, %d steps", b.Source, b.Fingerprint, len(b.Steps))
	}

	// Pinned in the cluster, it is a baseline for compare, with the
	// verdict the benchmark itself gives.
	recreate(t, &cm)
	pinned, code := compareJSON(t, "reg-slow", "--baseline", "configmap/reg-base-baseline", "-n", live)
	direct, _ := compareJSON(t, "reg-slow", "--baseline", "reg-base", "-n", live)
	if code != exitRegressed || pinned.Baseline != "ConfigMap/reg-base-baseline" || !reflect.DeepEqual(pinned.Result, direct.Result) {
		t.Errorf("against the pinned baseline: exit %d, %s; the result differs from the benchmark's: %v", code, pinned.Baseline, !reflect.DeepEqual(pinned.Result, direct.Result))
	}
	out, _, code = plugin(t, "compare", "reg-same", "--baseline", "cm/reg-base-baseline", "-n", live)
	if code != exitOK || lastLine(out) != "Not regressed: none of 8 tests on 8 steps regressed against 1 baseline run of ConfigMap/reg-base-baseline "+limits {
		t.Errorf("same run against the pinned baseline: exit %d, %q", code, lastLine(out))
	}

	// From saved objects: the same manifest; saved apart, it is a baseline
	// for the saved runs.
	fromFile, errOut, code := plugin(t, "baseline", "reg-base", "-f", saved)
	if code != exitOK || fromFile != out0(t, "baseline", "reg-base", "-n", live) {
		t.Errorf("from saved objects: exit %d, %s; want the cluster's manifest", code, errOut)
	}
	pinnedFile := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := os.WriteFile(pinnedFile, []byte(fromFile), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = plugin(t, "compare", "reg-slow", "--baseline", "configmap/reg-base-baseline", "-f", saved, "-f", pinnedFile)
	if code != exitRegressed || !strings.HasSuffix(lastLine(out), "against 1 baseline run of ConfigMap/reg-base-baseline "+limits) {
		t.Errorf("compare from files against the pinned baseline: exit %d, %s\n%s", code, errOut, out)
	}
	if _, _, code = plugin(t, "compare", "reg-same", "--baseline", "reg-base", "-f", saved); code != exitOK {
		t.Errorf("compare from files: exit %d", code)
	}

	out, _, code = plugin(t, "baseline", "reg-base", "-n", live, "--configmap", "oltp-golden")
	if code != exitOK || !strings.Contains(out, "\n  name: oltp-golden\n") {
		t.Errorf("--configmap: exit %d\n%.300s", code, out)
	}
	unlabelled := cm.DeepCopy()
	unlabelled.Name, unlabelled.Labels = "reg-unlabelled", nil
	recreate(t, unlabelled)
	oltp := filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"baseline", "reg-running", "-n", live}, "error: storagebenchmark reg-running is Running, not Complete: only a completed run can be a baseline\n"},
		{[]string{"baseline", "reg-failed", "-n", live}, "error: storagebenchmark reg-failed is Failed, not Complete: only a completed run can be a baseline\n"},
		{[]string{"baseline", "reg-norecords", "-n", live}, "error: step 1 of reg-norecords has no record (ConfigMap reg-norecords-step-000 not found)\n"},
		{[]string{"baseline", "-f", oltp}, "error: ConfigMap oltp-ontap-nas-step-000 not found in " + oltp + ": save it with the benchmark (kubectl get sbench,cm -o yaml)\n"},
		{[]string{"baseline", "reg-base", "-n", live, "--configmap", "Golden_1"}, `error: --configmap "Golden_1" is not a valid ConfigMap name: `},
		// A file of ConfigMaps alone is read with others that hold a
		// benchmark, not on its own.
		{[]string{"baseline", "-f", pinnedFile}, "error: " + pinnedFile + ": no StorageBenchmark found\n"},
		{[]string{"compare", "reg-slow", "-n", live, "--baseline", "cm/reg-unlabelled"}, "error: --baseline: ConfigMap reg-unlabelled is not labelled storagebench.io/baseline=true, so the operator would not read it as a baseline\n"},
		{[]string{"compare", "reg-slow", "-n", live, "--baseline", "configmap/nope"}, "error: --baseline: ConfigMap nope not found in namespace live\n"},
		{[]string{"compare", "reg-fewer-clients", "-n", live, "--baseline", "configmap/reg-base-baseline"}, "error: reg-fewer-clients and ConfigMap/reg-base-baseline measured another clients: compare runs of the same workload, clients and load (or pass --force)\n"},
	} {
		if _, errOut, code := plugin(t, c.args...); code != exitError || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

// out0 is the standard output of a command that must succeed.
func out0(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := plugin(t, args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// TestStepRecordsOwnership: compare --baseline and baseline read a step's
// ConfigMap as the run's record only when the benchmark controls it, as
// the operator does (controllers/steps.go readSteps, ownedBy); one without
// a controller, planted by anybody who may create ConfigMaps, or one that
// another object controls, is refused by name, from the cluster and from
// saved objects.
func TestStepRecordsOwnership(t *testing.T) {
	saved := regressionRuns(t)
	ctx := context.Background()
	var base v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: live, Name: "reg-base"}, &base); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		// plant replaces step 3's record of the run.
		plant func(*corev1.ConfigMap)
		want  string
	}{
		{"reg-planted", func(cm *corev1.ConfigMap) { cm.OwnerReferences = nil },
			"ConfigMap reg-planted-step-002 is not a record of storagebenchmark reg-planted: it has no controller"},
		{"reg-foreign", func(cm *corev1.ConfigMap) {
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: "reg-base", UID: base.UID, Controller: ptrTo(true)}}
		}, "ConfigMap reg-foreign-step-002 is not a record of storagebenchmark reg-foreign: StorageBenchmark reg-base controls it"},
	} {
		items := regressionRun(t, c.name, 1, -1, nil)
		cm := items[3].(*corev1.ConfigMap)
		c.plant(cm)
		recreate(t, cm)
		data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), c.name+".yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"compare", "reg-slow", "--baseline", c.name, "-n", live},
			{"compare", c.name, "--baseline", "reg-base", "-n", live},
			{"baseline", c.name, "-n", live},
			{"compare", "reg-slow", "--baseline", c.name, "-f", saved, "-f", file},
			{"baseline", c.name, "-f", file},
			// Among several baseline runs, too.
			{"compare", "reg-slow", "--baseline", "reg-base," + c.name, "-n", live},
			{"baseline", "reg-base", c.name, "-n", live, "--configmap", "reg-pinned"},
			// A step's timeline is read by the same rule.
			{"report", c.name, "-n", live, "--timeline", "3", "-o", "svg"},
			{"report", c.name, "-f", file, "--timeline", "3", "-o", "svg"},
		} {
			out, errOut, code := plugin(t, args...)
			if code != exitError || errOut != "error: "+c.want+"\n" {
				t.Errorf("%v: exit %d, %q; want exit %d, %q\n%.300s", args, code, errOut, exitError, "error: "+c.want+"\n", out)
			}
		}
		// The HTML report draws the timelines of the run's own records
		// and says why step 3 has none.
		for _, args := range [][]string{{"report", c.name, "-n", live, "-o", "html"}, {"report", c.name, "-f", file, "-o", "html"}} {
			out, errOut, code := plugin(t, args...)
			if code != exitOK {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			_, sections := htmlTimelines(t, out)
			note := `<p class="note">No timeline: ` + c.want + `</p>`
			if body := sections["Step 3: offered 20,000 IOPS"]; !strings.Contains(body, note) || strings.Contains(body, "<svg ") {
				t.Errorf("%v: step 3's section lacks %q, or draws a timeline:\n%.300s", args, note, body)
			}
			if body := sections["Step 2: offered 10,000 IOPS"]; !strings.Contains(body, "<svg ") {
				t.Errorf("%v: step 2's own record is not drawn:\n%.300s", args, body)
			}
		}
	}
}

// moreRuns creates reg-b2 and reg-b3, two more runs of reg-base's
// unchanged storage, and reg-closed, one whose step 3 saturated (its
// latency closed-loop, as status marks it), and saves them with reg-base,
// reg-same, reg-slow and their records in a file.
func moreRuns(t *testing.T) (saved string) {
	t.Helper()
	var items []any
	items = append(items, regressionRun(t, "reg-base", 1, -1, nil)...)
	items = append(items, regressionRun(t, "reg-same", 2, -1, nil)...)
	items = append(items, regressionRun(t, "reg-slow", 3, 2, nil)...)
	items = append(items, regressionRun(t, "reg-b2", 4, -1, nil)...)
	items = append(items, regressionRun(t, "reg-b3", 5, -1, nil)...)
	items = append(items, regressionRunWith(t, "reg-closed", 6, -1, nil, func(st *v1alpha1.StorageBenchmarkStatus) {
		st.Steps[2].Saturated, st.Steps[2].ClosedLoop = true, true
	})...)
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	saved = filepath.Join(t.TempDir(), "runs.yaml")
	if err := os.WriteFile(saved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return saved
}

// TestCompareBaselineRuns: compare --baseline with several benchmarks
// judges a run against their run-to-run spread, as the operator's
// spec.regression.baseline.benchmarks does (analysis.CompareWithRuns):
// p99 only with 3 runs or more, and only where every baseline run's step
// was open-loop.
func TestCompareBaselineRuns(t *testing.T) {
	regressionRuns(t)
	moreRuns(t)
	compare := func(args ...string) (string, string, int) {
		t.Helper()
		return plugin(t, append([]string{"compare", "-n", live}, args...)...)
	}
	judged := func(args ...string) (report.RegressionComparison, int) {
		t.Helper()
		out, errOut, code := compare(append(args, "-o", "json")...)
		var doc report.RegressionComparison
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: exit %d, %s: %v", args, code, errOut, err)
		}
		return doc, code
	}
	three := "StorageBenchmark/reg-base, StorageBenchmark/reg-b2, StorageBenchmark/reg-b3"
	notJudged := func(reason string) func(x analysis.RegressionTest) bool {
		return func(x analysis.RegressionTest) bool { return !x.Judged && x.Reason == reason }
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		// baseline and runs are the document's names of the baseline.
		baseline string
		runs     []string
		// last is the text's verdict.
		last string
		// test checks each test of the document.
		test func(x analysis.RegressionTest) bool
	}{
		{"three runs, unchanged storage", []string{"reg-same", "--baseline", "reg-base,reg-b2,reg-b3"}, exitOK,
			three, []string{"reg-base", "reg-b2", "reg-b3"},
			"Not regressed: none of 16 tests on 8 steps regressed against 3 baseline runs of " + three + " " + limits,
			func(x analysis.RegressionTest) bool {
				return x.Judged && !x.Regressed && x.BaselineRuns == 3 && x.Reason == ""
			}},
		{"three runs, step 3 slower", []string{"reg-slow", "--baseline", "reg-base,reg-b2,reg-b3"}, exitRegressed,
			three, []string{"reg-base", "reg-b2", "reg-b3"},
			"; 1 of 16 tests regressed against 3 baseline runs of " + three + " " + limits,
			func(x analysis.RegressionTest) bool {
				// p99 doubled: within what three runs allow tail latency
				// (its spread floored at 0.25).
				return x.Judged && x.Regressed == (x.Index == 2 && x.Metric == analysis.MetricIOPS) && x.BaselineRuns == 3
			}},
		{"the flag repeated", []string{"reg-slow", "--baseline", "reg-base", "--baseline", "reg-b2,reg-b3"}, exitRegressed,
			three, []string{"reg-base", "reg-b2", "reg-b3"},
			"; 1 of 16 tests regressed against 3 baseline runs of " + three + " " + limits,
			func(x analysis.RegressionTest) bool {
				return x.Judged && x.Regressed == (x.Index == 2 && x.Metric == analysis.MetricIOPS)
			}},
		{"five runs: the first three named", []string{"reg-slow", "--baseline", "reg-base,reg-b2,reg-b3,reg-same,reg-closed"}, exitRegressed,
			three + ", 2 more", []string{"reg-base", "reg-b2", "reg-b3", "reg-same", "reg-closed"},
			"regressed against 5 baseline runs of " + three + ", 2 more " + limits,
			func(x analysis.RegressionTest) bool {
				if x.Metric == analysis.MetricP99 && x.Index == 2 {
					return notJudged("closed-loop latency in the baseline: at saturation or without a rate limit latency follows the queue depth (baseline run 5 of 5)")(x)
				}
				return x.Judged && x.Regressed == (x.Index == 2) && x.BaselineRuns == 5
			}},
		// Fewer than three runs: IOPS on the per-second samples, p99 not
		// judged.
		{"two runs", []string{"reg-slow", "--baseline", "reg-base,reg-b2"}, exitRegressed,
			"StorageBenchmark/reg-base, StorageBenchmark/reg-b2", []string{"reg-base", "reg-b2"},
			"; 1 of 8 tests regressed against 2 baseline runs of StorageBenchmark/reg-base, StorageBenchmark/reg-b2 " + limits,
			func(x analysis.RegressionTest) bool {
				if x.Metric == analysis.MetricP99 {
					return notJudged("p99 needs at least 3 baseline runs: tail latency varies between runs of unchanged storage more than one run's seconds show (2 given)")(x)
				}
				return x.Judged && x.Regressed == (x.Index == 2) && x.BaselineRuns == 2 &&
					x.Reason == "judged on the per-second samples of 2 baseline runs, pooled: a run-level test needs at least 3 baseline runs"
			}},
		// A baseline run whose step 3 was closed-loop (saturated): that
		// step's p99 is not judged, its IOPS are.
		{"a closed-loop baseline step", []string{"reg-slow", "--baseline", "reg-base,reg-b2,reg-closed"}, exitRegressed,
			"StorageBenchmark/reg-base, StorageBenchmark/reg-b2, StorageBenchmark/reg-closed", []string{"reg-base", "reg-b2", "reg-closed"},
			"; 1 of 15 tests regressed against 3 baseline runs of StorageBenchmark/reg-base, StorageBenchmark/reg-b2, StorageBenchmark/reg-closed " + limits,
			func(x analysis.RegressionTest) bool {
				if x.Metric == analysis.MetricP99 && x.Index == 2 {
					return notJudged("closed-loop latency in the baseline: at saturation or without a rate limit latency follows the queue depth (baseline run 3 of 3)")(x)
				}
				return x.Judged && x.Regressed == (x.Index == 2) && x.BaselineRuns == 3
			}},
		// The current run's closed-loop step is judged: its latency rising
		// where the baseline's was open-loop is the regression.
		{"a closed-loop current step", []string{"reg-closed", "--baseline", "reg-base,reg-b2,reg-b3"}, exitOK,
			three, []string{"reg-base", "reg-b2", "reg-b3"},
			"Not regressed: none of 16 tests on 8 steps regressed against 3 baseline runs of " + three + " " + limits,
			func(x analysis.RegressionTest) bool { return x.Judged && !x.Regressed }},
	} {
		// The JSON document; the text's verdict is its Verdict.
		doc, code := judged(c.args...)
		if v := doc.Verdict(); code != c.code || !strings.HasSuffix(v, c.last) {
			t.Errorf("%s: exit %d, want %d; verdict %q, want it to end %q", c.name, code, c.code, v, c.last)
		}
		if doc.Baseline != c.baseline || !reflect.DeepEqual(doc.Runs, c.runs) || doc.Result.BaselineRuns != len(c.runs) || len(doc.Result.Tests) != 16 {
			t.Errorf("%s: baseline %q, runs %v (%d), %d tests; want %q, %v", c.name, doc.Baseline, doc.Runs, doc.Result.BaselineRuns, len(doc.Result.Tests), c.baseline, c.runs)
		}
		for _, x := range doc.Result.Tests {
			if !c.test(x) {
				t.Errorf("%s: %+v", c.name, x)
			}
		}
	}

	// The text says how many runs each test rests on, and why a test was
	// not judged.
	out, errOut, code := compare("reg-slow", "--baseline", "reg-base,reg-b2,reg-closed")
	want := "Regressed: step 3 (20000 IOPS offered): IOPS 19,800 → 13,860 (-30.0 %)"
	if code != exitRegressed || errOut != "" || !strings.HasPrefix(lastLine(out), want) {
		t.Errorf("text: exit %d, %q; verdict %q, want it to start %q", code, errOut, lastLine(out), want)
	}
	for _, w := range []string{
		"step  load                metric  baseline runs  baseline median  current median    change  adjusted p  verdict\n",
		"   3  20000 IOPS offered  p99                 3           481 µs          963 µs  +100.0 %              NotJudged: closed-loop latency in the baseline: at saturation or without a rate limit latency follows the queue depth (baseline run 3 of 3)\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
	if !regexp.MustCompile(`\n   3  20000 IOPS offered  IOPS                3           19,800          13,860   -30\.0 % +[0-9.e-]+  Regressed\n`).MatchString(out) {
		t.Errorf("text lacks step 3's IOPS regressed against 3 runs:\n%s", out)
	}
	out, _, _ = compare("reg-slow", "--baseline", "reg-base,reg-b2")
	if !strings.Contains(out, "\n\nNote (IOPS of steps 1–8): judged on the per-second samples of 2 baseline runs, pooled: a run-level test needs at least 3 baseline runs\nRegressed: ") {
		t.Errorf("two runs: the note on the per-second test is not printed before the verdict:\n%s", out)
	}

	// From saved objects: the same verdict.
	saved := moreRuns(t)
	inCluster, _ := judged("reg-slow", "--baseline", "reg-base,reg-b2,reg-closed")
	out, errOut, code = plugin(t, "compare", "reg-slow", "--baseline", "reg-base,reg-b2,reg-closed", "-f", saved, "-o", "json")
	var fromFile report.RegressionComparison
	if err := json.Unmarshal([]byte(out), &fromFile); err != nil || code != exitRegressed || !reflect.DeepEqual(fromFile, inCluster) {
		t.Errorf("from saved objects: exit %d, %s, %v; the comparison differs from the cluster's: %v", code, errOut, err, !reflect.DeepEqual(fromFile, inCluster))
	}

	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("reg-%d", i)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		// A run of another measurement among several is named.
		{[]string{"reg-slow", "--baseline", "reg-base,reg-fewer-clients,reg-b2"}, "error: reg-slow and StorageBenchmark/reg-fewer-clients measured another clients: compare runs of the same workload, clients and load (or pass --force)\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,reg-running"}, "error: --baseline: storagebenchmark reg-running is Running, not Complete: only a completed run can be a baseline\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,reg-b2,reg-base"}, "error: --baseline reg-base: named twice (each run counts once in the run-to-run spread)\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,reg-slow"}, "error: --baseline reg-slow: a run cannot be its own baseline\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,,reg-b2"}, "error: --baseline reg-base,,reg-b2: an empty name\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,configmap/reg-golden"}, "error: --baseline configmap/reg-golden: a pinned baseline is compared with alone, as spec.regression.baseline.configMap is (pin several runs in it: see the baseline command)\n"},
		{[]string{"reg-slow", "--baseline", strings.Join(many, ",")}, "error: --baseline: 21 baselines, at most 20 (as spec.regression.baseline.benchmarks)\n"},
		{[]string{"reg-slow", "--baseline", "reg-base,reg-norecords,reg-b2"}, "error: step 1 of reg-norecords has no record (ConfigMap reg-norecords-step-000 not found)\n"},
	} {
		if _, errOut, code := compare(c.args...); code != exitError || errOut != c.want {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
	// Forced, each run of another measurement is warned about (and,
	// slower at step 3 itself, widens the spread: not regressed).
	_, errOut, code = compare("reg-slow", "--baseline", "reg-base,reg-fewer-clients,reg-b2", "--force")
	if code != exitOK || errOut != "warning: reg-slow and StorageBenchmark/reg-fewer-clients measured another clients: compared anyway (--force)\n" {
		t.Errorf("forced: exit %d, %q", code, errOut)
	}
}

// TestBaselineRuns: baseline with several runs pins them together
// (version 2), and compare --baseline configmap/NAME reaches the verdict
// that comparing with the runs themselves reaches.
func TestBaselineRuns(t *testing.T) {
	regressionRuns(t)
	saved := moreRuns(t)
	out, errOut, code := plugin(t, "baseline", "reg-base", "reg-b2", "reg-closed", "-n", live, "--configmap", "reg-golden")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(out), &cm); err != nil {
		t.Fatalf("not a ConfigMap: %v\n%.400s", err, out)
	}
	if cm.Name != "reg-golden" || cm.Namespace != live || !reflect.DeepEqual(cm.Labels, map[string]string{"storagebench.io/baseline": "true"}) {
		t.Errorf("manifest:\n%.400s", out)
	}
	b, err := analysis.DecodeBaseline([]byte(cm.Data["baseline.json"]))
	if err != nil {
		t.Fatal(err)
	}
	var sb v1alpha1.StorageBenchmark
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: live, Name: "reg-base"}, &sb); err != nil {
		t.Fatal(err)
	}
	if b.Version != analysis.BaselineVersionRuns || b.Source != "live/reg-base, live/reg-b2, live/reg-closed" || b.Fingerprint != sb.Spec.RegressionFingerprint() ||
		len(b.Runs) != 3 || b.Runs[2].Source != "live/reg-closed" || len(b.Runs[2].Steps) != 8 || b.Steps != nil {
		t.Fatalf("baseline version %d from %s, %d runs", b.Version, b.Source, len(b.Runs))
	}
	// Each run's steps as the operator reads them: step 3 of reg-closed
	// closed-loop, by its status.
	for r, run := range b.Runs {
		for k, s := range run.Steps {
			if s.ClosedLoop != (r == 2 && k == 2) || len(s.IOPS) != 30 || s.Offered == 0 {
				t.Errorf("run %d step %d: closed-loop %v, %d samples, offered %v", r, k, s.ClosedLoop, len(s.IOPS), s.Offered)
			}
		}
	}

	recreate(t, &cm)
	pinned, code := compareJSON(t, "reg-slow", "--baseline", "configmap/reg-golden", "-n", live)
	direct, _ := compareJSON(t, "reg-slow", "--baseline", "reg-base,reg-b2,reg-closed", "-n", live)
	if code != exitRegressed || pinned.Baseline != "ConfigMap/reg-golden" || !reflect.DeepEqual(pinned.Runs, []string{"live/reg-base", "live/reg-b2", "live/reg-closed"}) ||
		!reflect.DeepEqual(pinned.Result, direct.Result) || pinned.Result.BaselineRuns != 3 {
		t.Errorf("against the pinned runs: exit %d, %s %v; the result differs from the benchmarks': %v", code, pinned.Baseline, pinned.Runs, !reflect.DeepEqual(pinned.Result, direct.Result))
	}
	out, _, code = plugin(t, "compare", "reg-same", "--baseline", "cm/reg-golden", "-n", live)
	if want := "Not regressed: none of 15 tests on 8 steps regressed against 3 baseline runs of ConfigMap/reg-golden " + limits; code != exitOK || lastLine(out) != want {
		t.Errorf("same run against the pinned runs: exit %d, %q; want %q", code, lastLine(out), want)
	}

	// From saved objects: the same manifest; saved apart, a baseline for
	// the saved runs.
	fromFile, errOut, code := plugin(t, "baseline", "reg-base", "reg-b2", "reg-closed", "-f", saved, "--configmap", "reg-golden")
	if code != exitOK || fromFile != out0(t, "baseline", "reg-base", "reg-b2", "reg-closed", "-n", live, "--configmap", "reg-golden") {
		t.Errorf("from saved objects: exit %d, %s; want the cluster's manifest", code, errOut)
	}
	pinnedFile := filepath.Join(t.TempDir(), "golden.yaml")
	if err := os.WriteFile(pinnedFile, []byte(fromFile), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = plugin(t, "compare", "reg-slow", "--baseline", "configmap/reg-golden", "-f", saved, "-f", pinnedFile)
	if code != exitRegressed || !strings.HasSuffix(lastLine(out), "against 3 baseline runs of ConfigMap/reg-golden "+limits) {
		t.Errorf("compare from files against the pinned runs: exit %d, %s\n%s", code, errOut, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		// The run of another measurement is named.
		{[]string{"baseline", "reg-base", "reg-fewer-clients", "reg-b2", "-n", live, "--configmap", "x"},
			"error: storagebenchmark reg-fewer-clients measured another clients than reg-base: a pinned baseline holds runs of the same workload, clients and load\n"},
		{[]string{"baseline", "reg-fewer-clients", "reg-lenient", "-n", live, "--configmap", "x"},
			"error: storagebenchmark reg-lenient measured another clients than reg-fewer-clients: a pinned baseline holds runs of the same workload, clients and load\n"},
		{[]string{"baseline", "reg-base", "reg-running", "-n", live, "--configmap", "x"},
			"error: storagebenchmark reg-running is Running, not Complete: only a completed run can be a baseline\n"},
		{[]string{"baseline", "reg-base", "reg-failed", "-n", live, "--configmap", "x"},
			"error: storagebenchmark reg-failed is Failed, not Complete: only a completed run can be a baseline\n"},
		{[]string{"baseline", "reg-base", "reg-b2", "reg-base", "-n", live, "--configmap", "x"},
			"error: storagebenchmark reg-base is named twice: each run counts once in the run-to-run spread\n"},
		{[]string{"baseline", "reg-base", "reg-b2", "-n", live}, "error: name the ConfigMap of a baseline of 2 runs with --configmap\n"},
		{[]string{"baseline", "reg-base", "reg-norecords", "-n", live, "--configmap", "x"},
			"error: step 1 of reg-norecords has no record (ConfigMap reg-norecords-step-000 not found)\n"},
		{[]string{"compare", "reg-fewer-clients", "-n", live, "--baseline", "configmap/reg-golden"},
			"error: reg-fewer-clients and ConfigMap/reg-golden measured another clients: compare runs of the same workload, clients and load (or pass --force)\n"},
	} {
		if _, errOut, code := plugin(t, c.args...); code != exitError || errOut != c.want {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

// compareJSON runs `compare -o json` with args and decodes its document.
func compareJSON(t *testing.T, args ...string) (report.RegressionComparison, int) {
	t.Helper()
	out, errOut, code := plugin(t, append([]string{"compare", "-o", "json"}, args...)...)
	var doc report.RegressionComparison
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: exit %d, %s: %v", args, code, errOut, err)
	}
	return doc, code
}
