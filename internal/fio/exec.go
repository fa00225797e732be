package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Executor runs the fio binary.
type Executor struct {
	// Binary is the fio executable; "fio" (from PATH) when empty.
	Binary string
	// WorkDir receives job files and outputs.
	WorkDir string
	// GracePeriod is how long fio may take to stop and write its report after
	// SIGTERM before it is killed.
	GracePeriod time.Duration
	// Timeline asks fio for a status document every second
	// (--status-interval=1) and for a latency log of LatLogMs windows;
	// Result.Intervals then holds the intervals between the documents,
	// and Result.LatLogs the jobs' logs.
	Timeline bool
	// LatLogWindow is the latency log's window (LatLogWindow); 0:
	// LatLogMs.
	LatLogWindow time.Duration
}

// Result is a finished fio run.
type Result struct {
	Output *Output
	// Interrupted is true when the run was stopped by ctx before its end;
	// Output then holds what fio measured until then.
	Interrupted bool
	// Notes are non-JSON lines fio printed before its report.
	Notes  string
	Stderr string
	// Intervals are the client's intervals between status documents, its
	// jobs summed, when the Executor asked for a Timeline; TimelineErr says
	// why there are none when fio's stream could not be read.
	Intervals   []Interval
	TimelineErr error
	// LatLogs are the jobs' latency logs with a Timeline, one per job that
	// completed I/O; nil when fio wrote none that could be read.
	LatLogs [][]LatLogEntry
	// Began is when the jobs' measurement began (after any ramp), by the
	// node's clock: the least of the timeline documents' timestamps less
	// the jobs' run times at them, to the millisecond. Zero without a
	// timeline.
	Began time.Time
	// Released is when the first job's I/O was released by the waiter of
	// a run held until an instant (Run.StartAt), by the node's clock;
	// zero otherwise. LastReleased is the last job's.
	Released, LastReleased time.Time
}

// Version returns fio's version string, e.g. "fio-3.33".
func (e Executor) Version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, e.binary(), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w (is fio installed?)", e.binary(), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (e Executor) binary() string {
	if e.Binary == "" {
		return "fio"
	}
	return e.Binary
}

