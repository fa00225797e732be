package spec

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/workload"
	"github.com/storagebench/storagebench/test/build"
)

// TestCRDDefaultsAreTheCores: where a +kubebuilder:default marker restates
// a default the core applies to an unset field, the two are one value.
func TestCRDDefaultsAreTheCores(t *testing.T) {
	c := loadCRD(t, benchmarkCRD)
	curve := mustRun(t, newBench(build.Load(func(l *v1alpha1.LoadSpec) { l.Curve = &v1alpha1.CurveSteps{} })))
	for _, d := range []struct {
		path string
		want any
	}{
		{"spec.analysis.steadyState.rounds", analysis.DefaultSteadyRounds},
		{"spec.analysis.steadyState.rangePercent", analysis.DefaultSteadyRangePercent},
		{"spec.analysis.steadyState.slopePercent", analysis.DefaultSteadySlopePercent},
		{"spec.analysis.latencyTarget", analysis.DefaultLatencyTarget},
		{"spec.analysis.saturationPercent", analysis.DefaultSaturationPercent},
		{"spec.analysis.targetLatency.metric", analysis.DefaultTargetSelector.Metric},
		{"spec.analysis.targetLatency.operation", analysis.DefaultTargetSelector.Operation},
		{"spec.load.stop.latency.metric", analysis.DefaultTargetSelector.Metric},
		{"spec.load.stop.latency.operation", analysis.DefaultTargetSelector.Operation},
		{"spec.regression.significance", analysis.DefaultRegressionSignificance},
		{"spec.regression.minIOPSDropPercent", analysis.DefaultMinIOPSDropPercent},
		{"spec.regression.minP99RisePercent", analysis.DefaultMinP99RisePercent},
		// The API's own, which readers of saved objects apply (StepTiming).
		{"spec.load.stepDuration", DefaultStepDuration},
		{"spec.load.rampTime", DefaultRampTime},
		// What Of and plan read an unset field as.
		{"spec.load.rate.unit", string(plan.Load{Rate: &plan.RateSteps{}}.Unit())},
		{"spec.load.curve.unit", string(plan.Load{Curve: &plan.CurveSpec{}}.Unit())},
		{"spec.load.curve.clientBoundCheck", curve.Load.Curve.ClientBoundCheck},
		{"spec.load.arrivals", string(plan.Uniform)},
		{"spec.precondition.fill", mustRun(t, newBench()).Precond},
		// One run of each level: plan counts an unset repeat as 1.
		{"spec.load.repeat", plan.TotalSteps(plan.Load{Rate: &plan.RateSteps{Steps: []int64{1}}})},
	} {
		s := c.schemaAt(t, d.path)
		if s.Default == nil {
			t.Errorf("%s has no default in the CRD; the core's is %v", d.path, d.want)
			continue
		}
		var got any
		if err := json.Unmarshal(s.Default.Raw, &got); err != nil {
			t.Fatalf("%s: default %s: %v", d.path, s.Default.Raw, err)
		}
		if !sameValue(got, d.want) {
			t.Errorf("%s defaults to %v in the CRD, %v in the core", d.path, got, d.want)
		}
	}
}

// TestCRDSelectorDefaultsAreTheCores: every latency selector of the CRD
// (analysis.targetLatency, a stop rule's, an objective's) defaults to
// analysis' selector, which SelectorOf fills in.
func TestCRDSelectorDefaultsAreTheCores(t *testing.T) {
	c := loadCRD(t, benchmarkCRD)
	var n int
	var walk func(s *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, path string) {
		m, hasM := s.Properties["metric"]
		o, hasO := s.Properties["operation"]
		if hasM && hasO {
			n++
			for _, f := range []struct {
				name string
				s    apiextensionsv1.JSONSchemaProps
				want string
			}{{"metric", m, analysis.DefaultTargetSelector.Metric}, {"operation", o, analysis.DefaultTargetSelector.Operation}} {
				if f.s.Default == nil || string(f.s.Default.Raw) != strconv.Quote(f.want) {
					t.Errorf("%s.%s defaults to %v, the core to %q", path, f.name, f.s.Default, f.want)
				}
			}
		}
		for _, k := range sortedKeys(s.Properties) {
			p := s.Properties[k]
			walk(&p, path+"."+k)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, path+"[*]")
		}
	}
	walk(c.schemaAt(t, "spec"), "spec")
	if n < 5 {
		t.Errorf("found %d latency selectors, want the 5 of targetLatency, the stop rule and the objectives", n)
	}
	if got := SelectorOf(v1alpha1.LatencySelector{}); got != analysis.DefaultTargetSelector {
		t.Errorf("SelectorOf(unset) = %+v, want %+v", got, analysis.DefaultTargetSelector)
	}
}

