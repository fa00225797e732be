package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/storagebench/storagebench/internal/workload"
)

// Validate checks a load against the topology and workload it will run with
// and returns the first violated rule as a *workload.FieldError, or nil. It
// checks, in this order: the topology (clients.count, clients.jobsPerClient),
// the workload (workload.Validate), then the load (mode, steps, repeat,
// durations, stop rules).
func Validate(l Load, t Topology, w workload.Spec) error {
	if err := ValidateFor(t, w); err != nil {
		return err
	}
	return validateLoad(l, &t, &w)
}

// ValidateFor checks what every client's plan must satisfy, whatever the
// load: the topology, the workload (workload.Validate), and a working set
// that gives each fio job at least one block. Divide and the runner's
// layout rely on it and do not check again.
func ValidateFor(t Topology, w workload.Spec) error {
	if err := validateTopology(t); err != nil {
		return err
	}
	if err := workload.Validate(w); err != nil {
		return err
	}
	if jobs, bs := int64(t.JobsPerClient), w.BlockSizeBytes; w.WorkingSetBytesPerClient/jobs < bs {
		return fe("workload.workingSetBytesPerClient", strconv.FormatInt(w.WorkingSetBytesPerClient, 10),
			fmt.Sprintf("must be at least one block per fio job: %d jobs per client (clients.jobsPerClient) × %d-byte blocks = %d bytes",
				jobs, bs, jobs*bs))
	}
	return nil
}

func validateTopology(t Topology) error {
	if t.Clients < 1 || t.Clients > MaxClients {
		return fe("clients.count", i64(int64(t.Clients)), "must be between 1 and 1000")
	}
	if t.JobsPerClient < 1 || t.JobsPerClient > MaxJobsPerClient {
		return fe("clients.jobsPerClient", i64(int64(t.JobsPerClient)), "must be between 1 and 64")
	}
	return nil
}

// validateLoad checks l on its own; with t and w non-nil it also checks the
// rules that depend on them.
func validateLoad(l Load, t *Topology, w *workload.Spec) error {
	if n := l.modes(); n != 1 {
		var set []string
		if l.Rate != nil {
			set = append(set, "rate")
		}
		if l.QueueDepth != nil {
			set = append(set, "queueDepth")
		}
		if l.Curve != nil {
			set = append(set, "curve")
		}
		if l.Clients != nil {
			set = append(set, "clients")
		}
		v := "none"
		if n > 1 {
			v = strings.Join(set, " and ")
		}
		return fe("load", v, "must set exactly one of rate, queueDepth, curve or clients")
	}
	var err error
	switch {
	case l.Rate != nil:
		err = validateRate(l.Rate, t, w)
	case l.QueueDepth != nil:
		err = validateQueueDepth(l.QueueDepth, t, w)
	case l.Curve != nil:
		err = validateCurve(l.Curve)
	case l.Clients != nil:
		err = validateClientSteps(l.Clients, t, w)
	}
	if err != nil {
		return err
	}
	if err := validateRepeat(l); err != nil {
		return err
	}
	if l.StepDuration < MinStepDuration || l.StepDuration > MaxStepDuration {
		return fe("load.stepDuration", l.StepDuration.String(), "must be between 5s and 24h")
	}
	if l.RampTime < 0 || l.RampTime >= l.StepDuration {
		return fe("load.rampTime", l.RampTime.String(),
			fmt.Sprintf("must be at least 0 and shorter than stepDuration (%s)", l.StepDuration))
	}
	switch l.Arrivals {
	case "", Uniform:
	case Poisson:
		if l.QueueDepth != nil {
			return fe("load.arrivals", string(l.Arrivals), "needs an offered rate: use load.rate or load.curve, not load.queueDepth")
		}
		if l.Clients != nil && l.Clients.PerClientIOPS == 0 {
			return fe("load.arrivals", string(l.Arrivals), "needs an offered rate: set load.clients.perClientIOPS")
		}
	default:
		return fe("load.arrivals", strconv.Quote(string(l.Arrivals)), "must be Uniform or Poisson")
	}
	return validateStop(l, w)
}

