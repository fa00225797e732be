package fio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// Output is the part of fio's json+ document storagebench uses.
type Output struct {
	Version     string
	TimestampMs int64
	Jobs        []JobResult
}

// JobResult is one fio job's result.
type JobResult struct {
	Name string
	// Error is fio's errno for the job (0 when the job succeeded).
	Error int
	// RuntimeMs is the job's measured run time, ramp excluded.
	RuntimeMs uint64
	Read      DirResult
	Write     DirResult
	// Sync is the job's sync calls (fsync or fdatasync): IOs is their
	// count, IOPS their rate over the job's run time, Latency each call's
	// time; no bytes. Zero when the job made none.
	Sync DirResult
	// UsrCPU and SysCPU are the job's user and system CPU time in percent
	// of its run time (fio's usr_cpu and sys_cpu).
	UsrCPU, SysCPU float64
}

// DirResult is one data direction of one fio job.
type DirResult struct {
	IOs         uint64
	Bytes       uint64
	IOPS        float64
	BytesPerSec float64
	RuntimeMs   uint64
	Latency     LatencyStats
}

// LatencyStats is a completion-latency distribution: fio's exact moments
// (computed from every sample) plus its histogram.
type LatencyStats struct {
	// Count is the number of completions recorded.
	Count  uint64    `json:"count"`
	MinNs  uint64    `json:"minNs"`
	MaxNs  uint64    `json:"maxNs"`
	MeanNs float64   `json:"meanNs"`
	StdNs  float64   `json:"stddevNs"`
	Hist   Histogram `json:"bins"`
	// Printed holds the percentiles fio itself printed, keyed by fio's
	// label (e.g. "99.900000"). Kept for verification, not for merging.
	Printed map[string]uint64 `json:"-"`
}

type rawOutput struct {
	Version     string   `json:"fio version"`
	TimestampMs int64    `json:"timestamp_ms"`
	Jobs        []rawJob `json:"jobs"`
}

type rawJob struct {
	JobName    string  `json:"jobname"`
	Error      int     `json:"error"`
	JobRuntime uint64  `json:"job_runtime"`
	UsrCPU     float64 `json:"usr_cpu"`
	SysCPU     float64 `json:"sys_cpu"`
	Read       rawDir  `json:"read"`
	Write      rawDir  `json:"write"`
	Sync       struct {
		LatNs rawLat `json:"lat_ns"`
	} `json:"sync"`
}

