package spec

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
)

const testName = "bench"

// newBench is a benchmark as the API server stores it: the CRD's defaults
// filled in (unit tests see no defaulting), then mods applied.
func newBench(mods ...build.Option) *v1alpha1.StorageBenchmark {
	return build.Stored("perf", testName, mods...)
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
