package apireport

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// maxConfigMapBytes is what the API server accepts in one ConfigMap's
// data.
const maxConfigMapBytes = 1 << 20

// RegressionOptions are the options of sb's spec.regression as the
// operator translates them (spec.RegressionOptionsOf), so that the plugin
// reaches the verdict the operator would; the defaults without
// spec.regression.
func RegressionOptions(sb *v1alpha1.StorageBenchmark) (analysis.RegressionOptions, error) {
	o, err := spec.RegressionOptionsOf(sb.Spec.Regression)
	if err != nil {
		return o, fmt.Errorf("spec.regression of %s: %w", sb.Name, err)
	}
	return o, nil
}

// MaxBaselineRuns is the most baseline runs a comparison or a pinned
// baseline takes: spec.regression.baseline.benchmarks' limit, and a
// version 2 pinned baseline's (analysis.DecodeBaseline).
const MaxBaselineRuns = 20

// ClosedLoopOf reports whether step k of a run (its index in the run,
// reruns counted, as its record's order numbers it) measured its latency
// closed-loop, as a regression comparison reads it
// (analysis.StepSamples.ClosedLoop): status.steps[k].closedLoop when
// status lists step k at its index, else, for a status that lost the step
// or never had it, whether the step offered no rate. The operator
// (closedLoopIn in controllers/regression.go) and the plugin (RunSamples)
// must read it alike, so that they judge the same p99s: this is the one
// rule.
func ClosedLoopOf(status []v1alpha1.StepStatus, k int, step plan.Step) bool {
	if k >= 0 && k < len(status) && int(status[k].Index) == k {
		return status[k].ClosedLoop
	}
	return !step.RateLimited()
}

// RunSamples are a run's per-second samples as the operator compares them
// (run.Samples): steps[k] is step k's ConfigMap, every recorded step in
// order, recorded as the operator records it (run.Record) and marked
// closed-loop by ClosedLoopOf from sb's status. Every ConfigMap must be a
// record of sb (recordOf): one that is not is an error that names it.
func RunSamples(sb *v1alpha1.StorageBenchmark, steps []*corev1.ConfigMap) ([]analysis.StepSamples, error) {
	recorded := make([]run.Step, len(steps))
	for k, cm := range steps {
		if err := recordOf(sb, cm); err != nil {
			return nil, err
		}
		order, agg, err := exchange.Step(cm, k)
		if err != nil {
			return nil, fmt.Errorf("step %d of %s: %w", k+1, sb.Name, err)
		}
		recorded[k] = run.Record(order, agg, cm.Name, analysis.SteadyOptions{})
	}
	return run.Samples(recorded, func(k int) bool { return ClosedLoopOf(sb.Status.Steps, k, recorded[k].Order.Step) }), nil
}

// recordOf fails unless cm is a record of sb by the operator's rule
// (ownedBy in controllers/ownership.go, which readSteps applies to every
// step's ConfigMap): sb is its controller, by UID. The operator stops
// reading a run's steps at a ConfigMap that is not its record; here, where
// every step the status lists needs its record (a missing one is an
// error too), it is an error that names the ConfigMap and who controls it.
// Anybody who may create ConfigMaps in the namespace can create one under
// a step's name, without a controller or with one of their own; its
// samples are not the run's.
func recordOf(sb *v1alpha1.StorageBenchmark, cm *corev1.ConfigMap) error {
	ref := metav1.GetControllerOfNoCopy(cm)
	switch {
	case ref == nil:
		return fmt.Errorf("ConfigMap %s is not a record of storagebenchmark %s: it has no controller", cm.Name, sb.Name)
	case sb.UID == "":
		// Saved without metadata.uid: nothing tells its records from a
		// namesake's.
		return fmt.Errorf("ConfigMap %s is not a record of storagebenchmark %s: the benchmark has no metadata.uid to match its controller's", cm.Name, sb.Name)
	case ref.UID != sb.UID:
		return fmt.Errorf("ConfigMap %s is not a record of storagebenchmark %s: %s %s controls it", cm.Name, sb.Name, ref.Kind, ref.Name)
	}
	return nil
}

// BaselineName names baseline benchmarks as the operator's verdict and
// status name them (baselineName in controllers/regression.go): the first
// three as StorageBenchmark/<name>, then how many more.
func BaselineName(names []string) string {
	parts := make([]string, 0, 4)
	for i, n := range names {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-3))
			break
		}
		parts = append(parts, "StorageBenchmark/"+protocol.Truncate(n, 253))
	}
	return strings.Join(parts, ", ")
}

// sourceOf names a run in a pinned baseline: namespace/name.
func sourceOf(sb *v1alpha1.StorageBenchmark) string {
	if sb.Namespace != "" {
		return sb.Namespace + "/" + sb.Name
	}
	return sb.Name
}

// BaselineConfigMap is the manifest that pins sb's samples as a baseline
// named name, in sb's namespace: labelled so that the operator reads it,
// its document checked as the operator decodes it, so that a baseline it
// would refuse is refused here, when the run can still be chosen again.
// It is a version 1 baseline, of one run.
func BaselineConfigMap(sb *v1alpha1.StorageBenchmark, name string, samples []analysis.StepSamples) (*corev1.ConfigMap, error) {
	b := analysis.Baseline{Version: analysis.BaselineVersion, Source: sourceOf(sb), Fingerprint: sb.Spec.RegressionFingerprint(), Steps: samples}
	return baselineManifest(b, name, sb.Namespace, "storagebenchmark "+sb.Name)
}

