package controllers

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// A finished step's record is its step ConfigMap, <name>-step-NNN: the
// order it ran under and the exact merged result of every client. Those
// ConfigMaps are the run's memory. Status, the planner's next step and the
// analysis are all derived from them on every reconcile, so a status that
// is lost or stale is rebuilt from the children (docs/operator.md).

// stepRecord is one finished step, as its ConfigMap records it.
type stepRecord struct {
	order protocol.StepOrder
	// agg is the exact aggregate without its histograms (the analysis and
	// the planner use the summaries; the histograms stay in the ConfigMap),
	// its timeline's windows included.
	agg  results.StepAggregate
	name string
	// stall is the timeline's longest stall, found before its windows'
	// histograms were dropped.
	stall analysis.Stall
	// p99Ns are the p99 completion latencies of the timeline's windows
	// with I/O, one per second, taken before the windows' histograms were
	// dropped: a regression comparison's samples.
	p99Ns []float64
	// superseded: the step was not steady and the one after it, recorded
	// or ordered, is its rerun (plan.Step.Supersedes). Set by project, as
	// it depends on the steps after this one.
	superseded bool
}

// recordOf is a step's record as a reconcile keeps it: the histograms,
// which only the step ConfigMap needs, are dropped.
func recordOf(order protocol.StepOrder, agg results.StepAggregate, name string) stepRecord {
	if len(agg.Timeline.Windows) > results.MaxWindows || len(agg.Timeline.Idle) > results.MaxWindows {
		// More than the operator writes: not its record's timeline.
		agg.Timeline = results.Timeline{}
	}
	stall := analysis.LongestStall(agg.Timeline)
	for _, d := range []*results.OperationSummary{&agg.Read, &agg.Write, &agg.Total} {
		d.Histogram = fio.Histogram{}
	}
	_, p99 := analysis.TimelineSamples(agg.Timeline)
	windows := make([]results.Window, len(agg.Timeline.Windows))
	for k, w := range agg.Timeline.Windows {
		w.Hist = fio.Histogram{}
		windows[k] = w
	}
	agg.Timeline.Windows = windows
	return stepRecord{order: order, agg: agg, name: name, stall: stall, p99Ns: p99}
}

// stepMemo remembers decoded step records by the ConfigMap's UID and
// resourceVersion: an unchanged object is decoded once, not on every
// reconcile. It is a cache of what was read, never a source of truth: an
// entry is used only while the object it came from is unchanged.
type stepMemo struct {
	mu sync.Mutex
	// byBenchmark: benchmark → step ConfigMap UID → record.
	byBenchmark map[types.NamespacedName]map[types.UID]memoEntry
}

type memoEntry struct {
	resourceVersion string
	record          stepRecord
}

func (m *stepMemo) get(b types.NamespacedName, cm *metav1.PartialObjectMetadata) (stepRecord, bool) {
	if m == nil {
		return stepRecord{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byBenchmark[b][cm.UID]
	return e.record, ok && e.resourceVersion == cm.ResourceVersion
}

func (m *stepMemo) put(b types.NamespacedName, cm *corev1.ConfigMap, rec stepRecord) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byBenchmark == nil {
		m.byBenchmark = map[types.NamespacedName]map[types.UID]memoEntry{}
	}
	if m.byBenchmark[b] == nil {
		m.byBenchmark[b] = map[types.UID]memoEntry{}
	}
	m.byBenchmark[b][cm.UID] = memoEntry{resourceVersion: cm.ResourceVersion, record: rec}
}

// forget drops a deleted benchmark's records.
func (m *stepMemo) forget(b types.NamespacedName) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byBenchmark, b)
}

// observeSteps reads b's finished steps, in order, from their ConfigMaps:
// the metadata from the cache, the data (on a memo miss) from the API
// server by name. The steps end at the first index without a ConfigMap b
// controls. A step ConfigMap that cannot be read as step k's record is
// invalid data (exchange.ErrInvalidClientData): the run ends on it.
func (r *Reconciler) observeSteps(ctx context.Context, b *v1alpha1.StorageBenchmark, planned int) ([]stepRecord, error) {
	return r.readSteps(ctx, b, planned, r.steps)
}

// readSteps is observeSteps remembering decoded records in memo (nil: in
// none).
func (r *Reconciler) readSteps(ctx context.Context, b *v1alpha1.StorageBenchmark, planned int, memo *stepMemo) ([]stepRecord, error) {
	key := client.ObjectKeyFromObject(b)
	var out []stepRecord
	for k := 0; k < planned; k++ {
		name := exchange.StepName(b.Name, k)
		meta := metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		err := r.metadata().Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, meta)
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !ownedBy(meta, b) {
			break
		}
		if rec, ok := memo.get(key, meta); ok {
			out = append(out, rec)
			continue
		}
		var cm corev1.ConfigMap
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				break // deleted since the cache saw it
			}
			return nil, err
		}
		if !ownedBy(&cm, b) {
			break
		}
		order, agg, err := exchange.Step(&cm, k)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", exchange.ErrInvalidClientData, err)
		}
		rec := recordOf(order, agg, name)
		memo.put(key, &cm, rec)
		out = append(out, rec)
	}
	return out, nil
}

// writeStep records a finished step: its order and its merged result,
// histograms included, in its own ConfigMap. A ConfigMap left by an
// earlier attempt is rewritten to match.
func (r *Reconciler) writeStep(ctx context.Context, b *v1alpha1.StorageBenchmark, order protocol.StepOrder, agg results.StepAggregate) error {
	value, err := exchange.Encode(agg)
	if err != nil {
		return err
	}
	ord, err := exchange.Encode(order)
	if err != nil {
		return err
	}
	name := exchange.StepName(b.Name, order.Index)
	data := map[string]string{exchange.KeyOrder: ord, exchange.KeyAggregate: value}
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta(b, name, exchange.RoleStep), Data: data}
	if err := r.ensure(ctx, b, cm, true); err != nil {
		return err
	}
	var cur corev1.ConfigMap // a live read: the cache holds no data
	if err := r.Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !ownedBy(&cur, b) { // replaced since ensure saw it
		return conflict(&cur, "ConfigMap")
	}
	if cur.Data[exchange.KeyAggregate] != value || cur.Data[exchange.KeyOrder] != ord {
		cur.Data = data
		return r.Update(ctx, &cur)
	}
	return nil
}
