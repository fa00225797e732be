// Package promtest runs a real Prometheus server (Debian's package, which
// make setup installs) for the test suites: on loopback, with a
// configuration and a data directory of the suite's own, stopped with the
// suite.
package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Server is a running Prometheus.
type Server struct {
	// URL is its HTTP address, on loopback.
	URL string
	// API is its HTTP API.
	API    promv1.API
	dir    string
	cmd    *exec.Cmd
	exited chan error
}

// Start runs Prometheus with config (a prometheus.yml whose relative paths
// are dir's) listening on addr (a free loopback port when empty), its
// data and log in dir, and waits until it is ready.
func Start(dir, config, addr string) (*Server, error) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		return nil, fmt.Errorf("the prometheus binary, from Debian's package (make setup installs it): %w", err)
	}
	if addr == "" {
		if addr, err = FreeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	s := &Server{URL: "http://" + addr, dir: dir, cmd: cmd, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait(); _ = logFile.Close() }()
	c, err := promapi.NewClient(promapi.Config{Address: s.URL})
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	s.API = promv1.NewAPI(c)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		select {
		case err := <-s.exited:
			s.exited <- err
			return nil, fmt.Errorf("prometheus exited (%w); see %s", err, logFile.Name())
		default:
		}
		if err = ready(s.URL); err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("prometheus not ready after a minute: %w; see %s", err, logFile.Name())
		}
	}
}

func ready(url string) error {
	resp, err := http.Get(url + "/-/ready")
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/-/ready: %s", resp.Status)
	}
	return nil
}

// Dir is where its configuration, data and log are.
func (s *Server) Dir() string { return s.dir }

// Stop interrupts it, and kills it after 20 s; it returns how it exited.
func (s *Server) Stop() error {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.exited:
		return err
	case <-time.After(20 * time.Second):
		return s.cmd.Process.Kill()
	}
}

// Query evaluates an instant PromQL query now.
func (s *Server) Query(q string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, _, err := s.API.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: a %s, not a vector", q, v.Type())
	}
	return vec, nil
}

// FreeLoopbackAddr is a loopback address with a port nothing listens on.
func FreeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// ErrNoTarget is a scrape target Prometheus does not have up.
var ErrNoTarget = errors.New("target not up")

// WaitUp waits until every active target's last scrape succeeded.
func (s *Server) WaitUp(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := s.API.Targets(ctx)
		cancel()
		if err == nil {
			up := len(res.Active) > 0
			for _, t := range res.Active {
				up = up && t.Health == promv1.HealthGood
			}
			if up {
				return nil
			}
			err = fmt.Errorf("%w: %+v", ErrNoTarget, res.Active)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
