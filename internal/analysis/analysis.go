package analysis

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/storagebench/storagebench/internal/results"
)

// Errors returned by Analyze, Options.Validate and ValidateObjective; the
// returned errors wrap them (test with errors.Is) and say what is wrong.
var (
	ErrInvalidOptions         = errors.New("invalid analysis options")
	ErrInvalidStep            = errors.New("invalid step input")
	ErrInvalidSelector        = errors.New("invalid latency selector")
	ErrNoObjectiveKind        = errors.New("objective sets no kind")
	ErrMultipleObjectiveKinds = errors.New("objective sets more than one kind")
	ErrInvalidThreshold       = errors.New("invalid objective threshold")
	ErrDuplicateObjective     = errors.New("duplicate objective name")
)

// Throughput axes of the ops–latency curve.
const (
	ThroughputIOPS  = "iops"
	ThroughputBytes = "bytes"
)

// Defaults applied by Options.WithDefaults.
const (
	DefaultLatencyTarget     = time.Millisecond
	DefaultSaturationPercent = 90
	DefaultThroughput        = ThroughputIOPS
)

// DefaultTargetSelector is the latency the "performance @ latency target" and
// the knee are judged on: the mean (average response time) over all I/O, as
// the published "performance @ 1 ms" figures use.
var DefaultTargetSelector = LatencySelector{Metric: MetricMean, Operation: OperationTotal}

// StepInput is one step of a run: what was measured and what was offered.
type StepInput struct {
	Aggregate results.StepAggregate
	// OfferedIOPS is the total offered rate over all clients; 0 means the
	// step was not rate-limited in IOPS.
	OfferedIOPS int64
	// OfferedBytesPerSec is the total offered bandwidth; 0 means the step
	// was not rate-limited in bytes. When both are set, IOPS is used.
	OfferedBytesPerSec int64
	// Outstanding is how many I/Os the step's clients could keep in flight
	// (every job's depth, summed); 0 when unknown. See QueueFull.
	Outstanding int64
	// Unthrottled marks a curve's unthrottled step and ClientBoundCheck its
	// repetition at twice the outstanding I/O; see ClientBound.
	Unthrottled, ClientBoundCheck bool
	// Superseded marks a run of a step that was judged not steady and run
	// again (plan.Load.ExtendUntilSteady): the later run stands for the
	// planned step, and this one, like a failed step, is reported but never
	// evidence.
	Superseded bool
	// Stall, when set, is the step's LongestStall, found while its
	// timeline's windows were at hand: a caller that keeps a step's
	// verdicts rather than its timeline (the operator) passes it, and the
	// step counts as having a timeline.
	Stall *Stall
}

// Options tunes the analysis. The zero value means the defaults.
type Options struct {
	// LatencyTarget is the latency of "performance @ target"; default 1 ms.
	LatencyTarget time.Duration
	// TargetSelector is the latency figure compared with LatencyTarget and
	// plotted as the curve's y; default mean over all I/O (the published
	// "performance @ 1 ms" uses the average response time).
	TargetSelector LatencySelector
	// SaturationPercent flags a rate-limited step as saturated when it
	// achieved less than this percentage of the offered load; default 90.
	SaturationPercent int32
	// Throughput is the curve's x axis: "iops" (default) or "bytes". It
	// also decides which throughput "performance @ target" maximises.
	Throughput string
	// Steady is the steady-state rule steps' timelines are judged by.
	Steady SteadyOptions
	// MaxVariationPercent bounds the coefficient of variation of a repeated
	// level's IOPS and p99 (LevelVariation.Stable); 0 means no limit.
	MaxVariationPercent float64
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.LatencyTarget == 0 {
		o.LatencyTarget = DefaultLatencyTarget
	}
	o.TargetSelector = o.TargetSelector.WithDefaults()
	o.Steady = o.Steady.WithDefaults()
	if o.SaturationPercent == 0 {
		o.SaturationPercent = DefaultSaturationPercent
	}
	if o.Throughput == "" {
		o.Throughput = DefaultThroughput
	}
	return o
}

// Validate checks o after applying the defaults.
func (o Options) Validate() error {
	o = o.WithDefaults()
	if o.LatencyTarget < 0 {
		return fmt.Errorf("%w: LatencyTarget must be positive, got %s", ErrInvalidOptions, o.LatencyTarget)
	}
	if err := o.TargetSelector.Validate(); err != nil {
		return fmt.Errorf("%w: TargetSelector: %w", ErrInvalidOptions, err)
	}
	if o.SaturationPercent < 0 || o.SaturationPercent > 100 {
		return fmt.Errorf("%w: SaturationPercent must be in 1..100, got %d", ErrInvalidOptions, o.SaturationPercent)
	}
	if v := o.MaxVariationPercent; math.IsNaN(v) || v < 0 || v > 100 {
		return fmt.Errorf("%w: MaxVariationPercent must be 0 (no limit) or in (0, 100], got %v", ErrInvalidOptions, v)
	}
	if o.Throughput != ThroughputIOPS && o.Throughput != ThroughputBytes {
		return fmt.Errorf("%w: Throughput must be %q or %q, got %q", ErrInvalidOptions, ThroughputIOPS, ThroughputBytes, o.Throughput)
	}
	return o.Steady.Validate()
}

