package fio

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LatLogMs is the window of the latency log a timeline asks fio for
// (log_avg_msec): fine enough to place a stall to within it, coarse enough
// that a step's log stays small (ten lines a second per direction).
const LatLogMs = 100

// MaxLatLogWindows bounds a step's latency log: a step of more than an
// hour gets longer windows (LatLogWindow), so fio keeps at most this many
// per job, direction and log (it writes its total, completion and
// submission latency logs, in memory until the job ends: about 5 MB a job).
const MaxLatLogWindows = 36_000

// LatLogWindow is the latency log's window for a step measuring runtime:
// LatLogMs, or, for a step of more than an hour, the whole milliseconds
// that keep it within MaxLatLogWindows.
func LatLogWindow(runtime time.Duration) time.Duration {
	w := LatLogMs * time.Millisecond
	if n := time.Duration(MaxLatLogWindows); runtime/n > w {
		w = (runtime/n + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return w
}

// latLogOptions make fio log, per job and direction, the highest total
// latency (submission and completion: a storage that blocks submissions
// shows there) of the I/Os completed in each window: fio writes a window
// out when an I/O completes at least a window after the last one written.
func latLogOptions(prefix string, window time.Duration) string {
	return fmt.Sprintf("[global]\nwrite_lat_log=%s\nlog_avg_msec=%d\nlog_max_value=1\n", prefix, window.Milliseconds())
}

// LatLogEntry is one window of a job's latency log.
type LatLogEntry struct {
	// TimeMs is when the window was written, in ms of measured run time
	// (the ramp excluded): when the I/O that closed it completed.
	TimeMs uint64
	// MaxNs is the highest total latency of the window's I/Os.
	MaxNs uint64
}

// ParseLatLog reads a latency log of fio's (time ms, value, direction,
// block size, offset[, priority]), both directions together, in time
// order.
func ParseLatLog(r io.Reader) ([]LatLogEntry, error) {
	var out []LatLogEntry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("latency log line %d %q: %d fields, want at least 3", n, line, len(f))
		}
		t, err1 := strconv.ParseUint(strings.TrimSpace(f[0]), 10, 64)
		v, err2 := strconv.ParseUint(strings.TrimSpace(f[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("latency log line %d %q: time and latency must be whole numbers", n, line)
		}
		out = append(out, LatLogEntry{TimeMs: t, MaxNs: v})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeMs < out[j].TimeMs })
	return out, nil
}

// removeLatLogs removes every log fio wrote under prefix: the latency
// logs and the completion and submission logs it writes beside them.
func removeLatLogs(prefix string) {
	written, _ := filepath.Glob(prefix + "_*.log")
	for _, f := range written {
		_ = os.Remove(f)
	}
}

// readLatLogs reads the latency logs fio wrote under prefix, one per job
// that completed I/O (prefix_lat.N.log). ok is false when there is none,
// or one cannot be read.
func readLatLogs(prefix string) (jobs [][]LatLogEntry, ok bool) {
	logs, _ := filepath.Glob(prefix + "_lat.*.log")
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			return nil, false
		}
		entries, err := ParseLatLog(f)
		_ = f.Close()
		if err != nil {
			return nil, false
		}
		jobs = append(jobs, entries)
	}
	return jobs, len(jobs) > 0
}
