package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/storagebench/storagebench/internal/results"
)

// BaselineVersion is the version of the pinned baseline format this code
// writes and reads.
const BaselineVersion = 1

// Limits of a pinned baseline: at most a benchmark's steps, each at most a
// timeline's windows, each sample a number a measurement can be.
const (
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

// Baseline is a run's per-second samples kept apart from the run, so that
// later runs are compared with it after the run itself is gone: a pinned
// baseline.
type Baseline struct {
	// Version is BaselineVersion.
	Version int `json:"version"`
	// Source names the run the samples are from, for messages.
	Source string `json:"source"`
	// Fingerprint identifies what the run measured (its workload, clients
	// and load): only a run with the same fingerprint is compared with it.
	Fingerprint string `json:"fingerprint"`
	// Steps are the run's steps that count, in order.
	Steps []StepSamples `json:"steps"`
}

// Encode writes b as JSON.
func (b Baseline) Encode() ([]byte, error) { return json.Marshal(b) }

// DecodeBaseline reads a pinned baseline strictly: unknown fields, another
// version, too many steps or samples, or samples that are not finite
// non-negative numbers are refused. The data is a tenant's: nothing in it
// is trusted.
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
	case b.Version != BaselineVersion:
		return Baseline{}, fmt.Errorf("%w: version %d, want %d", ErrInvalidBaseline, b.Version, BaselineVersion)
	case b.Fingerprint == "":
		return Baseline{}, fmt.Errorf("%w: no fingerprint", ErrInvalidBaseline)
	case len(b.Steps) == 0 || len(b.Steps) > maxBaselineSteps:
		return Baseline{}, fmt.Errorf("%w: %d steps, want 1..%d", ErrInvalidBaseline, len(b.Steps), maxBaselineSteps)
	}
	for i, s := range b.Steps {
		if len(s.Label) > maxBaselineLabel {
			return Baseline{}, fmt.Errorf("%w: step %d has a label of %d bytes, want at most %d", ErrInvalidBaseline, i, len(s.Label), maxBaselineLabel)
		}
		if s.Planned != i {
			return Baseline{}, fmt.Errorf("%w: step %d is numbered %d", ErrInvalidBaseline, i, s.Planned)
		}
		if s.Offered < 0 || s.Offered > maxBaselineOffered || math.IsNaN(s.Offered) {
			return Baseline{}, fmt.Errorf("%w: step %d offered %v", ErrInvalidBaseline, i, s.Offered)
		}
		for _, xs := range [][]float64{s.IOPS, s.P99Ns} {
			if len(xs) > maxBaselineSamples {
				return Baseline{}, fmt.Errorf("%w: step %d has %d samples, want at most %d", ErrInvalidBaseline, i, len(xs), maxBaselineSamples)
			}
			for _, x := range xs {
				if math.IsNaN(x) || x < 0 || x > maxBaselineSample {
					return Baseline{}, fmt.Errorf("%w: step %d has a sample %v", ErrInvalidBaseline, i, x)
				}
			}
		}
	}
	return b, nil
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

// RunStep is a recorded step of a run, as SamplesOf reads it.
type RunStep struct {
	// Index is the step's index in its run; Label names it.
	Index int
	Label string
	// Superseded: a rerun stands for it (load.extendUntilSteady).
	Superseded bool
	// Offered is the load it offered (StepSamples.Offered).
	Offered float64
	// IOPS and P99Ns are TimelineSamples'.
	IOPS, P99Ns []float64
}

// SamplesOf are a run's steps as a comparison matches them: the steps that
// count, numbered in order (Planned), so that two runs of the same load
// pair up step by step whatever reruns either needed.
func SamplesOf(steps []RunStep) []StepSamples {
	var out []StepSamples
	for _, s := range steps {
		if s.Superseded {
			continue
		}
		out = append(out, StepSamples{Planned: len(out), Index: s.Index, Label: s.Label, Offered: s.Offered, IOPS: s.IOPS, P99Ns: s.P99Ns})
	}
	return out
}
