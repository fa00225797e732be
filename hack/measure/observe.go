package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// stepClient keys a client's result of one step.
type stepClient struct{ step, client int }

// observation is what the watches saw of one benchmark run. Every instant
// is this machine's clock when the event arrived (the cluster runs on this
// machine, so the operator, the runners and this program share one clock),
// or an instant the runner or the operator wrote into an object.
type observation struct {
	name    string
	clients int

	// start is just before the create call, created just after it.
	start, created time.Time

	mu sync.Mutex
	// podCreated, podScheduled and podRunning are when each client pod
	// was first seen, seen scheduled to a node, and seen Running.
	podCreated, podScheduled, podRunning map[string]time.Time
	// claimBound is when each of the benchmark's claims was first seen
	// Bound; claims holds every claim seen.
	claimBound map[string]time.Time
	claims     map[string]bool
	// claimSeen is when each claim was first seen.
	claimSeen map[string]time.Time
	// ready is when each client's ready annotation was first seen.
	ready        map[int]time.Time
	readyReports map[int]protocol.Ready
	// orders are the step orders of the plan ConfigMap, exactly as the
	// runners read them (order.json holds only the latest, so each is
	// captured as it appears).
	orders map[int]protocol.StepOrder
	// results are the clients' step results (result.json, likewise
	// overwritten by the next step).
	results map[stepClient]results.ClientStep
	// complete is when the Complete condition was first seen True.
	complete time.Time
	final    *v1alpha1.StorageBenchmark
	err      error
	done     chan struct{}
	once     sync.Once
}

func newObservation(b *v1alpha1.StorageBenchmark) *observation {
	return &observation{
		name: b.Name, clients: int(b.Spec.Clients.Count),
		podCreated: map[string]time.Time{}, podScheduled: map[string]time.Time{}, podRunning: map[string]time.Time{},
		claimBound: map[string]time.Time{}, claims: map[string]bool{}, claimSeen: map[string]time.Time{}, ready: map[int]time.Time{}, readyReports: map[int]protocol.Ready{},
		orders: map[int]protocol.StepOrder{}, results: map[stepClient]results.ClientStep{},
		done: make(chan struct{}),
	}
}

func (o *observation) finish(err error) {
	o.once.Do(func() {
		o.err = err
		close(o.done)
	})
}