// StepAnalysis is the verdict on one step, in input order.
type StepAnalysis struct {
	// Step is the step number of the aggregate.
	Step               int
	OfferedIOPS        int64
	OfferedBytesPerSec int64
	// AchievedIOPS and AchievedBytesPerSec are the step's totals over all
	// clients and both directions.
	AchievedIOPS        float64
	AchievedBytesPerSec float64
	// AchievedPercentOfOffered is 100 × achieved / offered in the offered
	// unit (IOPS when OfferedIOPS > 0, else bytes); 0 when unthrottled.
	AchievedPercentOfOffered float64
	// Saturated: a rate-limited, successful step achieved less than
	// SaturationPercent % of what was offered. Unthrottled and failed steps
	// are never saturated.
	Saturated bool
	// QueueFull: a saturated step whose clients kept at least
	// QueueFullPercent % of their Outstanding I/O in flight (InFlight).
	QueueFull bool
	// ClientBoundCheck repeats the input's: the step ran at twice the
	// outstanding I/O and is not a point of the curve (the knee).
	ClientBoundCheck bool
	// Knee marks the knee of the ops–latency curve (at most one step).
	Knee bool
	// LatencyNs is the TargetSelector latency of the step; HasLatency is
	// false (and LatencyNs 0) when the selected operation has no samples.
	LatencyNs  uint64
	HasLatency bool
	// Failed: the step carries errors and is not used as evidence for the
	// curve, the summary or the objectives.
	Failed bool
	// Superseded repeats the input's: a later run stands for this step,
	// which is not evidence either.
	Superseded bool
}

// evidence reports whether the step counts towards the curve, the summary,
// the client-bound check and the objectives: it neither failed nor was
// superseded by a later run.
func (s *StepAnalysis) evidence() bool { return !s.Failed && !s.Superseded }

// AtTarget is "performance @ latency target": the step with the highest
// achieved throughput whose selected latency is at or below the target.
type AtTarget struct {
	Step        int
	IOPS        float64
	BytesPerSec float64
	LatencyNs   uint64
}

// Summary is the per-run result. Step numbers are -1 when no step qualifies.
type Summary struct {
	// PeakIOPS is the highest achieved total IOPS of a successful step.
	PeakIOPS     float64
	PeakIOPSStep int
	// PeakBytesPerSec is the highest achieved total bandwidth.
	PeakBytesPerSec float64
	PeakBytesStep   int
	// LatencyAtPeakNs is the TargetSelector latency at the peak-IOPS step
	// (0 when that step has no samples for it).
	LatencyAtPeakNs uint64
	// AtTarget is nil when no step is at or below the latency target.
	AtTarget *AtTarget
	// KneeStep is the step at the knee of the curve, -1 when there is none.
	KneeStep int
}

// Result is everything Analyze derives from a run.
type Result struct {
	Steps   []StepAnalysis
	Summary Summary
	SLOs    []SLOResult
	// AllSLOsMet is true iff there is at least one objective and every
	// verdict is Met.
	AllSLOsMet bool
	// ClientBound is the curve's client-bound check; nil until both its
	// unthrottled step and the check have a successful run.
	ClientBound *ClientBound
}

// Analyze derives per-step verdicts, the run summary and the objectives'
// verdicts. It fails only on invalid options, objectives or offered loads;
// an empty or fully failed run is analysed (objectives not measurable).
func Analyze(steps []StepInput, opts Options, slos []Objective) (Result, error) {
	if err := opts.Validate(); err != nil {
		return Result{}, err
	}
	opts = opts.WithDefaults()
	for i, s := range steps {
		if s.OfferedIOPS < 0 || s.OfferedBytesPerSec < 0 {
			return Result{}, fmt.Errorf("%w: step %d (input %d): negative offered load (%d IOPS, %d B/s)",
				ErrInvalidStep, s.Aggregate.Step, i, s.OfferedIOPS, s.OfferedBytesPerSec)
		}
	}
	names := make(map[string]bool, len(slos))
	for i, o := range slos {
		if err := ValidateObjective(o); err != nil {
			return Result{}, fmt.Errorf("objective %d: %w", i, err)
		}
		if o.Name != "" {
			if names[o.Name] {
				return Result{}, fmt.Errorf("%w: %q", ErrDuplicateObjective, o.Name)
			}
			names[o.Name] = true
		}
	}

	res := Result{Steps: make([]StepAnalysis, len(steps))}
	for i := range steps {
		res.Steps[i] = analyzeStep(&steps[i], opts)
	}
	if k := kneeOf(res.Steps, opts); k >= 0 {
		res.Steps[k].Knee = true
	}
	res.Summary = summarize(res.Steps, opts)
	res.ClientBound = clientBoundOf(steps, res.Steps, opts)

	ev := newEvaluator(steps, res.Steps)
	res.SLOs = make([]SLOResult, len(slos))
	res.AllSLOsMet = len(slos) > 0
	for i, o := range slos {
		res.SLOs[i] = ev.evaluate(o)
		if res.SLOs[i].Verdict != Met {
			res.AllSLOsMet = false
		}
	}
	return res, nil
}

