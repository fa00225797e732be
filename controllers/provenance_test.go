package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// A schedule acts only on runs it created: the key's signature, bound to
// the run's UID, proves it; an owner reference, a label or a copied
// signature do not.
func TestRunProvenance(t *testing.T) {
	keyMade := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	key, err := NewRunKey([]byte("0123456789abcdef0123456789abcdef"), keyMade)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewRunKey([]byte("another key, also thirty-two b.."), keyMade)
	const sched = types.UID("sched-uid")
	run := func(name, at string, uid types.UID, mods ...func(*v1alpha1.StorageBenchmark)) *v1alpha1.StorageBenchmark {
		b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: uid,
			CreationTimestamp: metav1.NewTime(keyMade.Add(time.Hour)),
			Labels:            map[string]string{LabelSchedule: "nightly"},
			Annotations:       map[string]string{AnnotationScheduledTime: at},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmarkSchedule",
				Name: "nightly", UID: sched, Controller: ptr.To(true)}}}}
		for _, m := range mods {
			m(b)
		}
		return b
	}
	created := func(k *RunKey) func(*v1alpha1.StorageBenchmark) {
		return func(b *v1alpha1.StorageBenchmark) {
			k.StampToken(b, sched)
			b.Annotations[AnnotationRunSignature] = k.signature(b, sched)
		}
	}
	tokenOnly := func(b *v1alpha1.StorageBenchmark) { key.StampToken(b, sched) }
	genuine := run("nightly-100", "2026-11-20T02:00:00Z", "run-1", created(key))
	tests := []struct {
		name string
		b    *v1alpha1.StorageBenchmark
		want Provenance
	}{
		{"a run the schedule created and signed", genuine, Signed},
		{"an owner reference and label alone (a forged run)", run("nightly-101", "2099-01-01T00:00:00Z", "forged"), NotCreated},
		{"a signature made with another key", run("nightly-102", "2026-11-21T02:00:00Z", "x", created(other)), NotCreated},
		{"a genuine run's annotations copied onto another object under its name (after it was deleted)",
			run("nightly-100", "2026-11-20T02:00:00Z", "replayed", func(b *v1alpha1.StorageBenchmark) {
				b.Annotations = genuine.DeepCopy().Annotations
			}), Unsigned},
		{"a genuine run's signature with its scheduled time moved", run("nightly-100", "2099-01-01T00:00:00Z", "run-1", func(b *v1alpha1.StorageBenchmark) {
			b.Annotations[AnnotationRunSignature] = genuine.Annotations[AnnotationRunSignature]
			b.Annotations[AnnotationRunToken] = genuine.Annotations[AnnotationRunToken]
		}), NotCreated},
		{"a genuine run's annotations on another name", run("nightly-999", "2026-11-20T02:00:00Z", "run-1", func(b *v1alpha1.StorageBenchmark) {
			b.Annotations = genuine.DeepCopy().Annotations
		}), NotCreated},
		{"the run of another schedule (another UID)", run("nightly-100", "2026-11-20T02:00:00Z", "run-1", created(key), func(b *v1alpha1.StorageBenchmark) {
			b.OwnerReferences[0].UID = "another-schedule"
		}), NotCreated},
		{"a creation interrupted before its signature", run("nightly-103", "2026-11-22T02:00:00Z", "run-3", tokenOnly), Unsigned},
		{"a run made before the key existed (by a manager that did not sign)", run("nightly-050", "2026-10-01T02:00:00Z", "old",
			func(b *v1alpha1.StorageBenchmark) { b.CreationTimestamp = metav1.NewTime(keyMade.Add(-time.Hour)) }), Signed},
		{"a run made before the key, controlled by another object", run("nightly-051", "2026-10-01T02:00:00Z", "old",
			func(b *v1alpha1.StorageBenchmark) {
				b.CreationTimestamp = metav1.NewTime(keyMade.Add(-time.Hour))
				b.OwnerReferences[0].Kind = "Deployment"
			}), NotCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := key.ProvenanceOf(tt.b, sched); got != tt.want {
				t.Fatalf("provenance %d, want %d", got, tt.want)
			}
		})
	}
	if _, err := NewRunKey([]byte("short"), keyMade); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	// Without a creation time for the key, nothing predates it.
	eph := EphemeralRunKey()
	legacy := run("nightly-052", "2026-10-01T02:00:00Z", "old", func(b *v1alpha1.StorageBenchmark) { b.CreationTimestamp = metav1.Time{} })
	if got := eph.ProvenanceOf(legacy, sched); got != NotCreated {
		t.Fatalf("an ephemeral key trusted an unsigned run: %d", got)
	}
}
