package plan

import "math"

const bytesPerMiB = 1 << 20

// unitOr is u, or IOPS when u is unset: the one place an unset unit is
// defaulted (the API's admission default sets the same value).
func unitOr(u RateUnit) RateUnit {
	if u == "" {
		return IOPS
	}
	return u
}

func (r *RateSteps) unit() RateUnit { return unitOr(r.Unit) }

func (c *CurveSpec) unit() RateUnit { return unitOr(c.Unit) }

// Unit is the unit the load's offered rates and achieved throughput are
// judged in: the rate's or the curve's unit, IOPS for queue-depth steps.
func (l Load) Unit() RateUnit {
	switch {
	case l.Rate != nil:
		return l.Rate.unit()
	case l.Curve != nil:
		return l.Curve.unit()
	}
	return IOPS
}

func (c *CurveSpec) percents() []int32 {
	if len(c.Percents) == 0 {
		return DefaultCurvePercents()
	}
	return c.Percents
}

// values returns the rate of each step in r's unit: the listed steps, or the
// generated ones (at most limit of them).
func (r *RateSteps) values(limit int) []int64 {
	if len(r.Steps) > 0 {
		return r.Steps
	}
	var out []int64
	v := r.Start
	if v <= 0 {
		return nil
	}
	for v <= r.Max && len(out) < limit {
		out = append(out, v)
		var next int64
		switch {
		case r.Increment > 0 && r.FactorPercent == 0:
			if r.Increment > r.Max-v {
				return out
			}
			next = v + r.Increment
		case r.FactorPercent > 100 && r.Increment == 0:
			f := int64(r.FactorPercent)
			if v > math.MaxInt64/f {
				return out
			}
			next = max(v*f/100, v+1)
		default:
			return out // invalid: Validate reports it
		}
		v = next
	}
	return out
}

// values returns the outstanding I/Os per client of each step: the listed
// steps, or Start doubled up to Max.
func (q *QueueDepthSteps) values() []int32 {
	if len(q.Steps) > 0 {
		return q.Steps
	}
	var out []int32
	for v := q.Start; v > 0 && v <= q.Max && len(out) <= MaxSteps; v *= 2 {
		out = append(out, v)
		if v > math.MaxInt32/2 {
			break
		}
	}
	return out
}

// modes returns how many of Rate, QueueDepth, Curve and Clients are set.
func (l Load) modes() int {
	n := 0
	if l.Rate != nil {
		n++
	}
	if l.QueueDepth != nil {
		n++
	}
	if l.Curve != nil {
		n++
	}
	if l.Clients != nil {
		n++
	}
	return n
}

// Steps returns the steps of l, for display ("step i/N") and for driving
// rate and queue-depth loads: every planned level Repeat times back to
// back (levels × Repeat steps), each run a step of its own with Level and
// Repetition set when Repeat > 1. A curve's steps after its unthrottled
// level are placeholders with PercentOfMax set and no offered rate: Next
// fills the rate in once the unthrottled runs have measured the maximum. l
// should be valid; Steps returns nil if it does not set exactly one mode.
func Steps(l Load) []Step {
	planned := levels(l)
	n := l.repeat()
	if n == 1 {
		return planned
	}
	steps := make([]Step, 0, len(planned)*n)
	for _, lv := range planned {
		for r := 1; r <= n; r++ {
			s := lv
			s.Index, s.Level, s.Repetition = len(steps), lv.Index, int32(r)
			steps = append(steps, s)
		}
	}
	return steps
}

// levels returns the planned load levels of l, each once, whatever
// l.Repeat: Steps without the repetition, Index numbering the levels.
func levels(l Load) []Step {
	if l.modes() != 1 {
		return nil
	}
	var steps []Step
	switch {
	case l.Rate != nil:
		for i, v := range l.Rate.values(MaxSteps + 1) {
			s := Step{Index: i}
			if l.Rate.unit() == MiBps {
				s.OfferedBytesPerSec = mibToBytes(v)
			} else {
				s.OfferedIOPS = v
			}
			steps = append(steps, s)
		}
	case l.QueueDepth != nil:
		for i, v := range l.QueueDepth.values() {
			steps = append(steps, Step{Index: i, QueueDepthPerClient: v})
		}
	case l.Clients != nil:
		for i, n := range l.Clients.Steps {
			s := Step{Index: i, ActiveClients: n, Unthrottled: l.Clients.PerClientIOPS == 0}
			if l.Clients.PerClientIOPS > 0 {
				s.OfferedIOPS = l.Clients.PerClientIOPS * int64(n)
			}
			steps = append(steps, s)
		}
	case l.Curve != nil:
		steps = append(steps, Step{Index: 0, Unthrottled: true})
		if l.Curve.ClientBoundCheck {
			steps = append(steps, Step{Index: 1, Unthrottled: true, ClientBoundCheck: true})
		}
		for _, p := range l.Curve.percents() {
			steps = append(steps, Step{Index: len(steps), PercentOfMax: p})
		}
	}
	return steps
}

// TotalSteps returns the most steps l may run: len(Steps(l)), times
// ExtendUntilSteady when every planned step might be run again until it is
// steady. It bounds the step records a run may have and how long it may
// take.
func TotalSteps(l Load) int { return len(Steps(l)) * l.runsUntilSteady() }

// PlannedSteps is the number of steps l plans once ran, the steps ordered
// so far in order, has been run: len(Steps(l)) plus the reruns among them
// (steps that Supersede the one before). It is what "step i/N" displays.
func PlannedSteps(l Load, ran []Step) int {
	n := len(Steps(l))
	for _, s := range ran {
		if s.Supersedes() {
			n++
		}
	}
	return n
}

// mibToBytes converts MiB to bytes, saturating instead of overflowing.
func mibToBytes(v int64) int64 {
	if v > math.MaxInt64/bytesPerMiB {
		return math.MaxInt64
	}
	return v * bytesPerMiB
}
