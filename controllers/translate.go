package controllers

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// desired is a benchmark's spec translated into the core's terms. It is
// derived from the spec alone, so every reconcile recomputes it.
type desired struct {
	Workload   workload.Spec
	Topology   plan.Topology
	Load       plan.Load
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

// desiredOf translates and validates the spec with the core's own rules
// (what admission-time validation cannot express, such as a working set
// that leaves less than one block per job).
func desiredOf(b *v1alpha1.StorageBenchmark) (desired, error) {
	s := &b.Spec
	var d desired
	wl, err := workload.Resolve(s.Workload.Profile, overridesOf(&s.Workload))
	if err != nil {
		return d, specError(err)
	}
	d.Workload = wl
	d.Topology = plan.Topology{Clients: s.Clients.Count, JobsPerClient: s.Clients.JobsPerClient}
	d.Load = loadOf(&s.Load)
	if c := d.Load.Curve; c != nil {
		// A synchronous engine keeps one I/O in flight per job whatever
		// its depth: doubling it would compare the maximum with itself.
		c.ClientBoundCheck = ptr.Deref(s.Load.Curve.ClientBoundCheck, true) && !wl.IOEngine.Synchronous()
	}
	if err := plan.Validate(d.Load, d.Topology, d.Workload); err != nil {
		return d, specError(err)
	}
	if err := fits(s, wl.WorkingSetBytesPerClient); err != nil {
		return d, err
	}
	d.StepsPlanned = plan.TotalSteps(d.Load)
	d.Analysis = analysis.Options{
		LatencyTarget:       s.Analysis.LatencyTarget.Duration,
		TargetSelector:      selectorOf(s.Analysis.TargetLatency),
		SaturationPercent:   s.Analysis.SaturationPercent,
		Steady:              steadyOptionsOf(s),
		MaxVariationPercent: float64(ptr.Deref(s.Analysis.MaxVariationPercent, 0)),
	}
	if d.Load.Unit() == plan.MiBps {
		d.Analysis.Throughput = analysis.ThroughputBytes
	}
	if err := d.Analysis.Validate(); err != nil {
		return d, err
	}
	if err := judgeable(d.Load, d.Analysis.Steady); err != nil {
		return d, err
	}
	if s.SLO != nil {
		for _, o := range s.SLO.Objectives {
			obj := objectiveOf(o)
			if err := analysis.ValidateObjective(obj); err != nil {
				return d, fmt.Errorf("slo.objectives[%s]: %w", o.Name, err)
			}
			d.Objectives = append(d.Objectives, obj)
		}
	}
	if rg := s.Regression; rg != nil {
		o, err := analysis.RegressionOptionsOf(rg.Significance, rg.MinIOPSDropPercent, rg.MinP99RisePercent)
		if err != nil {
			return d, fmt.Errorf("regression: %w", err)
		}
		d.Regression = &o
	}
	d.Volume = protocol.Volume{Path: exchange.DataMountPath, Shared: s.Storage.Sharing == v1alpha1.SharingShared}
	if s.Storage.ExistingClaim != nil && s.Storage.VolumeMode != corev1.PersistentVolumeBlock {
		// Somebody else's volume: only a directory of the benchmark's own,
		// emptied of what it wrote when the run ends (consent.go).
		d.Volume.Subdir, d.Volume.RemoveWhenDone = BenchmarkDirectory(b), true
	}
	if s.Storage.VolumeMode == corev1.PersistentVolumeBlock {
		d.Volume.Path, d.Volume.Block = exchange.DevicePath, true
	}
	d.Precond = s.Precondition.Fill == nil || *s.Precondition.Fill
	return d, nil
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
	o := workload.Overrides{ReadPercent: w.ReadPercent, IODepth: w.IODepth, Direct: w.Direct, CompressPercent: w.CompressPercent}
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

func loadOf(l *v1alpha1.LoadSpec) plan.Load {
	out := plan.Load{StepDuration: l.StepDuration.Duration}
	if l.RampTime != nil {
		out.RampTime = l.RampTime.Duration
	}
	switch {
	case l.Rate != nil:
		r := l.Rate
		out.Rate = &plan.RateSteps{Unit: plan.RateUnit(r.Unit), Steps: r.Steps,
			Start: ptr.Deref(r.Start, 0), Increment: ptr.Deref(r.Increment, 0), FactorPercent: ptr.Deref(r.FactorPercent, 0), Max: ptr.Deref(r.Max, 0)}
	case l.QueueDepth != nil:
		q := l.QueueDepth
		out.QueueDepth = &plan.QueueDepthSteps{Steps: q.Steps, Start: ptr.Deref(q.Start, 0), Max: ptr.Deref(q.Max, 0)}
	case l.Curve != nil:
		out.Curve = &plan.CurveSpec{Percents: l.Curve.Percents, Unit: plan.RateUnit(l.Curve.Unit)}
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
			sel := selectorOf(lt.LatencySelector)
			out.Stop.Latency = &plan.LatencyStop{Metric: plan.LatencyMetric(sel.Metric),
				Operation: plan.LatencyOperation(sel.Operation), LimitMicroseconds: lt.Limit.Microseconds()}
		}
	}
	return out
}

func selectorOf(s v1alpha1.LatencySelector) analysis.LatencySelector {
	return analysis.LatencySelector{Metric: string(s.Metric), Operation: string(s.Operation)}.WithDefaults()
}

func objectiveOf(o v1alpha1.Objective) analysis.Objective {
	out := analysis.Objective{Name: o.Name, PeakIOPS: o.PeakIOPS, PeakMiBps: o.PeakMiBps}
	if l := o.LatencyAtLoad; l != nil {
		out.LatencyAtLoad = &analysis.LatencyAtLoad{Selector: selectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinIOPS: l.MinIOPS}
	}
	if l := o.IOPSAtLatency; l != nil {
		out.IOPSAtLatency = &analysis.IOPSAtLatency{Selector: selectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinIOPS: l.MinIOPS}
	}
	if l := o.MiBpsAtLatency; l != nil {
		out.MiBpsAtLatency = &analysis.MiBpsAtLatency{Selector: selectorOf(l.LatencySelector), MaxLatency: l.MaxLatency.Duration, MinMiBps: l.MinMiBps}
	}
	if o.MaxStall != nil {
		out.MaxStall = &o.MaxStall.Duration
	}
	return out
}

// clientPlan is the plan template every client reads (Client and Seed are
// filled in by each runner).
func clientPlan(b *v1alpha1.StorageBenchmark, d *desired) protocol.ClientPlan {
	return protocol.ClientPlan{Benchmark: b.Name, Topology: d.Topology, Workload: d.Workload, Volume: d.Volume, Precond: d.Precond,
		Arrivals: d.Load.Arrivals, ResultWire: results.WireVersions, OrdersAhead: d.Load.Fixed()}
}

// fits checks the working set against the volume: admission checks it only
// when workingSetPerClient is set, not the profile's default. An existing
// claim's size is not known from the spec; the runner finds out.
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

// steadyOptionsOf are spec.analysis.steadyState's options.
func steadyOptionsOf(s *v1alpha1.StorageBenchmarkSpec) analysis.SteadyOptions {
	st := s.Analysis.SteadyState
	return analysis.SteadyOptions{Rounds: int(st.Rounds), RangePercent: float64(st.RangePercent), SlopePercent: float64(st.SlopePercent)}
}
