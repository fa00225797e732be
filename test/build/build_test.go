package build_test

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
)

// TestRecipes holds each test builder's recipe against the object it built
// by hand before this package: the same, field for field.
func TestRecipes(t *testing.T) {
	oltp := func(ws string) v1alpha1.WorkloadSpec {
		return v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: ptr.To(resource.MustParse(ws))}
	}
	load := func(d time.Duration, steps ...int64) v1alpha1.LoadSpec {
		return v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Steps: steps},
			StepDuration: metav1.Duration{Duration: d}, RampTime: &metav1.Duration{Duration: time.Second}}
	}
	sharedStorage := v1alpha1.StorageSpec{StorageClassName: ptr.To("local"), Size: resource.MustParse("1Gi"),
		Sharing: v1alpha1.SharingShared, AccessMode: corev1.ReadWriteMany}
	tests := []struct {
		name      string
		got, want *v1alpha1.StorageBenchmark
	}{{
		name: "controllers newBench",
		got: build.Benchmark("perf", "bench", build.Class("fast"), build.Size("10Gi"), build.Workload(v1alpha1.WorkloadSpec{}),
			build.Rates(1000, 2000, 3000), build.Ramp(5*time.Second), build.Defaulted()),
		want: &v1alpha1.StorageBenchmark{
			ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "perf", Generation: 1},
			Spec: v1alpha1.StorageBenchmarkSpec{
				Storage: v1alpha1.StorageSpec{StorageClassName: ptr.To("fast"), Size: resource.MustParse("10Gi"),
					VolumeMode: corev1.PersistentVolumeFilesystem, Sharing: v1alpha1.SharingPerClient},
				Clients: v1alpha1.ClientsSpec{Count: 1, JobsPerClient: 1},
				Load: v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000, 2000, 3000}},
					StepDuration: metav1.Duration{Duration: time.Minute}, RampTime: &metav1.Duration{Duration: 5 * time.Second}},
				Analysis: v1alpha1.AnalysisSpec{LatencyTarget: metav1.Duration{Duration: time.Millisecond},
					TargetLatency: v1alpha1.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90},
				Cleanup: v1alpha1.CleanupSpec{Volumes: v1alpha1.VolumesDelete},
			},
		},
	}, {
		name: "integration benchmark",
		got: build.Benchmark("ns", "b", build.Class("local"), build.Shared(), build.Clients(3),
			build.Rates(150, 300), build.StepDuration(5*time.Second), build.With(nil)),
		want: &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
			Spec: v1alpha1.StorageBenchmarkSpec{Storage: sharedStorage, Clients: v1alpha1.ClientsSpec{Count: 3, JobsPerClient: 1},
				Workload: oltp("8Mi"), Load: load(5*time.Second, 150, 300)}},
	}, {
		name: "outage newBenchmark",
		got:  build.Benchmark("ns", "b", build.Class("local"), build.Shared(), build.Clients(2), build.Rates(100, 200), build.StepDuration(10*time.Second)),
		want: &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
			Spec: v1alpha1.StorageBenchmarkSpec{Storage: sharedStorage, Clients: v1alpha1.ClientsSpec{Count: 2, JobsPerClient: 1},
				Workload: oltp("8Mi"), Load: load(10*time.Second, 100, 200)}},
	}, {
		name: "e2e small",
		got: build.Benchmark("ns", "b", build.Typed(), build.Class("local-path"), build.Clients(2), build.WorkingSet("64Mi"),
			build.Rates(100, 200), build.StepDuration(10*time.Second)),
		want: &v1alpha1.StorageBenchmark{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
			Spec: v1alpha1.StorageBenchmarkSpec{
				Storage: v1alpha1.StorageSpec{StorageClassName: ptr.To("local-path"), Size: resource.MustParse("1Gi"),
					Sharing: v1alpha1.SharingPerClient},
				Clients: v1alpha1.ClientsSpec{Count: 2, JobsPerClient: 1}, Workload: oltp("64Mi"), Load: load(10*time.Second, 100, 200)}},
	}}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: built\n%s\nwant\n%s", tt.name, dump.Pretty(tt.got), dump.Pretty(tt.want))
		}
	}
}
