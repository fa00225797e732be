package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// FileExchange is a directory through which a local conductor and its clients
// talk: clients write ready/client-NNN.json and results/step-KKKK/client-NNN.json,
// the conductor writes orders/step-KKKK.json. Every file is written to a
// temporary name and renamed, so a reader never sees half a document. The
// Kubernetes operator uses the API server instead; the protocol is the same.
type FileExchange struct {
	Dir string
	// Poll is how often waiting readers look for a file (default 100 ms).
	Poll time.Duration
}

func (x FileExchange) readyPath(client int) string {
	return filepath.Join(x.Dir, "ready", fmt.Sprintf("client-%03d.json", client))
}

func (x FileExchange) orderPath(step int) string {
	return filepath.Join(x.Dir, "orders", fmt.Sprintf("step-%04d.json", step))
}

func (x FileExchange) resultPath(step, client int) string {
	return filepath.Join(x.Dir, "results", fmt.Sprintf("step-%04d", step), fmt.Sprintf("client-%03d.json", client))
}

// ReportReady implements Coordinator.
func (x FileExchange) ReportReady(_ context.Context, r protocol.Ready) error {
	return writeJSON(x.readyPath(r.Client), r)
}

// WaitOrder implements Coordinator.
func (x FileExchange) WaitOrder(ctx context.Context, index int) (protocol.StepOrder, error) {
	var o protocol.StepOrder
	err := x.wait(ctx, x.orderPath(index), &o)
	return o, err
}

// Publish implements Publisher.
func (x FileExchange) Publish(_ context.Context, r results.ClientStep) error {
	return writeJSON(x.resultPath(r.Step, r.Client), r)
}

// WriteOrder publishes a step order to every client.
func (x FileExchange) WriteOrder(o protocol.StepOrder) error {
	return writeJSON(x.orderPath(o.Index), o)
}

// ReadReady returns the client's ready report, or ok=false if it has not
// reported yet.
func (x FileExchange) ReadReady(client int) (protocol.Ready, bool, error) {
	var r protocol.Ready
	ok, err := readJSON(x.readyPath(client), &r)
	return r, ok, err
}

// ReadResult returns the client's result for a step, or ok=false if it has
// not been published yet.
func (x FileExchange) ReadResult(step, client int) (results.ClientStep, bool, error) {
	var r results.ClientStep
	ok, err := readJSON(x.resultPath(step, client), &r)
	return r, ok, err
}

func (x FileExchange) pollInterval() time.Duration {
	if x.Poll == 0 {
		return 100 * time.Millisecond
	}
	return x.Poll
}

func (x FileExchange) wait(ctx context.Context, path string, v any) error {
	t := time.NewTicker(x.pollInterval())
	defer t.Stop()
	for {
		ok, err := readJSON(path, v)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}
