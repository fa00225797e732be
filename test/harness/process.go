package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// daemon is a long-running child process whose output goes to a log file.
type daemon struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // Wait's result, set before done is closed
}

// startDaemon starts path with args in its own process group, stdout and
// stderr appended to logPath. The child is killed if this process dies.
func startDaemon(path string, args []string, logPath string) (*daemon, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = out.Close() }() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	d := &daemon{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// exited reports whether the process has ended.
func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits for the process to end.
func (d *daemon) stop(grace time.Duration) error {
	if d.exited() {
		return nil
	}
	pid := d.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-d.done
	return fmt.Errorf("%s ignored SIGTERM for %s and was killed", d.cmd.Path, grace)
}

// tailFile returns at most the last maxLines lines and maxBytes bytes of a
// file; a missing file is empty.
func tailFile(path string, maxLines, maxBytes int) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return tail(data, maxLines, maxBytes), nil
}

func tail(data []byte, maxLines, maxBytes int) string {
	if len(data) > maxBytes {
		data = data[len(data)-maxBytes:]
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return string(bytes.Join(lines, nil))
}
