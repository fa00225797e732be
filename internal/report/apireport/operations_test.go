package apireport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
)

// opsFixture reads ../testdata/volume-operations.yaml, a recorded
// VolumeOperationsBenchmark.
func opsFixture(t *testing.T) *v1alpha1.VolumeOperationsBenchmark {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "volume-operations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := DecodeOperations(b)
	if err != nil || len(ops) != 1 {
		t.Fatalf("%d objects, %v", len(ops), err)
	}
	if len(ops[0].Status.Operations) == 0 {
		t.Fatal("the fixture has no status.operations")
	}
	return &ops[0]
}

func TestOperationsFromAPI(t *testing.T) {
	b := opsFixture(t)
	r := OperationsFromAPI(b)
	if r.Name != b.Name || r.Class != b.Spec.Storage.StorageClassName || r.Provisioner != b.Status.Provisioner || r.State != report.StateComplete || r.Phase != "Complete" {
		t.Errorf("run %q class %q provisioner %q state %q phase %q", r.Name, r.Class, r.Provisioner, r.State, r.Phase)
	}
	if len(r.Curves) != len(b.Status.Operations) || r.Planned() != len(b.Spec.Operations)*len(b.Spec.Concurrency) {
		t.Fatalf("%d curves of %d, %d planned", len(r.Curves), len(b.Status.Operations), r.Planned())
	}
	for i, c := range b.Status.Operations {
		got := r.Curves[i]
		if got.Operation != string(c.Operation) || len(got.Steps) != len(c.Steps) {
			t.Fatalf("curve %d: %q with %d steps", i, got.Operation, len(got.Steps))
		}
		if (c.KneeConcurrency == nil) != (got.Knee == 0) || (c.KneeConcurrency != nil && int(*c.KneeConcurrency) != got.Knee) {
			t.Errorf("%s: knee %d, status %v", got.Operation, got.Knee, c.KneeConcurrency)
		}
		if f := c.PerOperation; f != nil {
			p := got.PerOperation
			if p == nil || p.Value != f.Value.Duration || p.Low != f.Low.Duration || p.High != f.High.Duration || p.Steps != int(f.Steps) {
				t.Errorf("%s: per operation %+v, status %+v", got.Operation, p, f)
			}
		}
		for j, s := range c.Steps {
			g := got.Steps[j]
			if g.Concurrency != int(s.Concurrency) || g.Succeeded != int(s.Succeeded) || g.PerMinute != s.PerMinute || g.Latency == nil ||
				g.Latency.P50 != s.Latency.P50.Duration || g.Latency.Max != s.Latency.Max.Duration || g.Latency.P90 != s.Latency.P90.Duration {
				t.Errorf("%s step %d: %+v, status %+v", got.Operation, j, g, s)
			}
		}
	}

	// Conditions, the step under way, objectives and notes.
	b.Status.Conditions = []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Running", Message: "timing"},
		{Type: v1alpha1.ConditionSLOMet, Status: metav1.ConditionFalse, Reason: "NotMet", Message: "0 of 1"},
	}
	b.Status.Current = &v1alpha1.OperationsCurrent{Index: 4, Operation: "snapshot", Concurrency: 2, Stage: v1alpha1.StageClearing, Attempt: 2}
	b.Status.Objectives = []v1alpha1.SLOStatus{{Name: "o", Verdict: "NotMet", Message: "too slow"}}
	b.Status.Notes = []v1alpha1.OperationNote{{Reason: "FlexClone", Operations: []v1alpha1.VolumeOperation{"cloneFromSnapshot"}, Message: "clones share blocks"}}
	r = OperationsFromAPI(b)
	if r.State != report.StateRunning || r.Phase != "Running" || r.SLOReason != "NotMet" || r.SLOStatus != "False" ||
		r.Current == nil || r.Current.Stage != "Clearing" || r.Current.Attempt != 2 ||
		len(r.Objectives) != 1 || r.Objectives[0].Message != "too slow" ||
		len(r.Notes) != 1 || r.Notes[0].Line() != "note FlexClone (cloneFromSnapshot): clones share blocks" {
		t.Errorf("running run: %+v", r)
	}
}

func TestOperationsStateOf(t *testing.T) {
	for _, c := range []struct {
		ready *metav1.Condition
		want  report.State
	}{
		{nil, report.StatePending},
		{&metav1.Condition{Status: metav1.ConditionFalse, Reason: "Running"}, report.StateRunning},
		{&metav1.Condition{Status: metav1.ConditionTrue, Reason: "Complete"}, report.StateComplete},
		{&metav1.Condition{Status: metav1.ConditionFalse, Reason: "StorageClassNotFound"}, report.StateFailed},
		{&metav1.Condition{Status: metav1.ConditionFalse, Reason: "ClearingTimedOut"}, report.StateFailed},
	} {
		b := &v1alpha1.VolumeOperationsBenchmark{}
		if c.ready != nil {
			c.ready.Type = v1alpha1.ConditionReady
			b.Status.Conditions = []metav1.Condition{*c.ready}
		}
		if got := OperationsStateOf(b); got != c.want {
			t.Errorf("Ready %+v: %s, want %s", c.ready, got, c.want)
		}
	}
}

