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
	countRuns(old, b)
	countRuns(b.DeepCopy(), b) // no transition
	old = b.DeepCopy()
	setComplete(b, now, "done")
	countRuns(old, b)
	countRuns(b.DeepCopy(), b)

	f := &v1alpha1.StorageBenchmark{}
	old = f.DeepCopy()
	setFailed(f, now, ReasonClientLost, "lost")
	countRuns(old, f)
	countRuns(f.DeepCopy(), f)

	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"started", testutil.ToFloat64(sbmetrics.RunsStarted), started + 1},
		{"completed", testutil.ToFloat64(sbmetrics.RunsCompleted), completed + 1},
		{"failed", testutil.ToFloat64(sbmetrics.RunsFailed.WithLabelValues(ReasonClientLost)), failed + 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
