// Package volumeoperations runs VolumeOperationsBenchmarks: for each step
// of concurrency N and each chosen operation in turn, it prepares what the
// operation starts from (untimed), starts N of it at once, times each from
// the operator's request to the watch event that shows it done, records
// the step, and deletes everything the step made before the next one. The
// figures come from internal/volops; this package observes, decides with
// it, and applies.
//
// Why the operator's clock and not the API's timestamps: creation
// timestamps and condition times have a resolution of one second, and
// these operations take about one. The operator takes both ends on its own
// clock: the instant before it sends a request, and the instant its watch
// delivers the object showing the transition, so a figure includes the
// API server's and the watch's latency (milliseconds here), and no clock
// skew. A watch is started for each operation step alone, before its
// requests, so no transition is missed; the timings live in the manager's
// memory, and a manager that restarts during an operation step runs that
// step again from the start (at most maxAttempts times).
package volumeoperations

import (
	"fmt"
	"strconv"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// Labels on every object a VolumeOperationsBenchmark creates, besides
// exchange.LabelManagedBy (the manager's cache holds only objects with
// it). Not exchange.LabelBenchmark: those would wake the
// StorageBenchmark of the same name.
const (
	// LabelBenchmark names the VolumeOperationsBenchmark.
	LabelBenchmark = "storagebench.io/operations-benchmark"
	// LabelPhase is the operation step, "<step>-<operation>".
	LabelPhase = "storagebench.io/operations-phase"
	// LabelTimed is "true" on the objects whose transition is timed (not
	// on what an operation starts from).
	LabelTimed = "storagebench.io/timed"
	// LabelIndex is a timed object's index in its operation step.
	LabelIndex = "storagebench.io/index"
)

// codes abbreviate the operations in object names, which must fit 63
// characters after a benchmark name of at most 40.
var codes = map[v1alpha1.VolumeOperation]string{
	v1alpha1.OperationProvision:         "prov",
	v1alpha1.OperationAttach:            "att",
	v1alpha1.OperationSnapshot:          "snap",
	v1alpha1.OperationCloneFromSnapshot: "clsn",
	v1alpha1.OperationCloneFromVolume:   "clvol",
	v1alpha1.OperationExpand:            "exp",
	v1alpha1.OperationDelete:            "del",
}

// phase is one operation step: the operation at one concurrency.
type phase struct {
	step        int // index in spec.concurrency
	op          v1alpha1.VolumeOperation
	concurrency int
}

// phaseOf is the p-th operation step of b: the steps in turn, in each the
// operations in spec order.
func phaseOf(b *v1alpha1.VolumeOperationsBenchmark, p int) (phase, bool) {
	ops := len(b.Spec.Operations)
	if p < 0 || ops == 0 || p >= ops*len(b.Spec.Concurrency) {
		return phase{}, false
	}
	k := p / ops
	return phase{step: k, op: b.Spec.Operations[p%ops], concurrency: int(b.Spec.Concurrency[k])}, true
}

// phases is how many operation steps b runs.
func phases(b *v1alpha1.VolumeOperationsBenchmark) int {
	return len(b.Spec.Operations) * len(b.Spec.Concurrency)
}

func (ph phase) label() string { return fmt.Sprintf("%d-%s", ph.step, codes[ph.op]) }

// timedName is the i-th timed object of ph.
func timedName(b *v1alpha1.VolumeOperationsBenchmark, ph phase, i int) string {
	return fmt.Sprintf("%s-%d-%s-%d", b.Name, ph.step, codes[ph.op], i)
}

// sourceName is ph's source claim (clones) and its snapshot
// (cloneFromSnapshot).
func sourceName(b *v1alpha1.VolumeOperationsBenchmark, ph phase) string {
	return fmt.Sprintf("%s-%d-%s-src", b.Name, ph.step, codes[ph.op])
}

// labelsOf are the labels of ph's objects; i < 0 for an untimed one.
func labelsOf(b *v1alpha1.VolumeOperationsBenchmark, ph phase, i int) map[string]string {
	l := map[string]string{
		exchange.LabelManagedBy: exchange.ManagedBy,
		LabelBenchmark:          b.Name,
		LabelPhase:              ph.label(),
	}
	if i >= 0 {
		l[LabelTimed] = "true"
		l[LabelIndex] = strconv.Itoa(i)
	}
	return l
}
