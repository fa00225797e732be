package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// regressionFormats are compare --baseline's.
var regressionFormats = []report.Format{report.FormatText, report.FormatJSON}

// regressionFlags are compare's flags of the statistical comparison with
// baseline runs (--baseline), the operator's spec.regression on demand.
type regressionFlags struct {
	// baseline is --baseline's value: compare judges NAME against baseline
	// runs when it is not empty.
	baseline                              baselineRefs
	significance, minIOPSDrop, minP99Rise float64
	force                                 bool
}

// baselineRefs is --baseline: baselines separated by commas, the flag
// repeated adding more (its values joined by commas).
type baselineRefs string

func (b *baselineRefs) String() string { return string(*b) }
func (b *baselineRefs) Type() string   { return "BASE[,BASE…]" }

func (b *baselineRefs) Set(v string) error {
	if *b != "" {
		v = string(*b) + "," + v
	}
	*b = baselineRefs(v)
	return nil
}

// refs are the baselines named, in order ("" for an empty name between
// commas).
func (b baselineRefs) refs() []string {
	if b == "" {
		return nil
	}
	return strings.Split(string(b), ",")
}

func (r *regressionFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Var(&r.baseline, "baseline", "Judge NAME against baseline runs step by step, as the operator's spec.regression does: one or more completed benchmarks (comma-separated or the flag repeated; up to 20), whose run-to-run spread NAME is judged against, or configmap/NAME, a pinned baseline of one run or several (see the baseline command). p99 is judged only with 3 baseline runs or more.")
	f.Float64Var(&r.significance, "significance", 0, "With --baseline: the chance, over the whole comparison, of calling noise a regression (for independent samples; a run's seconds are not); more than 0 and at most 0.2 (default NAME's spec.regression.significance, else 0.01).")
	f.Float64Var(&r.minIOPSDrop, "min-iops-drop", 0, "With --baseline: a step's IOPS regressed only if their median fell by at least this percentage (default NAME's spec.regression.minIOPSDropPercent, else 10).")
	f.Float64Var(&r.minP99Rise, "min-p99-rise", 0, "With --baseline: a step's p99 latency regressed only if its median rose by at least this percentage (default NAME's spec.regression.minP99RisePercent, else 25).")
	f.BoolVar(&r.force, "force", false, "With --baseline: compare even when the runs measured another workload, clients or load.")
}

// regressionOnly are the flags that only --baseline uses; curveOnly those
// that only the overlaid curves use.
var (
	regressionOnly = []string{"significance", "min-iops-drop", "min-p99-rise", "force"}
	curveOnly      = []string{"latency", "operation", "width", "height"}
)

// notWith fails on the first of flags given on cmd's command line: they do
// not apply to what, and silently ignoring them would mislead.
func notWith(cmd *cobra.Command, what string, flags ...string) error {
	for _, f := range flags {
		if cmd.Flags().Changed(f) {
			return fmt.Errorf("--%s does not apply to %s", f, what)
		}
	}
	return nil
}

// options are sb's spec.regression options (apireport.RegressionOptions),
// each flag given on the command line over its field and checked as the
// operator checks spec.regression.
func (r *regressionFlags) options(cmd *cobra.Command, sb *v1alpha1.StorageBenchmark) (analysis.RegressionOptions, error) {
	o, err := apireport.RegressionOptions(sb)
	if err != nil {
		return o, err
	}
	for _, f := range []struct {
		flag  string
		value float64
		field *float64
	}{
		{"significance", r.significance, &o.Significance},
		{"min-iops-drop", r.minIOPSDrop, &o.MinIOPSDropPercent},
		{"min-p99-rise", r.minP99Rise, &o.MinP99RisePercent},
	} {
		if !cmd.Flags().Changed(f.flag) {
			continue
		}
		// Validate reads 0 as "the default": given on the command line, it
		// is a mistake.
		if f.value == 0 {
			return o, fmt.Errorf("--%s 0: the value must be more than 0 (leave the flag out for the default)", f.flag)
		}
		*f.field = f.value
		if err := o.Validate(); err != nil {
			return o, fmt.Errorf("--%s %v: %w", f.flag, f.value, err)
		}
	}
	return o, nil
}

