package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
)

// The reconciler's side of the exchange ConfigMaps. The cache holds their
// metadata only (cache.go): readiness and result step are annotations the
// runners set, and the current order is mirrored in an annotation of the
// plan ConfigMap, so deciding the next protocol step never reads data.
// Data — ready reports, step results — is read from the API server when
// it is needed, by name, a few client ConfigMaps at a time, and only from
// ConfigMaps the benchmark controls.

// clientWindow bounds the client ConfigMaps read at once: each may hold up
// to a ConfigMap's 1 MiB, and there may be a thousand clients.
const clientWindow = 16

// orderOf reads the current order from the plan's annotation.
func orderOf(plan *metav1.PartialObjectMetadata) (protocol.StepOrder, bool, error) {
	var o protocol.StepOrder
	if plan == nil {
		return o, false, nil
	}
	v, found := plan.Annotations[annotationOrder]
	if !found {
		return o, false, nil
	}
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return o, true, fmt.Errorf("%w: ConfigMap %s annotation %s: %w", exchange.ErrInvalidClientData, plan.Name, annotationOrder, err)
	}
	return o, true, nil
}

// plan reads b's plan ConfigMap's metadata from the cache: nil when it
// does not exist or b does not control it.
func (r *Reconciler) plan(ctx context.Context, b *v1alpha1.StorageBenchmark) (*metav1.PartialObjectMetadata, error) {
	return ownedConfigMap(ctx, r.metadata(), b, exchange.PlanName(b.Name))
}

// wholePlan is plan with its record of verdicts whole, for the passes that
// read or write that record (observe). The cache keeps at most
// maxCachedValue bytes of an annotation: a record longer than that (a
// comparison of many steps) is read, with the rest of the plan's
// metadata, from the API server.
func (r *Reconciler) wholePlan(ctx context.Context, b *v1alpha1.StorageBenchmark) (*metav1.PartialObjectMetadata, error) {
	cm, err := r.plan(ctx, b)
	if err != nil || cm == nil || r.APIReader == nil || !clippedInCache(cm, annotationVerdicts, legacyAnnotationRegression) {
		return cm, err
	}
	return ownedConfigMap(ctx, r.APIReader, b, cm.Name)
}

// clippedInCache says whether one of the annotations keys may have been
// cut by the cache's transform (stripForCache): it is as long as a cut
// value is.
func clippedInCache(obj client.Object, keys ...string) bool {
	for _, k := range keys {
		if len(obj.GetAnnotations()[k]) >= maxCachedValue-utf8.UTFMax {
			return true
		}
	}
	return false
}

// ownedConfigMap reads the metadata of b's ConfigMap name through from
// (the cache, or the API server): nil when it does not exist or b does not
// control it.
func ownedConfigMap(ctx context.Context, from client.Reader, b *v1alpha1.StorageBenchmark, name string) (*metav1.PartialObjectMetadata, error) {
	cm := metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	err := from.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !ownedBy(cm, b):
		return nil, nil
	}
	return cm, nil
}

// writeOrder writes o into the plan ConfigMap (data for the runners, the
// annotation for the operator) as one merge patch that carries the
// resourceVersion observed: a stale cache cannot order twice. annotations
// go into the same patch (the final order's comparison with a baseline).
// plan is updated to the object written.
func (r *Reconciler) writeOrder(ctx context.Context, plan *metav1.PartialObjectMetadata, o protocol.StepOrder, ahead *protocol.StepOrder, annotations map[string]string) error {
	value, err := exchange.Encode(o)
	if err != nil {
		return err
	}
	data := map[string]any{exchange.KeyOrder: value, exchange.KeyNextOrder: nil} // null removes it
	if ahead != nil {
		if data[exchange.KeyNextOrder], err = exchange.Encode(*ahead); err != nil {
			return err
		}
	}
	annotations = maps.Clone(annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationOrder] = value
	return r.patchPlan(ctx, plan, map[string]any{
		"metadata": map[string]any{"resourceVersion": plan.ResourceVersion, "annotations": annotations},
		"data":     data,
	})
}

// patchPlan merges patch into the plan ConfigMap and updates plan to the
// object written: what was written is what this reconcile projects, the
// cache may not have seen it yet.
func (r *Reconciler) patchPlan(ctx context.Context, plan *metav1.PartialObjectMetadata, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: plan.Namespace, Name: plan.Name}}
	if err := r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, body)); err != nil {
		return err
	}
	plan.Annotations, plan.ResourceVersion = cm.Annotations, cm.ResourceVersion
	return nil
}

// eachClientData reads the data of b's client ConfigMaps whose index
// wanted accepts, straight from the API server by name, clientWindow at a
// time in parallel, and hands each to fn in index order (so merging is
// deterministic). One that is gone is a *LostError, one b does not control
// a *ConflictError. By name, not by label: a tenant's labelled ConfigMaps
// are never transferred.
func (r *Reconciler) eachClientData(ctx context.Context, b *v1alpha1.StorageBenchmark, wanted func(int) bool, fn func(int, *corev1.ConfigMap) error) error {
	n := int(b.Spec.Clients.Count)
	window := make([]*corev1.ConfigMap, clientWindow)
	for first := 0; first < n; first += clientWindow {
		g, gctx := errgroup.WithContext(ctx)
		for k := first; k < min(first+clientWindow, n); k++ {
			window[k-first] = nil
			if !wanted(k) {
				continue
			}
			g.Go(func() error {
				var cm corev1.ConfigMap
				err := r.APIReader.Get(gctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, k)}, &cm)
				switch {
				case apierrors.IsNotFound(err):
					return &LostError{Name: exchange.ClientName(b.Name, k)}
				case err != nil:
					return err
				case !ownedBy(&cm, b):
					return conflict(&cm, "ConfigMap")
				}
				window[k-first] = &cm
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i, cm := range window {
			if cm == nil {
				continue
			}
			if err := fn(first+i, cm); err != nil {
				return err
			}
			window[i] = nil // done with its data
		}
	}
	return nil
}
