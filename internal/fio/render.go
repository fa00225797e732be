package fio

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// PercentileList is the fixed list of completion-latency percentiles fio is
// asked to print. storagebench never uses fio's printed percentiles for
// results (they are per job); they are kept so tests can prove that the
// percentiles computed from the bins equal fio's own.
const PercentileList = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"

// PercentileValues is PercentileList as numbers.
var PercentileValues = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// Layout says where a client's jobs do their I/O.
type Layout struct {
	// Directory holds one file per job (Filesystem volumes). On a shared
	// volume every client gets its own directory, so clients never touch
	// each other's files.
	Directory string
	// Device is a raw block device (Block volumes); jobs get disjoint,
	// consecutive regions of BytesPerJob.
	Device string
	// BaseOffset is where the first job's region starts on Device; clients
	// sharing one device use disjoint ranges.
	BaseOffset int64
	// BytesPerJob is each job's working set.
	BytesPerJob int64
}

// Job is one fio job section's load.
type Job struct {
	IODepth int32
	// Rates per data direction; 0 leaves that direction unthrottled. fio
	// applies rate limits per direction, so a mixed workload's offered rate
	// is given as separate read and write shares.
	ReadIOPS, WriteIOPS               int64
	ReadBytesPerSec, WriteBytesPerSec int64
}

// Run is one fio invocation: the workload, the timing and the jobs.
type Run struct {
	// Name prefixes job section names.
	Name            string
	Engine          string
	Direct          bool
	BlockSizeBytes  int64
	ReadPercent     int32
	Random          bool
	CompressPercent int32
	// DedupePercent is the share of written buffers that repeat an earlier
	// one (dedupe_percentage).
	DedupePercent int32
	// Sync is "fsync" or "fdatasync" (a call after every SyncEvery
	// writes), "dsync" (files opened O_DSYNC), or "" (none).
	Sync      string
	SyncEvery int32
	// Runtime is the measured duration; 0 renders a size-based run (used by
	// preconditioning, which writes each job's working set once).
	Runtime time.Duration
	Ramp    time.Duration
	// Poisson spaces a rated job's I/Os with exponentially distributed gaps
	// (rate_process=poisson) instead of even intervals.
	Poisson bool
	// Seed is the client's random seed; job j uses Seed+j. Each client has
	// its own so that clients do not issue identical offset sequences.
	Seed uint64
	Jobs []Job
	// StartAt, when set, holds every job's I/O until that instant of the
	// node's clock: just before its I/O each job runs "Waiter wait-until
	// <Unix nanoseconds>" (fio's exec_prerun), which returns at the
	// instant. fio has started by then, so a run launched ahead of the
	// instant begins its I/O on it, whatever fio's start-up took. Waiter
	// is an absolute path. The waiter prints the instant it returned
	// (Released reads it back).
	StartAt time.Time
	Waiter  string
	// CreateOnly runs fio's setup alone: the jobs' files are created and
	// laid out as a run of the same options would, and no I/O is measured.
	CreateOnly bool
	// Verify, when set, makes every write carry a pattern that describes
	// its block, and logs each job's I/Os, so that what the step wrote can
	// be read back and checked (VerifyWrites).
	Verify *VerifyWrites
}

// VerifyWrites is how a run's writes are made verifiable. Writes carry
// Pattern (fio's verify=pattern with verify_pattern, internal/verify
// says its form), and fio does no verification of its own (do_verify=0:
// a time-based job never reaches fio's read-back phase). Each job logs
// the I/Os it issues to IOLog(IOLogPrefix, j) (write_iolog), one line
// each.
type VerifyWrites struct {
	Pattern     string
	IOLogPrefix string
}

// JobFile is job j's file in a Filesystem layout's directory.
func JobFile(j int) string { return fmt.Sprintf("job%d.dat", j) }

// IOLog is job j's I/O log of a run whose VerifyWrites.IOLogPrefix is
// prefix.
func IOLog(prefix string, j int) string { return fmt.Sprintf("%s-job%d.iolog", prefix, j) }

// WaitUntilCommand is the argument of Run.Waiter that waits for an
// instant, given in Unix nanoseconds.
const WaitUntilCommand = "wait-until"

