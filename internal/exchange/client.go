package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// Client is the runner's side of the exchange: it implements
// runner.Coordinator, runner.Publisher and runner.Clock over the API server,
// touching only the benchmark's plan ConfigMap (read) and its own client
// ConfigMap (patch), and GET /version for the server's clock.
type Client struct {
	Clientset kubernetes.Interface
	Namespace string
	Benchmark string
	Index     int
	// Backoff paces retries after transient API errors (zero: DefaultBackoff).
	// Up to 1,000 runners retry at once, so it is jittered.
	Backoff wait.Backoff
	// PlanTimeout bounds how long LoadPlan waits for the plan (default 10 min).
	PlanTimeout time.Duration
	// Now is the runner's clock, measured by ClockOffset (default time.Now).
	Now func() time.Time

	planUID types.UID
	// wire is the results' wire encoding version the plan allows (0: JSON).
	wire int
	// current is the highest step KeyOrder was seen to order, and ahead
	// one more than the last step taken from KeyNextOrder (0: none): the
	// result of a step taken ahead is published once the step is current,
	// that is, once the step before it is recorded (see Publish).
	current, ahead int
}

// DefaultBackoff is the retry pace after a transient API error: 200 ms
// doubling up to 3 s, each pause stretched by up to half at random.
var DefaultBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32, Cap: 3 * time.Second}

// Errors that end a runner: the objects it exchanges through are gone, so
// nobody is conducting it any more.
var (
	ErrPlanGone   = errors.New("the benchmark is gone or was tampered with")
	ErrClientGone = errors.New("the benchmark is gone or was tampered with")
)

func (c *Client) backoff() wait.Backoff {
	if c.Backoff.Duration > 0 {
		return c.Backoff
	}
	return DefaultBackoff
}

// LoadPlan waits for the plan ConfigMap (at most PlanTimeout) and returns
// this client's plan.
func (c *Client) LoadPlan(ctx context.Context) (protocol.ClientPlan, error) {
	timeout := c.PlanTimeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	name := PlanName(c.Benchmark)
	b := c.backoff()
	for {
		cm, err := c.Clientset.CoreV1().ConfigMaps(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			p, err := Plan(cm)
			if err != nil {
				return p, err
			}
			p.Client = c.Index
			p.Seed = protocol.ClientSeed(c.Benchmark, c.Index)
			c.planUID = cm.UID
			c.wire = results.ChooseWire(p.ResultWire)
			if p.Verify || p.Workload.Sync.Call() && c.wire < results.WireV2 {
				// The wire encoding has no field for a read-back, and
				// version 1 none for sync calls: every step of such a
				// run goes as JSON, so a result never changes key
				// mid-run.
				c.wire = 0
			}
			return p, nil
		}
		if !apierrors.IsNotFound(err) && !retriable(err) {
			return protocol.ClientPlan{}, fmt.Errorf("reading the plan: %w", err)
		}
		if time.Now().After(deadline) {
			return protocol.ClientPlan{}, fmt.Errorf("no plan ConfigMap %s after %s: %w", name, timeout, err)
		}
		if err := protocol.Pause(ctx, b.Step()); err != nil {
			return protocol.ClientPlan{}, err
		}
	}
}

// ReportReady records the client's readiness (or its preparation error).
func (c *Client) ReportReady(ctx context.Context, r protocol.Ready) error {
	state := "true"
	if r.Error != "" {
		state = "error"
	}
	value, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.patch(ctx, KeyReady, value, false, map[string]string{AnnotationReady: state})
}

// Publish records the client's result of one step: in the wire encoding
// the plan allows (binaryData KeyResultWire), or as JSON (data KeyResult).
// A client holds one result at a time, so the result of a step that was
// ordered ahead (KeyNextOrder) waits until the step is current: the
// conductor has then recorded the result before it. The step is current
// long before it ends, unless the conductor is far behind, or the run
// has ended (a final order), when the result is written all the same.
func (c *Client) Publish(ctx context.Context, r results.ClientStep) error {
	if r.Step+1 == c.ahead && r.Step > c.current {
		if _, err := c.awaitOrder(ctx, r.Step, false); err != nil {
			return fmt.Errorf("waiting to publish step %d: %w", r.Step, err)
		}
	}
	annotations := map[string]string{AnnotationResultStep: strconv.Itoa(r.Step)}
	if c.wire != 0 {
		return c.patch(ctx, KeyResultWire, results.AppendWireVersion(nil, &r, c.wire), true, annotations)
	}
	value, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.patch(ctx, KeyResult, value, false, annotations)
}

