package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/volops"
	"github.com/storagebench/storagebench/test/build"
)

// The VolumeOperationsBenchmark CRD's admission, evaluated in process as
// for the StorageBenchmark (crd_test.go): its defaults, every rule it
// refuses with, and the concurrency rule it shares with volops.Plan.

// volopsCRD is the generated VolumeOperationsBenchmark CRD.
const volopsCRD = "storagebench.io_volumeoperationsbenchmarks.yaml"

// volopsBaseSpec is a valid spec, before the API server's defaults.
const volopsBaseSpec = `
storage:
  storageClassName: fast
operations: [provision]
`

// volopsObject is a VolumeOperationsBenchmark named name whose spec is
// volopsBaseSpec merged with patch (a YAML JSON merge patch).
func volopsObject(t *testing.T, name, patch string) map[string]any {
	t.Helper()
	spec, err := build.PatchedSpec(volopsBaseSpec, patch)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "VolumeOperationsBenchmark",
		"metadata": map[string]any{"name": name, "namespace": "perf"},
		"spec":     spec,
	}
}

// volopsAdmit stores the object as the API server would on a create and
// returns what admission refuses of it.
func volopsAdmit(t *testing.T, name, patch string) (map[string]any, field.ErrorList) {
	t.Helper()
	c := loadCRD(t, volopsCRD)
	obj := volopsObject(t, name, patch)
	c.store(t, obj)
	return obj, c.validate(obj)
}

// volopsTyped decodes a stored object as the operator's client does.
func volopsTyped(t *testing.T, obj map[string]any) *v1alpha1.VolumeOperationsBenchmark {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var b v1alpha1.VolumeOperationsBenchmark
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("the operator cannot decode it: %v", err)
	}
	return &b
}

func TestVolumeOperationsCRDDefaults(t *testing.T) {
	obj, errs := volopsAdmit(t, "ops", `objectives: [{name: fast, operation: provision, maxLatency: 10s}]`)
	if len(errs) > 0 {
		t.Fatalf("a minimal spec is refused: %v", errs.ToAggregate())
	}
	b := volopsTyped(t, obj)
	s := b.Spec
	if want := []int32{1, 5, 10, 25, 50}; !reflect.DeepEqual(s.Concurrency, want) {
		t.Errorf("concurrency defaults to %v, want %v", s.Concurrency, want)
	}
	if s.Storage.Size == nil || s.Storage.Size.String() != "1Gi" {
		t.Errorf("storage.size defaults to %v, want 1Gi", s.Storage.Size)
	}
	if s.Storage.ExpandTo != nil || s.Storage.VolumeSnapshotClassName != nil {
		t.Errorf("expandTo %v, volumeSnapshotClassName %v: want no default", s.Storage.ExpandTo, s.Storage.VolumeSnapshotClassName)
	}
	if s.Storage.VolumeMode != "Filesystem" || s.Storage.AccessMode != "ReadWriteOnce" {
		t.Errorf("volumeMode %q, accessMode %q; want Filesystem, ReadWriteOnce", s.Storage.VolumeMode, s.Storage.AccessMode)
	}
	if s.OperationTimeout == nil || s.OperationTimeout.Duration != 5*time.Minute {
		t.Errorf("operationTimeout defaults to %v, want 5m", s.OperationTimeout)
	}
	if len(s.Objectives) != 1 || s.Objectives[0].Percentile != "p99" || s.Objectives[0].UpToConcurrency != nil || s.Objectives[0].MinPerMinute != nil {
		t.Errorf("objectives %+v, want p99 by default, no upToConcurrency nor minPerMinute", s.Objectives)
	}
	// The controller's own fallbacks for an unset field are the CRD's
	// defaults (what it assumes of an object stored without them).
	if err := (volops.Plan{Operations: []volops.Operation{volops.Provision}, Concurrency: int32s(s.Concurrency)}).Validate(); err != nil {
		t.Errorf("the default concurrency is refused by the core: %v", err)
	}
}

func int32s(cs []int32) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = int(c)
	}
	return out
}

// volopsRow is one spec and what admission says of it: admitted when
// want is empty; otherwise refused with an error whose text holds want
// (a CEL rule's message, or the schema's words), at a field starting
// with at when at is set.
type volopsRow struct {
	name  string
	obj   string // metadata.name; "ops" when empty
	patch string
	// raw skips the API server's defaults: a rule's fallback for an unset
	// field (which the server always fills) is checked on its own.
	raw  bool
	want string
	at   string
}