// validateRepeat checks Repeat and ExtendUntilSteady and, once for every
// mode, that the most runs they make (levels × Repeat × ExtendUntilSteady)
// stay within MaxSteps: each run is a step.
func validateRepeat(l Load) error {
	if l.Repeat < 0 || l.Repeat > MaxRepeat {
		return fe("load.repeat", i64(int64(l.Repeat)), "must be between 1 and 10")
	}
	if l.ExtendUntilSteady < 0 || l.ExtendUntilSteady > MaxRunsUntilSteady {
		return fe("load.extendUntilSteady.maxRuns", i64(int64(l.ExtendUntilSteady)), "must be between 2 and 10")
	}
	planned, n, ext := len(levels(l)), l.repeat(), l.runsUntilSteady()
	if runs := planned * n; runs > MaxSteps {
		return fe("load.repeat", i64(int64(n)), fmt.Sprintf(
			"must leave at most %d steps in all: %d planned steps × %d runs each = %d runs, and every run is a step; lower repeat or plan fewer steps",
			MaxSteps, planned, n, runs))
	}
	if runs := planned * n * ext; runs > MaxSteps {
		return fe("load.extendUntilSteady.maxRuns", i64(int64(ext)), fmt.Sprintf(
			"must leave at most %d steps in all: %d planned steps × at most %d runs until steady = %d runs, and every run is a step; lower maxRuns or plan fewer steps",
			MaxSteps, planned*n, ext, runs))
	}
	return nil
}

func validateUnit(field string, u RateUnit) error {
	if u != "" && u != IOPS && u != MiBps {
		return fe(field, strconv.Quote(string(u)), "must be IOPS or MiBps")
	}
	return nil
}

func validateRate(r *RateSteps, t *Topology, w *workload.Spec) error {
	if err := validateUnit("load.rate.unit", r.Unit); err != nil {
		return err
	}
	unit := r.unit()
	var minimum int64
	var why string
	if t != nil && w != nil {
		minimum, why = MinimumRate(unit, *t, *w), whyMinimum(unit, *t, *w)
	}
	checkMin := func(field string, v int64) error {
		if v < minimum {
			return fe(field, i64(v), fmt.Sprintf("must be at least %d %s: %s", minimum, unit, why))
		}
		return nil
	}

	if len(r.Steps) > 0 {
		for _, f := range []struct {
			name string
			v    int64
		}{{"start", r.Start}, {"increment", r.Increment}, {"factorPercent", int64(r.FactorPercent)}, {"max", r.Max}} {
			if f.v != 0 {
				return fe("load.rate."+f.name, i64(f.v), "must be 0 when steps are listed")
			}
		}
		if len(r.Steps) > MaxSteps {
			return fe("load.rate.steps", fmt.Sprintf("%d steps", len(r.Steps)), "must list at most 100 steps")
		}
		for i, v := range r.Steps {
			field := fmt.Sprintf("load.rate.steps[%d]", i)
			switch {
			case v <= 0:
				return fe(field, i64(v), "must be greater than 0")
			case v > MaxRate:
				return fe(field, i64(v), fmt.Sprintf("must be at most %d", int64(MaxRate)))
			case i > 0 && v <= r.Steps[i-1]:
				return fe(field, i64(v), fmt.Sprintf("must be greater than the previous step (%d): steps are strictly increasing", r.Steps[i-1]))
			}
			if err := checkMin(field, v); err != nil {
				return err
			}
		}
		return nil
	}

	switch {
	case r.Start <= 0:
		return fe("load.rate.start", i64(r.Start), "must be greater than 0 (or list steps)")
	case r.Start > MaxRate:
		return fe("load.rate.start", i64(r.Start), fmt.Sprintf("must be at most %d", int64(MaxRate)))
	case r.Increment < 0:
		return fe("load.rate.increment", i64(r.Increment), "must be greater than 0")
	case r.Increment == 0 && r.FactorPercent == 0:
		return fe("load.rate.increment", "0", "must be greater than 0 when factorPercent is 0: set exactly one of increment or factorPercent")
	case r.Increment > 0 && r.FactorPercent != 0:
		return fe("load.rate.factorPercent", i64(int64(r.FactorPercent)), "must be 0 when increment is set: set exactly one of increment or factorPercent")
	case r.Increment == 0 && (r.FactorPercent <= 100 || r.FactorPercent > MaxFactorPercent):
		return fe("load.rate.factorPercent", i64(int64(r.FactorPercent)), "must be between 101 (×1.01 per step) and 10000 (×100 per step)")
	case r.Max < r.Start:
		return fe("load.rate.max", i64(r.Max), fmt.Sprintf("must be at least start (%d)", r.Start))
	case r.Max > MaxRate:
		return fe("load.rate.max", i64(r.Max), fmt.Sprintf("must be at most %d", int64(MaxRate)))
	}
	if n := len(r.values(MaxSteps + 1)); n > MaxSteps {
		return fe("load.rate.max", i64(r.Max), "must leave at most 100 generated steps: raise increment or factorPercent, or lower max")
	}
	return checkMin("load.rate.start", r.Start)
}

