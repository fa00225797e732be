package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// An existing claim holds the application's data: consent to files is not
// consent to fill it. The benchmark's working set, over every client, must
// fit in the claim's capacity less the application's reserve (Filesystem)
// or in the device (Block).
func TestCapacityShort(t *testing.T) {
	claim := func(capacity string, bound bool) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{}
		pvc.Name = "postgres-data"
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
		if bound { // Trident rounds some requests up: the bound capacity counts
			pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")}
		}
		return pvc
	}
	bench := func(clients int32, block bool) *v1alpha1.StorageBenchmark {
		return newBench(func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Storage.ExistingClaim = ptr.To("postgres-data")
			b.Spec.Clients.Count = clients
			if block {
				b.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock
			}
		})
	}
	const gi = int64(1) << 30
	tests := []struct {
		name      string
		b         *v1alpha1.StorageBenchmark
		pvc       *corev1.PersistentVolumeClaim
		perClient int64
		short     string // "" fits
	}{
		{"fits with the reserve left", bench(3, false), claim("10Gi", false), 3 * gi, ""},
		{"exactly 90 % of the claim", bench(9, false), claim("10Gi", false), gi, ""},
		{"into the application's reserve", bench(3, false), claim("10Gi", false), 31 * gi / 10, "need 9.3 GiB, more than 90 % of its capacity"},
		{"64 TiB on a 10 GiB claim", bench(1, false), claim("10Gi", false), 64 << 40, "holds 10 GiB, and 1 clients × workload.workingSetPerClient (64 TiB) need 64 TiB"},
		{"a product that would overflow", bench(1000, false), claim("10Gi", false), 1 << 62, "need more"},
		{"the bound capacity, not the request", bench(3, false), claim("10Gi", true), 30 * gi, ""},
		{"a raw device may be overwritten whole", bench(2, true), claim("10Gi", false), 5 * gi, ""},
		{"but not beyond its end", bench(2, true), claim("10Gi", false), 5*gi + 1, "more than its capacity (10 GiB)"},
		{"nothing to check without a working set", bench(2, false), claim("1Gi", false), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := capacityShort(tt.b, tt.pvc, tt.perClient)
			if (got == "") != (tt.short == "") || !strings.Contains(got, tt.short) {
				t.Fatalf("capacityShort = %q, want %q", got, tt.short)
			}
		})
	}
}
