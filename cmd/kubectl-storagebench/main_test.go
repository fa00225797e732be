package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/internal/testenv"
)

// These tests run the plugin's commands against a real kube-apiserver and
// etcd with the CRD installed, on benchmarks whose status is written
// through the status subresource from the recorded fixtures.

const (
	ns = "storagebench"
	// live holds the benchmarks whose status tests change as they run.
	live = "live"
)

var (
	k8s        client.Client
	kubeconfig string
	assetsDir  string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	env, c, err := testenv.Start(filepath.Join("..", "..", "config", "crd", "bases"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "the plugin's tests need a real kube-apiserver and etcd:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the API server:", err)
		}
	}()
	k8s, assetsDir = c, env.BinaryAssetsDirectory
	// The plugin connects as kubectl would: through a kubeconfig file.
	user, err := env.AddUser(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adding a user:", err)
		return 1
	}
	kc, err := user.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "kubectl-storagebench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	kubeconfig = filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	for _, n := range []string{ns, "other", live} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := seed(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "seeding benchmarks:", err)
		return 1
	}
	return m.Run()
}

// fixture reads a recorded benchmark of internal/report/testdata.
func fixture(name string) (*v1alpha1.StorageBenchmark, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "report", "testdata", name+".yaml"))
	if err != nil {
		return nil, err
	}
	sbs, err := apireport.Decode(b)
	if err != nil {
		return nil, err
	}
	return &sbs[0], nil
}

// put creates a benchmark from a recorded one, under a new name and
// namespace, and writes status (possibly changed by edit) through the
// status subresource, as the operator does.
func put(ctx context.Context, fixtureName, name, namespace string, edit func(*v1alpha1.StorageBenchmarkStatus)) error {
	return putWith(ctx, fixtureName, name, namespace, nil, edit)
}

// putWith is put with the recorded spec changed by spec first, when set.
func putWith(ctx context.Context, fixtureName, name, namespace string, spec func(*v1alpha1.StorageBenchmarkSpec), edit func(*v1alpha1.StorageBenchmarkStatus)) error {
	rec, err := fixture(fixtureName)
	if err != nil {
		return err
	}
	sb := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: rec.Spec}
	if spec != nil {
		spec(&sb.Spec)
	}
	// A test run again in the same process (-count) finds its object: start
	// afresh (no finalizers: deletion is immediate).
	if err := k8s.Delete(ctx, sb.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := k8s.Create(ctx, sb); err != nil {
		return err
	}
	sb.Status = rec.Status
	if edit != nil {
		edit(&sb.Status)
	}
	return k8s.Status().Update(ctx, sb)
}

// running turns a recorded status into one of a run at step current
// (0-based) with finished steps done.
func running(finished, current int) func(*v1alpha1.StorageBenchmarkStatus) {
	return func(st *v1alpha1.StorageBenchmarkStatus) {
		cur := int32(current)
		st.Steps = st.Steps[:finished]
		st.CurrentStep = &cur
		st.Progress = fmt.Sprintf("%d/%d", finished, st.StepsPlanned)
		st.Summary, st.SLOs, st.CompletionTime, st.StopReason = nil, nil, nil, ""
		// Step i started at steps[i-1].startTime + 2m15s; pretend the
		// current one started just now, so that time left is stable.
		if finished > 0 {
			shift := time.Since(st.Steps[finished-1].StartTime.Time) - 2*time.Minute - 15*time.Second
			for i := range st.Steps {
				st.Steps[i].StartTime = metav1.NewTime(st.Steps[i].StartTime.Add(shift).Truncate(time.Second))
			}
		}
		now := metav1.Now()
		st.Conditions = []metav1.Condition{
			{Type: "Ready", Status: "False", Reason: "Running", Message: fmt.Sprintf("step %d/%d running", current+1, st.StepsPlanned), LastTransitionTime: now, ObservedGeneration: 1},
			{Type: "Reconciling", Status: "True", Reason: "Running", Message: "running", LastTransitionTime: now, ObservedGeneration: 1},
		}
	}
}