// baselineRuns are what a run is compared with: completed benchmarks,
// whose samples are read from their steps' records, or a pinned baseline,
// which holds the samples of one run or several.
type baselineRuns struct {
	// name is as the verdict and the JSON name it, as the operator's
	// verdict does: StorageBenchmark/<name> for each benchmark (the first
	// three, then how many more), or ConfigMap/<name>.
	name string
	runs []baselineRun
}

// baselineRun is one baseline run.
type baselineRun struct {
	// name names the run in messages: StorageBenchmark/<name>, or the
	// pinned baseline's ConfigMap/<name>; source names it in the JSON
	// document's runs: the benchmark's name or the pinned run's source.
	name, source string
	fingerprint  string
	benchmark    *v1alpha1.StorageBenchmark
	pinned       []analysis.StepSamples
}

// baselinesOf finds the baseline runs --baseline names, in cur's
// namespace: one or more benchmarks (spec.regression.baseline.benchmarks,
// each named once, at most 20), or one pinned baseline alone
// (spec.regression.baseline.configMap).
func (a *app) baselinesOf(ctx context.Context, cur *v1alpha1.StorageBenchmark, refs []string) (*baselineRuns, error) {
	if len(refs) == 0 {
		return nil, errors.New("--baseline: name a completed benchmark or configmap/NAME")
	}
	if len(refs) > apireport.MaxBaselineRuns {
		return nil, fmt.Errorf("--baseline: %d baselines, at most %d (as spec.regression.baseline.benchmarks)", len(refs), apireport.MaxBaselineRuns)
	}
	var names []string
	out := &baselineRuns{}
	seen := map[string]bool{}
	for _, ref := range refs {
		kind, name := splitRef(ref)
		if name == "" {
			return nil, fmt.Errorf("--baseline %s: an empty name", strings.Join(refs, ","))
		}
		switch {
		case kindOf(kind) == kindBenchmark:
			if name == cur.Name {
				return nil, fmt.Errorf("--baseline %s: a run cannot be its own baseline", ref)
			}
			if seen[name] {
				return nil, fmt.Errorf("--baseline %s: named twice (each run counts once in the run-to-run spread)", ref)
			}
			seen[name] = true
			sb, err := a.get(ctx, name)
			if err != nil {
				return nil, fmt.Errorf("--baseline: %w", err)
			}
			if err := completed(sb, "only a completed run can be a baseline"); err != nil {
				return nil, fmt.Errorf("--baseline: %w", err)
			}
			names = append(names, sb.Name)
			out.runs = append(out.runs, baselineRun{name: "StorageBenchmark/" + sb.Name, source: sb.Name, fingerprint: sb.Spec.RegressionFingerprint(), benchmark: sb})
		case kind == "cm" || kind == "configmap" || kind == "configmaps":
			if len(refs) > 1 {
				return nil, fmt.Errorf("--baseline %s: a pinned baseline is compared with alone, as spec.regression.baseline.configMap is (pin several runs in it: see the baseline command)", ref)
			}
			return a.pinnedRuns(ctx, cur, name)
		default:
			return nil, fmt.Errorf("--baseline %s: want a benchmark's name or configmap/NAME", ref)
		}
	}
	out.name = apireport.BaselineName(names)
	return out, nil
}

// pinnedRuns are the runs of the pinned baseline name, of either version,
// in cur's namespace.
func (a *app) pinnedRuns(ctx context.Context, cur *v1alpha1.StorageBenchmark, name string) (*baselineRuns, error) {
	cm, err := a.configMap(ctx, cur.Namespace, name)
	if err != nil {
		return nil, err
	}
	if cm == nil {
		where := "namespace " + cur.Namespace
		if a.fromFile() {
			where = strings.Join(a.fromFiles, ", ")
		}
		return nil, fmt.Errorf("--baseline: ConfigMap %s not found in %s", name, where)
	}
	b, err := apireport.PinnedBaseline(cm)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	out := &baselineRuns{name: "ConfigMap/" + name}
	for _, run := range b.PinnedRuns() {
		// One fingerprint for all the runs: checked once.
		out.runs = append(out.runs, baselineRun{name: out.name, source: run.Source, fingerprint: b.Fingerprint, pinned: run.Steps})
	}
	return out, nil
}