// sameValue compares a CRD default, as JSON decodes it, with a Go value.
func sameValue(crd, goValue any) bool {
	switch g := goValue.(type) {
	case time.Duration:
		s, ok := crd.(string)
		d, err := time.ParseDuration(s)
		return ok && err == nil && d == g
	case float64:
		s, ok := crd.(string)
		f, err := strconv.ParseFloat(s, 64)
		return ok && err == nil && f == g
	case int:
		f, ok := crd.(float64)
		return ok && f == float64(g)
	case string, bool:
		return crd == g
	}
	return false
}

// TestStepsLongEnoughFallsBackToTheDefaultRounds: the CEL rule reads an
// unset analysis.steadyState.rounds as a literal, which must be analysis'
// default, as judgeable's is. (The API server defaults rounds, so only a
// stored object from before the default would reach the literal.)
func TestStepsLongEnoughFallsBackToTheDefaultRounds(t *testing.T) {
	c := loadCRD(t, benchmarkCRD)
	r := ruleNamed(t, "steps long enough to judge")
	rounds := time.Duration(analysis.DefaultSteadyRounds) * time.Second
	for _, step := range []time.Duration{rounds, rounds - time.Millisecond} {
		obj := object(t, `load: {extendUntilSteady: {}, rampTime: 0s, stepDuration: "`+step.String()+`"}`)
		c.store(t, obj)
		spec := obj["spec"].(map[string]any)
		delete(spec["analysis"].(map[string]any)["steadyState"].(map[string]any), "rounds")
		admitted := !refusedBy(r, c.celErrors(obj))
		goErr := judgeable(plan.Load{StepDuration: step, ExtendUntilSteady: 3}, analysis.SteadyOptions{})
		if admitted != (goErr == nil) || admitted != (step >= rounds) {
			t.Errorf("steps of %s without rounds: admitted %v, judgeable: %v; want both to accept exactly from %s", step, admitted, goErr, rounds)
		}
	}
}

// TestProfilesShareWhatAdmissionAssumes: the CRD does not carry the
// profile table, and the engine and working-set rules stand in for it
// with what the profiles share: libaio with direct I/O at a depth above
// 1, and a 1Gi working set, but for the log profiles (sync, buffered,
// depth 1), which every rule that depends on the engine names. The
// engines the CEL rules name synchronous are workload's.
func TestProfilesShareWhatAdmissionAssumes(t *testing.T) {
	logs := workload.LogProfiles()
	specs := map[string]workload.Spec{"(base)": workload.BaseSpec()}
	for _, name := range workload.ProfileNames() {
		p, _ := workload.Lookup(name)
		specs[name] = p.Spec
	}
	for name, s := range specs {
		if s.WorkingSetBytesPerClient != 1<<30 {
			t.Errorf("profile %s: %+v; the CRD's rules assume a 1Gi working set", name, s)
		}
		if slices.Contains(logs, name) {
			if s.IOEngine != workload.Sync || s.Direct || s.IODepth != 1 {
				t.Errorf("log profile %s: %+v; the CRD's rules assume sync, buffered, ioDepth 1", name, s)
			}
			continue
		}
		if s.IOEngine != workload.LibAIO || !s.Direct || s.IODepth <= 1 {
			t.Errorf("profile %s: %+v; the CRD's rules assume libaio, direct and ioDepth above 1", name, s)
		}
	}
	// Every rule that reads the profile names exactly the log profiles,
	// and every rule on the engine, direct I/O or the depth reads it.
	list := "['" + strings.Join(logs, "', '") + "']"
	named := 0
	for _, r := range loadCRD(t, benchmarkCRD).celRules() {
		reads := strings.Contains(r.rule, "profile in")
		if reads {
			named++
			if strings.Count(r.rule, "profile in "+list) != strings.Count(r.rule, "profile in") {
				t.Errorf("rule at %s names profiles other than %s: %s", r.path, list, r.rule)
			}
		}
		onEngine := strings.Contains(r.rule, "ioEngine") || strings.Contains(r.rule, "direct") || strings.Contains(r.rule, "ioDepth")
		if onEngine && !reads {
			t.Errorf("rule at %s depends on the engine but not on the profile: %s", r.path, r.rule)
		}
	}
	if named < 4 {
		t.Errorf("%d rules name the log profiles, want the 4 on engine, depth, direct I/O and verify", named)
	}
	for _, e := range workload.IOEngines() {
		if named := e == "psync" || e == "sync"; e.Synchronous() != named {
			t.Errorf("ioEngine %s: synchronous %v, the CRD's rules say %v", e, e.Synchronous(), named)
		}
	}
}

// TestCRDsAreValid runs the API server's validation of the CRDs
// themselves, CEL cost estimates included: what a cluster checks when the
// CRD is applied.
func TestCRDsAreValid(t *testing.T) {
	for _, f := range []string{benchmarkCRD, scheduleCRD} {
		def := loadCRD(t, f).def.DeepCopy()
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(def)
		var internal apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(def, &internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			t.Errorf("%s is not a valid CRD:\n%s", f, strings.ReplaceAll(errs.ToAggregate().Error(), ", ", "\n"))
		}
	}
}