func analyzeStep(in *StepInput, opts Options) StepAnalysis {
	a := &in.Aggregate
	sa := StepAnalysis{
		Step:                a.Step,
		OfferedIOPS:         in.OfferedIOPS,
		OfferedBytesPerSec:  in.OfferedBytesPerSec,
		AchievedIOPS:        a.Total.IOPS,
		AchievedBytesPerSec: a.Total.BytesPerSec,
		Failed:              len(a.Errors) > 0,
		ClientBoundCheck:    in.ClientBoundCheck,
		Superseded:          in.Superseded,
	}
	sa.LatencyNs, sa.HasLatency = opts.TargetSelector.Of(*a)
	var achieved, offered float64
	switch {
	case in.OfferedIOPS > 0:
		achieved, offered = a.Total.IOPS, float64(in.OfferedIOPS)
	case in.OfferedBytesPerSec > 0:
		achieved, offered = a.Total.BytesPerSec, float64(in.OfferedBytesPerSec)
	default:
		return sa
	}
	sa.AchievedPercentOfOffered = 100 * achieved / offered
	// Compare without dividing so that exactly N % is never flagged.
	sa.Saturated = !sa.Failed && achieved*100 < float64(opts.SaturationPercent)*offered
	sa.QueueFull = sa.Saturated && QueueFull(*a, in.Outstanding)
	return sa
}

// throughputOf is the curve's x for a step.
func throughputOf(s *StepAnalysis, opts Options) float64 {
	if opts.Throughput == ThroughputBytes {
		return s.AchievedBytesPerSec
	}
	return s.AchievedIOPS
}

// kneeOf returns the index (in steps) of the knee, or -1.
func kneeOf(steps []StepAnalysis, opts Options) int {
	pts := make([]curvePoint, 0, len(steps))
	for i := range steps {
		s := &steps[i]
		if !s.evidence() || !s.HasLatency || s.ClientBoundCheck {
			continue
		}
		pts = append(pts, curvePoint{x: throughputOf(s, opts), y: float64(s.LatencyNs), index: i})
	}
	return kneeIndex(pts)
}

func summarize(steps []StepAnalysis, opts Options) Summary {
	sum := Summary{PeakIOPSStep: -1, PeakBytesStep: -1, KneeStep: -1}
	peakIOPS, peakBytes, best := -1, -1, -1
	target := uint64(opts.LatencyTarget)
	for i := range steps {
		s := &steps[i]
		if !s.evidence() {
			continue
		}
		if s.Knee {
			sum.KneeStep = s.Step
		}
		if s.AchievedIOPS > 0 && (peakIOPS < 0 || s.AchievedIOPS > steps[peakIOPS].AchievedIOPS) {
			peakIOPS = i
		}
		if s.AchievedBytesPerSec > 0 && (peakBytes < 0 || s.AchievedBytesPerSec > steps[peakBytes].AchievedBytesPerSec) {
			peakBytes = i
		}
		if s.HasLatency && s.LatencyNs <= target {
			if best < 0 {
				best = i
				continue
			}
			x, bx := throughputOf(s, opts), throughputOf(&steps[best], opts)
			// Highest throughput; on a tie the lower latency, then the
			// earlier step.
			if x > bx || (x == bx && s.LatencyNs < steps[best].LatencyNs) {
				best = i
			}
		}
	}
	if peakIOPS >= 0 {
		p := &steps[peakIOPS]
		sum.PeakIOPS, sum.PeakIOPSStep = p.AchievedIOPS, p.Step
		sum.LatencyAtPeakNs = p.LatencyNs
	}
	if peakBytes >= 0 {
		p := &steps[peakBytes]
		sum.PeakBytesPerSec, sum.PeakBytesStep = p.AchievedBytesPerSec, p.Step
	}
	if best >= 0 {
		b := &steps[best]
		sum.AtTarget = &AtTarget{Step: b.Step, IOPS: b.AchievedIOPS, BytesPerSec: b.AchievedBytesPerSec, LatencyNs: b.LatencyNs}
	}
	return sum
}
