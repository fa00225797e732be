package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/runner"
)

// Client is the runner's side of the exchange: it implements
// runner.Coordinator and runner.Publisher over the API server, touching only
// the benchmark's plan ConfigMap (read) and its own client ConfigMap (patch).
type Client struct {
	Clientset kubernetes.Interface
	Namespace string
	Benchmark string
	Index     int
	// Retry is the pause between attempts after a transient API error
	// (default 1 s).
	Retry time.Duration
}

var (
	_ runner.Coordinator = (*Client)(nil)
	_ runner.Publisher   = (*Client)(nil)
)

func (c *Client) retry() time.Duration {
	if c.Retry > 0 {
		return c.Retry
	}
	return time.Second
}

// LoadPlan waits for the plan ConfigMap and returns this client's plan.
func (c *Client) LoadPlan(ctx context.Context) (runner.ClientPlan, error) {
	for {
		cm, err := c.Clientset.CoreV1().ConfigMaps(c.Namespace).Get(ctx, PlanName(c.Benchmark), metav1.GetOptions{})
		if err == nil {
			p, err := Plan(cm)
			if err != nil {
				return p, err
			}
			p.Client = c.Index
			p.Seed = runner.ClientSeed(c.Benchmark, c.Index)
			return p, nil
		}
		if !retriable(err) {
			return runner.ClientPlan{}, fmt.Errorf("reading the plan: %w", err)
		}
		if err := runner.Pause(ctx, c.retry()); err != nil {
			return runner.ClientPlan{}, err
		}
	}
}

// ReportReady records the client's readiness (or its preparation error).
func (c *Client) ReportReady(ctx context.Context, r runner.Ready) error {
	state := "true"
	if r.Error != "" {
		state = "error"
	}
	return c.patch(ctx, KeyReady, r, map[string]string{AnnotationReady: state})
}

// Publish records the client's result of one step.
func (c *Client) Publish(ctx context.Context, r results.ClientStep) error {
	return c.patch(ctx, KeyResult, r, map[string]string{AnnotationResultStep: strconv.Itoa(r.Step)})
}

// patch merges one data key and some annotations into the client's
// ConfigMap, retrying transient errors until ctx ends.
func (c *Client) patch(ctx context.Context, key string, v any, annotations map[string]string) error {
	value, err := Encode(v)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": annotations},
		"data":     map[string]string{key: value},
	})
	if err != nil {
		return err
	}
	name := ClientName(c.Benchmark, c.Index)
	for {
		_, err := c.Clientset.CoreV1().ConfigMaps(c.Namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		if err == nil {
			return nil
		}
		if !retriable(err) {
			return fmt.Errorf("writing %s to ConfigMap %s: %w", key, name, err)
		}
		if err := runner.Pause(ctx, c.retry()); err != nil {
			return fmt.Errorf("writing %s to ConfigMap %s: %w", key, name, err)
		}
	}
}

// WaitOrder blocks until the plan ConfigMap orders step index (or says the
// run is done). It watches the one ConfigMap by name, so the runner's Role
// can restrict get/list/watch to that name.
func (c *Client) WaitOrder(ctx context.Context, index int) (runner.StepOrder, error) {
	name := PlanName(c.Benchmark)
	cms := c.Clientset.CoreV1().ConfigMaps(c.Namespace)
	for {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if !retriable(err) {
				return runner.StepOrder{}, fmt.Errorf("reading the order: %w", err)
			}
			if err := runner.Pause(ctx, c.retry()); err != nil {
				return runner.StepOrder{}, err
			}
			continue
		}
		if o, ok, err := orderFor(cm, index); ok || err != nil {
			return o, err
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: cm.ResourceVersion,
		})
		if err != nil {
			if err := runner.Pause(ctx, c.retry()); err != nil {
				return runner.StepOrder{}, err
			}
			continue
		}
		o, ok, err := waitOrderEvent(ctx, w, index)
		w.Stop()
		if ok || err != nil {
			return o, err
		}
		if ctx.Err() != nil {
			return runner.StepOrder{}, ctx.Err()
		}
		// The watch ended (timeout, compaction): read again.
	}
}

func waitOrderEvent(ctx context.Context, w watch.Interface, index int) (runner.StepOrder, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return runner.StepOrder{}, false, ctx.Err()
		case ev, open := <-w.ResultChan():
			if !open {
				return runner.StepOrder{}, false, nil
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM || ev.Type == watch.Deleted {
				continue
			}
			if o, ok, err := orderFor(cm, index); ok || err != nil {
				return o, ok, err
			}
		}
	}
}

// orderFor returns the order when it is for step index or says done. An
// order beyond index means this client missed a step, which the lockstep
// protocol never allows: it is an error.
func orderFor(cm *corev1.ConfigMap, index int) (runner.StepOrder, bool, error) {
	o, found, err := Order(cm)
	if err != nil || !found {
		return o, false, err
	}
	switch {
	case o.Done:
		return o, true, nil
	case o.Index == index:
		return o, true, nil
	case o.Index > index:
		return o, false, fmt.Errorf("ordered step %d while waiting for step %d", o.Index, index)
	}
	return o, false, nil
}

// retriable reports errors worth another attempt: no answer from the API
// server (network), the server busy or timing out, a conflict, or an object
// that does not exist yet. Refusals (forbidden, invalid) are final.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsNotFound(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsConflict(err)
}
