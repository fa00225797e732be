package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

func TestControlPlaneTiming(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	timing := func(p50, maxT time.Duration, n int32) *v1alpha1.ControlPlaneTimingStatus {
		return &v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: p50}, Max: metav1.Duration{Duration: maxT}, Count: n}
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want *v1alpha1.ControlPlaneTimingStatus
	}{
		{"none", nil, nil},
		{"one", []time.Duration{sec(3)}, timing(sec(3), sec(3), 1)},
		{"unsorted", []time.Duration{sec(5), sec(1), sec(3), sec(2)}, timing(sec(2), sec(5), 4)},
		{"negative clamped at 0", []time.Duration{-sec(4), sec(2), -sec(1)}, timing(0, sec(2), 3)},
		{"all negative", []time.Duration{-sec(4)}, timing(0, 0, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			got := controlPlaneTiming(in)
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("controlPlaneTiming(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatal("the input was changed")
				}
			}
		})
	}
}

// TestDescribeStorageTimesProvisioning: created → bound per claim, from
// the PVs describeStorage reads anyway, recorded once all are bound.
func TestDescribeStorageTimesProvisioning(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	ptrAt := func(s int) *metav1.Time { v := at(s); return &v }
	claim := func(name string, created int, volume string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, CreationTimestamp: at(created)},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	pv := func(name string, created int, transition *metav1.Time) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, LastPhaseTransitionTime: transition}}
	}
	for _, tc := range []struct {
		name   string
		claims []*corev1.PersistentVolumeClaim
		pvs    []*corev1.PersistentVolume
		want   *v1alpha1.ControlPlaneTimingStatus
	}{
		{"one claim, bound 4 s after it was made",
			[]*corev1.PersistentVolumeClaim{claim("c0", 0, "pv0", corev1.ClaimBound)},
			[]*corev1.PersistentVolume{pv("pv0", 2, ptrAt(4))},
			&v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: 4 * time.Second}, Max: metav1.Duration{Duration: 4 * time.Second}, Count: 1}},
		{"no lastPhaseTransitionTime: the PV's creation",
			[]*corev1.PersistentVolumeClaim{claim("c0", 0, "pv0", corev1.ClaimBound), claim("c1", 1, "pv1", corev1.ClaimBound), claim("c2", 0, "pv2", corev1.ClaimBound)},
			[]*corev1.PersistentVolume{pv("pv0", 3, nil), pv("pv1", 9, nil), pv("pv2", 1, ptrAt(6))},
			&v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: 6 * time.Second}, Max: metav1.Duration{Duration: 8 * time.Second}, Count: 3}},
		{"a static PV older than its claim counts 0",
			[]*corev1.PersistentVolumeClaim{claim("c0", 100, "pv0", corev1.ClaimBound), claim("c1", 100, "pv1", corev1.ClaimBound)},
			[]*corev1.PersistentVolume{pv("pv0", 0, ptrAt(50)), pv("pv1", 0, ptrAt(102))},
			&v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{}, Max: metav1.Duration{Duration: 2 * time.Second}, Count: 2}},
		{"a claim still pending: not yet recorded",
			[]*corev1.PersistentVolumeClaim{claim("c0", 0, "pv0", corev1.ClaimBound), claim("c1", 0, "", corev1.ClaimPending)},
			[]*corev1.PersistentVolume{pv("pv0", 2, ptrAt(4))},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			builder := fake.NewClientBuilder().WithScheme(Scheme())
			for _, p := range tc.pvs {
				builder = builder.WithObjects(p)
			}
			c := builder.Build()
			obs := &observed{claims: map[string]*corev1.PersistentVolumeClaim{}}
			for _, pvc := range tc.claims {
				obs.claims[pvc.Name] = pvc
				if pvc.Status.Phase == corev1.ClaimBound {
					obs.bound++
				}
			}
			r := &Reconciler{Client: c, APIReader: c}
			b := newBench()
			s := &v1alpha1.StorageStatus{}
			if err := r.describeStorage(context.Background(), b, nil, obs, s); err != nil {
				t.Fatal(err)
			}
			if got := s.Provisioning; (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("provisioning = %+v, want %+v", got, tc.want)
			}
			if tc.want == nil {
				return
			}
			// Recorded once: a later pass copies it, whatever the PVs say now.
			b.Status.Storage = s
			later := &v1alpha1.StorageStatus{}
			empty := fake.NewClientBuilder().WithScheme(Scheme()).Build()
			r = &Reconciler{Client: empty, APIReader: empty}
			if err := r.describeStorage(context.Background(), b, nil, obs, later); err != nil {
				t.Fatal(err)
			}
			if later.Provisioning == nil || *later.Provisioning != *tc.want || later.Provisioning == s.Provisioning {
				t.Fatalf("a later pass has provisioning %+v, want a copy of %+v", later.Provisioning, tc.want)
			}
		})
	}
}

