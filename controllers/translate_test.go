package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/test/build"
)

// The translation's own tests are internal/spec's; these helpers build the
// benchmarks of the controllers' tests.

func mustDesired(t *testing.T, b *v1alpha1.StorageBenchmark) spec.Run {
	t.Helper()
	d, err := spec.Of(b)
	if err != nil {
		t.Fatalf("spec.Of() error: %v", err)
	}
	return d
}

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func TestStepEnd(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	o := protocol.StepOrder{StartAt: start, Ramp: 5 * time.Second, Duration: time.Minute}
	if got, want := o.End(), start.Add(65*time.Second); !got.Equal(want) {
		t.Errorf("End() = %s, want %s", got, want)
	}
}

// What the controllers take from spec.Of: the directory on an existing
// claim is the one cleanup empties (spec.BenchmarkDirectory), and the
// clients' plan carries the run's volume.
func TestDesiredOfIsTheSpecsTranslation(t *testing.T) {
	b := newBench(build.Clients(2), build.Sharing(v1alpha1.SharingShared), build.ExistingClaim("mine"))
	b.UID = types.UID("0123456789abcdef")
	d := mustDesired(t, b)
	if d.Volume.Subdir != spec.BenchmarkDirectory(b) || d.Volume.Subdir != "storagebench-bench-01234567" || !d.Volume.RemoveWhenDone {
		t.Errorf("volume %+v, want the subdirectory %s removed when done", d.Volume, spec.BenchmarkDirectory(b))
	}
	if p := spec.ClientPlan(b, &d); p.Benchmark != testName || p.Volume != d.Volume || p.Volume.Path != protocol.DataMountPath {
		t.Errorf("spec.ClientPlan() = %+v", p)
	}
	if got := spec.SteadyOptionsOf(&b.Spec); got.Rounds != 0 {
		t.Errorf("spec.SteadyOptionsOf() = %+v, want the spec's (unset) rounds", got)
	}
}