func failedAt(finished int) func(*v1alpha1.StorageBenchmarkStatus) {
	return func(st *v1alpha1.StorageBenchmarkStatus) {
		running(finished, finished)(st)
		st.CurrentStep = nil
		now := metav1.Now()
		st.CompletionTime = &now
		msg := "client oltp-failed-client-2: fio: io_u error on file /data/job.2.0: No space left on device"
		st.Conditions = []metav1.Condition{
			{Type: "Ready", Status: "False", Reason: "ClientFailed", Message: msg, LastTransitionTime: now, ObservedGeneration: 1},
			{Type: "Reconciling", Status: "False", Reason: "Failed", Message: "the run failed", LastTransitionTime: now, ObservedGeneration: 1},
			{Type: "Stalled", Status: "True", Reason: "ClientFailed", Message: msg, LastTransitionTime: now, ObservedGeneration: 1},
			{Type: "Complete", Status: "False", Reason: "ClientFailed", Message: msg, LastTransitionTime: now, ObservedGeneration: 1},
			{Type: "Failed", Status: "True", Reason: "ClientFailed", Message: msg, LastTransitionTime: now, ObservedGeneration: 1},
		}
	}
}

func seed(ctx context.Context) error {
	for _, s := range []struct {
		fixture, name, namespace string
		edit                     func(*v1alpha1.StorageBenchmarkStatus)
	}{
		{"oltp", "oltp-ontap-nas", ns, nil},
		{"throughput", "seq-gcnv-extreme", ns, nil},
		{"oltp", "oltp-failed", ns, failedAt(4)},
		{"oltp", "oltp-running", ns, running(3, 3)},
		{"oltp", "oltp-elsewhere", "other", nil},
	} {
		if err := put(ctx, s.fixture, s.name, s.namespace, s.edit); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// plugin runs the plugin in-process against the test API server.
func plugin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code = run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestList(t *testing.T) {
	out, errOut, code := plugin(t, "list", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := []string{
		"NAME              STATUS        CLASS         PROFILE      STEP           PEAK  P99 AT PEAK  SLO     AGE",
		"oltp-failed       ClientFailed  ontap-nas     oltp         4/8",
		"oltp-ontap-nas    Completed     ontap-nas     oltp         8/8     61,837 IOPS      24.1 ms  NotMet",
		"oltp-running      Running       ontap-nas     oltp         3/8",
		"seq-gcnv-extreme  Completed     gcnv-extreme  mix-256k-75  6/6   1,041.5 MiB/s      51.1 ms  AllMet",
	}
	if len(lines) != len(want) {
		t.Fatalf("list:\n%s", out)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], want[i])
		}
	}
	out, _, code = plugin(t, "list", "-A")
	if code != exitOK || !strings.HasPrefix(out, "NAMESPACE") || !strings.Contains(out, "other         oltp-elsewhere") {
		t.Errorf("list -A (exit %d):\n%s", code, out)
	}
	_, errOut, code = plugin(t, "list", "-n", "empty")
	if code != exitOK || !strings.Contains(errOut, "No storagebenchmarks found.") {
		t.Errorf("empty namespace: exit %d, %q", code, errOut)
	}
}

func TestStatus(t *testing.T) {
	out, errOut, code := plugin(t, "status", "oltp-ontap-nas", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"Name:       oltp-ontap-nas",
		"Status:     Completed",
		"Storage:    ontap-nas (csi.trident.netapp.io): Trident driver ontap-nas, 1/1 claims bound, 200Gi each",
		"step      offered  read IOPS  write IOPS  MiB/s  read mean  read p99  write mean  write p99   skew",
		"   6  50,000 IOPS     39,961       9,990  390.2     743 µs   2.11 ms     1.18 ms     3.4 ms  1.1ms  knee",
		"   8  70,000 IOPS     49,470      12,367  483.1    4.81 ms   18.4 ms     6.91 ms    24.1 ms  1.5ms  saturated",
		"peak: 61,837 IOPS (step 8)",
		"performance at the latency target (mean latency ≤ 1 ms): 49,951 IOPS (390.2 MiB/s) at 831 µs (step 6)",
		"SLO 60k-iops-at-1ms: NotMet",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("status lacks %q:\n%s", w, out)
		}
	}
	out, _, code = plugin(t, "status", "oltp-failed", "-n", ns)
	if code != exitOK || !strings.Contains(out, "FAILED: ClientFailed: client oltp-failed-client-2") {
		t.Errorf("failed run (exit %d):\n%s", code, out)
	}
	_, errOut, code = plugin(t, "status", "nope", "-n", ns)
	if code != exitError || !strings.Contains(errOut, `storagebenchmark "nope" not found in namespace "storagebench"`) {
		t.Errorf("missing benchmark: exit %d, %q", code, errOut)
	}
	// The namespace is resolved from the flags: not found in another one.
	_, _, code = plugin(t, "status", "oltp-ontap-nas", "--namespace", "other")
	if code != exitError {
		t.Errorf("wrong namespace: exit %d", code)
	}
}