func TestDecodeSaved(t *testing.T) {
	ops, err := yaml.Marshal(opsFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := yaml.Marshal(fixture(t, "oltp"))
	if err != nil {
		t.Fatal(err)
	}
	indent := func(b []byte) string {
		return "- " + strings.ReplaceAll(strings.TrimRight(string(b), "\n"), "\n", "\n  ") + "\n"
	}
	// A typed List's items carry no kind.
	var item map[string]any
	if err := yaml.Unmarshal(ops, &item); err != nil {
		t.Fatal(err)
	}
	delete(item, "kind")
	delete(item, "apiVersion")
	bare, _ := yaml.Marshal(item)
	for _, c := range []struct {
		name          string
		in            string
		sbs, vobs, cm int
		wantErr       string
	}{
		{name: "one", in: string(ops), vobs: 1},
		{name: "mixed list", in: "apiVersion: v1\nkind: List\nitems:\n" + indent(ops) + indent(sb) + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n", sbs: 1, vobs: 1, cm: 1},
		{name: "typed list", in: "apiVersion: storagebench.io/v1alpha1\nkind: VolumeOperationsBenchmarkList\nitems:\n" + indent(bare), vobs: 1},
		{name: "documents", in: string(sb) + "---\n" + string(ops), sbs: 1, vobs: 1},
		{name: "other kind", in: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", wantErr: `kind "Secret" is not a StorageBenchmark, a VolumeOperationsBenchmark`},
		{name: "empty", in: "# nothing\n", wantErr: "no StorageBenchmark, VolumeOperationsBenchmark or ConfigMap found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := DecodeSaved([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Benchmarks) != c.sbs || len(s.Operations) != c.vobs || len(s.ConfigMaps) != c.cm {
				t.Fatalf("%d benchmarks, %d operations benchmarks, %d ConfigMaps", len(s.Benchmarks), len(s.Operations), len(s.ConfigMaps))
			}
			if c.vobs > 0 && (s.Operations[0].Name != "serial" || len(s.Operations[0].Status.Operations) == 0) {
				t.Errorf("decoded %q with %d curves", s.Operations[0].Name, len(s.Operations[0].Status.Operations))
			}
		})
	}
	// StorageBenchmark readers still refuse VolumeOperationsBenchmarks,
	// also in a typed List (whose items would otherwise read as
	// StorageBenchmarks).
	for _, in := range []string{string(ops), "apiVersion: storagebench.io/v1alpha1\nkind: VolumeOperationsBenchmarkList\nitems:\n" + indent(bare)} {
		if _, _, err := DecodeObjects([]byte(in)); err == nil || !strings.Contains(err.Error(), `kind "VolumeOperationsBenchmark" is not a StorageBenchmark`) {
			t.Errorf("DecodeObjects of a VolumeOperationsBenchmark: %v", err)
		}
	}
	if _, err := DecodeOperations(sb); err == nil || err.Error() != "no VolumeOperationsBenchmark found" {
		t.Errorf("DecodeOperations of a StorageBenchmark: %v", err)
	}
}

func TestWriteOperationsDocument(t *testing.T) {
	b := opsFixture(t)
	var out bytes.Buffer
	if err := WriteOperationsDocument(&out, b); err != nil {
		t.Fatal(err)
	}
	var d OperationsDocument
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != b.Name || d.Class != b.Spec.Storage.StorageClassName || d.Status != "Complete" || !reflect.DeepEqual(d.Operations, b.Status.Operations) {
		t.Errorf("document %+v", d)
	}
	if !bytes.HasSuffix(out.Bytes(), []byte("}\n")) || !bytes.Contains(out.Bytes(), []byte(`"perMinute": "`)) {
		t.Error("not indented with a final newline, or not status' own field names")
	}
	// A run that recorded nothing yet has an empty list, not null.
	b.Status = v1alpha1.VolumeOperationsBenchmarkStatus{StartTime: &metav1.Time{Time: time.Now()}}
	out.Reset()
	if err := WriteOperationsDocument(&out, b); err != nil || !bytes.Contains(out.Bytes(), []byte(`"operations": []`)) || !bytes.Contains(out.Bytes(), []byte(`"status": "Pending"`)) {
		t.Errorf("empty run (%v):\n%s", err, out.String())
	}
}
