package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// MaxClientValueBytes caps each value a runner writes to its ConfigMap
// (ready.json, result.json); a larger one is refused before it is decoded.
// A real step result of two fio jobs (internal/results/testdata) encodes to
// 7.5 KB; the largest valid one, with all 1,856 of fio's latency bins filled
// in both directions with the largest counts results.ClientStep.Validate
// allows and a protocol.MaxErrorBytes error of JSON-escaped characters, to
// 112 KB (TestLargestValidResultFitsTheCap), less than half the cap.
const MaxClientValueBytes = 256 << 10

// ErrInvalidClientData marks a runner's value the operator refuses: too
// large, not JSON, or failing validation. It is permanent (the run fails);
// other errors reading a runner's results are transient.
var ErrInvalidClientData = errors.New("invalid client data")

// decodeClient is decode for a value written by a runner, which may not be
// trusted: its size is checked first, and every failure is
// ErrInvalidClientData.
func decodeClient(cm *corev1.ConfigMap, key string, v any) (found bool, err error) {
	if n := len(cm.Data[key]); n > MaxClientValueBytes {
		return true, fmt.Errorf("ConfigMap %s key %s: %d bytes exceed the %d-byte cap: %w", cm.Name, key, n, MaxClientValueBytes, ErrInvalidClientData)
	}
	found, err = decode(cm, key, v)
	if err != nil {
		err = fmt.Errorf("%w: %w", err, ErrInvalidClientData)
	}
	return found, err
}

// invalid wraps a validation failure of a runner's value.
func invalid(cm *corev1.ConfigMap, key string, err error) error {
	return fmt.Errorf("ConfigMap %s key %s: %w: %w", cm.Name, key, err, ErrInvalidClientData)
}

// checkIndex compares an index a runner reports with the one its
// ConfigMap's label or annotation name holds (when present and numeric).
func checkIndex(cm *corev1.ConfigMap, key, what, name, value string, got int) error {
	want, err := strconv.Atoi(value)
	if err != nil || want == got {
		return nil
	}
	return invalid(cm, key, fmt.Errorf("reports %s %d but %s says %d", what, got, name, want))
}

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

// Plan reads the plan template from the plan ConfigMap and checks it
// (ClientPlan.Validate), once, where it enters the runner.
func Plan(cm *corev1.ConfigMap) (protocol.ClientPlan, error) {
	var p protocol.ClientPlan
	found, err := decode(cm, KeyPlan, &p)
	switch {
	case err != nil:
	case !found:
		err = fmt.Errorf("ConfigMap %s has no %s", cm.Name, KeyPlan)
	default:
		if verr := p.Validate(); verr != nil {
			err = fmt.Errorf("ConfigMap %s key %s: %w", cm.Name, KeyPlan, verr)
		}
	}
	return p, err
}

// Order reads the current order from the plan ConfigMap.
func Order(cm *corev1.ConfigMap) (protocol.StepOrder, bool, error) {
	var o protocol.StepOrder
	found, err := decode(cm, KeyOrder, &o)
	return o, found, err
}

