package runner

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// cgroupCPU is where the runner reads its container's CPU bandwidth: the
// cgroup's cpu.stat (periods, throttled periods and time) and its limit.
// cgroup v2 keeps them in cpu.stat and cpu.max; v1's cpu controller in
// cpu.stat (throttled_time in ns) and cpu.cfs_quota_us / cpu.cfs_period_us.
// A container sees its own cgroup at the mount's root; a runner outside a
// container (the local conductor's) in the path /proc/self/cgroup names.
type cgroupCPU struct {
	dir string
	v2  bool
}

// cpuStat is one reading of cpu.stat.
type cpuStat struct {
	periods, throttled, throttledUs uint64
}

// findCgroupCPU finds the runner's cgroup CPU files under root (normally
// /sys/fs/cgroup), given /proc/self/cgroup's text; ok is false when there
// are none.
func findCgroupCPU(root string, self []byte) (cgroupCPU, bool) {
	var v2Path, v1Path string
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		id, rest, _ := strings.Cut(sc.Text(), ":")
		controllers, path, _ := strings.Cut(rest, ":")
		switch {
		case id == "0" && controllers == "":
			v2Path = path
		case slices.Contains(strings.Split(controllers, ","), "cpu"):
			v1Path = path
		}
	}
	var candidates []cgroupCPU
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil { // unified
		candidates = []cgroupCPU{{filepath.Join(root, filepath.Clean("/"+v2Path)), true}, {root, true}}
	} else {
		for _, mount := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
			dir := filepath.Join(root, mount)
			candidates = append(candidates, cgroupCPU{filepath.Join(dir, filepath.Clean("/"+v1Path)), false}, cgroupCPU{dir, false})
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c.dir, "cpu.stat")); err == nil {
			return c, true
		}
	}
	return cgroupCPU{}, false
}

// stat reads cpu.stat; ok is false when it cannot.
func (c cgroupCPU) stat() (cpuStat, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return cpuStat{}, false
	}
	return parseCPUStat(data, c.v2), true
}

func parseCPUStat(data []byte, v2 bool) cpuStat {
	var s cpuStat
	for line := range strings.SplitSeq(string(data), "\n") {
		key, value, _ := strings.Cut(line, " ")
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch {
		case key == "nr_periods":
			s.periods = n
		case key == "nr_throttled":
			s.throttled = n
		case key == "throttled_usec" && v2:
			s.throttledUs = n
		case key == "throttled_time" && !v2: // ns
			s.throttledUs = n / 1000
		}
	}
	return s
}

// limitMilli is the cgroup's CPU limit in thousandths of a CPU; 0 when
// there is none or it cannot be read.
func (c cgroupCPU) limitMilli() uint64 {
	var quota, period string
	if c.v2 {
		data, err := os.ReadFile(filepath.Join(c.dir, "cpu.max"))
		if err != nil {
			return 0
		}
		quota, period, _ = strings.Cut(strings.TrimSpace(string(data)), " ")
	} else {
		q, err1 := os.ReadFile(filepath.Join(c.dir, "cpu.cfs_quota_us"))
		p, err2 := os.ReadFile(filepath.Join(c.dir, "cpu.cfs_period_us"))
		if err1 != nil || err2 != nil {
			return 0
		}
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p))
	}
	return quotaMilli(quota, period)
}

// quotaMilli is a CFS quota over its period in thousandths of a CPU; 0
// for "max", -1 (v1's none) or what does not parse.
func quotaMilli(quota, period string) uint64 {
	q, err1 := strconv.ParseUint(quota, 10, 64)
	p, err2 := strconv.ParseUint(period, 10, 64)
	if err1 != nil || err2 != nil || p == 0 || q == 0 {
		return 0
	}
	return max(q*1000/p, 1)
}

// since is the periods between an earlier reading and this one (zero when
// a counter went back: not the same cgroup).
func (s cpuStat) since(before cpuStat) cpuStat {
	if s.periods < before.periods || s.throttled < before.throttled || s.throttledUs < before.throttledUs {
		return cpuStat{}
	}
	return cpuStat{s.periods - before.periods, s.throttled - before.throttled, s.throttledUs - before.throttledUs}
}

// ownCgroupCPU finds the runner's own cgroup CPU files.
func ownCgroupCPU() (cgroupCPU, bool) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupCPU{}, false
	}
	return findCgroupCPU("/sys/fs/cgroup", self)
}

// cpuOf is the CPU launched step l cost: fio's jobs' own time from its
// report out, over what they could use on this node under the limit, and
// the container's CFS periods from l.cpu to its end.
func (r *Runner) cpuOf(l *launched, out *fio.Output) results.CPU {
	c := results.FioCPU(out, results.AvailableCPU(l.jobs, runtime.NumCPU(), l.limit))
	if l.cpuOK && l.cpuEndOK {
		d := l.cpuEnd.since(l.cpu)
		c.Periods, c.ThrottledPeriods, c.ThrottledUs = d.periods, d.throttled, d.throttledUs
	}
	return c
}
