package spec

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
)

const testName = "bench"

// newBench is a benchmark as the API server stores it: the CRD's defaults
// filled in (unit tests see no defaulting), then mods applied.
func newBench(mods ...func(*v1alpha1.StorageBenchmark)) *v1alpha1.StorageBenchmark {
	opts := []build.Option{build.Class("fast"), build.Size("10Gi"), build.Workload(v1alpha1.WorkloadSpec{}),
		build.Rates(1000, 2000, 3000), build.Ramp(5 * time.Second), build.Defaulted()}
	for _, m := range mods {
		opts = append(opts, build.With(m))
	}
	return build.Benchmark("perf", testName, opts...)
}

func mustRun(t *testing.T, b *v1alpha1.StorageBenchmark) Run {
	t.Helper()
	r, err := Of(b)
	if err != nil {
		t.Fatalf("Of() error: %v", err)
	}
	return r
}

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func clients(n int32) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = n }
}

func jobsPerClient(n int32) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.JobsPerClient = n }
}

func sharing(s v1alpha1.Sharing) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.Sharing = s }
}

func existingClaim(name string) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.ExistingClaim = ptr.To(name) }
}

func volumeMode(m corev1.PersistentVolumeMode) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.VolumeMode = m }
}

func withWorkload(w v1alpha1.WorkloadSpec) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Workload = w }
}

func withLoad(mod func(l *v1alpha1.LoadSpec)) func(*v1alpha1.StorageBenchmark) {
	return func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Load.Rate = nil
		mod(&b.Spec.Load)
	}
}