// BaselineRunsConfigMap is the manifest that pins several runs as one
// baseline named name, in the first run's namespace: samples[i] are
// sbs[i]'s (RunSamples). One run is pinned as BaselineConfigMap pins it
// (version 1, which any operator reads); several as version 2, each run
// with its source, so that a later run is judged against their run-to-run
// spread (analysis.CompareWithRuns). The runs must be distinct, at most
// MaxBaselineRuns, in one namespace, and all of the same workload, clients
// and load (one regression fingerprint): the error names the first run
// that differs from the first. That they completed, and that their samples
// are their own records, is the caller's to check (RunSamples checks the
// records).
func BaselineRunsConfigMap(name string, sbs []*v1alpha1.StorageBenchmark, samples [][]analysis.StepSamples) (*corev1.ConfigMap, error) {
	switch {
	case len(sbs) == 0 || len(sbs) != len(samples):
		return nil, fmt.Errorf("a pinned baseline needs runs and the samples of each: %d runs, %d samples", len(sbs), len(samples))
	case len(sbs) == 1:
		return BaselineConfigMap(sbs[0], name, samples[0])
	case len(sbs) > MaxBaselineRuns:
		return nil, fmt.Errorf("%d runs: a pinned baseline holds at most %d", len(sbs), MaxBaselineRuns)
	}
	first := sbs[0]
	fp := first.Spec.RegressionFingerprint()
	seen := map[string]bool{}
	b := analysis.Baseline{Version: analysis.BaselineVersionRuns, Fingerprint: fp, Runs: make([]analysis.BaselineRun, len(sbs))}
	sources := make([]string, len(sbs))
	for i, sb := range sbs {
		switch {
		case sb.Namespace != first.Namespace:
			return nil, fmt.Errorf("storagebenchmark %s is in namespace %q, %s in %q: a pinned baseline holds runs of one namespace", sb.Name, sb.Namespace, first.Name, first.Namespace)
		case seen[sb.Name]:
			return nil, fmt.Errorf("storagebenchmark %s is named twice: each run counts once in the run-to-run spread", sb.Name)
		}
		seen[sb.Name] = true
		if theirs := sb.Spec.RegressionFingerprint(); theirs != fp {
			return nil, fmt.Errorf("storagebenchmark %s measured another %s than %s: a pinned baseline holds runs of the same workload, clients and load",
				sb.Name, v1alpha1.FingerprintDiff(theirs, fp), first.Name)
		}
		sources[i] = sourceOf(sb)
		b.Runs[i] = analysis.BaselineRun{Source: sources[i], Steps: samples[i]}
	}
	b.Source = runsSource(sources)
	return baselineManifest(b, name, first.Namespace, fmt.Sprintf("the %d runs", len(sbs)))
}

// runsSource names a version 2 baseline's runs for messages: the first
// three and how many more, within the 512 bytes DecodeBaseline allows.
func runsSource(sources []string) string {
	parts := make([]string, 0, 4)
	for i, s := range sources {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(sources)-3))
			break
		}
		parts = append(parts, s)
	}
	return protocol.Truncate(strings.Join(parts, ", "), 512)
}

// baselineManifest encodes b as the ConfigMap name in namespace, checked
// as the operator decodes it and against what a ConfigMap holds; what
// names the runs in errors.
func baselineManifest(b analysis.Baseline, name, namespace, what string) (*corev1.ConfigMap, error) {
	data, err := b.Encode()
	if err != nil {
		return nil, err
	}
	if _, err := analysis.DecodeBaseline(data); err != nil {
		return nil, fmt.Errorf("%s cannot be a pinned baseline: %w", what, err)
	}
	if len(exchange.KeyBaseline)+len(data) > maxConfigMapBytes {
		return nil, fmt.Errorf("the baseline of %s is %d bytes: more than a ConfigMap holds (1 MiB)", what, len(data))
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{exchange.LabelBaseline: "true"}},
		Data:       map[string]string{exchange.KeyBaseline: string(data)},
	}, nil
}

// PinnedBaseline reads a pinned baseline as the operator does
// (pinnedBaseline in controllers/regression.go): only a ConfigMap labelled
// storagebench.io/baseline=true, its key baseline.json decoded strictly,
// of either version; Baseline.PinnedRuns gives its runs.
func PinnedBaseline(cm *corev1.ConfigMap) (analysis.Baseline, error) {
	if cm.Labels[exchange.LabelBaseline] != "true" {
		return analysis.Baseline{}, fmt.Errorf("ConfigMap %s is not labelled %s=true, so the operator would not read it as a baseline", cm.Name, exchange.LabelBaseline)
	}
	data, ok := cm.Data[exchange.KeyBaseline]
	if !ok {
		return analysis.Baseline{}, fmt.Errorf("ConfigMap %s has no key %s", cm.Name, exchange.KeyBaseline)
	}
	b, err := analysis.DecodeBaseline([]byte(data))
	if err != nil {
		return analysis.Baseline{}, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	return b, nil
}
