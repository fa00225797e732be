package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
)

// TestCountRuns checks the run counters follow the transitions once.
func TestCountRuns(t *testing.T) {
	now := time.Unix(1000, 0)
	started, completed := testutil.ToFloat64(sbmetrics.RunsStarted), testutil.ToFloat64(sbmetrics.RunsCompleted)
	failed := testutil.ToFloat64(sbmetrics.RunsFailed.WithLabelValues(ReasonClientLost))

	b := &v1alpha1.StorageBenchmark{}
	old := b.DeepCopy()
	b.Status.StartTime = &metav1.Time{Time: now}
	countRuns(old, b, time.Time{})
	countRuns(b.DeepCopy(), b, time.Time{}) // no transition
	old = b.DeepCopy()
	setComplete(b, now, "done")
	countRuns(old, b, time.Time{})
	countRuns(b.DeepCopy(), b, time.Time{})

	f := &v1alpha1.StorageBenchmark{}
	old = f.DeepCopy()
	setFailed(f, now, ReasonClientLost, "lost")
	countRuns(old, f, time.Time{})
	countRuns(f.DeepCopy(), f, time.Time{})

	// A status rebuilt after a wipe by a manager started later: its
	// transitions were counted by the manager that saw them.
	rebuilt := b.DeepCopy()
	countRuns(&v1alpha1.StorageBenchmark{}, rebuilt, now.Add(time.Minute))
	rebuiltFailed := f.DeepCopy()
	countRuns(&v1alpha1.StorageBenchmark{}, rebuiltFailed, now.Add(time.Minute))
	// The same second as the start still counts: times are stored in
	// seconds, and a transition in that second happened under this manager.
	sameSecond := f.DeepCopy()
	sameSecond.Status.Conditions = nil
	setFailed(sameSecond, now, ReasonClientLost, "lost")
	countRuns(&v1alpha1.StorageBenchmark{}, sameSecond, now.Add(500*time.Millisecond))

	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"started", testutil.ToFloat64(sbmetrics.RunsStarted), started + 1},
		{"completed", testutil.ToFloat64(sbmetrics.RunsCompleted), completed + 1},
		{"failed", testutil.ToFloat64(sbmetrics.RunsFailed.WithLabelValues(ReasonClientLost)), failed + 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