// compareWithBaseline is compare --baseline: NAME's steps judged against
// the baseline runs' by the operator's own test
// (analysis.CompareWithRuns), on the samples it would build, with NAME's
// spec.regression options; a regression ends the command with
// exitRegressed, for CI to gate on.
func (a *app) compareWithBaseline(cmd *cobra.Command, o *outputFlags, r *regressionFlags, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("compare --baseline judges one benchmark against its baseline: name exactly one, not %d", len(args))
	}
	if err := notWith(cmd, "compare --baseline (it judges the per-second IOPS and p99 of every step)", curveOnly...); err != nil {
		return err
	}
	f, opts, err := o.resolve(regressionFormats, report.FormatText)
	if err != nil {
		return fmt.Errorf("compare --baseline: %w", err)
	}
	ctx := cmd.Context()
	cur, err := a.get(ctx, args[0])
	if err != nil {
		return err
	}
	if err := completed(cur, "only a completed run is compared, as the operator compares it"); err != nil {
		return err
	}
	ro, err := r.options(cmd, cur)
	if err != nil {
		return err
	}
	base, err := a.baselinesOf(ctx, cur, r.baseline.refs())
	if err != nil {
		return err
	}
	fp := cur.Spec.RegressionFingerprint()
	for i, run := range base.runs {
		if run.fingerprint == fp || (run.benchmark == nil && i > 0) {
			continue // a pinned baseline's runs share one fingerprint
		}
		diff := v1alpha1.FingerprintDiff(run.fingerprint, fp)
		if !r.force {
			return fmt.Errorf("%s and %s measured another %s: compare runs of the same workload, clients and load (or pass --force)", cur.Name, run.name, diff)
		}
		fmt.Fprintf(a.errOut, "warning: %s and %s measured another %s: compared anyway (--force)\n", cur.Name, run.name, diff)
	}
	current, err := a.runSamples(ctx, cur)
	if err != nil {
		return err
	}
	baselines := make([][]analysis.StepSamples, len(base.runs))
	sources := make([]string, len(base.runs))
	for i, run := range base.runs {
		baselines[i], sources[i] = run.pinned, run.source
		if run.benchmark != nil {
			if baselines[i], err = a.runSamples(ctx, run.benchmark); err != nil {
				return err
			}
		}
	}
	c := &report.RegressionComparison{Baseline: base.name, Runs: sources, Current: cur.Name, Options: ro,
		Result: analysis.CompareWithRuns(baselines, current, ro)}
	err = a.emit(o, f, opts, func(w io.Writer, _ report.Options) error {
		if f == report.FormatJSON {
			return c.WriteJSON(w)
		}
		return c.WriteText(w)
	}, nil)
	if err != nil {
		return err
	}
	if c.Result.Regressed {
		return &codeError{code: exitRegressed}
	}
	return nil
}

// completed fails unless sb's run completed, saying why it must have.
func completed(sb *v1alpha1.StorageBenchmark, why string) error {
	if st := v1alpha1.RunStateOf(sb); st != v1alpha1.RunComplete {
		return fmt.Errorf("storagebenchmark %s is %s, not Complete: %s", sb.Name, st, why)
	}
	return nil
}

// runSamples are a run's per-second samples as the operator compares them
// (apireport.RunSamples), from the records of every step status lists.
func (a *app) runSamples(ctx context.Context, sb *v1alpha1.StorageBenchmark) ([]analysis.StepSamples, error) {
	n := len(sb.Status.Steps)
	if n == 0 {
		return nil, fmt.Errorf("storagebenchmark %s has no recorded steps", sb.Name)
	}
	cms := make([]*corev1.ConfigMap, n)
	for k := range n {
		cm, err := a.stepConfigMap(ctx, sb, k)
		if err != nil {
			return nil, err
		}
		if cm == nil {
			return nil, a.noRecord(sb, k)
		}
		cms[k] = cm
	}
	return apireport.RunSamples(sb, cms)
}

