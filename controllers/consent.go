package controllers

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/protocol"
)

// A benchmark on storage.existingClaim writes to a volume somebody else
// provisioned, which may hold production data. The claim's owner consents
// by annotating the claim; a benchmark's author alone cannot.

// consentMissing explains why the existing claim may not be benchmarked,
// or returns "".
func consentMissing(b *v1alpha1.StorageBenchmark, pvc *corev1.PersistentVolumeClaim) string {
	block := b.Spec.Storage.VolumeMode == corev1.PersistentVolumeBlock
	want := ConsentFiles
	if block {
		want = ConsentBlockOverwrite
	}
	got, set := pvc.Annotations[AnnotationAllowBenchmark]
	switch {
	case got == want:
		return ""
	case !set:
		return fmt.Sprintf("storage.existingClaim %q has no %s annotation: its owner must consent before a benchmark writes to it; annotate the claim with %s=%s (%s)",
			pvc.Name, AnnotationAllowBenchmark, AnnotationAllowBenchmark, want, consentMeaning(want))
	default:
		return fmt.Sprintf("storage.existingClaim %q allows %q, but a %s benchmark needs %s=%s (%s)",
			pvc.Name, clip(got, 64), b.Spec.Storage.VolumeMode, AnnotationAllowBenchmark, want, consentMeaning(want))
	}
}

func consentMeaning(v string) string {
	if v == ConsentBlockOverwrite {
		return "the raw device is overwritten and its data destroyed"
	}
	return "files are written only in a directory of the benchmark's own, then removed"
}

// capacityShort explains why an existing claim cannot hold what the
// benchmark writes on it, or returns "": every client writes on the one
// claim (its own files in the benchmark's directory, or its own region of
// the raw device), perClient bytes each, and a Filesystem claim keeps
// protocol.AppReservePercent of its capacity for the application. The
// capacity is the bound volume's (status.capacity), else the request. The
// runners check the free space they see too, before they write.
func capacityShort(b *v1alpha1.StorageBenchmark, pvc *corev1.PersistentVolumeClaim, perClient int64) string {
	capacity, ok := pvc.Status.Capacity[corev1.ResourceStorage]
	if !ok {
		capacity, ok = pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	clients := int64(b.Spec.Clients.Count)
	if !ok || perClient <= 0 || clients <= 0 {
		return ""
	}
	size := capacity.Value()
	usable, what := size, "its capacity"
	if b.Spec.Storage.VolumeMode != corev1.PersistentVolumeBlock {
		// size less its reserve rounded up, without overflowing.
		reserve := size/100*protocol.AppReservePercent + (size%100*protocol.AppReservePercent+99)/100
		usable = size - reserve
		what = fmt.Sprintf("%d %% of its capacity (the rest stays free for the application)", 100-protocol.AppReservePercent)
	}
	if perClient <= usable/clients {
		return ""
	}
	need := "more"
	if perClient <= math.MaxInt64/clients {
		need = numfmt.Size(perClient * clients)
	}
	return fmt.Sprintf("storage.existingClaim %q holds %s, and %d clients × workload.workingSetPerClient (%s) need %s, more than %s (%s): lower workingSetPerClient or clients.count, or use a larger claim",
		pvc.Name, numfmt.Size(size), clients, numfmt.Size(perClient), need, what, numfmt.Size(usable))
}