type rawDir struct {
	IOBytes  uint64  `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  uint64  `json:"runtime"`
	TotalIOs uint64  `json:"total_ios"`
	ClatNs   rawLat  `json:"clat_ns"`
}

type rawLat struct {
	Min        uint64            `json:"min"`
	Max        uint64            `json:"max"`
	Mean       float64           `json:"mean"`
	Stddev     float64           `json:"stddev"`
	N          uint64            `json:"N"`
	Percentile map[string]uint64 `json:"percentile"`
	Bins       map[string]uint64 `json:"bins"`
}

// Parse decodes fio's json+ output. fio may print notes or warnings before
// the JSON document (for example "note: both iodepth >= 1 and synchronous I/O
// engine are selected"); everything before the first line that starts with
// '{' is ignored and returned as preamble.
func Parse(data []byte) (*Output, string, error) {
	return ParseFrom(bytes.NewReader(data))
}

var errEmpty = errors.New("fio produced no output")

// ParseFrom is Parse reading from r, one document at a time: with
// --status-interval the output holds one document per tick and the final
// one last, with lines fio prints when stopped in between, and the report
// is the last document.
func ParseFrom(r io.Reader) (*Output, string, error) {
	var raw rawOutput
	pre, err := documents(r, func(doc rawOutput) error { raw = doc; return nil })
	return outputOf(raw, pre, err)
}

// outputOf is the report of a stream whose last document is raw, read with
// documents (which returned pre and err).
func outputOf(raw rawOutput, pre string, err error) (*Output, string, error) {
	preamble := strings.TrimSpace(pre)
	switch {
	case errors.Is(err, errNoDocument) && preamble == "":
		return nil, "", errEmpty
	case errors.Is(err, errNoDocument):
		return nil, preamble, fmt.Errorf("fio output contains no JSON document: %s", firstLines(preamble, 5))
	case err != nil:
		return nil, preamble, fmt.Errorf("decoding fio json+ output: %w", err)
	}
	out := &Output{Version: raw.Version, TimestampMs: raw.TimestampMs, Jobs: make([]JobResult, 0, len(raw.Jobs))}
	for _, j := range raw.Jobs {
		jr := JobResult{Name: j.JobName, Error: j.Error, RuntimeMs: j.JobRuntime, UsrCPU: j.UsrCPU, SysCPU: j.SysCPU}
		var err error
		if jr.Read, err = convertDir(j.Read); err != nil {
			return nil, preamble, fmt.Errorf("job %q read: %w", j.JobName, err)
		}
		if jr.Write, err = convertDir(j.Write); err != nil {
			return nil, preamble, fmt.Errorf("job %q write: %w", j.JobName, err)
		}
		if jr.Sync, err = convertSync(j.Sync.LatNs, j.JobRuntime); err != nil {
			return nil, preamble, fmt.Errorf("job %q sync: %w", j.JobName, err)
		}
		out.Jobs = append(out.Jobs, jr)
	}
	if len(out.Jobs) == 0 {
		return nil, preamble, errors.New("fio output has no jobs")
	}
	return out, preamble, nil
}

func convertDir(d rawDir) (DirResult, error) {
	l, err := latencyOf("clat_ns", d.ClatNs)
	if err != nil {
		return DirResult{}, err
	}
	return DirResult{
		IOs:         d.TotalIOs,
		Bytes:       d.IOBytes,
		IOPS:        d.IOPS,
		BytesPerSec: d.BWBytes,
		RuntimeMs:   d.Runtime,
		Latency:     l,
	}, nil
}

// convertSync is a job's sync calls. fio 3.33 prints their total_ios as 0:
// the count is the latency's N, the rate N over the job's run time.
func convertSync(d rawLat, runtimeMs uint64) (DirResult, error) {
	l, err := latencyOf("sync lat_ns", d)
	if err != nil || l.Count == 0 {
		return DirResult{}, err
	}
	r := DirResult{IOs: l.Count, RuntimeMs: runtimeMs, Latency: l}
	if runtimeMs > 0 {
		r.IOPS = float64(l.Count) * 1000 / float64(runtimeMs)
	}
	return r, nil
}

// latencyOf is one of fio's latency objects (named what for errors), whose
// bins must hold its N samples.
func latencyOf(what string, d rawLat) (LatencyStats, error) {
	h, err := HistogramFromFio(d.Bins)
	if err != nil {
		return LatencyStats{}, err
	}
	if d.N > 0 && h.Total() != d.N {
		if len(d.Bins) == 0 {
			return LatencyStats{}, fmt.Errorf("%s has no bins: fio must run with --output-format=json+", what)
		}
		return LatencyStats{}, fmt.Errorf("%s bins hold %d samples but N is %d", what, h.Total(), d.N)
	}
	return LatencyStats{Count: d.N, MinNs: d.Min, MaxNs: d.Max, MeanNs: d.Mean, StdNs: d.Stddev, Hist: h, Printed: d.Percentile}, nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " | ")
}

// JobErrors returns a readable error for every job that reported a non-zero
// errno, or nil. fio's stderr (its own explanation, e.g. "io_u error on file
// …: No space left on device") is included when given.
func (o *Output) JobErrors(stderr string) error {
	var msgs []string
	for _, j := range o.Jobs {
		if j.Error != 0 {
			msgs = append(msgs, fmt.Sprintf("job %s: errno %d (%s)", j.Name, j.Error, syscall.Errno(j.Error).Error()))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &RunError{Summary: strings.Join(msgs, "; "), Stderr: FioMessages(stderr)}
}

// RunError is a failed fio run, carrying fio's own words.
type RunError struct {
	// Summary says what failed (exit status, job errnos).
	Summary string
	// Stderr holds fio's "fio: …" diagnostic lines.
	Stderr string
}

func (e *RunError) Error() string {
	if e.Stderr == "" {
		return "fio failed: " + e.Summary
	}
	return "fio failed: " + e.Summary + ": " + e.Stderr
}

// FioMessages extracts fio's diagnostic lines from its stderr, dropping
// progress noise, and joins them on "; ".
func FioMessages(stderr string) string {
	var keep []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "Jobs:") {
			continue
		}
		if seen[line] {
			continue
		}
		seen[line] = true
		keep = append(keep, line)
	}
	const maxLines = 8
	if len(keep) > maxLines {
		keep = append(keep[:maxLines], fmt.Sprintf("(%d more lines)", len(keep)-maxLines))
	}
	return strings.Join(keep, "; ")
}