// validateClientSteps checks a scale-out sweep: its client counts, within
// the topology t when known, and its rate per client, at least the
// minimum a client of w's jobs needs (MinimumRate).
func validateClientSteps(c *ClientSteps, t *Topology, w *workload.Spec) error {
	if len(c.Steps) == 0 || len(c.Steps) > MaxSteps {
		return fe("load.clients.steps", fmt.Sprintf("%d steps", len(c.Steps)), "must list 1 to 100 steps")
	}
	for i, n := range c.Steps {
		field := fmt.Sprintf("load.clients.steps[%d]", i)
		switch {
		case n < 1 || n > MaxClients:
			return fe(field, i64(int64(n)), "must be between 1 and 1000")
		case t != nil && n > t.Clients:
			return fe(field, i64(int64(n)), fmt.Sprintf("must be at most clients.count (%d): every step runs some of the client pods the benchmark creates", t.Clients))
		case i > 0 && n <= c.Steps[i-1]:
			return fe(field, i64(int64(n)), "must be greater than the step before: steps are strictly increasing")
		}
	}
	switch r := c.PerClientIOPS; {
	case r < 0 || r > MaxRate:
		return fe("load.clients.perClientIOPS", i64(r), fmt.Sprintf("must be between 1 and %d", int64(MaxRate)))
	case r > 0 && t != nil && w != nil:
		// Every step's total over its running clients' jobs, as Divide
		// divides it: the minimum grows faster than the clients (each
		// direction's share is rounded down).
		for _, n := range c.Steps {
			running := Topology{Clients: n, JobsPerClient: t.JobsPerClient}
			if need := MinimumRate(IOPS, running, *w); r*int64(n) < need {
				return fe("load.clients.perClientIOPS", i64(r), fmt.Sprintf("must be at least %d: the step of %d clients offers %d IOPS, and %s",
					(need+int64(n)-1)/int64(n), n, r*int64(n), whyMinimum(IOPS, running, *w)))
			}
		}
	}
	return nil
}

func validateQueueDepth(q *QueueDepthSteps, t *Topology, w *workload.Spec) error {
	if w != nil && w.IOEngine.Synchronous() {
		return fe("workload.ioEngine", strconv.Quote(string(w.IOEngine)),
			"must be libaio, io_uring or posixaio with queue-depth steps: synchronous engines keep one I/O in flight per job, so raising the queue depth would change nothing")
	}
	minDepth, why := int32(1), "must be greater than 0"
	if t != nil {
		minDepth = t.JobsPerClient
		why = fmt.Sprintf("must be at least jobsPerClient (%d): every fio job needs at least one outstanding I/O", t.JobsPerClient)
	}
	check := func(field string, v int32) error {
		switch {
		case v < 1 || v < minDepth:
			return fe(field, i64(int64(v)), why)
		case v > MaxQueueDepthPerClient:
			return fe(field, i64(int64(v)), "must be at most 4096 outstanding I/Os per client")
		}
		return nil
	}
	if len(q.Steps) > 0 {
		if q.Start != 0 {
			return fe("load.queueDepth.start", i64(int64(q.Start)), "must be 0 when steps are listed")
		}
		if q.Max != 0 {
			return fe("load.queueDepth.max", i64(int64(q.Max)), "must be 0 when steps are listed")
		}
		if len(q.Steps) > MaxSteps {
			return fe("load.queueDepth.steps", fmt.Sprintf("%d steps", len(q.Steps)), "must list at most 100 steps")
		}
		for i, v := range q.Steps {
			field := fmt.Sprintf("load.queueDepth.steps[%d]", i)
			if err := check(field, v); err != nil {
				return err
			}
			if i > 0 && v <= q.Steps[i-1] {
				return fe(field, i64(int64(v)), fmt.Sprintf("must be greater than the previous step (%d): steps are strictly increasing", q.Steps[i-1]))
			}
		}
		return nil
	}
	if q.Start < 1 {
		return fe("load.queueDepth.start", i64(int64(q.Start)), "must be greater than 0 (or list steps)")
	}
	if err := check("load.queueDepth.start", q.Start); err != nil {
		return err
	}
	if q.Max < q.Start {
		return fe("load.queueDepth.max", i64(int64(q.Max)), fmt.Sprintf("must be at least start (%d)", q.Start))
	}
	return check("load.queueDepth.max", q.Max)
}