// Precondition returns the run that fills every job's working set once with
// sequential, non-compressible writes, so that later read steps read written
// data rather than a thin volume's zeros. The block size is the largest power
// of two up to 1 MiB that divides the working set, so every byte is written.
func Precondition(name, engine string, direct bool, jobs int, seed uint64, bytesPerJob int64) Run {
	bs := int64(1 << 20)
	for bs > 512 && bytesPerJob%bs != 0 {
		bs /= 2
	}
	r := Run{Name: name, Engine: engine, Direct: direct, BlockSizeBytes: bs, ReadPercent: 0, Seed: seed}
	depth := int32(16)
	if engine == "sync" || engine == "psync" {
		depth = 1
	}
	for range jobs {
		r.Jobs = append(r.Jobs, Job{IODepth: depth})
	}
	return r
}

// Render produces a fio job file. Every value comes from a typed field and
// is validated: there is no way to pass a raw option through.
func Render(r Run, l Layout) (string, error) {
	if err := validate(r, l); err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	b.WriteString("; generated by storagebench — do not edit\n[global]\n")
	w("ioengine", r.Engine)
	w("direct", boolInt(r.Direct))
	w("bs", r.BlockSizeBytes)
	w("rw", rwMode(r.Random, r.ReadPercent))
	if r.ReadPercent > 0 && r.ReadPercent < 100 {
		w("rwmixread", r.ReadPercent)
	}
	switch {
	case r.CreateOnly:
		w("create_only", 1)
	case r.Runtime > 0:
		w("time_based", 1)
		w("runtime", fmt.Sprintf("%dms", r.Runtime.Milliseconds()))
		if r.Ramp > 0 {
			w("ramp_time", fmt.Sprintf("%dms", r.Ramp.Milliseconds()))
		}
	default:
		// Preconditioning: write the whole working set once, in place.
		w("overwrite", 1)
		if !r.Direct {
			// Through the page cache (a log's fill): on the storage
			// before the first step, not flushed by its first sync.
			w("end_fsync", 1)
		}
	}
	w("size", l.BytesPerJob)
	if r.Random {
		// Do not track which blocks were touched: with large working sets
		// the map costs memory and its exhaustion changes the access pattern.
		w("norandommap", 1)
	}
	w("randrepeat", 0)
	renderWrites(w, r)
	if r.Poisson {
		w("rate_process", "poisson")
	}
	if r.Verify != nil {
		w("verify", "pattern")
		w("verify_pattern", r.Verify.Pattern)
		w("do_verify", 0)
		// The runner keeps its own record (internal/runner): no state
		// files of fio's left in its working directory.
		w("verify_state_save", 0)
	}
	w("percentile_list", PercentileList)
	if !r.StartAt.IsZero() {
		w("exec_prerun", fmt.Sprintf("%s %s %d", r.Waiter, WaitUntilCommand, r.StartAt.UnixNano()))
	}
	for j, job := range r.Jobs {
		renderJob(&b, r, l, j, job)
	}
	return b.String(), nil
}

// renderWrites writes what the writes carry and how they are made
// durable.
func renderWrites(w func(k string, v any), r Run) {
	// Non-dedupable buffers: new random content for every I/O. With a
	// compressibility, fio makes that share of each buffer compressible;
	// with a dedupe share, that share of buffers repeats an earlier one.
	w("refill_buffers", 1)
	if r.CompressPercent > 0 {
		w("buffer_compress_percentage", r.CompressPercent)
		w("buffer_compress_chunk", 4096)
	}
	if r.DedupePercent > 0 {
		w("dedupe_percentage", r.DedupePercent)
	}
	switch r.Sync {
	case "fsync", "fdatasync":
		w(r.Sync, r.SyncEvery)
	case "dsync":
		w("sync", "dsync")
	}
}

