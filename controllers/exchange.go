package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/runner"
)

// The reconciler's side of the exchange ConfigMaps. The cache holds their
// metadata only (cache.go): readiness and result step are annotations the
// runners set, and the current order is mirrored in an annotation of the
// plan ConfigMap, so deciding the next protocol step never reads data.
// Data — ready reports, step results — is read from the API server when
// it is needed, a page of client ConfigMaps at a time, and only from
// ConfigMaps the benchmark controls.

// annotationOrder mirrors the plan ConfigMap's order.json for the operator.
const annotationOrder = "storagebench.io/order"

// clientPage bounds the client ConfigMaps read at once: each may hold up
// to a ConfigMap's 1 MiB, and there may be a thousand clients.
const clientPage = 25

// asConfigMap views cached metadata as a ConfigMap without data, for the
// exchange package's annotation readers.
func asConfigMap(m *metav1.PartialObjectMetadata) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: m.ObjectMeta}
}

// orderOf reads the current order from the plan's annotation.
func orderOf(obs *observed) (runner.StepOrder, bool, error) {
	var o runner.StepOrder
	if obs.plan == nil {
		return o, false, nil
	}
	v, found := obs.plan.Annotations[annotationOrder]
	if !found {
		return o, false, nil
	}
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return o, true, fmt.Errorf("ConfigMap %s annotation %s: %w", obs.plan.Name, annotationOrder, err)
	}
	return o, true, nil
}

// writeOrder writes o into the plan ConfigMap (data for the runners, the
// annotation for the operator) as one merge patch that carries the
// resourceVersion observed: a stale cache cannot order twice.
func (r *Reconciler) writeOrder(ctx context.Context, plan *metav1.PartialObjectMetadata, o runner.StepOrder) error {
	value, err := exchange.Encode(o)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": plan.ResourceVersion, "annotations": map[string]string{annotationOrder: value}},
		"data":     map[string]string{exchange.KeyOrder: value},
	})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: plan.Namespace, Name: plan.Name}}
	return r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, body))
}

// eachClientData reads the data of b's client ConfigMaps whose index
// wanted accepts, page by page from the API server, and hands each to fn
// with its index; ConfigMaps b does not control are skipped.
func (r *Reconciler) eachClientData(ctx context.Context, b *v1alpha1.StorageBenchmark, wanted func(int) bool, fn func(int, *corev1.ConfigMap) error) error {
	n := int(b.Spec.Clients.Count)
	opts := []client.ListOption{client.InNamespace(b.Namespace), client.Limit(clientPage),
		client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}}
	for cont := ""; ; {
		var page corev1.ConfigMapList
		if err := r.APIReader.List(ctx, &page, append(opts, client.Continue(cont))...); err != nil {
			return err
		}
		for i := range page.Items {
			cm := &page.Items[i]
			k := clientIndex(cm, n)
			if k < 0 || !ownedBy(cm, b) || cm.Name != exchange.ClientName(b.Name, k) || !wanted(k) {
				continue
			}
			if err := fn(k, cm); err != nil {
				return err
			}
			page.Items[i] = corev1.ConfigMap{} // done with its data
		}
		if cont = page.Continue; cont == "" {
			return nil
		}
	}
}
