package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// A benchmark on storage.existingClaim writes to a volume somebody else
// provisioned, which may hold production data. The claim's owner consents
// by annotating the claim; a benchmark's author alone cannot.
const (
	// AnnotationAllowBenchmark on a PersistentVolumeClaim lets benchmarks
	// use it as storage.existingClaim.
	AnnotationAllowBenchmark = "storagebench.io/allow-benchmark"
	// ConsentFiles lets a Filesystem benchmark write its files in a
	// directory of its own on the volume (BenchmarkDirectory), and remove
	// exactly those files afterwards. Nothing else on the volume is read,
	// written or re-owned.
	ConsentFiles = "files"
	// ConsentBlockOverwrite lets a Block benchmark overwrite the raw
	// device: whatever the volume held is destroyed.
	ConsentBlockOverwrite = "block-overwrite"
)

// BenchmarkDirectory is where a benchmark writes on an existing
// Filesystem claim: named after the benchmark and its UID, so two
// benchmarks, or two runs under one name, never share files.
func BenchmarkDirectory(b *v1alpha1.StorageBenchmark) string {
	uid := string(b.UID)
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return fmt.Sprintf("storagebench-%s-%s", b.Name, uid)
}

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