var volopsRows = []volopsRow{
	// Admitted.
	{name: "minimal"},
	{name: "every operation", patch: `{operations: [provision, attach, snapshot, cloneFromSnapshot, cloneFromVolume, expand, delete], storage: {volumeSnapshotClassName: snap, expandTo: 2Gi}}`},
	{name: "10 steps up to 100", patch: `concurrency: [1, 2, 5, 10, 20, 30, 40, 50, 75, 100]`},
	{name: "one step of 1", patch: `concurrency: [1]`},
	{name: "one step of 100", patch: `concurrency: [100]`},
	{name: "name of 40", obj: strings.Repeat("a", 40)},
	{name: "operationTimeout 1s", patch: `operationTimeout: 1s`},
	{name: "operationTimeout 1h", patch: `operationTimeout: 1h`},
	{name: "expandTo above size", patch: `{operations: [expand], storage: {size: 2Gi, expandTo: 3Gi}}`},
	{name: "expandTo above the default size", patch: `{operations: [expand], storage: {expandTo: 1025Mi}}`},
	{name: "expandTo above the default size, not defaulted", raw: true, patch: `{operations: [expand], storage: {expandTo: 1025Mi}}`},
	{name: "expandTo without expand", patch: `storage: {expandTo: 2Gi}`},
	{name: "snapshot with a class", patch: `{operations: [snapshot], storage: {volumeSnapshotClassName: snap}}`},
	{name: "attach ReadWriteOncePod", patch: `{operations: [attach], storage: {accessMode: ReadWriteOncePod}}`},
	{name: "ReadOnlyMany without attach", patch: `storage: {accessMode: ReadOnlyMany}`},
	{name: "objective on an operation timed", patch: `{operations: [provision, delete], objectives: [{name: del, operation: delete, percentile: max, maxLatency: 1m, upToConcurrency: 10, minPerMinute: 5}]}`},

	// The steps.
	{name: "concurrency [1, 5, 5]", patch: `concurrency: [1, 5, 5]`, want: "concurrency must be strictly ascending", at: "spec.concurrency"},
	{name: "concurrency [5, 1]", patch: `concurrency: [5, 1]`, want: "concurrency must be strictly ascending", at: "spec.concurrency"},
	{name: "concurrency descending at the 10th", patch: `concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 10, 9]`, want: "concurrency must be strictly ascending", at: "spec.concurrency"},
	{name: "11 steps", patch: fmt.Sprintf("concurrency: [%s]", seq(1, 11)), want: "must have at most 10 items", at: "spec.concurrency"},
	{name: "no step", patch: `concurrency: []`, want: "should have at least 1 items", at: "spec.concurrency"},
	{name: "a step of 0", patch: `concurrency: [0, 5]`, want: "should be greater than or equal to 1", at: "spec.concurrency[0]"},
	{name: "a step of 101", patch: `concurrency: [1, 101]`, want: "should be less than or equal to 100", at: "spec.concurrency[1]"},

	// The operations.
	{name: "snapshot without a VolumeSnapshotClass", patch: `operations: [snapshot]`,
		want: "operations snapshot and cloneFromSnapshot need storage.volumeSnapshotClassName", at: "spec.storage.volumeSnapshotClassName"},
	{name: "cloneFromSnapshot without a VolumeSnapshotClass", patch: `operations: [provision, cloneFromSnapshot]`,
		want: "operations snapshot and cloneFromSnapshot need storage.volumeSnapshotClassName", at: "spec.storage.volumeSnapshotClassName"},
	{name: "expand without expandTo", patch: `operations: [expand]`, want: "operation expand needs storage.expandTo", at: "spec.storage.expandTo"},
	{name: "attach ReadOnlyMany", patch: `{operations: [attach], storage: {accessMode: ReadOnlyMany}}`, want: "operation attach needs a writable accessMode", at: "spec.storage.accessMode"},
	{name: "duplicate operations", patch: `operations: [provision, delete, provision]`, want: "Duplicate value", at: "spec.operations[2]"},
	{name: "an unknown operation", patch: `operations: [resize]`, want: "Unsupported value", at: "spec.operations[0]"},
	{name: "no operation", patch: `operations: []`, want: "should have at least 1 items", at: "spec.operations"},

	// The storage.
	{name: "expandTo equal to size", patch: `{operations: [expand], storage: {size: 2Gi, expandTo: 2Gi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "expandTo below size", patch: `{operations: [expand], storage: {size: 2Gi, expandTo: 1Gi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "expandTo equal to size in other units", patch: `{operations: [expand], storage: {size: 1Gi, expandTo: 1024Mi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "expandTo the default size", patch: `{operations: [expand], storage: {expandTo: 1Gi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "expandTo below the default size", patch: `{operations: [expand], storage: {expandTo: 512Mi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "expandTo the default size, not defaulted", raw: true, patch: `{operations: [expand], storage: {expandTo: 1024Mi}}`,
		want: "storage.expandTo must be larger than storage.size (default 1Gi)", at: "spec.storage.expandTo"},
	{name: "size 0", patch: `storage: {size: "0"}`, want: "storage.size must be positive", at: "spec.storage.size"},
	{name: "size 0Gi", patch: `storage: {size: 0Gi}`, want: "storage.size must be positive", at: "spec.storage.size"},
	{name: "size negative", patch: `storage: {size: -1Gi}`, want: "storage.size must be positive", at: "spec.storage.size"},

	// Objectives, timeout, name.
	{name: "objective on an operation not timed", patch: `objectives: [{name: att, operation: attach, maxLatency: 10s}]`,
		want: "every objective's operation must be one of spec.operations", at: "spec.objectives"},
	{name: "objective maxLatency 0s", patch: `objectives: [{name: prov, operation: provision, maxLatency: 0s}]`,
		want: "maxLatency must be positive", at: "spec.objectives[0].maxLatency"},
	{name: "operationTimeout 0s", patch: `operationTimeout: 0s`, want: "operationTimeout must be between 1s and 1h", at: "spec.operationTimeout"},
	{name: "operationTimeout 999ms", patch: `operationTimeout: 999ms`, want: "operationTimeout must be between 1s and 1h", at: "spec.operationTimeout"},
	{name: "operationTimeout 2h", patch: `operationTimeout: 2h`, want: "operationTimeout must be between 1s and 1h", at: "spec.operationTimeout"},
	{name: "name of 41", obj: strings.Repeat("a", 41), want: "metadata.name must be at most 40 characters"},
}

func TestVolumeOperationsCRDAdmission(t *testing.T) {
	c := loadCRD(t, volopsCRD)
	for _, r := range volopsRows {
		t.Run(r.name, func(t *testing.T) {
			name := r.obj
			if name == "" {
				name = "ops"
			}
			obj := volopsObject(t, name, r.patch)
			var errs field.ErrorList
			if r.raw {
				errs = c.celErrors(obj)
			} else {
				c.store(t, obj)
				errs = c.validate(obj)
			}
			if r.want == "" {
				if len(errs) > 0 {
					t.Errorf("refused: %v", errs.ToAggregate())
				}
				return
			}
			for _, e := range errs {
				if strings.Contains(e.Error(), r.want) && strings.HasPrefix(e.Field, r.at) {
					return
				}
			}
			t.Errorf("want an error %q at %s, got %v", r.want, r.at, errs.ToAggregate())
		})
	}
}

// TestVolumeOperationsCRDEveryCELRuleIsTested: every CEL rule's message is
// the want of a row above (but the update rule, tested below).
func TestVolumeOperationsCRDEveryCELRuleIsTested(t *testing.T) {
	rules := loadCRD(t, volopsCRD).celRules()
	if len(rules) < 10 {
		t.Fatalf("%d CEL rules in the CRD; the test reads them wrong", len(rules))
	}
	for _, cr := range rules {
		if cr.rule == "self == oldSelf" {
			continue
		}
		found := false
		for _, r := range volopsRows {
			if r.want != "" && strings.HasPrefix(cr.message, r.want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no row refused by the rule at %q: %s (%s)", cr.path, cr.message, cr.rule)
		}
	}
}

func TestVolumeOperationsCRDSpecIsImmutable(t *testing.T) {
	c := loadCRD(t, volopsCRD)
	old := volopsObject(t, "ops", "")
	c.store(t, old)
	for _, tt := range []struct {
		name, patch string
		refused     bool
	}{
		{"the same spec", "", false},
		{"another concurrency", `concurrency: [1, 2]`, true},
		{"another class", `storage: {storageClassName: slow}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := volopsObject(t, "ops", tt.patch)
			c.store(t, obj)
			errs, _ := c.rules.Validate(context.Background(), nil, c.structural, obj, old, celconfig.RuntimeCELCostBudget)
			refused := false
			for _, e := range errs {
				refused = refused || strings.Contains(e.Error(), "spec cannot change once the benchmark exists")
			}
			if refused != tt.refused {
				t.Errorf("refused %v, want %v: %v", refused, tt.refused, errs.ToAggregate())
			}
		})
	}
}

// TestVolumeOperationsCRDIsValid runs the API server's validation of the
// CRD itself, CEL cost estimates included.
func TestVolumeOperationsCRDIsValid(t *testing.T) {
	def := loadCRD(t, volopsCRD).def.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(def)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(def, &internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
		t.Errorf("%s is not a valid CRD:\n%s", volopsCRD, strings.ReplaceAll(errs.ToAggregate().Error(), ", ", "\n"))
	}
}

// TestVolumeOperationsCRDAndPlanAgree: the steps' rule — 1 to
// volops.MaxSteps of them, each 1 to volops.MaxConcurrency, strictly
// ascending — and the operations' — at least one, each known, none twice —
// are checked by admission and by volops.Plan.Validate (the controller's
// check before it starts), and they agree.
func TestVolumeOperationsCRDAndPlanAgree(t *testing.T) {
	type check int
	const (
		shared        check = iota // both check it: same verdict
		admissionOnly              // admission refuses, the core accepts
	)
	rows := []struct {
		name  string
		patch string
		side  check
	}{
		{"default steps", ``, shared},
		{"[1]", `concurrency: [1]`, shared},
		{"[100]", `concurrency: [100]`, shared},
		{"[1, 5]", `concurrency: [1, 5]`, shared},
		{"[1, 2] … [10]", fmt.Sprintf("concurrency: [%s]", seq(1, 10)), shared},
		{"[91] … [100]", fmt.Sprintf("concurrency: [%s]", seq(91, 100)), shared},
		{"[1, 5, 10, 25, 50, 100]", `concurrency: [1, 5, 10, 25, 50, 100]`, shared},
		{"[] (no step)", `concurrency: []`, shared},
		{"[0]", `concurrency: [0]`, shared},
		{"[-1, 5]", `concurrency: [-1, 5]`, shared},
		{"[1, 0]", `concurrency: [1, 0]`, shared},
		{"[5, 1]", `concurrency: [5, 1]`, shared},
		{"[1, 1]", `concurrency: [1, 1]`, shared},
		{"[1, 5, 5]", `concurrency: [1, 5, 5]`, shared},
		{"[1, 2, 3, 4, 5, 6, 7, 8, 10, 9]", `concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 10, 9]`, shared},
		{"[100, 100]", `concurrency: [100, 100]`, shared},
		{"[100, 101] (descending or not: refused)", `concurrency: [101, 100]`, shared},
		{"all operations", `{operations: [provision, attach, snapshot, cloneFromSnapshot, cloneFromVolume, expand, delete], storage: {volumeSnapshotClassName: s, expandTo: 2Gi}}`, shared},
		{"no operation", `operations: []`, shared},
		{"an operation twice", `operations: [provision, provision]`, shared},
		{"an unknown operation", `operations: [resize]`, shared},
		{"a step of 101", `concurrency: [1, 101]`, shared},
		{"one step of 1000", `concurrency: [1000]`, shared},
		{"11 steps", fmt.Sprintf("concurrency: [%s]", seq(1, 11)), shared},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			obj, errs := volopsAdmit(t, "ops", r.patch)
			b := volopsTyped(t, obj)
			p := volops.Plan{Concurrency: int32s(b.Spec.Concurrency)}
			for _, op := range b.Spec.Operations {
				p.Operations = append(p.Operations, volops.Operation(op))
			}
			goErr := p.Validate()
			admitted, goAccepts := len(errs) == 0, goErr == nil
			switch r.side {
			case shared:
				if admitted != goAccepts {
					t.Errorf("admission and the core disagree on %v × %v:\nadmission: %v\ncore: %v", p.Operations, p.Concurrency, errs.ToAggregate(), goErr)
				}
			case admissionOnly:
				if admitted || !goAccepts {
					t.Errorf("want refused by admission alone:\nadmission: %v\ncore: %v", errs.ToAggregate(), goErr)
				}
			}
		})
	}
}
