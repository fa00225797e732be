package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// opsNS holds the VolumeOperationsBenchmarks of these tests.
const opsNS = "operations"

var opsFile = filepath.Join("..", "..", "internal", "report", "testdata", "volume-operations.yaml")

// putOperations creates the recorded VolumeOperationsBenchmark under a
// name in opsNS and writes its status through the status subresource.
func putOperations(t *testing.T, name string, edit func(*v1alpha1.VolumeOperationsBenchmarkStatus)) *v1alpha1.VolumeOperationsBenchmark {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opsNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	data, err := os.ReadFile(opsFile)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := apireport.DecodeOperations(data)
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: opsNS}, Spec: ops[0].Spec}
	if err := k8s.Delete(ctx, b.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Status = ops[0].Status
	if edit != nil {
		edit(&b.Status)
	}
	if err := k8s.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOperationsCommands(t *testing.T) {
	done := putOperations(t, "serial", nil)
	putOperations(t, "serial-running", func(st *v1alpha1.VolumeOperationsBenchmarkStatus) {
		st.Operations = st.Operations[:1]
		st.CompletionTime = nil
		st.Progress = "step 2 of 3 (2 at once): snapshot"
		st.Current = &v1alpha1.OperationsCurrent{Index: 4, Operation: "snapshot", Concurrency: 2, Stage: v1alpha1.StageTiming, Since: metav1.Now(), Attempt: 1}
		st.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Running", Message: "timing the storage's operations", LastTransitionTime: metav1.Now()}}
	})
	planned := len(done.Spec.Operations) * len(done.Spec.Concurrency)

	t.Run("list", func(t *testing.T) {
		for _, kind := range []string{"sbops", "volumeoperationsbenchmarks", "VolumeOperationsBenchmark.storagebench.io"} {
			out, errOut, code := plugin(t, "list", kind, "-n", opsNS)
			if code != exitOK {
				t.Fatalf("list %s: exit %d: %s", kind, code, errOut)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "STATUS") || !strings.Contains(lines[0], "SLO") {
				t.Fatalf("list %s:\n%s", kind, out)
			}
			if f := strings.Fields(lines[1]); f[0] != "serial" || f[1] != "Complete" || f[2] != done.Spec.Storage.StorageClassName || f[3] != strconv.Itoa(planned)+"/"+strconv.Itoa(planned) {
				t.Errorf("complete row %q", lines[1])
			}
			if !strings.HasPrefix(lines[2], "serial-running") || !strings.Contains(lines[2], "Running") || !strings.Contains(lines[2], "step 2 of 3 (2 at once): snapshot") {
				t.Errorf("running row %q", lines[2])
			}
		}
		out, _, code := plugin(t, "list", "sbops", "-A")
		if code != exitOK || !strings.HasPrefix(out, "NAMESPACE") || !strings.Contains(out, opsNS+"  serial") {
			t.Errorf("list sbops -A (exit %d):\n%s", code, out)
		}
		_, errOut, code := plugin(t, "list", "sbops", "-n", ns)
		if code != exitOK || !strings.Contains(errOut, "No volumeoperationsbenchmarks found.") {
			t.Errorf("namespace without any: exit %d, %q", code, errOut)
		}
		// StorageBenchmarks as before, by default and by name.
		for _, args := range [][]string{{"list"}, {"list", "sbench"}} {
			out, _, code = plugin(t, append(args, "-n", ns)...)
			if code != exitOK || !strings.Contains(out, "oltp-ontap-nas") || !strings.Contains(out, "PROFILE") {
				t.Errorf("%v (exit %d):\n%s", args, code, out)
			}
		}
		_, errOut, code = plugin(t, "list", "pods", "-n", ns)
		if code != exitError || !strings.Contains(errOut, `not "pods"`) {
			t.Errorf("list pods: exit %d, %q", code, errOut)
		}
		out, _, code = plugin(t, "list", "sbops", "-f", opsFile)
		if code != exitOK || !strings.HasPrefix(strings.SplitN(out, "\n", 2)[1], "serial ") {
			t.Errorf("list sbops -f (exit %d):\n%s", code, out)
		}
	})

	t.Run("status", func(t *testing.T) {
		out, errOut, code := plugin(t, "status", "sbops/serial", "-n", opsNS)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		want := []string{"Name:        serial\n", "Status:      Complete — ", "at once  succeeded  failed  timed out     p50     p90     p99     max  per minute"}
		for _, c := range done.Status.Operations {
			want = append(want, "\n"+string(c.Operation)+"\nat once ")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("status lacks %q:\n%s", w, out)
			}
		}
		r := apireport.OperationsFromAPI(done)
		for i := range r.Curves {
			if !strings.Contains(out, r.Curves[i].SlopeLine()+"\n") {
				t.Errorf("status lacks the slope line %q", r.Curves[i].SlopeLine())
			}
		}
		// From a saved object, and by the long kind.
		saved, _, code := plugin(t, "status", "volumeoperationsbenchmark/serial", "--from-file", opsFile)
		if code != exitOK || !strings.Contains(saved, "\nStatus:      Complete") || !strings.Contains(saved, r.Curves[0].SlopeLine()) {
			t.Errorf("status from a file (exit %d):\n%s", code, saved)
		}
		out, _, code = plugin(t, "status", "sbops/serial-running", "-n", opsNS)
		if code != exitOK || !strings.Contains(out, "Step:        step 2 of 3 (2 at once): snapshot: Timing for ") {
			t.Errorf("running (exit %d):\n%s", code, out)
		}
		_, errOut, code = plugin(t, "status", "sbops/nope", "-n", opsNS)
		if code != exitError || !strings.Contains(errOut, `volumeoperationsbenchmark "nope" not found in namespace "operations"`) {
			t.Errorf("missing: exit %d, %q", code, errOut)
		}
		// A StorageBenchmark's status is unchanged, also as sbench/NAME.
		out, _, code = plugin(t, "status", "sbench/oltp-ontap-nas", "-n", ns)
		if code != exitOK || !strings.Contains(out, "peak: 61,837 IOPS (step 8)") {
			t.Errorf("sbench/NAME (exit %d):\n%s", code, out)
		}
	})

	t.Run("report", func(t *testing.T) {
		dir := t.TempDir()
		for _, f := range []string{"png", "svg", "html"} {
			file := filepath.Join(dir, "ops."+f)
			_, errOut, code := plugin(t, "report", "sbops/serial", "-n", opsNS, "--file", file)
			if code != exitOK || !strings.Contains(errOut, "wrote "+file) {
				t.Fatalf("%s: exit %d, %q", f, code, errOut)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			switch f {
			case "png":
				if _, err := png.Decode(bytes.NewReader(b)); err != nil {
					t.Errorf("not a PNG: %v", err)
				}
			case "svg":
				if !strings.Contains(string(b), ">serial · class "+done.Spec.Storage.StorageClassName+"</text>") {
					t.Errorf("SVG title missing")
				}
			case "html":
				if !strings.Contains(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), "<h2>provision</h2>") {
					t.Errorf("html:\n%s", b)
				}
			}
		}
		// md writes the figure beside it.
		md := filepath.Join(dir, "ops.md")
		_, errOut, code := plugin(t, "report", "sbops/serial", "-n", opsNS, "-o", "md", "--file", md)
		b, _ := os.ReadFile(md)
		if code != exitOK || !strings.Contains(errOut, "wrote "+filepath.Join(dir, "ops.png")) || !strings.Contains(string(b), "](ops.png)") || !strings.Contains(string(b), "| at once | succeeded |") {
			t.Errorf("md: exit %d, %q:\n%s", code, errOut, b)
		}
		// json: status.operations as they are, from the cluster or a file.
		for _, args := range [][]string{{"report", "sbops/serial", "-n", opsNS, "-o", "json"}, {"report", "sbops/", "-f", opsFile, "-o", "json"}} {
			out, errOut, code := plugin(t, args...)
			var d apireport.OperationsDocument
			if code != exitOK || json.Unmarshal([]byte(out), &d) != nil {
				t.Fatalf("%v: exit %d, %s", args, code, errOut)
			}
			if d.Name != "serial" || len(d.Operations) != len(done.Status.Operations) || d.Operations[0].Operation != done.Status.Operations[0].Operation {
				t.Errorf("%v: %+v", args, d)
			}
		}
		for _, c := range []struct {
			args []string
			err  string
		}{
			{[]string{"report", "sbops/serial", "-n", opsNS, "--timeline", "2"}, "--timeline does not apply to a volumeoperationsbenchmark"},
			{[]string{"report", "sbops/serial", "-n", opsNS, "-o", "text"}, `unknown output format "text"`},
			{[]string{"report", "sbops/serial", "-f", filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml")}, `volumeoperationsbenchmark "serial" not found in`},
			{[]string{"report", "sbops/nope", "-n", opsNS, "-o", "json"}, `volumeoperationsbenchmark "nope" not found`},
			{[]string{"report", "deployment/x", "-n", opsNS}, "or a volumeoperationsbenchmark (sbops/NAME)"},
		} {
			_, errOut, code := plugin(t, c.args...)
			if code != exitError || !strings.Contains(errOut, c.err) {
				t.Errorf("%v: exit %d, %q, want %q", c.args, code, errOut, c.err)
			}
		}
		// A StorageBenchmark's report from a file that also holds a
		// VolumeOperationsBenchmark is unchanged.
		both := filepath.Join(dir, "both.yaml")
		sb, _ := os.ReadFile(filepath.Join("..", "..", "internal", "report", "testdata", "oltp.yaml"))
		ops, _ := os.ReadFile(opsFile)
		if err := os.WriteFile(both, append(append(sb, []byte("\n---\n")...), ops...), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := plugin(t, "report", "-f", both, "-o", "json")
		if code != exitOK || !strings.Contains(out, `"name": "oltp-ontap-nas"`) {
			t.Errorf("report of the StorageBenchmark in a mixed file: exit %d, %s", code, errOut)
		}
	})
}
