package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/storagebench/storagebench/internal/results"
)

// Versions of the pinned baseline format. DecodeBaseline reads both.
//
//   - BaselineVersion (1) pins one run: its steps are Baseline.Steps
//     ("steps"). It is what a one-run baseline is written as, so that an
//     operator that reads only version 1 still reads it.
//   - BaselineVersionRuns (2) pins several runs of the same measurement:
//     Baseline.Runs ("runs"), 1 to 20 of them, each with its source and
//     steps. Several runs are what lets a comparison tell a regression from
//     the way unchanged storage varies between runs (CompareWithRuns),
//     which one run cannot show.
const (
	BaselineVersion     = 1
	BaselineVersionRuns = 2
)

// Limits of a pinned baseline: at most a benchmark's steps, each at most a
// timeline's windows, each sample a number a measurement can be.
const (
	// maxBaselineRuns bounds a version 2 baseline's runs: past a few tens
	// of runs the estimate of their spread gains nothing, and the runs'
	// samples must still fit a ConfigMap.
	maxBaselineRuns = 20
	// maxBaselineSource bounds a version 2 baseline's source names (a
	// namespace/name is at most 317 bytes).
	maxBaselineSource  = 512
	maxBaselineSteps   = 100
	maxBaselineSamples = results.MaxWindows
	maxBaselineLabel   = 128
	// maxBaselineSample bounds any sample: above a p99 of hours (1e13 ns)
	// and ten trillion IOPS nothing is a measurement. (Tiny values are
	// real: a window with one I/O in a long stall.)
	maxBaselineSample = 1e13
	// maxBaselineOffered is above any rate a spec can offer (a MiBps rate
	// in bytes per second included).
	maxBaselineOffered = 1e19
)

// ErrInvalidBaseline marks a pinned baseline that cannot be used.
var ErrInvalidBaseline = errors.New("invalid baseline")

// Baseline is a run's per-second samples, or several runs', kept apart from
// the runs, so that later runs are compared with them after the runs
// themselves are gone: a pinned baseline.
type Baseline struct {
	// Version is BaselineVersion for one run in Steps, BaselineVersionRuns
	// for runs in Runs.
	Version int `json:"version"`
	// Source names the run the samples are from (version 1), or the set of
	// runs (version 2), for messages.
	Source string `json:"source"`
	// Fingerprint identifies what the run measured (its workload, clients
	// and load): only a run with the same fingerprint is compared with it.
	// A version 2 baseline's runs all measured it.
	Fingerprint string `json:"fingerprint"`
	// Steps are the run's steps that count, in order (version 1 only).
	Steps []StepSamples `json:"steps,omitempty"`
	// Runs are the pinned runs (version 2 only), each as a version 1
	// baseline's Steps. PinnedRuns returns the runs of either version.
	Runs []BaselineRun `json:"runs,omitempty"`
}

// BaselineRun is one run of a version 2 pinned baseline.
type BaselineRun struct {
	// Source names the run, for messages.
	Source string `json:"source"`
	// Steps are the run's steps that count, in order, as run.Samples gives
	// them.
	Steps []StepSamples `json:"steps"`
}

// PinnedRuns are the baseline's runs whatever its version: Runs, or for
// version 1 the one run of Steps, named by Source. Callers that compare
// with several runs read the baseline through it alone. (DecodeBaseline
// does not fill Runs for version 1 itself: the Baseline it returns
// encodes back to the document it read.) The steps are shared with b, not
// copied.
func (b Baseline) PinnedRuns() []BaselineRun {
	if b.Runs != nil || b.Steps == nil {
		return b.Runs
	}
	return []BaselineRun{{Source: b.Source, Steps: b.Steps}}
}

// Encode writes b as JSON.
func (b Baseline) Encode() ([]byte, error) { return json.Marshal(b) }