// renderJob writes job j's section.
func renderJob(b *strings.Builder, r Run, l Layout, j int, job Job) {
	w := func(k string, v any) { fmt.Fprintf(b, "%s=%v\n", k, v) }
	fmt.Fprintf(b, "\n[%s-job%d]\n", r.Name, j)
	if l.Device != "" {
		w("filename", l.Device)
		w("offset", l.BaseOffset+int64(j)*l.BytesPerJob)
	} else {
		w("filename", strings.TrimRight(l.Directory, "/")+"/"+JobFile(j))
	}
	w("iodepth", job.IODepth)
	if r.Verify != nil {
		w("write_iolog", IOLog(r.Verify.IOLogPrefix, j))
	}
	w("randseed", r.Seed+uint64(j))
	if job.ReadIOPS > 0 || job.WriteIOPS > 0 {
		w("rate_iops", fmt.Sprintf("%d,%d", job.ReadIOPS, job.WriteIOPS))
	}
	if job.ReadBytesPerSec > 0 || job.WriteBytesPerSec > 0 {
		w("rate", fmt.Sprintf("%d,%d", job.ReadBytesPerSec, job.WriteBytesPerSec))
	}
}

func rwMode(random bool, readPct int32) string {
	switch {
	case random && readPct == 100:
		return "randread"
	case random && readPct == 0:
		return "randwrite"
	case random:
		return "randrw"
	case readPct == 100:
		return "read"
	case readPct == 0:
		return "write"
	default:
		return "rw"
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// validate checks what is fio's own: that the job file's syntax cannot be
// subverted (names and paths that fio would read as more than a value) and
// its structure. The values (block size, percentages, depths, rates,
// working set) come from a validated plan (internal/plan, internal/workload)
// and are not judged again here.
func validate(r Run, l Layout) error {
	if !validName(r.Name) {
		return fmt.Errorf("job name %q: only letters, digits and '-' are allowed", r.Name)
	}
	if !validName(strings.ReplaceAll(r.Engine, "_", "-")) {
		return fmt.Errorf("ioengine %q: only letters, digits, '-' and '_' are allowed", r.Engine)
	}
	if len(r.Jobs) == 0 {
		return errors.New("a run needs at least one job")
	}
	if (l.Directory == "") == (l.Device == "") {
		return errors.New("layout needs exactly one of a directory or a device")
	}
	if r.CreateOnly && !r.StartAt.IsZero() {
		return errors.New("a create-only run does no I/O to hold until an instant")
	}
	if !r.StartAt.IsZero() && !UsableWaiter(r.Waiter) {
		return fmt.Errorf("waiter %q must be an absolute path of letters, digits and '/', '.', '_', '-', '+' (a shell runs it)", r.Waiter)
	}
	switch {
	case r.Sync != "" && r.Sync != "fsync" && r.Sync != "fdatasync" && r.Sync != "dsync":
		return fmt.Errorf("sync %q: only fsync, fdatasync or dsync", r.Sync)
	case (r.Sync == "fsync" || r.Sync == "fdatasync") && r.SyncEvery < 1:
		return fmt.Errorf("%s needs a count of writes, not %d", r.Sync, r.SyncEvery)
	}
	if v := r.Verify; v != nil {
		if r.DedupePercent > 0 {
			return errors.New("verified writes carry their pattern, not repeated buffers")
		}
		if !verifyPattern.MatchString(v.Pattern) {
			return fmt.Errorf("verify pattern %q: only 0x and 16 hex digits, then %%o", v.Pattern)
		}
		if !safePath(v.IOLogPrefix) {
			return fmt.Errorf("I/O log %q must be absolute and free of ':', '$', spaces and control characters", v.IOLogPrefix)
		}
		if r.CompressPercent > 0 {
			return errors.New("verified writes carry their pattern, not compressible buffers")
		}
	}
	for _, p := range []string{l.Directory, l.Device} {
		if p != "" && !safePath(p) {
			return fmt.Errorf("path %q must be absolute and free of ':', '$', spaces and control characters (fio gives them meaning)", p)
		}
	}
	return nil
}

// verifyPattern is the form of internal/verify's patterns.
var verifyPattern = regexp.MustCompile(`^0x[0-9a-f]{16}%o$`)

func validName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range s {
		ok := c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

func safePath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, c := range p {
		if c <= ' ' || c == 0x7f || c == ':' || c == '$' || c == ';' || c == '#' {
			return false
		}
	}
	return true
}

// UsableWaiter says whether p can be a Run.Waiter: an absolute path that
// a shell reads as one word and nothing else.
func UsableWaiter(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, c := range p {
		ok := c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}
