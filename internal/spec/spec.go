package spec

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/workload"
)

// Run is a benchmark's spec translated into the core's terms. It is
// derived from the spec alone, so every reconcile recomputes it.
type Run struct {
	// Spec is the load, topology and workload that order the steps
	// (run.Next); its fields read as Run's own (r.Load).
	run.Spec
	Analysis   analysis.Options
	Objectives []analysis.Objective
	// Regression is how the run is compared with its baseline; nil
	// without spec.regression.
	Regression *analysis.RegressionOptions
	Volume     protocol.Volume
	Precond    bool
	// StepsPlanned is the number of steps the load plans at most.
	StepsPlanned int
}

// Of translates the spec and validates it with the core's own rules: those
// admission checks too (they agree: admission_test.go), and those it
// cannot express, such as a working set that leaves less than one block of
// the profile's per job.
func Of(b *v1alpha1.StorageBenchmark) (Run, error) {
	s := &b.Spec
	var r Run
	wl, err := workload.Resolve(s.Workload.Profile, overridesOf(&s.Workload))
	if err != nil {
		return r, specError(err)
	}
	r.Workload = wl
	r.Topology = plan.Topology{Clients: s.Clients.Count, JobsPerClient: s.Clients.JobsPerClient}
	r.Load = LoadOf(&s.Load)
	if c := r.Load.Curve; c != nil {
		// A synchronous engine keeps one I/O in flight per job whatever
		// its depth: doubling it would compare the maximum with itself.
		c.ClientBoundCheck = ptr.Deref(s.Load.Curve.ClientBoundCheck, true) && !wl.IOEngine.Synchronous()
	}
	if err := plan.Validate(r.Load, r.Topology, r.Workload); err != nil {
		return r, specError(err)
	}
	if err := fits(s, wl.WorkingSetBytesPerClient); err != nil {
		return r, err
	}
	if s.Verify != nil {
		if err := wl.Verifiable(); err != nil {
			return r, specError(err)
		}
		r.Verify = true
	}
	r.StepsPlanned = plan.TotalSteps(r.Load)
	r.Analysis = analysisOf(s, r.Load.Unit())
	if err := r.Analysis.Validate(); err != nil {
		return r, err
	}
	if err := judgeable(r.Load, r.Analysis.Steady); err != nil {
		return r, err
	}
	if r.Objectives, err = objectivesOf(s.SLO); err != nil {
		return r, err
	}
	if rg := s.Regression; rg != nil {
		o, err := RegressionOptionsOf(rg)
		if err != nil {
			return r, fmt.Errorf("regression: %w", err)
		}
		r.Regression = &o
	}
	r.Volume = volumeOf(b)
	r.Precond = s.Precondition.Fill == nil || *s.Precondition.Fill
	return r, nil
}

// volumeOf is where the clients' I/O goes.
func volumeOf(b *v1alpha1.StorageBenchmark) protocol.Volume {
	st := &b.Spec.Storage
	v := protocol.Volume{Path: protocol.DataMountPath, Shared: st.Sharing == v1alpha1.SharingShared}
	if st.ExistingClaim != nil && st.VolumeMode != corev1.PersistentVolumeBlock {
		// Somebody else's volume: only a directory of the benchmark's own,
		// emptied of what it wrote when the run ends (controllers/consent.go).
		v.Subdir, v.RemoveWhenDone = BenchmarkDirectory(b), true
	}
	if st.VolumeMode == corev1.PersistentVolumeBlock {
		v.Path, v.Block = protocol.DevicePath, true
	}
	return v
}

// BenchmarkDirectory is where a benchmark writes on an existing
// Filesystem claim: named after the benchmark and its UID, so two
// benchmarks, or two runs under one name, never share files.
func BenchmarkDirectory(b *v1alpha1.StorageBenchmark) string {
	uid := string(b.UID)
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return fmt.Sprintf("storagebench-%s-%s", b.Name, uid)
}

// ClientPlan is the plan template every client reads (Client and Seed are
// filled in by each runner).
func ClientPlan(b *v1alpha1.StorageBenchmark, r *Run) protocol.ClientPlan {
	return protocol.ClientPlan{Benchmark: b.Name, Topology: r.Topology, Workload: r.Workload, Volume: r.Volume, Precond: r.Precond,
		Arrivals: r.Load.Arrivals, ResultWire: results.WireVersions, OrdersAhead: r.Load.Fixed() && !r.Verify, Verify: r.Verify}
}

// specFields are the spec's names of the core's fields that it names
// differently (the core counts bytes and microseconds).
var specFields = map[string]string{
	"workload.blockSizeBytes":             "workload.blockSize",
	"workload.workingSetBytesPerClient":   "workload.workingSetPerClient",
	"load.stop.latency.limitMicroseconds": "load.stop.latency.limit",
}

