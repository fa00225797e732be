package analysis

import (
	"math"

	"github.com/storagebench/storagebench/internal/results"
)

const (
	// QueueFullPercent is how full the clients' queues must have been, on
	// average, for a step that did not sustain its rate to be queue-bound.
	QueueFullPercent = 90
	// ClientBoundGainPercent is the gain of the client-bound check above
	// which a curve's maximum is the clients', not the storage's.
	ClientBoundGainPercent = 5
)

// InFlight is the mean number of I/Os a step had in flight, by Little's
// law: its achieved IOPS times its mean latency (fio's completion latency,
// from submission to completion), plus its sync calls' rate times their
// mean latency: a job waiting on an fdatasync has that call in flight, and
// a log's job is busy with a write or its call all the time.
func InFlight(a results.StepAggregate) float64 {
	return (a.Total.IOPS*a.Total.Latency.MeanNs + a.Sync.IOPS*a.Sync.Latency.MeanNs) / 1e9
}

// QueueFull reports whether the clients kept at least QueueFullPercent % of
// the outstanding I/O they were allowed in flight: more was not possible, so
// the rate they achieved is bound by their queue depth (Little's law: rate =
// in flight / latency). outstanding 0 (unknown) is never full.
func QueueFull(a results.StepAggregate, outstanding int64) bool {
	return outstanding > 0 && InFlight(a)*100 >= QueueFullPercent*float64(outstanding)
}

// ClientBound compares a curve's maximum with the same unthrottled step run
// at twice the outstanding I/O: storage that is the bottleneck gives no
// more (only more latency); clients that are gain.
type ClientBound struct {
	// MaximumSteps and CheckSteps are the step numbers compared: the
	// unthrottled runs and the runs of the check (successful ones only).
	MaximumSteps, CheckSteps []int
	// Maximum and Check are their mean achieved throughput, in the curve's
	// unit (Options.Throughput).
	Maximum, Check float64
	// GainPercent is 100 × (Check − Maximum) / Maximum.
	GainPercent float64
	// Bound: GainPercent is above ClientBoundGainPercent.
	Bound bool
}

// clientBoundOf judges the check once both sides have a successful run.
func clientBoundOf(in []StepInput, steps []StepAnalysis, opts Options) *ClientBound {
	var cb ClientBound
	var sumMax, sumCheck float64
	for i := range in {
		s := &steps[i]
		if !s.evidence() || !in[i].Unthrottled {
			continue
		}
		if in[i].ClientBoundCheck {
			cb.CheckSteps = append(cb.CheckSteps, s.Step)
			sumCheck += throughputOf(s, opts)
		} else {
			cb.MaximumSteps = append(cb.MaximumSteps, s.Step)
			sumMax += throughputOf(s, opts)
		}
	}
	if len(cb.MaximumSteps) == 0 || len(cb.CheckSteps) == 0 || sumMax <= 0 {
		return nil
	}
	cb.Maximum = sumMax / float64(len(cb.MaximumSteps))
	cb.Check = sumCheck / float64(len(cb.CheckSteps))
	cb.GainPercent = 100 * (cb.Check - cb.Maximum) / cb.Maximum
	cb.Bound = cb.GainPercent > ClientBoundGainPercent
	return &cb
}

// UnevenClientsPercent is the coefficient of variation of the clients'
// IOPS in a step above which the step is marked as unevenly shared: at a
// CV of 10 % the busiest of three clients gets about a quarter more than
// the idlest, where the operator divides every rate evenly. An uneven
// unthrottled step says the storage (or the clients' nodes) served the
// clients unequally; an uneven rate step, that some clients could not
// keep up.
const UnevenClientsPercent = 10

// Uneven says whether a step whose clients' IOPS had a coefficient of
// variation of cvPercent was unevenly shared. The CV is rounded to a whole
// percent first, as status shows it, so a report and status agree.
func Uneven(cvPercent float64) bool { return math.Round(cvPercent) > UnevenClientsPercent }
