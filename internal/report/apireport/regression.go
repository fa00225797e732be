package apireport

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
)

// maxConfigMapBytes is what the API server accepts in one ConfigMap's
// data.
const maxConfigMapBytes = 1 << 20

// RegressionOptions are the options of sb's spec.regression as the
// operator translates them (controllers/translate.go), so that the plugin
// reaches the verdict the operator would; the defaults without
// spec.regression.
func RegressionOptions(sb *v1alpha1.StorageBenchmark) (analysis.RegressionOptions, error) {
	rg := sb.Spec.Regression
	if rg == nil {
		return analysis.RegressionOptions{}.WithDefaults(), nil
	}
	o, err := analysis.RegressionOptionsOf(rg.Significance, rg.MinIOPSDropPercent, rg.MinP99RisePercent)
	if err != nil {
		return o, fmt.Errorf("spec.regression of %s: %w", sb.Name, err)
	}
	return o, nil
}

// RunSamples are a run's per-second samples as the operator compares them
// (samplesOf in controllers/regression.go): steps[k] is step k's
// ConfigMap, every recorded step in order; a step that a rerun superseded
// is left out and the others are numbered in order, IOPS and p99 taken
// from each window of the step's timeline, and labelled with the step's
// load. Every ConfigMap must be a record of sb (recordOf): one that is
// not is an error that names it.
func RunSamples(sb *v1alpha1.StorageBenchmark, steps []*corev1.ConfigMap) ([]analysis.StepSamples, error) {
	ran := make([]plan.Step, len(steps))
	aggs := make([]results.StepAggregate, len(steps))
	for k, cm := range steps {
		if err := recordOf(sb, cm); err != nil {
			return nil, err
		}
		order, agg, err := exchange.Step(cm, k)
		if err != nil {
			return nil, fmt.Errorf("step %d of %s: %w", k+1, sb.Name, err)
		}
		if len(agg.Timeline.Windows) > results.MaxWindows || len(agg.Timeline.Idle) > results.MaxWindows {
			// More than the operator writes: it drops such a timeline
			// (controllers/steps.go recordOf), and so do we.
			agg.Timeline = results.Timeline{}
		}
		ran[k], aggs[k] = order.Step, agg
	}
	run := make([]analysis.RunStep, len(steps))
	for k := range steps {
		iops, p99 := analysis.TimelineSamples(aggs[k].Timeline)
		run[k] = analysis.RunStep{Index: k, Label: ran[k].Load(), Offered: ran[k].Offered(), Superseded: plan.SupersededAt(ran, k), IOPS: iops, P99Ns: p99}
	}
	return analysis.SamplesOf(run), nil
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

// BaselineConfigMap is the manifest that pins sb's samples as a baseline
// named name, in sb's namespace: labelled so that the operator reads it,
// its document checked as the operator decodes it, so that a baseline it
// would refuse is refused here, when the run can still be chosen again.
func BaselineConfigMap(sb *v1alpha1.StorageBenchmark, name string, samples []analysis.StepSamples) (*corev1.ConfigMap, error) {
	source := sb.Name
	if sb.Namespace != "" {
		source = sb.Namespace + "/" + sb.Name
	}
	b := analysis.Baseline{Version: analysis.BaselineVersion, Source: source, Fingerprint: sb.Spec.RegressionFingerprint(), Steps: samples}
	data, err := b.Encode()
	if err != nil {
		return nil, err
	}
	if _, err := analysis.DecodeBaseline(data); err != nil {
		return nil, fmt.Errorf("storagebenchmark %s cannot be a pinned baseline: %w", sb.Name, err)
	}
	if len(exchange.KeyBaseline)+len(data) > maxConfigMapBytes {
		return nil, fmt.Errorf("the baseline of storagebenchmark %s is %d bytes: more than a ConfigMap holds (1 MiB)", sb.Name, len(data))
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sb.Namespace, Labels: map[string]string{exchange.LabelBaseline: "true"}},
		Data:       map[string]string{exchange.KeyBaseline: string(data)},
	}, nil
}

// PinnedBaseline reads a pinned baseline as the operator does
// (pinnedBaseline in controllers/regression.go): only a ConfigMap labelled
// storagebench.io/baseline=true, its key baseline.json decoded strictly.
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