// specError names the field of a core validation error as the spec does,
// so the InvalidSpec message points at what the user wrote.
func specError(err error) error {
	var fe *workload.FieldError
	if errors.As(err, &fe) {
		if name, ok := specFields[fe.Field]; ok {
			c := *fe
			c.Field = name
			return &c
		}
	}
	return err
}

func overridesOf(w *v1alpha1.WorkloadSpec) workload.Overrides {
	o := workload.Overrides{ReadPercent: w.ReadPercent, IODepth: w.IODepth, Direct: w.Direct, CompressPercent: w.CompressPercent,
		DedupePercent: w.DedupePercent, SyncEvery: w.SyncEvery}
	if w.Sync != "" {
		v := workload.SyncMode(w.Sync)
		o.Sync = &v
	}
	if w.BlockSize != nil {
		v := w.BlockSize.Value()
		o.BlockSizeBytes = &v
	}
	if w.WorkingSetPerClient != nil {
		v := w.WorkingSetPerClient.Value()
		o.WorkingSetBytesPerClient = &v
	}
	if w.Pattern != "" {
		v := workload.Pattern(w.Pattern)
		o.Pattern = &v
	}
	if w.IOEngine != "" {
		v := workload.IOEngine(w.IOEngine)
		o.IOEngine = &v
	}
	return o
}

// LoadOf is spec.load in the core's terms, not validated. A curve's
// ClientBoundCheck is left false: it depends on the workload's engine, and
// Of sets it.
func LoadOf(l *v1alpha1.LoadSpec) plan.Load {
	out := plan.Load{StepDuration: l.StepDuration.Duration}
	if l.RampTime != nil {
		out.RampTime = l.RampTime.Duration
	}
	// Every mode the spec sets, so that plan.Validate sees two.
	if r := l.Rate; r != nil {
		out.Rate = &plan.RateSteps{Unit: plan.RateUnit(r.Unit), Steps: r.Steps,
			Start: ptr.Deref(r.Start, 0), Increment: ptr.Deref(r.Increment, 0), FactorPercent: ptr.Deref(r.FactorPercent, 0), Max: ptr.Deref(r.Max, 0)}
	}
	if q := l.QueueDepth; q != nil {
		out.QueueDepth = &plan.QueueDepthSteps{Steps: q.Steps, Start: ptr.Deref(q.Start, 0), Max: ptr.Deref(q.Max, 0)}
	}
	if c := l.Curve; c != nil {
		out.Curve = &plan.CurveSpec{Percents: c.Percents, Unit: plan.RateUnit(c.Unit)}
	}
	if c := l.Clients; c != nil {
		out.Clients = &plan.ClientSteps{Steps: c.Steps, PerClientIOPS: ptr.Deref(c.PerClientIOPS, 0)}
	}
	out.Arrivals = plan.Arrivals(l.Arrivals)
	out.Repeat = l.Repeat
	if e := l.ExtendUntilSteady; e != nil {
		out.ExtendUntilSteady = e.MaxRuns
	}
	if st := l.Stop; st != nil {
		out.Stop.SaturationPercent = ptr.Deref(st.SaturationPercent, 0)
		if st.MaxStall != nil {
			out.Stop.MaxStallSeconds = int32(st.MaxStall.Duration / time.Second)
		}
		if lt := st.Latency; lt != nil {
			sel := SelectorOf(lt.LatencySelector)
			out.Stop.Latency = &plan.LatencyStop{Metric: plan.LatencyMetric(sel.Metric),
				Operation: plan.LatencyOperation(sel.Operation), LimitMicroseconds: lt.Limit.Microseconds()}
		}
	}
	return out
}

// The API's defaults of a step's timing (the +kubebuilder:default markers
// of load.stepDuration and load.rampTime). The core has none: Of takes
// what the API server stored.
const (
	DefaultStepDuration = time.Minute
	DefaultRampTime     = 5 * time.Second
)

// StepTiming is how long each step of l measures and its ramp, the API's
// defaults in place of unset fields: for a spec that admission did not
// default, such as one written by hand.
func StepTiming(l *v1alpha1.LoadSpec) (step, ramp time.Duration) {
	step, ramp = l.StepDuration.Duration, DefaultRampTime
	if step <= 0 {
		step = DefaultStepDuration
	}
	if l.RampTime != nil {
		ramp = l.RampTime.Duration
	}
	return step, ramp
}

// SelectorOf is a latency selector in analysis' terms, an unset metric
// the mean and an unset operation the total.
func SelectorOf(s v1alpha1.LatencySelector) analysis.LatencySelector {
	return analysis.LatencySelector{Metric: string(s.Metric), Operation: string(s.Operation)}.WithDefaults()
}