func TestWait(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		stderr  string
		minTime time.Duration
	}{
		{name: "complete", args: []string{"oltp-ontap-nas"}, code: exitOK, stdout: "storagebenchmark.storagebench.io/oltp-ontap-nas complete\n"},
		{name: "slo met", args: []string{"seq-gcnv-extreme", "--for=slo"}, code: exitOK, stdout: "complete, SLOs met (AllMet)"},
		{name: "slo not met", args: []string{"oltp-ontap-nas", "--for", "slo"}, code: exitSLONotMet, stderr: "its SLOs were not met: NotMet: objective 60k-iops-at-1ms not met"},
		{name: "failed", args: []string{"oltp-failed", "--for=complete"}, code: exitFailed, stderr: "storagebenchmark oltp-failed failed: ClientFailed: client oltp-failed-client-2"},
		{name: "failed slo", args: []string{"oltp-failed", "--for=slo"}, code: exitFailed},
		{name: "timeout", args: []string{"oltp-running", "--timeout=2s"}, code: exitTimeout, stderr: "timed out waiting for storagebenchmark oltp-running (--for=complete): Running, 3/8 steps", minTime: 2 * time.Second},
		{name: "check once", args: []string{"oltp-running", "--timeout=0"}, code: exitTimeout},
		{name: "not found", args: []string{"nope"}, code: exitError, stderr: "not found"},
		{name: "bad for", args: []string{"oltp-ontap-nas", "--for=ready"}, code: exitError, stderr: "--for must be complete or slo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out, errOut, code := plugin(t, append([]string{"wait", "-n", ns}, c.args...)...)
			took := time.Since(start)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, c.code, out, errOut)
			}
			if !strings.Contains(out, c.stdout) || !strings.Contains(errOut, c.stderr) {
				t.Errorf("stdout %q stderr %q, want %q and %q", out, errOut, c.stdout, c.stderr)
			}
			if took < c.minTime || took > c.minTime+15*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// advance rewrites a benchmark's status as the run goes on: steps finish,
// then it completes.
func advance(t *testing.T, name string, pause time.Duration, finished []int) {
	t.Helper()
	ctx := context.Background()
	rec, err := fixture("oltp")
	if err != nil {
		t.Error(err)
		return
	}
	for _, f := range finished {
		time.Sleep(pause)
		var sb v1alpha1.StorageBenchmark
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: live, Name: name}, &sb); err != nil {
			t.Error(err)
			return
		}
		sb.Status = *rec.Status.DeepCopy()
		if f < len(rec.Status.Steps) {
			running(f, f)(&sb.Status)
		}
		if err := k8s.Status().Update(ctx, &sb); err != nil {
			t.Error(err)
			return
		}
	}
}

