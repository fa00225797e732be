package exchange

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/runner"
)

// decode unmarshals cm.Data[key] into v; found is false when the key is
// absent.
func decode(cm *corev1.ConfigMap, key string, v any) (found bool, err error) {
	s, ok := cm.Data[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return true, fmt.Errorf("ConfigMap %s key %s: %w", cm.Name, key, err)
	}
	return true, nil
}

// Plan reads the plan template from the plan ConfigMap.
func Plan(cm *corev1.ConfigMap) (runner.ClientPlan, error) {
	var p runner.ClientPlan
	found, err := decode(cm, KeyPlan, &p)
	if err == nil && !found {
		err = fmt.Errorf("ConfigMap %s has no %s", cm.Name, KeyPlan)
	}
	return p, err
}

// Order reads the current order from the plan ConfigMap.
func Order(cm *corev1.ConfigMap) (runner.StepOrder, bool, error) {
	var o runner.StepOrder
	found, err := decode(cm, KeyOrder, &o)
	return o, found, err
}

// ReadyState is what a client ConfigMap's annotation says about readiness.
type ReadyState int

// Readiness of a client.
const (
	NotReady ReadyState = iota
	Ready
	ReadyError
)

// ReadinessOf reads a client ConfigMap's readiness annotation.
func ReadinessOf(cm *corev1.ConfigMap) ReadyState {
	switch cm.Annotations[AnnotationReady] {
	case "true":
		return Ready
	case "error":
		return ReadyError
	}
	return NotReady
}

// ReadyReport reads a client's ready.json (its fio version, or why it could
// not prepare).
func ReadyReport(cm *corev1.ConfigMap) (runner.Ready, bool, error) {
	var r runner.Ready
	found, err := decode(cm, KeyReady, &r)
	return r, found, err
}

// ResultStep is the step index of the client's latest result, or -1.
func ResultStep(cm *corev1.ConfigMap) int {
	k, err := strconv.Atoi(cm.Annotations[AnnotationResultStep])
	if err != nil {
		return -1
	}
	return k
}

// Result reads the client's latest step result.
func Result(cm *corev1.ConfigMap) (results.ClientStep, bool, error) {
	var r results.ClientStep
	found, err := decode(cm, KeyResult, &r)
	return r, found, err
}

// Aggregate reads a step ConfigMap's merged result.
func Aggregate(cm *corev1.ConfigMap) (results.StepAggregate, error) {
	var a results.StepAggregate
	found, err := decode(cm, KeyAggregate, &a)
	if err == nil && !found {
		err = fmt.Errorf("ConfigMap %s has no %s", cm.Name, KeyAggregate)
	}
	return a, err
}

// Encode marshals v for a ConfigMap value.
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