// NextOrder reads the order written ahead (KeyNextOrder) from the plan
// ConfigMap.
func NextOrder(cm *corev1.ConfigMap) (protocol.StepOrder, bool, error) {
	var o protocol.StepOrder
	found, err := decode(cm, KeyNextOrder, &o)
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

// ReadinessOf reads a client ConfigMap's readiness annotation (from the
// ConfigMap or its metadata alone).
func ReadinessOf(cm metav1.Object) ReadyState {
	switch cm.GetAnnotations()[AnnotationReady] {
	case "true":
		return Ready
	case "error":
		return ReadyError
	}
	return NotReady
}

// ReadyReport reads a client's ready.json (its fio version, clock offset and
// mount, or why it could not prepare). The value is refused, with
// ErrInvalidClientData, when it is over MaxClientValueBytes, not JSON, fails
// protocol.Ready.Validate or names another client than the ConfigMap's label;
// its free text is cut to protocol.MaxErrorBytes.
func ReadyReport(cm *corev1.ConfigMap) (protocol.Ready, bool, error) {
	var r protocol.Ready
	found, err := decodeClient(cm, KeyReady, &r)
	if err != nil || !found {
		return protocol.Ready{}, found, err
	}
	if err := r.Validate(); err != nil {
		return protocol.Ready{}, true, invalid(cm, KeyReady, err)
	}
	if err := checkIndex(cm, KeyReady, "client", LabelClient, cm.Labels[LabelClient], r.Client); err != nil {
		return protocol.Ready{}, true, err
	}
	for _, s := range []*string{&r.Error, &r.FioVersion, &r.ClockOffsetError} {
		*s = protocol.Truncate(*s, protocol.MaxErrorBytes)
	}
	if m := r.Mount; m != nil {
		for _, s := range []*string{&m.Source, &m.FSType, &m.Options} {
			*s = protocol.Truncate(*s, protocol.MaxErrorBytes)
		}
	}
	return r, true, nil
}

// ResultStep is the step index of the client's latest result, or -1 (from
// the ConfigMap or its metadata alone).
func ResultStep(cm metav1.Object) int {
	k, err := strconv.Atoi(cm.GetAnnotations()[AnnotationResultStep])
	if err != nil {
		return -1
	}
	return k
}

// Result reads the client's latest step result: binaryData result.bin in
// the wire encoding (results.WireDecoder), or data result.json as JSON, as
// the runner chose (a ConfigMap holding both is refused). The value is
// refused, with ErrInvalidClientData, when it is over MaxClientValueBytes,
// not decodable, fails results.ClientStep.Validate, or names another client
// or step than the ConfigMap's label and annotation; its error text is cut
// to protocol.MaxErrorBytes.
func Result(cm *corev1.ConfigMap) (results.ClientStep, bool, error) {
	return new(ResultReader).Read(cm)
}

// A ResultReader reads clients' results one after another, as Result does,
// decoding wire-encoded ones into the same storage: what Read returns is
// valid until the next Read. The operator reads, merges and drops a step's
// results this way.
type ResultReader struct {
	wire results.WireDecoder
}

// Read is Result into the reader's storage.
func (rr *ResultReader) Read(cm *corev1.ConfigMap) (results.ClientStep, bool, error) {
	r, key, found, err := rr.decode(cm)
	if err != nil || !found {
		return results.ClientStep{}, found, err
	}
	if err := r.Validate(); err != nil {
		return results.ClientStep{}, true, invalid(cm, key, err)
	}
	if err := errors.Join(checkIndex(cm, key, "client", LabelClient, cm.Labels[LabelClient], r.Client),
		checkIndex(cm, key, "step", AnnotationResultStep, cm.Annotations[AnnotationResultStep], r.Step)); err != nil {
		return results.ClientStep{}, true, err
	}
	r.Error = protocol.Truncate(r.Error, protocol.MaxErrorBytes)
	return r, true, nil
}

// decode decodes whichever encoding of the result cm holds; key is the
// one it read.
func (rr *ResultReader) decode(cm *corev1.ConfigMap) (r results.ClientStep, key string, found bool, err error) {
	wire, isWire := cm.BinaryData[KeyResultWire]
	_, isJSON := cm.Data[KeyResult]
	switch {
	case isWire && isJSON:
		return r, KeyResultWire, true, invalid(cm, KeyResultWire, fmt.Errorf("the ConfigMap also holds %s: a runner writes one encoding", KeyResult))
	case !isWire:
		found, err = decodeClient(cm, KeyResult, &r)
		return r, KeyResult, found, err
	case len(wire) > MaxClientValueBytes:
		return r, KeyResultWire, true, invalid(cm, KeyResultWire, fmt.Errorf("%d bytes exceed the %d-byte cap", len(wire), MaxClientValueBytes))
	}
	p, err := rr.wire.Decode(wire)
	if err != nil {
		return r, KeyResultWire, true, invalid(cm, KeyResultWire, err)
	}
	return *p, KeyResultWire, true, nil
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

// Step reads a step ConfigMap: the order the step ran under and its
// merged result, which must both be step k's. Status is rebuilt from these.
func Step(cm *corev1.ConfigMap, k int) (protocol.StepOrder, results.StepAggregate, error) {
	var o protocol.StepOrder
	found, err := decode(cm, KeyOrder, &o)
	if err == nil && !found {
		err = fmt.Errorf("ConfigMap %s has no %s", cm.Name, KeyOrder)
	}
	if err != nil {
		return o, results.StepAggregate{}, err
	}
	a, err := Aggregate(cm)
	switch {
	case err != nil:
	case o.Done || o.Index != k:
		err = fmt.Errorf("ConfigMap %s key %s: holds no order for step %d", cm.Name, KeyOrder, k)
	case a.Step != k:
		err = fmt.Errorf("ConfigMap %s key %s: holds step %d's result, not step %d's", cm.Name, KeyAggregate, a.Step, k)
	}
	return o, a, err
}

// Encode marshals v for a ConfigMap value.
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
