package apireport

import (
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
)

// The Ready condition's reasons of a VolumeOperationsBenchmark besides its
// failures' (controllers/volumeoperations sets them).
const (
	operationsRunning  = "Running"
	operationsComplete = "Complete"
)

// OperationsFromAPI is the report model of a VolumeOperationsBenchmark:
// its spec's plan and what its status recorded.
func OperationsFromAPI(b *v1alpha1.VolumeOperationsBenchmark) *report.OperationsRun {
	st := &b.Status
	s := &b.Spec.Storage
	r := &report.OperationsRun{
		Name: b.Name, Namespace: b.Namespace, Created: b.CreationTimestamp.Time,
		Class: s.StorageClassName, SnapshotClass: ptr.Deref(s.VolumeSnapshotClassName, ""), Provisioner: st.Provisioner,
		VolumeMode: string(s.VolumeMode), AccessMode: string(s.AccessMode),
		Phase: string(report.StatePending), State: OperationsStateOf(b), Progress: st.Progress,
	}
	for _, n := range st.Notes {
		note := report.OperationNote{Reason: n.Reason, Message: n.Message}
		for _, op := range n.Operations {
			note.Operations = append(note.Operations, string(op))
		}
		r.Notes = append(r.Notes, note)
	}
	if s.Size != nil {
		r.Size = s.Size.String()
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c != nil {
		r.Phase, r.Message = c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSLOMet); c != nil {
		r.SLOStatus, r.SLOReason = string(c.Status), c.Reason
	}
	for _, op := range b.Spec.Operations {
		r.Operations = append(r.Operations, string(op))
	}
	for _, c := range b.Spec.Concurrency {
		r.Concurrency = append(r.Concurrency, int(c))
	}
	if st.StartTime != nil {
		r.Started = st.StartTime.Time
	}
	if st.CompletionTime != nil {
		r.Ended = st.CompletionTime.Time
	}
	if c := st.Current; c != nil {
		r.Current = &report.OperationsCurrent{Operation: string(c.Operation), Concurrency: int(c.Concurrency),
			Stage: string(c.Stage), Since: c.Since.Time, Attempt: int(c.Attempt)}
	}
	for i := range st.Operations {
		r.Curves = append(r.Curves, curveOfAPI(&st.Operations[i]))
	}
	r.Objectives = slosOf(st.Objectives)
	return r
}

func curveOfAPI(c *v1alpha1.OperationCurveStatus) report.OperationCurve {
	out := report.OperationCurve{Operation: string(c.Operation), Knee: int(ptr.Deref(c.KneeConcurrency, 0))}
	if f := c.PerOperation; f != nil {
		out.PerOperation = &report.FittedDuration{Value: f.Value.Duration, Low: f.Low.Duration, High: f.High.Duration, Steps: int(f.Steps)}
	}
	for _, s := range c.Steps {
		st := report.OperationStep{Concurrency: int(s.Concurrency), Succeeded: int(s.Succeeded), Failed: int(s.Failed),
			TimedOut: int(s.TimedOut), Span: s.Span.Duration, PerMinute: s.PerMinute, Reason: s.Reason}
		if l := s.Latency; l != nil {
			st.Latency = &report.OperationLatency{Min: l.Min.Duration, Mean: l.Mean.Duration, P50: l.P50.Duration,
				P90: l.P90.Duration, P99: l.P99.Duration, Max: l.Max.Duration}
		}
		out.Steps = append(out.Steps, st)
	}
	return out
}

// OperationsStateOf reads the Ready condition: Complete (True, reason
// Complete), Running (reason Running), Failed (False with any other
// reason), Pending without it.
func OperationsStateOf(b *v1alpha1.VolumeOperationsBenchmark) report.State {
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case c == nil:
		return report.StatePending
	case c.Reason == operationsComplete && c.Status == metav1.ConditionTrue:
		return report.StateComplete
	case c.Reason == operationsRunning:
		return report.StateRunning
	case c.Status == metav1.ConditionFalse:
		return report.StateFailed
	}
	return report.StateRunning
}

// Entry points with VolumeOperationsBenchmarks, for the kubectl plugin.

// WriteOperationsStatus prints what `kubectl storagebench status
// sbops/NAME` shows (report.OperationsRun.WriteStatus).
func WriteOperationsStatus(w io.Writer, b *v1alpha1.VolumeOperationsBenchmark, now time.Time) error {
	return OperationsFromAPI(b).WriteStatus(w, now)
}

// OperationsListTable is what `kubectl storagebench list sbops` prints
// (report.OperationsListTable).
func OperationsListTable(items []v1alpha1.VolumeOperationsBenchmark, now time.Time, withNamespace bool) report.Table {
	runs := make([]*report.OperationsRun, len(items))
	for i := range items {
		runs[i] = OperationsFromAPI(&items[i])
	}
	return report.OperationsListTable(runs, now, withNamespace)
}

// OperationsDocument is the JSON report of a VolumeOperationsBenchmark:
// which it is, and status.operations (and status.objectives) as they are.
type OperationsDocument struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Class     string `json:"storageClass"`
	// Status is the Ready condition's reason.
	Status     string                          `json:"status"`
	Operations []v1alpha1.OperationCurveStatus `json:"operations"`
	Objectives []v1alpha1.SLOStatus            `json:"objectives,omitempty"`
}

// WriteOperationsDocument writes the JSON report of a
// VolumeOperationsBenchmark, indented, with a final newline.
func WriteOperationsDocument(w io.Writer, b *v1alpha1.VolumeOperationsBenchmark) error {
	d := OperationsDocument{Name: b.Name, Namespace: b.Namespace, Class: b.Spec.Storage.StorageClassName,
		Status: OperationsFromAPI(b).Phase, Operations: b.Status.Operations, Objectives: b.Status.Objectives}
	if d.Operations == nil {
		d.Operations = []v1alpha1.OperationCurveStatus{}
	}
	return writeJSON(w, d)
}

// DecodeOperations reads saved VolumeOperationsBenchmarks: `kubectl get
// sbops NAME -o yaml` (or -o json), a List of them, or several YAML
// documents; StorageBenchmarks and ConfigMaps saved with them are skipped.
func DecodeOperations(data []byte) ([]v1alpha1.VolumeOperationsBenchmark, error) {
	s, err := DecodeSaved(data)
	if err != nil {
		return nil, err
	}
	if len(s.Operations) == 0 {
		return nil, fmt.Errorf("no VolumeOperationsBenchmark found")
	}
	return s.Operations, nil
}