// DecodeBaseline reads a pinned baseline of either version strictly:
// unknown fields, another version, the other version's field ("runs" in
// version 1, "steps" in version 2), too many runs, steps or samples, or
// samples that are not finite non-negative numbers are refused. Each run
// of version 2 is checked as version 1's steps are, with the same limits,
// and its source is at most 512 bytes. The data is a tenant's: nothing in
// it is trusted.
func DecodeBaseline(data []byte) (Baseline, error) {
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Baseline{}, fmt.Errorf("%w: %w", ErrInvalidBaseline, err)
	}
	if dec.More() {
		return Baseline{}, fmt.Errorf("%w: data after the baseline", ErrInvalidBaseline)
	}
	switch {
	case b.Version == BaselineVersion && b.Runs != nil:
		return Baseline{}, fmt.Errorf(`%w: version %d, want %d for a baseline of "runs" (version %d pins one run's "steps")`,
			ErrInvalidBaseline, b.Version, BaselineVersionRuns, BaselineVersion)
	case b.Version == BaselineVersionRuns && b.Steps != nil:
		return Baseline{}, fmt.Errorf(`%w: version %d, want %d for a baseline of "steps" (version %d pins "runs")`,
			ErrInvalidBaseline, b.Version, BaselineVersion, BaselineVersionRuns)
	case b.Version != BaselineVersion && b.Version != BaselineVersionRuns:
		return Baseline{}, fmt.Errorf("%w: version %d, want %d or %d", ErrInvalidBaseline, b.Version, BaselineVersion, BaselineVersionRuns)
	case b.Fingerprint == "":
		return Baseline{}, fmt.Errorf("%w: no fingerprint", ErrInvalidBaseline)
	}
	if b.Version == BaselineVersion {
		if err := checkBaselineSteps(b.Steps); err != nil {
			return Baseline{}, fmt.Errorf("%w: %w", ErrInvalidBaseline, err)
		}
		return b, nil
	}
	switch {
	case len(b.Runs) == 0 || len(b.Runs) > maxBaselineRuns:
		return Baseline{}, fmt.Errorf("%w: %d runs, want 1..%d", ErrInvalidBaseline, len(b.Runs), maxBaselineRuns)
	case len(b.Source) > maxBaselineSource:
		return Baseline{}, fmt.Errorf("%w: a source of %d bytes, want at most %d", ErrInvalidBaseline, len(b.Source), maxBaselineSource)
	}
	for r, run := range b.Runs {
		if len(run.Source) > maxBaselineSource {
			return Baseline{}, fmt.Errorf("%w: run %d has a source of %d bytes, want at most %d", ErrInvalidBaseline, r, len(run.Source), maxBaselineSource)
		}
		if err := checkBaselineSteps(run.Steps); err != nil {
			return Baseline{}, fmt.Errorf("%w: run %d: %w", ErrInvalidBaseline, r, err)
		}
	}
	return b, nil
}

// checkBaselineSteps checks one pinned run's steps: 1 to 100 of them,
// numbered in order, each with a label, load and samples a measurement can
// have.
func checkBaselineSteps(steps []StepSamples) error {
	if len(steps) == 0 || len(steps) > maxBaselineSteps {
		return fmt.Errorf("%d steps, want 1..%d", len(steps), maxBaselineSteps)
	}
	for i, s := range steps {
		if len(s.Label) > maxBaselineLabel {
			return fmt.Errorf("step %d has a label of %d bytes, want at most %d", i, len(s.Label), maxBaselineLabel)
		}
		if s.Planned != i {
			return fmt.Errorf("step %d is numbered %d", i, s.Planned)
		}
		if s.Offered < 0 || s.Offered > maxBaselineOffered || math.IsNaN(s.Offered) {
			return fmt.Errorf("step %d offered %v", i, s.Offered)
		}
		for _, xs := range [][]float64{s.IOPS, s.P99Ns} {
			if len(xs) > maxBaselineSamples {
				return fmt.Errorf("step %d has %d samples, want at most %d", i, len(xs), maxBaselineSamples)
			}
			for _, x := range xs {
				if math.IsNaN(x) || x < 0 || x > maxBaselineSample {
					return fmt.Errorf("step %d has a sample %v", i, x)
				}
			}
		}
	}
	return nil
}

// TimelineSamples are a step's samples from its merged timeline: the IOPS
// of every window, and the p99 completion latency (ns) of every window
// with I/O. A window is a second unless a long step was coarsened.
func TimelineSamples(tl results.Timeline) (iops, p99Ns []float64) {
	iops = make([]float64, len(tl.Windows))
	for k, w := range tl.Windows {
		iops[k] = w.IOPS
		if w.IOs > 0 {
			p99Ns = append(p99Ns, float64(w.Percentiles(99)[0]))
		}
	}
	return iops, p99Ns
}