// analysisOf is spec.analysis in analysis' terms; unit is the load's, whose
// throughput the curve plots.
func analysisOf(s *v1alpha1.StorageBenchmarkSpec, unit plan.RateUnit) analysis.Options {
	o := analysis.Options{
		LatencyTarget:       s.Analysis.LatencyTarget.Duration,
		TargetSelector:      SelectorOf(s.Analysis.TargetLatency),
		SaturationPercent:   s.Analysis.SaturationPercent,
		Steady:              SteadyOptionsOf(s),
		MaxVariationPercent: float64(ptr.Deref(s.Analysis.MaxVariationPercent, 0)),
	}
	if unit == plan.MiBps {
		o.Throughput = analysis.ThroughputBytes
	}
	return o
}

// LatencyTarget is spec.analysis.latencyTarget, or analysis' default when
// the spec has none (one admission did not default).
func LatencyTarget(s *v1alpha1.StorageBenchmarkSpec) time.Duration {
	if t := s.Analysis.LatencyTarget.Duration; t > 0 {
		return t
	}
	return analysis.DefaultLatencyTarget
}

// SteadyOptionsOf are spec.analysis.steadyState's options.
func SteadyOptionsOf(s *v1alpha1.StorageBenchmarkSpec) analysis.SteadyOptions {
	st := s.Analysis.SteadyState
	return analysis.SteadyOptions{Rounds: int(st.Rounds), RangePercent: float64(st.RangePercent), SlopePercent: float64(st.SlopePercent)}
}

// RegressionOptionsOf are spec.regression's options as a run is judged by
// them, validated; analysis' defaults when rg is nil.
func RegressionOptionsOf(rg *v1alpha1.RegressionSpec) (analysis.RegressionOptions, error) {
	if rg == nil {
		return analysis.RegressionOptions{}.WithDefaults(), nil
	}
	return analysis.RegressionOptionsOf(rg.Significance, rg.MinIOPSDropPercent, rg.MinP99RisePercent)
}

// objectivesOf are spec.slo's objectives, each validated; nil without slo.
func objectivesOf(slo *v1alpha1.SLOSpec) ([]analysis.Objective, error) {
	if slo == nil {
		return nil, nil
	}
	var out []analysis.Objective
	for _, o := range slo.Objectives {
		obj := objectiveOf(o)
		if err := analysis.ValidateObjective(obj); err != nil {
			return nil, fmt.Errorf("slo.objectives[%s]: %w", o.Name, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

func objectiveOf(o v1alpha1.Objective) analysis.Objective {
	out := analysis.Objective{Name: o.Name, PeakIOPS: o.PeakIOPS, PeakMiBps: o.PeakMiBps}
	if l := o.LatencyAtLoad; l != nil {
		out.LatencyAtLoad = &analysis.LatencyAtLoad{Selector: SelectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinIOPS: l.MinIOPS}
	}
	if l := o.IOPSAtLatency; l != nil {
		out.IOPSAtLatency = &analysis.IOPSAtLatency{Selector: SelectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinIOPS: l.MinIOPS}
	}
	if l := o.MiBpsAtLatency; l != nil {
		out.MiBpsAtLatency = &analysis.MiBpsAtLatency{Selector: SelectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinMiBps: l.MinMiBps}
	}
	if o.MaxStall != nil {
		out.MaxStall = &o.MaxStall.Duration
	}
	return out
}

// fits checks the working set against the volume, a profile's default
// working set included. An existing claim's size is not known from the
// spec; the runner finds out.
func fits(s *v1alpha1.StorageBenchmarkSpec, ws int64) error {
	if s.Storage.ExistingClaim != nil {
		return nil
	}
	size, need := s.Storage.Size.Value(), ws
	how := "workingSetPerClient"
	if s.Storage.Sharing == v1alpha1.SharingShared {
		need *= int64(s.Clients.Count)
		how = fmt.Sprintf("%d clients × workingSetPerClient", s.Clients.Count)
	}
	if need > size {
		return &workload.FieldError{Field: "workload.workingSetPerClient", Value: strconv.FormatInt(ws, 10),
			Allowed: fmt.Sprintf("%s = %d bytes must fit in storage.size (%d bytes): raise storage.size or set a smaller workingSetPerClient", how, need, size)}
	}
	return nil
}

// judgeable checks that a load which runs unsteady steps again measures
// long enough for a step to be judged: one timeline window a second of
// stepDuration (the ramp comes before it), at least as many as the
// steady-state rule has rounds. A step too short to
// judge would never be run again, silently.
func judgeable(l plan.Load, o analysis.SteadyOptions) error {
	if l.ExtendUntilSteady < 2 {
		return nil
	}
	rounds := o.WithDefaults().Rounds
	if l.StepDuration < time.Duration(rounds)*time.Second {
		return &workload.FieldError{Field: "load.extendUntilSteady",
			Value: fmt.Sprintf("with steps of %s (load.stepDuration)", l.StepDuration),
			Allowed: fmt.Sprintf("must have steps that measure at least %d s, one timeline second per analysis.steadyState round, or no step could be judged steady; "+
				"raise load.stepDuration or lower analysis.steadyState.rounds", rounds)}
	}
	return nil
}