func TestAttachTiming(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	cond := func(typ corev1.PodConditionType, status corev1.ConditionStatus, s int) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(s) * time.Second))}
	}
	pod := func(conds ...corev1.PodCondition) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	ready := func(scheduled, readyAt int) corev1.Pod {
		return pod(cond(corev1.PodScheduled, corev1.ConditionTrue, scheduled), cond(corev1.PodInitialized, corev1.ConditionTrue, readyAt+1),
			cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue, readyAt))
	}
	timing := func(p50, maxT int, n int32) *v1alpha1.ControlPlaneTimingStatus {
		return &v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: time.Duration(p50) * time.Second},
			Max: metav1.Duration{Duration: time.Duration(maxT) * time.Second}, Count: n}
	}
	for _, tc := range []struct {
		name    string
		pods    map[int][]corev1.Pod
		clients int
		ended   bool
		want    *v1alpha1.ControlPlaneTimingStatus
	}{
		{"every client ready to start", map[int][]corev1.Pod{0: {ready(0, 3)}, 1: {ready(1, 2)}, 2: {ready(0, 7)}}, 3, false, timing(3, 7, 3)},
		{"a client without a pod yet", map[int][]corev1.Pod{0: {ready(0, 3)}, 1: {ready(1, 2)}}, 3, false, nil},
		{"a pod only scheduled", map[int][]corev1.Pod{0: {ready(0, 3)}, 1: {pod(cond(corev1.PodScheduled, corev1.ConditionTrue, 0))}}, 2, false, nil},
		{"a pod not ready to start (False)", map[int][]corev1.Pod{0: {ready(0, 3)},
			1: {pod(cond(corev1.PodScheduled, corev1.ConditionTrue, 0), cond(corev1.PodReadyToStartContainers, corev1.ConditionFalse, 1))}}, 2, false, nil},
		{"a pod unschedulable", map[int][]corev1.Pod{0: {ready(0, 3)},
			1: {pod(cond(corev1.PodScheduled, corev1.ConditionFalse, 0))}}, 2, false, nil},
		{"ended first: over the pods that were ready", map[int][]corev1.Pod{0: {ready(0, 3)},
			1: {pod(cond(corev1.PodScheduled, corev1.ConditionFalse, 0))}}, 2, true, timing(3, 3, 1)},
		{"ended with none ready", map[int][]corev1.Pod{0: {pod()}}, 1, true, nil},
		{"a retried client: both its pods timed", map[int][]corev1.Pod{0: {ready(0, 4), ready(10, 11)}, 1: {ready(0, 2)}}, 2, false, timing(2, 4, 3)},
		{"clocks out of order clamp at 0", map[int][]corev1.Pod{0: {ready(5, 4)}}, 1, false, timing(0, 0, 1)},
		{"no clients", nil, 0, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := attachTiming(tc.pods, tc.clients, tc.ended)
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("attachTiming = %+v, want %+v", got, tc.want)
			}
		})
	}

	// Recorded once: copied from the old status whatever the pods say now.
	old := &v1alpha1.StorageStatus{Attach: timing(1, 2, 2)}
	s := &v1alpha1.StorageStatus{}
	describeAttach(old, s, &observed{clients: make([]*metav1.PartialObjectMetadata, 1), pods: map[int][]corev1.Pod{0: {ready(0, 9)}}}, false)
	if s.Attach == nil || *s.Attach != *old.Attach || s.Attach == old.Attach {
		t.Fatalf("attach = %+v, want a copy of %+v", s.Attach, old.Attach)
	}
}