// patch merges one key, of data or (binary) of binaryData, and some
// annotations into the client's ConfigMap, retrying transient errors until
// ctx ends. A deleted ConfigMap is final (ErrClientGone).
func (c *Client) patch(ctx context.Context, key string, value []byte, binary bool, annotations map[string]string) error {
	name := ClientName(c.Benchmark, c.Index)
	if len(value) > MaxClientValueBytes {
		return fmt.Errorf("writing %s to ConfigMap %s: %d bytes exceed the %d-byte cap", key, name, len(value), MaxClientValueBytes)
	}
	field, values := "data", any(map[string]string{key: string(value)})
	if binary {
		// A []byte marshals as base64, as binaryData wants.
		field, values = "binaryData", map[string][]byte{key: value}
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}, field: values})
	if err != nil {
		return err
	}
	b := c.backoff()
	for {
		_, err := c.Clientset.CoreV1().ConfigMaps(c.Namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			return fmt.Errorf("client ConfigMap %s was deleted: %w", name, ErrClientGone)
		case !retriable(err):
			return fmt.Errorf("writing %s to ConfigMap %s: %w", key, name, err)
		}
		if err := protocol.Pause(ctx, b.Step()); err != nil {
			return fmt.Errorf("writing %s to ConfigMap %s: %w", key, name, err)
		}
	}
}

// WaitOrder blocks until the plan ConfigMap orders step index (or says the
// run is done), as its current order or as the one written ahead. It
// watches the one ConfigMap by name, so the runner's Role can restrict
// get/list/watch to that name. The plan ConfigMap deleted or replaced by
// another object is final (ErrPlanGone).
func (c *Client) WaitOrder(ctx context.Context, index int) (protocol.StepOrder, error) {
	return c.awaitOrder(ctx, index, true)
}

// awaitOrder is WaitOrder, taking the order written ahead when ahead is
// set, and otherwise waiting until the current order reaches step index.
func (c *Client) awaitOrder(ctx context.Context, index int, ahead bool) (protocol.StepOrder, error) {
	name := PlanName(c.Benchmark)
	cms := c.Clientset.CoreV1().ConfigMaps(c.Namespace)
	b := c.backoff()
	for {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return protocol.StepOrder{}, c.planGone("deleted")
			}
			if !retriable(err) {
				return protocol.StepOrder{}, fmt.Errorf("reading the order: %w", err)
			}
			if err := protocol.Pause(ctx, b.Step()); err != nil {
				return protocol.StepOrder{}, err
			}
			continue
		}
		if o, ok, err := c.orderFor(cm, index, ahead); ok || err != nil {
			return o, err
		}
		started := time.Now()
		w, err := cms.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: cm.ResourceVersion,
		})
		if err != nil {
			if !retriable(err) {
				return protocol.StepOrder{}, fmt.Errorf("watching the order: %w", err)
			}
			if err := protocol.Pause(ctx, b.Step()); err != nil {
				return protocol.StepOrder{}, err
			}
			continue
		}
		o, ok, err := c.waitOrderEvent(ctx, w, index, ahead)
		w.Stop()
		if ok || err != nil {
			return o, err
		}
		if ctx.Err() != nil {
			return protocol.StepOrder{}, ctx.Err()
		}
		// The watch ended (timeout, compaction): read again, at once after
		// a long watch, after a pause when watches keep failing.
		if time.Since(started) > time.Second {
			b = c.backoff()
		} else if err := protocol.Pause(ctx, b.Step()); err != nil {
			return protocol.StepOrder{}, err
		}
	}
}

func (c *Client) planGone(how string) error {
	return fmt.Errorf("plan ConfigMap %s was %s: %w", PlanName(c.Benchmark), how, ErrPlanGone)
}

func (c *Client) waitOrderEvent(ctx context.Context, w watch.Interface, index int, ahead bool) (protocol.StepOrder, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return protocol.StepOrder{}, false, ctx.Err()
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				return protocol.StepOrder{}, false, nil
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM || cm.Name != PlanName(c.Benchmark) {
				continue
			}
			if ev.Type == watch.Deleted {
				return protocol.StepOrder{}, false, c.planGone("deleted")
			}
			if o, ok, err := c.orderFor(cm, index, ahead); ok || err != nil {
				return o, ok, err
			}
		}
	}
}

// orderFor returns the order when it is for step index or says done; with
// ahead, also the order written ahead when it is for step index. A current
// order beyond index means this client missed a step, which the lockstep
// protocol never allows: it is an error. So is a plan ConfigMap that is not
// the one the plan was loaded from.
func (c *Client) orderFor(cm *corev1.ConfigMap, index int, ahead bool) (protocol.StepOrder, bool, error) {
	if c.planUID != "" && cm.UID != c.planUID {
		return protocol.StepOrder{}, false, c.planGone("replaced")
	}
	o, found, err := Order(cm)
	if err != nil || !found {
		return o, false, err
	}
	if !o.Done {
		c.current = max(c.current, o.Index)
	}
	switch {
	case o.Done:
		return o, true, nil
	case o.Index == index:
		return o, true, nil
	case o.Index > index:
		return o, false, fmt.Errorf("ordered step %d while waiting for step %d", o.Index, index)
	case !ahead:
		return o, false, nil
	}
	next, found, err := NextOrder(cm)
	if err != nil || !found || next.Done || next.Index != index {
		return next, false, err
	}
	c.ahead = index + 1
	return next, true, nil
}

// retriable reports errors worth another attempt: no answer from the API
// server (network), the server busy or timing out, or a conflict. Refusals
// (forbidden, invalid) are final; a missing object is for the caller to judge.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsConflict(err)
}
