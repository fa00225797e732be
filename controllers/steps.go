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
	"github.com/storagebench/storagebench/internal/exchange"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// A finished step's record is its step ConfigMap, <name>-step-NNN: the
// order it ran under and the exact merged result of every client. Those
// ConfigMaps are the run's memory. Status, the planner's next step and the
// analysis are all derived from them on every reconcile, so a status that
// is lost or stale is rebuilt from the children (docs/operator.md).

// stepMemo remembers the decoded step records of running benchmarks, by
// benchmark and step index, each with the UID and resourceVersion of the
// ConfigMap it came from: an unchanged object is decoded once, not on
// every reconcile. It is a cache of what was read, never a source of
// truth: an entry is used only while its object is unchanged.
//
// It holds what is running, never history: a benchmark's records are
// dropped when its run ends, when it is deleted, and when another
// benchmark takes its name; a step's record replaces the one before at
// its index. So the memo holds at most one record per planned step (at
// most 100) of each running benchmark, each without its histograms and
// with at most results.MaxWindows timeline windows (recordOf).
type stepMemo struct {
	mu          sync.Mutex
	byBenchmark map[types.NamespacedName]*benchmarkMemo
	// n counts the records held (storagebench_manager_step_records).
	n int
}

// count adds d to the records held and publishes the count.
func (m *stepMemo) count(d int) {
	m.n += d
	sbmetrics.StepRecords.Set(float64(m.n))
}

// benchmarkMemo is one benchmark's records; uid tells a benchmark created
// again under the same name from the one the records were read for.
type benchmarkMemo struct {
	uid   types.UID
	steps map[int]memoEntry
}

type memoEntry struct {
	uid             types.UID
	resourceVersion string
	record          run.Step
}

// get returns b's record of step k when the memo holds it for the object
// cm still is. replaced is set when the memo holds step k's record from
// another object: the record b's run was built on was replaced.
func (m *stepMemo) get(b *v1alpha1.StorageBenchmark, k int, cm *metav1.PartialObjectMetadata) (rec run.Step, ok, replaced bool) {
	if m == nil {
		return run.Step{}, false, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	bm := m.byBenchmark[client.ObjectKeyFromObject(b)]
	if bm == nil || bm.uid != b.UID {
		return run.Step{}, false, false
	}
	e, found := bm.steps[k]
	switch {
	case !found:
		return run.Step{}, false, false
	case e.uid != cm.UID:
		return run.Step{}, false, true
	}
	return e.record, e.resourceVersion == cm.ResourceVersion, false
}

// put remembers rec, read from cm, as b's record of step k, in place of
// whatever was remembered there.
func (m *stepMemo) put(b *v1alpha1.StorageBenchmark, k int, cm *corev1.ConfigMap, rec run.Step) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byBenchmark == nil {
		m.byBenchmark = map[types.NamespacedName]*benchmarkMemo{}
	}
	key := client.ObjectKeyFromObject(b)
	bm := m.byBenchmark[key]
	if bm == nil || bm.uid != b.UID {
		if bm != nil {
			m.count(-len(bm.steps))
		}
		bm = &benchmarkMemo{uid: b.UID, steps: map[int]memoEntry{}}
		m.byBenchmark[key] = bm
	}
	if _, held := bm.steps[k]; !held {
		m.count(1)
	}
	bm.steps[k] = memoEntry{uid: cm.UID, resourceVersion: cm.ResourceVersion, record: rec}
}

// forget drops a benchmark's records: deleted, or its run ended.
func (m *stepMemo) forget(b types.NamespacedName) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if bm := m.byBenchmark[b]; bm != nil {
		m.count(-len(bm.steps))
		delete(m.byBenchmark, b)
	}
}

// records counts the records held, for tests and the heap benchmark.
func (m *stepMemo) records() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// ReplacedError says a step's record was replaced by another object during
// the run: the steps recorded so far can no longer be trusted.
type ReplacedError struct{ Name string }

func (e *ReplacedError) Error() string {
	return fmt.Sprintf("ConfigMap %s, the record of a finished step, was deleted and created again during the run; the run cannot go on without trusting a record it did not write", e.Name)
}

// readSteps reads b's finished steps, in order, from their ConfigMaps: the
// metadata from the cache, the data (unless memo holds the record of the
// object as it is) from the API server by name, remembered in memo (nil:
// in none). The steps end at the first index without a ConfigMap b
// controls. A step ConfigMap that cannot be read as step k's record is
// invalid data (exchange.ErrInvalidClientData): the run ends on it; one
// that replaced the record memo held is a *ReplacedError.
func (r *Reconciler) readSteps(ctx context.Context, b *v1alpha1.StorageBenchmark, planned int, memo *stepMemo) ([]run.Step, error) {
	var out []run.Step
	for k := 0; k < planned; k++ {
		name := exchange.StepName(b.Name, k)
		meta, err := r.stepMeta(ctx, b, k)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			break
		}
		rec, ok, replaced := memo.get(b, k, meta)
		if replaced {
			return nil, &ReplacedError{Name: name}
		}
		if ok {
			out = append(out, rec)
			continue
		}
		var cm corev1.ConfigMap
		rec, err = r.stepFrom(ctx, b, k, &cm)
		if apierrors.IsNotFound(err) {
			break // deleted since the cache saw it, or not the benchmark's
		}
		if err != nil {
			return nil, err
		}
		if memo != nil {
			rec = rec.Kept()
			memo.put(b, k, &cm, rec)
		}
		out = append(out, rec)
	}
	return out, nil
}

// readStep reads b's step k record from the API server, not the cache.
func (r *Reconciler) readStep(ctx context.Context, b *v1alpha1.StorageBenchmark, k int) (run.Step, error) {
	return r.stepFrom(ctx, b, k, &corev1.ConfigMap{})
}

// stepFrom reads b's step k ConfigMap into cm from the API server and
// records it. One that is not b's is NotFound.
func (r *Reconciler) stepFrom(ctx context.Context, b *v1alpha1.StorageBenchmark, k int, cm *corev1.ConfigMap) (run.Step, error) {
	name := exchange.StepName(b.Name, k)
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, cm); err != nil {
		return run.Step{}, err
	}
	if !ownedBy(cm, b) {
		return run.Step{}, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
	}
	order, agg, err := exchange.Step(cm, k)
	if err != nil {
		return run.Step{}, fmt.Errorf("%w: %w", exchange.ErrInvalidClientData, err)
	}
	return run.Record(order, agg, name, spec.SteadyOptionsOf(&b.Spec)), nil
}

// stepMeta is the cached metadata of b's step k ConfigMap; nil when there
// is none that b controls.
func (r *Reconciler) stepMeta(ctx context.Context, b *v1alpha1.StorageBenchmark, k int) (*metav1.PartialObjectMetadata, error) {
	return ownedConfigMap(ctx, r.metadata(), b, exchange.StepName(b.Name, k))
}

// recordedSteps counts b's step ConfigMaps, from their metadata alone.
func (r *Reconciler) recordedSteps(ctx context.Context, b *v1alpha1.StorageBenchmark, planned int) (int, error) {
	for k := 0; k < planned; k++ {
		meta, err := r.stepMeta(ctx, b, k)
		if err != nil || meta == nil {
			return k, err
		}
	}
	return planned, nil
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