func TestWaitFollowsTheRun(t *testing.T) {
	ctx := context.Background()
	if err := put(ctx, "oltp", "oltp-late", live, running(6, 6)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		advance(t, "oltp-late", 700*time.Millisecond, []int{7, 8})
	}()
	start := time.Now()
	out, errOut, code := plugin(t, "wait", "oltp-late", "-n", live, "--for=complete", "--timeout=30s")
	<-done
	if code != exitOK || !strings.Contains(out, "oltp-late complete") {
		t.Fatalf("exit %d: %q %q", code, out, errOut)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("returned after %v, before the run completed", took)
	}
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	if err := put(ctx, "oltp", "oltp-watched", live, running(2, 2)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		advance(t, "oltp-watched", 600*time.Millisecond, []int{3, 5, 8})
	}()
	out, errOut, code := plugin(t, "watch", "oltp-watched", "-n", live)
	<-done
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := []string{
		"Running  step 3/8  [######------------------]   25 %  ~13m left  last step 9,996 IOPS",
		"Running  step 4/8  [#########---------------]   38 %  ~11m left  last step 19,994 IOPS",
		"Running  step 6/8  [###############---------]   62 %  ~6m45s left  last step 39,978 IOPS",
		"Completed  8/8 steps  [########################]  100 %  last step 61,837 IOPS",
	}
	if len(lines) != len(want) {
		t.Fatalf("watch printed:\n%s", out)
	}
	for i := range want {
		// The running step's elapsed time may round the estimate.
		if got := lines[i]; !strings.HasPrefix(got, want[i][:40]) || !strings.HasSuffix(got, want[i][strings.LastIndex(want[i], "  last"):]) {
			t.Errorf("line %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
	out, _, code = plugin(t, "watch", "oltp-failed", "-n", ns)
	if code != exitFailed || !strings.Contains(out, "ClientFailed  4/8 steps") {
		t.Errorf("watch of a failed run: exit %d\n%s", code, out)
	}
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		args  []string
		file  string
		check func(t *testing.T, b []byte)
	}{
		{"png", []string{"-o", "png"}, "curve.png", func(t *testing.T, b []byte) {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != report.DefaultWidth || img.Bounds().Dy() != report.DefaultHeight {
				t.Fatalf("png: %v %v", err, img)
			}
		}},
		{"png from extension, p99, small", []string{"--latency", "p99", "--width", "600", "--height", "400"}, "small.png", func(t *testing.T, b []byte) {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != 600 || img.Bounds().Dy() != 400 {
				t.Fatalf("png: %v", err)
			}
		}},
		{"svg", []string{"-o", "svg", "--latency=p99"}, "curve.svg", func(t *testing.T, b []byte) {
			var doc struct {
				XMLName xml.Name
			}
			if err := xml.Unmarshal(b, &doc); err != nil || doc.XMLName.Local != "svg" {
				t.Fatalf("not an SVG document: %v %v", err, doc.XMLName)
			}
			for _, w := range []string{"read p99", "write p99", "achieved IOPS (reads + writes)", "p99 latency (ms)", "latency target 1 ms (mean latency)"} {
				if bytes.Count(b, []byte(">"+w+"</text>")) != 1 {
					t.Errorf("svg lacks the text %q", w)
				}
			}
		}},
		{"json", []string{"-o", "json"}, "", func(t *testing.T, b []byte) {
			var doc apireport.Document
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Name != "oltp-ontap-nas" || len(doc.Series) != 2 || len(doc.Series[0].Points) != 8 || doc.Series[0].Selector.Metric != "mean" {
				t.Errorf("document %+v", doc)
			}
		}},
		{"html", []string{"-o", "html"}, "report.html", func(t *testing.T, b []byte) {
			for _, w := range []string{"<svg ", "<td class=\"num\">70,000 IOPS</td>", "SLO 60k-iops-at-1ms: NotMet"} {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("html lacks %q", w)
				}
			}
		}},
		{"md", []string{"-o", "md"}, "report.md", func(t *testing.T, b []byte) {
			if !bytes.Contains(b, []byte("![ops–latency curve of oltp-ontap-nas](report.png)")) ||
				!bytes.Contains(b, []byte("| 8 | 70,000 IOPS | 49,470 | 12,367 |")) {
				t.Errorf("markdown:\n%s", b)
			}
			img, err := os.ReadFile(filepath.Join(dir, "report.png"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(bytes.NewReader(img)); err != nil {
				t.Errorf("report.png: %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"report", "oltp-ontap-nas", "-n", ns}, c.args...)
			if c.file != "" {
				args = append(args, "--file", filepath.Join(dir, c.file))
			}
			out, errOut, code := plugin(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			b := []byte(out)
			if c.file != "" {
				var err error
				if b, err = os.ReadFile(filepath.Join(dir, c.file)); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(errOut, "wrote "+filepath.Join(dir, c.file)) {
					t.Errorf("stderr %q", errOut)
				}
			}
			c.check(t, b)
		})
	}
	for _, bad := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "-o", "pdf"}, `unknown output format "pdf"`},
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--latency", "p95"}, `--latency: latency metric "p95" is not kept in reports: want one of mean, p50, p90, p99, p99.9`},
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--latency", "p42"}, `--latency: unknown latency metric "p42": want one of mean, p50, p90, p99, p99.9`},
		{[]string{"compare", "oltp-ontap-nas", "oltp-failed", "-n", ns, "--operation", "both"}, `--operation: invalid latency selector: unknown operation "both"`},
		{[]string{"report", "nope", "-n", ns, "-o", "json"}, "nope"},
	} {
		if _, errOut, code := plugin(t, bad.args...); code != exitError || !strings.Contains(errOut, bad.wantErr) {
			t.Errorf("%v: exit %d %q, want %q", bad.args, code, errOut, bad.wantErr)
		}
	}
}

func TestFromFile(t *testing.T) {
	oltp := filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")
	tp := filepath.Join("..", "..", "internal", "report", "testdata", "throughput.yaml")
	out, errOut, code := plugin(t, "report", "--from-file", oltp, "-o", "json")
	if code != exitOK || !strings.Contains(out, `"name": "oltp-ontap-nas"`) {
		t.Errorf("report from a file: exit %d %s", code, errOut)
	}
	if _, _, code = plugin(t, "wait", "-f", oltp, "oltp-ontap-nas", "--for=slo"); code != exitSLONotMet {
		t.Errorf("wait --for=slo from a file: exit %d", code)
	}
	out, _, code = plugin(t, "compare", "-f", oltp, "-f", tp)
	if code != exitOK || !strings.Contains(out, "seq-gcnv-extreme  gcnv-extreme  mix-256k-75") {
		t.Errorf("compare from files: exit %d\n%s", code, out)
	}
	if _, errOut, code = plugin(t, "status", "-f", oltp, "-f", tp); code != exitError || !strings.Contains(errOut, "name one") {
		t.Errorf("ambiguous status: exit %d %q", code, errOut)
	}
}

func TestCompare(t *testing.T) {
	out, errOut, code := plugin(t, "compare", "oltp-ontap-nas", "oltp-failed", "-n", ns, "--latency", "p99", "--operation", "read")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{"benchmark", "peak IOPS", "p99 read latency at peak", "29,989 (step 4)   -51.5 %",
		"Judged on p99 read latency against achieved IOPS with a latency target of 1 ms; Δ is relative to oltp-ontap-nas."} {
		if !strings.Contains(out, w) {
			t.Errorf("compare lacks %q:\n%s", w, out)
		}
	}
	svg := filepath.Join(t.TempDir(), "cmp.svg")
	if _, errOut, code = plugin(t, "compare", "oltp-ontap-nas", "seq-gcnv-extreme", "-n", ns, "--file", svg); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{">oltp-ontap-nas (ontap-nas, oltp)</text>", ">seq-gcnv-extreme (gcnv-extreme, mix-256k-75)</text>"} {
		if bytes.Count(b, []byte(w)) != 1 {
			t.Errorf("svg legend %q appears %d times", w, bytes.Count(b, []byte(w)))
		}
	}
	if _, _, code = plugin(t, "compare", "oltp-ontap-nas", "-n", ns); code != exitError {
		t.Errorf("compare of one: exit %d", code)
	}
}

// TestKubectlPlugin installs the binary on PATH and runs it through the
// real kubectl, as `kubectl storagebench`: kubectl finds it and passes its
// exit code on.
func TestKubectlPlugin(t *testing.T) {
	kubectl := filepath.Join(assetsDir, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no kubectl in %s", assetsDir)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-storagebench"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)
	kc := func(args ...string) (string, int) {
		cmd := exec.Command(kubectl, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := kc("plugin", "list"); code != 0 || !strings.Contains(out, filepath.Join(bin, "kubectl-storagebench")) {
		t.Errorf("kubectl plugin list (exit %d):\n%s", code, out)
	}
	if out, code := kc("storagebench", "list", "-n", ns); code != 0 || !strings.Contains(out, "oltp-ontap-nas") {
		t.Errorf("kubectl storagebench list (exit %d):\n%s", code, out)
	}
	if out, code := kc("storagebench", "wait", "oltp-failed", "-n", ns); code != exitFailed {
		t.Errorf("kubectl storagebench wait on a failed run: exit %d, want %d\n%s", code, exitFailed, out)
	}
	if out, code := kc("storagebench", "wait", "oltp-running", "-n", ns, "--timeout=1s"); code != exitTimeout {
		t.Errorf("kubectl storagebench wait timing out: exit %d, want %d\n%s", code, exitTimeout, out)
	}
}