func (a *app) baselineCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "baseline NAME [NAME...]",
		Short: "Print a ConfigMap that pins completed runs as a regression baseline, for spec.regression.baseline.configMap",
		Long: `Print, as YAML on standard output, a ConfigMap that pins completed runs'
per-second samples as a regression baseline: named NAME-baseline (or
--configmap) in the runs' namespace, labelled storagebench.io/baseline=true,
its key baseline.json holding the samples of every step that counts and the
runs' regression fingerprint. Apply it and name it in
spec.regression.baseline.configMap: later runs are compared with it after the
runs themselves are gone. compare --baseline configmap/NAME reads it too.

One run is pinned as version 1 of the format, which every operator reads.
Several runs (up to 20, --configmap required) are pinned together as version
2: a later run is then judged against their run-to-run spread, and its p99
is judged only with 3 runs or more. They must all have completed and have
measured the same workload, clients and load (one regression fingerprint).

The samples are read from the steps' ConfigMaps: with --from-file, save them
with the benchmarks (kubectl get sbench,cm -o yaml).`,
		Example: `  kubectl storagebench baseline oltp-nightly-29900000 -n storagebench | kubectl apply -f -
  kubectl storagebench baseline oltp -n storagebench --configmap oltp-golden > oltp-golden.yaml
  kubectl storagebench baseline oltp-1 oltp-2 oltp-3 oltp-4 oltp-5 -n storagebench --configmap oltp-golden
  kubectl storagebench baseline --from-file oltp.yaml > oltp-baseline.yaml`,
		Args: cobra.MaximumNArgs(apireport.MaxBaselineRuns),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cmName := name
			if cmName == "" && len(args) > 1 {
				return fmt.Errorf("name the ConfigMap of a baseline of %d runs with --configmap", len(args))
			}
			names := args
			if len(names) == 0 {
				names = []string{""} // the one benchmark --from-file holds
			}
			sbs := make([]*v1alpha1.StorageBenchmark, len(names))
			for i, n := range names {
				if slices.Contains(names[:i], n) {
					return fmt.Errorf("storagebenchmark %s is named twice: each run counts once in the run-to-run spread", n)
				}
				sb, err := a.get(ctx, n)
				if err != nil {
					return err
				}
				if err := completed(sb, "only a completed run can be a baseline"); err != nil {
					return err
				}
				sbs[i] = sb
			}
			if cmName == "" {
				cmName = sbs[0].Name + "-baseline"
			}
			if errs := validation.IsDNS1123Subdomain(cmName); len(errs) > 0 {
				return fmt.Errorf("--configmap %q is not a valid ConfigMap name: %s", cmName, strings.Join(errs, "; "))
			}
			// The fingerprints first: a run of another measurement is
			// refused before any record is read.
			fp := sbs[0].Spec.RegressionFingerprint()
			for _, sb := range sbs[1:] {
				if theirs := sb.Spec.RegressionFingerprint(); theirs != fp {
					return fmt.Errorf("storagebenchmark %s measured another %s than %s: a pinned baseline holds runs of the same workload, clients and load",
						sb.Name, v1alpha1.FingerprintDiff(theirs, fp), sbs[0].Name)
				}
			}
			samples := make([][]analysis.StepSamples, len(sbs))
			for i, sb := range sbs {
				var err error
				if samples[i], err = a.runSamples(ctx, sb); err != nil {
					return err
				}
			}
			cm, err := apireport.BaselineRunsConfigMap(cmName, sbs, samples)
			if err != nil {
				return err
			}
			return writeManifest(a.out, cm)
		},
	}
	cmd.Flags().StringVar(&name, "configmap", "", "Name of the ConfigMap (default NAME-baseline; required with several runs).")
	return cmd
}

// writeManifest writes an object as YAML for kubectl apply, without the
// fields only the API server sets (creationTimestamp: null).
func writeManifest(w io.Writer, obj runtime.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	b, err := yaml.Marshal(u)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// splitRef splits a kubectl-style reference, KIND/NAME, into its kind
// (lower-cased, without the storagebench.io group) and name; a plain name
// has no kind.
func splitRef(ref string) (kind, name string) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok {
		return "", ref
	}
	kind = strings.TrimSuffix(strings.ToLower(kind), "."+v1alpha1.GroupVersion.Group)
	return kind, name
}
