package apireport

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
)

// FromAPI carries a repeated run's repetitions, its repeatability and an
// Unstable condition into the report.
func TestFromAPIRepeatability(t *testing.T) {
	sb := fixture(t, "oltp")
	sb.Spec.Load.Repeat = 3
	for i := range sb.Status.Steps {
		sb.Status.Steps[i].Repetition = int32(i%3 + 1)
	}
	stable := false
	sb.Status.Repeatability = []v1alpha1.RepeatabilityStatus{{Level: 1, OfferedIOPS: 4000, Runs: 3,
		IOPS:   v1alpha1.IOPSVariation{Mean: 3990, CVPercent: 2, CI95Low: 3800, CI95High: 4180},
		P99:    &v1alpha1.LatencyVariation{Mean: metav1.Duration{Duration: time.Millisecond}, CVPercent: 12, CI95Low: metav1.Duration{Duration: 700 * time.Microsecond}, CI95High: metav1.Duration{Duration: 1300 * time.Microsecond}},
		Stable: &stable}}
	sb.Status.Conditions = append(sb.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionUnstable, Status: metav1.ConditionTrue,
		Reason: "VariationAboveLimit", Message: "level 2: p99 latency CV 12 %"})
	r := FromAPI(sb)
	want := report.Repeatability{Level: 1, OfferedIOPS: 4000, Runs: 3,
		IOPS:   report.Spread{Mean: 3990, CVPercent: 2, CI95Low: 3800, CI95High: 4180},
		P99:    &report.LatencySpread{Mean: time.Millisecond, CVPercent: 12, CI95Low: 700 * time.Microsecond, CI95High: 1300 * time.Microsecond},
		Stable: &stable}
	if len(r.Repeatability) != 1 || !reflect.DeepEqual(r.Repeatability[0], want) {
		t.Errorf("repeatability %+v, want %+v", r.Repeatability, want)
	}
	if r.Repeat != 3 || r.Unstable != "VariationAboveLimit: level 2: p99 latency CV 12 %" {
		t.Errorf("repeat %d, unstable %q", r.Repeat, r.Unstable)
	}
	for i, s := range r.Steps {
		if s.Repetition != i%3+1 {
			t.Errorf("step %d: repetition %d", i, s.Repetition)
		}
	}
	if d := DocumentOf(sb, report.Options{}); len(d.Repeatability) != 1 || d.Repeatability[0].Runs != 3 {
		t.Errorf("the JSON report's repeatability: %+v", d.Repeatability)
	}
}
