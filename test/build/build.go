// Package build builds the StorageBenchmarks the tests create: one base
// spec, a small OLTP run, changed by options applied in order. It imports
// only the API types, k8s.io/api, k8s.io/apimachinery, k8s.io/utils and
// the YAML and merge-patch libraries, so that every test, the controllers
// package's own included, can use it.
package build

import (
	"fmt"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Option changes a benchmark being built.
type Option func(*v1alpha1.StorageBenchmark)

// Benchmark is the benchmark ns/name: one client with a 1Gi volume of its
// own, of the cluster's default class, running one fio job of the oltp
// profile on an 8Mi working set, with a 1 s ramp before each step; no load
// steps, no step duration. Then opts, in order.
func Benchmark(ns, name string, opts ...Option) *v1alpha1.StorageBenchmark {
	b := &v1alpha1.StorageBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.StorageBenchmarkSpec{
			Storage:  v1alpha1.StorageSpec{Size: resource.MustParse("1Gi"), Sharing: v1alpha1.SharingPerClient},
			Clients:  v1alpha1.ClientsSpec{Count: 1, JobsPerClient: 1},
			Workload: v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: ptr.To(resource.MustParse("8Mi"))},
			Load:     v1alpha1.LoadSpec{RampTime: &metav1.Duration{Duration: time.Second}},
		},
	}
	for _, o := range opts {
		o(b)
	}
	return b
}

// With applies f (nothing when nil): anything the other options do not say.
func With(f func(*v1alpha1.StorageBenchmark)) Option {
	return func(b *v1alpha1.StorageBenchmark) {
		if f != nil {
			f(b)
		}
	}
}

// Typed sets apiVersion and kind, as a manifest for kubectl has them.
func Typed() Option {
	return func(b *v1alpha1.StorageBenchmark) {
		b.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark"}
	}
}

// Class is the volumes' storage class.
func Class(name string) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.StorageClassName = ptr.To(name) }
}

// Size is each volume's size, such as "10Gi".
func Size(q string) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.Size = resource.MustParse(q) }
}

// Shared is one ReadWriteMany volume all clients share.
func Shared() Option {
	return func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingShared, corev1.ReadWriteMany
	}
}

// PerClient is a volume per client, its access mode unset (the operator's
// choice), as in the base.
func PerClient() Option {
	return func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingPerClient, ""
	}
}

// Clients is the number of clients.
func Clients(n int32) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = n }
}

// Workload replaces the workload; Workload(v1alpha1.WorkloadSpec{}) leaves
// it to the defaults.
func Workload(w v1alpha1.WorkloadSpec) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Workload = w }
}

// Profile is the workload profile.
func Profile(p string) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Workload.Profile = p }
}

// WorkingSet is each client's working set, such as "64Mi".
func WorkingSet(q string) Option {
	return func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse(q))
	}
}

// Rates is a load of rate steps, in the unit the CRD defaults (IOPS).
func Rates(steps ...int64) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Load.Rate = &v1alpha1.RateSteps{Steps: steps} }
}

// StepDuration is each step's duration.
func StepDuration(d time.Duration) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Load.StepDuration = metav1.Duration{Duration: d} }
}

// Ramp is the ramp before each step.
func Ramp(d time.Duration) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Load.RampTime = &metav1.Duration{Duration: d} }
}

// Stored is the benchmark the unit tests start from, as the API server
// would store it (Defaulted): 1 client with a 10Gi volume of its own of
// class fast, the 4 KiB random read default workload, rate steps 1000, 2000
// and 3000 IOPS of a minute each after a 5 s ramp; then opts, in order,
// which may unset what the defaults set.
func Stored(ns, name string, opts ...Option) *v1alpha1.StorageBenchmark {
	base := []Option{Class("fast"), Size("10Gi"), Workload(v1alpha1.WorkloadSpec{}), Rates(1000, 2000, 3000), Ramp(5 * time.Second), Defaulted()}
	return Benchmark(ns, name, append(base, opts...)...)
}

// Sharing is how clients share volumes.
func Sharing(s v1alpha1.Sharing) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.Sharing = s }
}

// ExistingClaim benchmarks the existing claim name.
func ExistingClaim(name string) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.ExistingClaim = ptr.To(name) }
}

// VolumeMode is the volumes' mode.
func VolumeMode(m corev1.PersistentVolumeMode) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.VolumeMode = m }
}

// AccessMode is the volumes' access mode.
func AccessMode(m corev1.PersistentVolumeAccessMode) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.AccessMode = m }
}

// JobsPerClient is the fio jobs each client runs.
func JobsPerClient(n int32) Option {
	return func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.JobsPerClient = n }
}

// Load replaces the rate steps by what mod sets on the load.
func Load(mod func(*v1alpha1.LoadSpec)) Option {
	return func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Load.Rate = nil
		mod(&b.Spec.Load)
	}
}

// Defaulted makes the benchmark as the API server stores it on create, for
// unit tests that see no defaulting: generation 1, and the CRD's defaults
// in the unset fields the controllers' tests rely on (storage size, volume
// mode and sharing, clients and jobs, the rate unit, step duration and
// ramp, analysis, cleanup). Precondition, arrivals, repeat and steady state
// stay unset. Apply it last.
func Defaulted() Option {
	return func(b *v1alpha1.StorageBenchmark) {
		if b.Generation == 0 {
			b.Generation = 1
		}
		s, c, l, a := &b.Spec.Storage, &b.Spec.Clients, &b.Spec.Load, &b.Spec.Analysis
		if s.Size.IsZero() {
			s.Size = resource.MustParse("10Gi")
		}
		setDefault(&s.VolumeMode, corev1.PersistentVolumeFilesystem)
		setDefault(&s.Sharing, v1alpha1.SharingPerClient)
		setDefault(&c.Count, 1)
		setDefault(&c.JobsPerClient, 1)
		if l.Rate != nil {
			setDefault(&l.Rate.Unit, "IOPS")
		}
		setDefault(&l.StepDuration, metav1.Duration{Duration: time.Minute})
		if l.RampTime == nil {
			l.RampTime = &metav1.Duration{Duration: 5 * time.Second}
		}
		setDefault(&a.LatencyTarget, metav1.Duration{Duration: time.Millisecond})
		setDefault(&a.TargetLatency.Metric, "mean")
		setDefault(&a.TargetLatency.Operation, "total")
		setDefault(&a.SaturationPercent, 90)
		setDefault(&b.Spec.Cleanup.Volumes, v1alpha1.VolumesDelete)
	}
}

// setDefault sets *field to def when it holds its zero value.
func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// PatchedSpec is a spec written as YAML, base, changed by patch, a YAML
// JSON merge patch (RFC 7386: maps merge, null deletes, anything else
// replaces; empty: none), decoded as the API server decodes JSON
// (integers as int64): the spec of an object sent as unstructured.
func PatchedSpec(base, patch string) (map[string]any, error) {
	doc, err := yaml.YAMLToJSON([]byte(base))
	if err != nil {
		return nil, fmt.Errorf("base spec: %w", err)
	}
	if strings.TrimSpace(patch) != "" {
		p, err := yaml.YAMLToJSON([]byte(patch))
		if err == nil {
			doc, err = jsonpatch.MergePatch(doc, p)
		}
		if err != nil {
			return nil, fmt.Errorf("patch %q: %w", patch, err)
		}
	}
	spec := map[string]any{}
	if err := utiljson.Unmarshal(doc, &spec); err != nil {
		return nil, err
	}
	return spec, nil
}