func validateCurve(c *CurveSpec) error {
	if err := validateUnit("load.curve.unit", c.Unit); err != nil {
		return err
	}
	most, why := MaxSteps-1, "with the unthrottled step, at most 100 steps"
	if c.ClientBoundCheck {
		most, why = MaxSteps-2, "with the unthrottled step and the client-bound check, at most 100 steps; 99 with load.curve.clientBoundCheck false"
	}
	if len(c.Percents) > most {
		return fe("load.curve.percents", fmt.Sprintf("%d values", len(c.Percents)), fmt.Sprintf("must list at most %d (%s)", most, why))
	}
	for i, p := range c.Percents {
		field := fmt.Sprintf("load.curve.percents[%d]", i)
		if p < 1 || p > 100 {
			return fe(field, i64(int64(p)), "must be between 1 and 100")
		}
		if i > 0 && p <= c.Percents[i-1] {
			return fe(field, i64(int64(p)), fmt.Sprintf("must be greater than the previous percent (%d): percents are strictly increasing", c.Percents[i-1]))
		}
	}
	return nil
}

func validateStop(l Load, w *workload.Spec) error {
	if ls := l.Stop.Latency; ls != nil {
		if !slices.Contains(LatencyMetrics(), ls.Metric) {
			return fe("load.stop.latency.metric", strconv.Quote(string(ls.Metric)), "must be one of mean, p50, p90, p99, p99.9")
		}
		if !slices.Contains(LatencyOperations(), ls.Operation) {
			return fe("load.stop.latency.operation", strconv.Quote(string(ls.Operation)), "must be one of read, write, total, worst, sync")
		}
		if w != nil && ls.Operation == Read && !w.HasReads() {
			return fe("load.stop.latency.operation", `"read"`, "must be write, total or worst: the workload does no reads (readPercent 0), so the rule could never fire")
		}
		if w != nil && ls.Operation == Sync && !w.Sync.Call() {
			return fe("load.stop.latency.operation", `"sync"`, "needs workload.sync fsync or fdatasync: the workload makes no sync calls, so the rule could never fire")
		}
		if w != nil && ls.Operation == Write && !w.HasWrites() {
			return fe("load.stop.latency.operation", `"write"`, "must be read, total or worst: the workload does no writes (readPercent 100), so the rule could never fire")
		}
		if ls.LimitMicroseconds <= 0 || ls.LimitMicroseconds > MaxLatencyLimitMicroseconds {
			return fe("load.stop.latency.limitMicroseconds", i64(ls.LimitMicroseconds), "must be greater than 0 and at most 3600000000 (1 h)")
		}
	}
	sp := l.Stop.SaturationPercent
	if sp < 0 || sp > 100 {
		return fe("load.stop.saturationPercent", i64(int64(sp)), "must be between 0 (off) and 100")
	}
	if sp > 0 && l.QueueDepth != nil {
		return fe("load.stop.saturationPercent", i64(int64(sp)),
			"must be 0 with queue-depth steps: saturation compares the achieved rate with the offered rate, and queue-depth steps offer none")
	}
	if sp > 0 && l.Clients != nil && l.Clients.PerClientIOPS == 0 {
		return fe("load.stop.saturationPercent", i64(int64(sp)),
			"needs an offered rate: set load.clients.perClientIOPS (unthrottled steps offer none)")
	}
	if ms := l.Stop.MaxStallSeconds; ms < 0 || ms > MaxStallLimitSeconds {
		return fe("load.stop.maxStall", i64(int64(ms))+"s", "must be between 0 (off) and 3600 s")
	}
	return nil
}

func fe(field, value, allowed string) *workload.FieldError {
	return &workload.FieldError{Field: field, Value: value, Allowed: allowed}
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }
