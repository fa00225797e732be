package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/storagebench/storagebench/internal/fio"
)

// CPU is what a client's step cost the CPU it ran on: fio's jobs' own time,
// from fio's report, and the container's CFS bandwidth over the step, from
// its cgroup. A client whose fio was busy, or whose container was
// throttled, measured its own CPU as much as the storage (Bound).
type CPU struct {
	// FioUs is fio's jobs' user and system CPU time together, µs (each
	// job's usr_cpu and sys_cpu times its run time).
	FioUs uint64 `json:"fioUs"`
	// RunUs is the longest job's run time, µs: the time FioUs was spent in.
	RunUs uint64 `json:"runUs"`
	// AvailableMilli is the CPU the jobs could use, in thousandths of a
	// CPU: one per job (a job is one thread), at most the CPUs the runner
	// may run on, at most the container's CPU limit.
	AvailableMilli uint64 `json:"availableMilli"`
	// Periods and ThrottledPeriods are the container's CFS periods during
	// the step and those in which it was throttled; ThrottledUs is how long
	// it was. All zero without a CPU limit (no periods are counted) or when
	// the runner cannot read its cgroup.
	Periods          uint64 `json:"periods,omitempty"`
	ThrottledPeriods uint64 `json:"throttledPeriods,omitempty"`
	ThrottledUs      uint64 `json:"throttledUs,omitempty"`
}

// FioCPU is the CPU fio's report says its jobs used, for a client that
// may use availableMilli thousandths of a CPU (AvailableCPU); the
// container's periods are the caller's to add.
func FioCPU(out *fio.Output, availableMilli uint64) CPU {
	c := CPU{AvailableMilli: availableMilli}
	var fioUs float64
	for _, j := range out.Jobs {
		run := float64(j.RuntimeMs) * 1000
		if pct := j.UsrCPU + j.SysCPU; pct > 0 && !math.IsInf(pct, 0) {
			fioUs += pct / 100 * run
		}
		c.RunUs = max(c.RunUs, j.RuntimeMs*1000)
	}
	c.FioUs = uint64(math.Round(min(fioUs, math.MaxUint64/2)))
	return c
}

// AvailableCPU is the CPU, in thousandths, that jobs fio jobs can use on
// cpus CPUs under a limit of limitMilli thousandths (0: none): a job is one
// thread.
func AvailableCPU(jobs, cpus int, limitMilli uint64) uint64 {
	a := uint64(max(min(jobs, cpus), 0)) * 1000
	if limitMilli > 0 {
		a = min(a, limitMilli)
	}
	return min(a, MaxJobsPerClient*1000)
}

// The bounds past which a client's step measured its own CPU.
const (
	// CPUBusyBoundPercent: fio's jobs used more than this share of the
	// CPU they could use, less than 40 % was left idle, the headroom
	// latency tests in the field ask of a load generator. A client busier
	// than that adds its own queueing to every completion it times.
	CPUBusyBoundPercent = 60
	// CPUThrottledBoundPercent: the container was throttled in more than
	// this share of its CFS periods. A throttled period holds every thread
	// of the container until the next one begins (up to 100 ms by
	// default): in 1 % of them it can be what sets a p99.
	CPUThrottledBoundPercent = 1
)

// Measured says the client reported its CPU at all.
func (c CPU) Measured() bool { return c.AvailableMilli > 0 && c.RunUs > 0 }

// BusyPercent is fio's CPU time over what it could have used in its run
// time, in percent (0 when not measured).
func (c CPU) BusyPercent() float64 {
	if !c.Measured() {
		return 0
	}
	return float64(c.FioUs) * 100 * 1000 / (float64(c.RunUs) * float64(c.AvailableMilli))
}

// ThrottledPercent is the share of the container's CFS periods in which it
// was throttled, in percent (0 without periods).
func (c CPU) ThrottledPercent() float64 {
	if c.Periods == 0 {
		return 0
	}
	return float64(c.ThrottledPeriods) * 100 / float64(c.Periods)
}

// Bound says whether the client's step was past a bound: its fio busy
// beyond CPUBusyBoundPercent, or its container throttled beyond
// CPUThrottledBoundPercent.
func (c CPU) Bound() bool {
	return c.BusyPercent() > CPUBusyBoundPercent || c.ThrottledPercent() > CPUThrottledBoundPercent
}

func (c CPU) validate() error {
	switch {
	case c.ThrottledPeriods > c.Periods:
		return fmt.Errorf("cpu: %d throttled periods of %d", c.ThrottledPeriods, c.Periods)
	case c.AvailableMilli > MaxJobsPerClient*1000:
		return fmt.Errorf("cpu: %d thousandths of a CPU available is above %d jobs' worth", c.AvailableMilli, MaxJobsPerClient)
	}
	return nil
}

// ClientCPU is the step's clients' CPU: the busiest and the most throttled
// client, and those past a bound (CPU.Bound). Zero when no client reported
// its CPU.
type ClientCPU struct {
	// Measured is how many clients reported their CPU.
	Measured int `json:"measured"`
	// MaxBusyPercent is the busiest client's fio (CPU.BusyPercent), and
	// MaxThrottledPercent the most throttled container's
	// (CPU.ThrottledPercent).
	MaxBusyPercent      float64 `json:"maxBusyPercent"`
	MaxThrottledPercent float64 `json:"maxThrottledPercent,omitempty"`
	// Bound lists the lowest MaxErrors indices of the clients past a
	// bound; BoundCount counts them all.
	Bound      []int `json:"bound,omitempty"`
	BoundCount int   `json:"boundCount,omitempty"`
}

// add merges one client's CPU; the result does not depend on the order.
func (s *ClientCPU) add(client int, c CPU) {
	if !c.Measured() {
		return
	}
	s.Measured++
	s.MaxBusyPercent = max(s.MaxBusyPercent, c.BusyPercent())
	s.MaxThrottledPercent = max(s.MaxThrottledPercent, c.ThrottledPercent())
	if !c.Bound() {
		return
	}
	s.BoundCount++
	i, _ := slices.BinarySearch(s.Bound, client)
	if i < MaxErrors {
		s.Bound = slices.Insert(s.Bound, i, client)
		s.Bound = s.Bound[:min(len(s.Bound), MaxErrors)]
	}
}
