package soak

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// builds are the two builds of the manager (test/soak/manager) the soak
// runs: the first from the start, the second from the build switch on.
var builds = [2]string{"soak-build-1", "soak-build-2"}

// buildManagers builds test/soak/manager twice into dir, with different
// -ldflags -X main.build values: two different binaries.
func buildManagers(dir string) ([2]string, error) {
	var paths [2]string
	errs := make(chan error, 2)
	for i, b := range builds {
		paths[i] = filepath.Join(dir, "manager-"+b)
		go func() {
			cmd := exec.Command("go", "build", "-ldflags", "-X main.build="+b, "-o", paths[i], "./test/soak/manager")
			cmd.Dir = "../.."
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("building the manager (%s): %w\n%s", b, err, out)
				return
			}
			errs <- nil
		}()
	}
	for range builds {
		if err := <-errs; err != nil {
			return paths, err
		}
	}
	a, errA := os.ReadFile(paths[0])
	b, errB := os.ReadFile(paths[1])
	if errA != nil || errB != nil {
		return paths, fmt.Errorf("reading the builds: %w", errors.Join(errA, errB))
	}
	if bytes.Equal(a, b) {
		return paths, fmt.Errorf("the two builds of the manager are the same binary")
	}
	return paths, nil
}

// managerProc is a running manager process.
type managerProc struct {
	build    string
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
	started  time.Time
	stopping atomic.Bool
}

// startManager starts build (0 or 1) of the manager and waits until its
// caches have synced.
func (s *soak) startManager(build int) error {
	if err := os.Remove(s.readyPath); err != nil && !os.IsNotExist(err) {
		return err
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "manager.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	fmt.Fprintf(log, "\n===== %s: starting %s at simulated %s\n", time.Now().Format(time.RFC3339), builds[build], s.clock.Now().Format(time.RFC3339))
	args := []string{
		"-clock=" + s.clockPath,
		"-run-key=" + s.runKey,
		"-ready=" + s.readyPath,
		"-samples=" + s.samplesPath,
		"-metrics-bind-address=" + s.metricsAddr,
		fmt.Sprintf("-step-start-lead=%s", startLead),
		fmt.Sprintf("-next-step-start-lead=%s", nextStepLead),
		fmt.Sprintf("-result-grace=%s", resultGrace),
		fmt.Sprintf("-ready-timeout=%s", readyTimeout),
		fmt.Sprintf("-claim-bind-timeout=%s", claimBindTimeout),
		"-zap-log-level=info",
	}
	cmd := exec.Command(s.binaries[build], args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	m := &managerProc{build: builds[build], cmd: cmd, done: make(chan struct{}), started: time.Now()}
	go func() {
		m.err = cmd.Wait()
		close(m.done)
		if !m.stopping.Load() {
			select {
			case s.crashed <- fmt.Errorf("the manager (%s) exited on its own: %w", m.build, cmp.Or(m.err, errExitZero)):
			default:
			}
		}
	}()
	s.mu.Lock()
	s.mgr = m
	s.mu.Unlock()
	deadline := time.After(2 * time.Minute)
	for {
		data, err := os.ReadFile(s.readyPath)
		if err == nil {
			want := fmt.Sprintf("%s %d", builds[build], cmd.Process.Pid)
			if got := strings.TrimSpace(string(data)); got != want {
				return fmt.Errorf("the manager's ready file says %q, want %q", got, want)
			}
			return nil
		}
		select {
		case <-m.done:
			return fmt.Errorf("the manager (%s) exited before its caches synced: %w; see %s", builds[build], cmp.Or(m.err, errExitZero), filepath.Join(s.dir, "manager.log"))
		case <-deadline:
			return fmt.Errorf("the manager (%s) did not sync its caches within 2 minutes", builds[build])
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopManager stops the running manager with SIGTERM and waits for it.
func (s *soak) stopManager() error {
	s.mu.Lock()
	m := s.mgr
	s.mgr = nil
	s.mu.Unlock()
	if m == nil {
		return nil
	}
	m.stopping.Store(true)
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(90 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
		return fmt.Errorf("the manager (%s) did not stop within 90 s of SIGTERM and was killed", m.build)
	}
	if m.err != nil {
		return fmt.Errorf("the manager (%s) exited: %w; see %s", m.build, m.err, filepath.Join(s.dir, "manager.log"))
	}
	return nil
}

// errExitZero stands for a manager that exited with status 0 unasked.
var errExitZero = errors.New("exit status 0")

// freeLoopbackAddr returns a loopback address nothing listens on.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