// handle records what one watch event says.
func (o *observation) handle(now time.Time, obj client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch x := obj.(type) {
	case *v1alpha1.StorageBenchmark:
		if c := meta.FindStatusCondition(x.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == "True" {
			o.finish(fmt.Errorf("benchmark %s failed: %s: %s", x.Name, c.Reason, c.Message))
		} else if meta.IsStatusConditionTrue(x.Status.Conditions, v1alpha1.ConditionComplete) && o.complete.IsZero() {
			o.complete, o.final = now, x.DeepCopy()
			o.finish(nil)
		}
	case *corev1.Pod:
		first(o.podCreated, x.Name, now, true)
		first(o.podScheduled, x.Name, now, x.Spec.NodeName != "")
		first(o.podRunning, x.Name, now, x.Status.Phase == corev1.PodRunning)
	case *corev1.PersistentVolumeClaim:
		o.claims[x.Name] = true
		first(o.claimSeen, x.Name, now, true)
		first(o.claimBound, x.Name, now, x.Status.Phase == corev1.ClaimBound)
	case *corev1.ConfigMap:
		o.handleConfigMap(now, x)
	}
}

func (o *observation) handleConfigMap(now time.Time, cm *corev1.ConfigMap) {
	switch cm.Labels[exchange.LabelRole] {
	case exchange.RolePlan:
		if order, found, err := exchange.Order(cm); err == nil && found && !order.Done {
			o.orders[order.Index] = order
		}
	case exchange.RoleClient:
		i, err := strconv.Atoi(cm.Labels[exchange.LabelClient])
		if err != nil {
			return
		}
		switch exchange.ReadinessOf(cm) {
		case exchange.Ready:
			if _, seen := o.ready[i]; !seen {
				o.ready[i] = now
				if rep, found, err := exchange.ReadyReport(cm); err == nil && found {
					o.readyReports[i] = rep
				}
			}
		case exchange.ReadyError:
			rep, _, _ := exchange.ReadyReport(cm)
			o.finish(fmt.Errorf("client %d of %s could not prepare: %s", i, o.name, rep.Error))
		}
		if res, found, err := exchange.Result(cm); err == nil && found {
			o.results[stepClient{res.Step, i}] = res
		}
	}
}

// first records now under key unless a time is already there, when cond.
func first(m map[string]time.Time, key string, now time.Time, cond bool) {
	if _, seen := m[key]; !seen && cond {
		m[key] = now
	}
}

// allPodsRunning is when the last client pod was first seen Running.
func (o *observation) allPodsRunning() (time.Time, bool) {
	return latest(o.podRunning, o.clients)
}

// allClaimsBound is when the last of the claims seen was first seen Bound.
func (o *observation) allClaimsBound() (time.Time, bool) {
	return latest(o.claimBound, max(len(o.claims), 1))
}

// allReady is when the last client was seen ready (files laid out and
// preconditioned).
func (o *observation) allReady() (time.Time, bool) {
	return latest(o.ready, o.clients)
}

// earliest is the earliest time in m, if any.
func earliest[K comparable](m map[K]time.Time) (time.Time, bool) {
	var t time.Time
	for _, v := range m {
		if t.IsZero() || v.Before(t) {
			t = v
		}
	}
	return t, !t.IsZero()
}

func latest[K comparable](m map[K]time.Time, want int) (time.Time, bool) {
	if len(m) < want {
		return time.Time{}, false
	}
	var t time.Time
	for _, v := range m {
		if v.After(t) {
			t = v
		}
	}
	return t, true
}

// stepSpan is when step k's first client launched fio and its last client
// finished, from the clients' own results; ok is false unless every
// client's result for the step was seen.
func (o *observation) stepSpan(k int) (first, last time.Time, ok bool) {
	for c := range o.clients {
		r, found := o.results[stepClient{k, c}]
		if !found {
			return time.Time{}, time.Time{}, false
		}
		if first.IsZero() || r.ActualStart.Before(first) {
			first = r.ActualStart
		}
		if r.End.After(last) {
			last = r.End
		}
	}
	return first, last, true
}

// runBenchmark creates b and follows it until its Complete condition is
// True (or it failed, or timeout passed). The watches are open before the
// create call, so no event of the run is missed.
func runBenchmark(ctx context.Context, k client.WithWatch, b *v1alpha1.StorageBenchmark, timeout time.Duration) (*observation, error) {
	o := newObservation(b)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	ns := client.InNamespace(b.Namespace)
	lists := []struct {
		list client.ObjectList
		opts []client.ListOption
	}{
		{&v1alpha1.StorageBenchmarkList{}, []client.ListOption{ns, client.MatchingFields{"metadata.name": b.Name}}},
		{&corev1.PodList{}, []client.ListOption{ns, client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}}},
		{&corev1.ConfigMapList{}, []client.ListOption{ns, client.MatchingLabels{exchange.LabelBenchmark: b.Name}}},
		{&corev1.PersistentVolumeClaimList{}, []client.ListOption{ns, client.MatchingLabels{exchange.LabelBenchmark: b.Name}}},
	}
	for _, l := range lists {
		open := func() (watch.Interface, error) { return k.Watch(wctx, l.list, l.opts...) }
		w, err := open()
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", l.list, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(wctx, w, open, o.handle)
		}()
	}

	o.start = time.Now()
	if err := k.Create(ctx, b); err != nil {
		return nil, fmt.Errorf("creating benchmark %s: %w", b.Name, err)
	}
	o.created = time.Now()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-o.done:
	case <-timer.C:
		return o, fmt.Errorf("benchmark %s did not complete within %s", b.Name, timeout)
	case <-ctx.Done():
		return o, ctx.Err()
	}
	if o.err != nil {
		return o, o.err
	}
	// The watches are separate streams: a client's last result may arrive
	// after the benchmark's Complete. One last read of the ConfigMaps fills
	// in whatever is still missing.
	var cms corev1.ConfigMapList
	if err := k.List(ctx, &cms, lists[2].opts...); err != nil {
		return o, err
	}
	for i := range cms.Items {
		o.handle(time.Now(), &cms.Items[i])
	}
	return o, nil
}

// follow feeds every event of w to handle, reopening the watch when the
// server ends it, until ctx is done. A reopened watch starts with the
// current state of every object, which handle treats like any update.
func follow(ctx context.Context, w watch.Interface, open func() (watch.Interface, error), handle func(time.Time, client.Object)) {
	for {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if obj, ok := ev.Object.(client.Object); ok && ev.Type != watch.Deleted {
				handle(time.Now(), obj)
			}
		}
		w.Stop()
		for {
			if protocol.Pause(ctx, 500*time.Millisecond) != nil {
				return
			}
			var err error
			if w, err = open(); err == nil {
				break
			}
			if errors.Is(err, context.Canceled) {
				return
			}
		}
	}
}