// Run writes the job file as name.fio, runs fio with json+ output and parses
// the result. When ctx is cancelled fio gets SIGTERM, which makes it stop and
// still print its report: the partial result is returned with Interrupted
// set. A fio that exits non-zero or reports a job error yields a *RunError
// carrying fio's own messages.
func (e Executor) Run(ctx context.Context, name, jobFile string) (*Result, error) {
	// fio runs in the work directory (below): every path it is given is
	// absolute, so a relative WorkDir or Binary means the same there.
	dir, err := filepath.Abs(e.WorkDir)
	if err != nil {
		return nil, err
	}
	bin := e.binary()
	if strings.ContainsRune(bin, filepath.Separator) {
		if bin, err = filepath.Abs(bin); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jobPath := filepath.Join(dir, name+".fio")
	outPath := filepath.Join(dir, name+".json")
	latLog := filepath.Join(dir, name+"-stall")
	if e.Timeline {
		removeLatLogs(latLog) // an earlier process' are not this run's
		defer removeLatLogs(latLog)
		// A [global] section ahead of the job file's own applies to
		// every job in it.
		window := e.LatLogWindow
		if window <= 0 {
			window = LatLogMs * time.Millisecond
		}
		jobFile = latLogOptions(latLog, window) + jobFile
	}
	if err := os.WriteFile(jobPath, []byte(jobFile), 0o644); err != nil {
		return nil, err
	}
	_ = os.Remove(outPath)
	args := []string{"--output-format=json+", "--output=" + outPath}
	if e.Timeline {
		args = append(args, "--status-interval=1")
	}
	cmd := exec.Command(bin, append(args, jobPath)...)
	// fio saves a job's exec_prerun output as <job>.prerun.txt in its
	// working directory: WorkDir, not wherever this process runs. Any
	// left by an earlier process are not this run's.
	cmd.Dir = dir
	removePrerunOutput(dir, name)
	defer removePrerunOutput(dir, name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting fio: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	interrupted := false
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		interrupted = true
		stopTree(cmd.Process.Pid, syscall.SIGTERM)
		grace := e.GracePeriod
		if grace == 0 {
			grace = 10 * time.Second
		}
		select {
		case waitErr = <-done:
		case <-time.After(grace):
			stopTree(cmd.Process.Pid, syscall.SIGKILL)
			return nil, fmt.Errorf("fio did not stop within %s of SIGTERM and was killed: %w", grace, <-done)
		}
	}
	res := &Result{Interrupted: interrupted, Stderr: stderr.String()}
	if e.Timeline {
		if logs, ok := readLatLogs(latLog); ok {
			res.LatLogs = logs
		}
	}
	if rel := releases(dir, name); len(rel) > 0 {
		res.Released, res.LastReleased = slices.MinFunc(rel, time.Time.Compare), slices.MaxFunc(rel, time.Time.Compare)
	}
	if f, openErr := os.Open(outPath); openErr == nil {
		// One pass over the stream: the last document is the report, and
		// with a timeline every document is an interval too.
		var raw rawOutput
		var ivs intervals
		var ivErr error
		pre, docErr := documents(f, func(doc rawOutput) error {
			raw = doc
			if e.Timeline && ivErr == nil {
				ivErr = ivs.add(doc)
			}
			return nil
		})
		_ = f.Close()
		out, notes, err := outputOf(raw, pre, docErr)
		res.Notes = notes
		if err == nil {
			res.Output = out
		} else if waitErr == nil && !errors.Is(err, errEmpty) {
			return nil, err
		}
		if e.Timeline && err == nil {
			// The timeline is best-effort: a stream it cannot read leaves
			// the report as it is.
			if ivErr != nil {
				res.TimelineErr = ivErr
			} else {
				res.Intervals = ivs.out
				if ivs.beganMs > 0 {
					res.Began = time.UnixMilli(ivs.beganMs)
				}
			}
		}
	}
	// The status stream grows with the step and the jobs: it is not kept
	// once read.
	_ = os.Remove(outPath)
	if waitErr != nil && (!interrupted || res.Output == nil) {
		var exitErr *exec.ExitError
		summary := waitErr.Error()
		if errors.As(waitErr, &exitErr) {
			summary = fmt.Sprintf("exit status %d", exitErr.ExitCode())
		}
		if res.Output != nil {
			var jerr *RunError
			if errors.As(res.Output.JobErrors(""), &jerr) {
				summary += ", " + jerr.Summary
			}
		}
		return nil, &RunError{Summary: summary, Stderr: FioMessages(res.Stderr + "\n" + res.Notes)}
	}
	if res.Output == nil {
		return nil, &RunError{Summary: "no report written", Stderr: FioMessages(res.Stderr)}
	}
	if err := res.Output.JobErrors(res.Stderr); err != nil && !interrupted {
		return nil, err
	}
	return res, nil
}

// stopTree sends sig to fio and to every process under it. fio's job
// processes start sessions of their own, and a job waiting in its
// exec_prerun (a waiter) hears nothing of fio's own SIGTERM: each is
// signalled directly, so a run held until an instant stops when stopped.
func stopTree(pid int, sig syscall.Signal) {
	pids := append(descendants(pid), pid)
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
}

// descendants lists the processes under pid, from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// prerunOutput is the file fio saves job j's exec_prerun output in, in its
// working directory (Render names the job); j < 0 gives the pattern of
// every job's.
func prerunOutput(dir, name string, j int) string {
	job := "*"
	if j >= 0 {
		job = strconv.Itoa(j)
	}
	return filepath.Join(dir, name+"-job"+job+".prerun.txt")
}

// prerunOutputs lists the files fio saved a run's exec_prerun output in
// (Run.StartAt), one per job that ran it.
func prerunOutputs(dir, name string) []string {
	files, _ := filepath.Glob(prerunOutput(dir, name, -1))
	return files
}

// removePrerunOutput removes the files fio saved a run's exec_prerun
// output in.
func removePrerunOutput(dir, name string) {
	for _, f := range prerunOutputs(dir, name) {
		_ = os.Remove(f)
	}
}

// releases reads the instants a run's waiters released its jobs at, from
// the prerun output of every job that has one.
func releases(dir, name string) []time.Time {
	var out []time.Time
	for _, f := range prerunOutputs(dir, name) {
		if t, err := released(f); err == nil {
			out = append(out, t)
		}
	}
	return out
}

func released(path string) (time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return time.Unix(0, ns), nil
}

// Released is when the last of jobs jobs of the running run name, held
// until an instant (Run.StartAt), was released, by the node's clock; ok is
// false while any of them waits (or its fio has ended and removed the
// record). The run's fio works in dir (Executor.WorkDir).
func Released(dir, name string, jobs int) (last time.Time, ok bool) {
	for j := range jobs {
		t, err := released(prerunOutput(dir, name, j))
		if err != nil {
			return time.Time{}, false
		}
		if t.After(last) {
			last = t
		}
	}
	return last, jobs > 0
}

// WaitUntil is the waiter's side of Run.StartAt: given the arguments after
// WaitUntilCommand (one instant in Unix nanoseconds), it returns at that
// instant of the node's clock (at once when it has passed), and prints the
// instant it returned at in Unix nanoseconds to out, which fio saves
// (Released).
// Cancelling ctx (the runner binary's is cancelled by SIGTERM) ends the
// wait with an error: the run is being stopped.
func WaitUntil(ctx context.Context, args []string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("%s takes one instant in Unix nanoseconds, got %d arguments", WaitUntilCommand, len(args))
	}
	ns, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", WaitUntilCommand, err)
	}
	t := time.NewTimer(time.Until(time.Unix(0, ns)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("%s: stopped before the instant: %w", WaitUntilCommand, ctx.Err())
	}
	_, err = fmt.Fprintln(out, time.Now().UnixNano())
	return err
}
