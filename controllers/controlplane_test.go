package controllers

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/build"
)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

func timing(p50, maxT int, n int32) *v1alpha1.ControlPlaneTimingStatus {
	return &v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: sec(p50)}, Max: metav1.Duration{Duration: sec(maxT)}, Count: n}
}

func sameTiming(a, b *v1alpha1.ControlPlaneTimingStatus) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func TestControlPlaneTiming(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want *v1alpha1.ControlPlaneTimingStatus
	}{
		{"none", nil, nil},
		{"one", []time.Duration{sec(3)}, timing(3, 3, 1)},
		{"two: p50 is the first", []time.Duration{sec(9), sec(1)}, timing(1, 9, 2)},
		{"unsorted", []time.Duration{sec(5), sec(1), sec(3), sec(2)}, timing(2, 5, 4)},
		{"five: the third", []time.Duration{sec(4), sec(9), sec(1), sec(3), sec(2)}, timing(3, 9, 5)},
		{"negative clamped at 0", []time.Duration{-sec(4), sec(2), -sec(1)}, timing(0, 2, 3)},
		{"all negative", []time.Duration{-sec(4)}, timing(0, 0, 1)},
		{"beyond a year (a saturated Sub): a year", []time.Duration{time.Duration(math.MaxInt64), sec(2)}, timing(2, 365*24*3600, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			got := controlPlaneTiming(in)
			if !sameTiming(got, tc.want) {
				t.Fatalf("controlPlaneTiming(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			if got != nil && !validTiming(got) {
				t.Fatalf("%+v is not a summary the record accepts: it would be written on every pass", got)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatal("the input was changed")
				}
			}
		})
	}
}

// ownedBench is a benchmark with a UID, and a controller reference to it.
func ownedBench(mods ...build.Option) (*v1alpha1.StorageBenchmark, []metav1.OwnerReference) {
	b := newBench(mods...)
	b.UID = "bench-uid"
	return b, []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmark", Name: b.Name, UID: b.UID, Controller: ptr.To(true)}}
}

// TestDescribeStorageTimesProvisioning: created → bound per claim of the
// benchmark's, from the PVs describeStorage reads anyway, once all are
// bound; never an existing claim, which is the application's.
func TestDescribeStorageTimesProvisioning(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(sec(s))) }
	ptrAt := func(s int) *metav1.Time { v := at(s); return &v }
	pv := func(name string, created int, transition *metav1.Time) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, LastPhaseTransitionTime: transition}}
	}
	type claim struct {
		name    string
		created int
		volume  string
		phase   corev1.PersistentVolumeClaimPhase
	}
	for _, tc := range []struct {
		name     string
		existing bool
		claims   []claim
		pvs      []*corev1.PersistentVolume
		want     *v1alpha1.ControlPlaneTimingStatus
	}{
		{"one claim, bound 4 s after it was made", false,
			[]claim{{"c0", 0, "pv0", corev1.ClaimBound}},
			[]*corev1.PersistentVolume{pv("pv0", 2, ptrAt(4))},
			timing(4, 4, 1)},
		{"no lastPhaseTransitionTime: the PV's creation", false,
			[]claim{{"c0", 0, "pv0", corev1.ClaimBound}, {"c1", 1, "pv1", corev1.ClaimBound}, {"c2", 0, "pv2", corev1.ClaimBound}},
			[]*corev1.PersistentVolume{pv("pv0", 3, nil), pv("pv1", 9, nil), pv("pv2", 1, ptrAt(6))},
			timing(6, 8, 3)},
		{"a static PV older than its claim counts 0", false,
			[]claim{{"c0", 100, "pv0", corev1.ClaimBound}, {"c1", 100, "pv1", corev1.ClaimBound}},
			[]*corev1.PersistentVolume{pv("pv0", 0, ptrAt(50)), pv("pv1", 0, ptrAt(102))},
			timing(0, 2, 2)},
		{"a claim still pending: not yet timed", false,
			[]claim{{"c0", 0, "pv0", corev1.ClaimBound}, {"c1", 0, "", corev1.ClaimPending}},
			[]*corev1.PersistentVolume{pv("pv0", 2, ptrAt(4))},
			nil},
		{"an existing claim is not the benchmark's: not timed", true,
			[]claim{{"app-data", 0, "pv0", corev1.ClaimBound}},
			[]*corev1.PersistentVolume{pv("pv0", 2, ptrAt(4))},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, owner := ownedBench()
			if tc.existing {
				b.Spec.Storage.ExistingClaim = ptr.To("app-data")
			}
			builder := fake.NewClientBuilder().WithScheme(Scheme())
			for _, p := range tc.pvs {
				builder = builder.WithObjects(p)
			}
			c := builder.Build()
			obs := &observed{claims: map[string]*corev1.PersistentVolumeClaim{}}
			for _, cl := range tc.claims {
				pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: cl.name, CreationTimestamp: at(cl.created)},
					Spec: corev1.PersistentVolumeClaimSpec{VolumeName: cl.volume}, Status: corev1.PersistentVolumeClaimStatus{Phase: cl.phase}}
				if !tc.existing {
					pvc.OwnerReferences = owner
				}
				obs.claims[cl.name] = pvc
				if cl.phase == corev1.ClaimBound {
					obs.bound++
				}
			}
			r := &Reconciler{Client: c, APIReader: c}
			s := &v1alpha1.StorageStatus{}
			if err := r.describeStorage(context.Background(), b, nil, obs, s); err != nil {
				t.Fatal(err)
			}
			if !sameTiming(s.Provisioning, tc.want) {
				t.Fatalf("provisioning = %+v, want %+v", s.Provisioning, tc.want)
			}
			if tc.want == nil {
				return
			}
			// Timed once: a later pass keeps it, whatever the PVs say now
			// (there are none), and reads none of them.
			b.Status.Storage = s
			later := &v1alpha1.StorageStatus{}
			empty := fake.NewClientBuilder().WithScheme(Scheme()).Build()
			r = &Reconciler{Client: empty, APIReader: empty}
			if err := r.describeStorage(context.Background(), b, nil, obs, later); err != nil {
				t.Fatal(err)
			}
			r.keepStorageTimes(context.Background(), s, later, obs, false)
			if !sameTiming(later.Provisioning, tc.want) || later.Provisioning == s.Provisioning {
				t.Fatalf("a later pass has provisioning %+v, want a copy of %+v", later.Provisioning, tc.want)
			}
		})
	}
}

func podCond(typ corev1.PodConditionType, status corev1.ConditionStatus, s int) corev1.PodCondition {
	t0 := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	return corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(t0.Add(sec(s)))}
}

func podWith(conds ...corev1.PodCondition) corev1.Pod {
	return corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
}

// readyPod was scheduled at scheduled and ready to start at readyAt.
func readyPod(scheduled, readyAt int) corev1.Pod {
	return podWith(podCond(corev1.PodScheduled, corev1.ConditionTrue, scheduled), podCond(corev1.PodInitialized, corev1.ConditionTrue, readyAt+1),
		podCond(corev1.PodReadyToStartContainers, corev1.ConditionTrue, readyAt))
}

func TestAttachTiming(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pods    map[int][]corev1.Pod
		clients int
		ended   bool
		want    *v1alpha1.ControlPlaneTimingStatus
	}{
		{"every client ready to start", map[int][]corev1.Pod{0: {readyPod(0, 3)}, 1: {readyPod(1, 2)}, 2: {readyPod(0, 7)}}, 3, false, timing(3, 7, 3)},
		{"a client without a pod yet", map[int][]corev1.Pod{0: {readyPod(0, 3)}, 1: {readyPod(1, 2)}}, 3, false, nil},
		{"a pod only scheduled", map[int][]corev1.Pod{0: {readyPod(0, 3)}, 1: {podWith(podCond(corev1.PodScheduled, corev1.ConditionTrue, 0))}}, 2, false, nil},
		{"a pod not ready to start (False)", map[int][]corev1.Pod{0: {readyPod(0, 3)},
			1: {podWith(podCond(corev1.PodScheduled, corev1.ConditionTrue, 0), podCond(corev1.PodReadyToStartContainers, corev1.ConditionFalse, 1))}}, 2, false, nil},
		{"a pod unschedulable", map[int][]corev1.Pod{0: {readyPod(0, 3)},
			1: {podWith(podCond(corev1.PodScheduled, corev1.ConditionFalse, 0))}}, 2, false, nil},
		{"ended first: over the pods that were ready", map[int][]corev1.Pod{0: {readyPod(0, 3)},
			1: {podWith(podCond(corev1.PodScheduled, corev1.ConditionFalse, 0))}}, 2, true, timing(3, 3, 1)},
		{"ended with none ready", map[int][]corev1.Pod{0: {podWith()}}, 1, true, nil},
		{"a retried client: both its pods timed", map[int][]corev1.Pod{0: {readyPod(0, 4), readyPod(10, 11)}, 1: {readyPod(0, 2)}}, 2, false, timing(2, 4, 3)},
		{"clocks out of order clamp at 0", map[int][]corev1.Pod{0: {readyPod(5, 4)}}, 1, false, timing(0, 0, 1)},
		{"a pod beyond the clients is not one", map[int][]corev1.Pod{0: {readyPod(0, 1)}, 5: {readyPod(0, 50)}}, 1, false, timing(1, 1, 1)},
		{"no clients", nil, 0, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := attachTiming(tc.pods, tc.clients, tc.ended); !sameTiming(got, tc.want) {
				t.Fatalf("attachTiming = %+v, want %+v", got, tc.want)
			}
		})
	}
	// Sub-second timestamps (never the API's) count in whole seconds.
	p := readyPod(0, 2)
	p.Status.Conditions[0].LastTransitionTime.Time = p.Status.Conditions[0].LastTransitionTime.Add(900 * time.Millisecond)
	if d, ok := readyToStartAfter(&p); !ok || d != 2*time.Second {
		t.Fatalf("readyToStartAfter = %s, %v; want 2s", d, ok)
	}
}

func TestStorageTimesOfRejectsWhatTheOperatorCannotHaveWritten(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		want  storageTimes
	}{
		{"both", `{"provisioning":{"p50":"2s","max":"5s","count":1},"attach":{"p50":"1s","max":"3s","count":4}}`,
			storageTimes{Provisioning: timing(2, 5, 1), Attach: timing(1, 3, 4)}},
		{"one", `{"attach":{"p50":"0s","max":"0s","count":1}}`, storageTimes{Attach: timing(0, 0, 1)}},
		{"not JSON", `{"attach":`, storageTimes{}},
		{"a duration that is none", `{"attach":{"p50":"soon","max":"3s","count":1}}`, storageTimes{}},
		{"p50 above max", `{"provisioning":{"p50":"9s","max":"3s","count":2},"attach":{"p50":"1s","max":"3s","count":1}}`,
			storageTimes{Attach: timing(1, 3, 1)}},
		{"negative", `{"provisioning":{"p50":"-1s","max":"3s","count":2}}`, storageTimes{}},
		{"sub-second", `{"provisioning":{"p50":"1.5s","max":"3s","count":2}}`, storageTimes{}},
		{"count 0", `{"provisioning":{"p50":"0s","max":"0s","count":0}}`, storageTimes{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationStorageTimes: tc.value}}}
			got := storageTimesOf(plan)
			if !sameTiming(got.Provisioning, tc.want.Provisioning) || !sameTiming(got.Attach, tc.want.Attach) {
				t.Fatalf("storageTimesOf = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := storageTimesOf(nil); got.Provisioning != nil || got.Attach != nil {
		t.Fatal("a record without a plan")
	}
}

// timesPlan is b's plan ConfigMap, controlled by b, with annotations.
func timesPlan(b *v1alpha1.StorageBenchmark, owner []metav1.OwnerReference, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.PlanName(b.Name),
		Annotations: annotations, OwnerReferences: owner}}
}

// TestStorageTimesRoundTrip: what keepStorageTimes shows in status is on
// the plan's record, and a status rebuilt from that record alone (no
// status, the claims' PVs and the client pods gone) is the same, byte for
// byte; a summary recorded is never written over.
func TestStorageTimesRoundTrip(t *testing.T) {
	ctx := context.Background()
	ready := map[int][]corev1.Pod{0: {readyPod(0, 3)}, 1: {readyPod(1, 2)}}
	for _, tc := range []struct {
		name string
		// record is the plan's annotation before the pass ("": none).
		record string
		// old is status.storage before the pass; timed is provisioning
		// as describeStorage timed it this pass.
		old   storageTimes
		timed *v1alpha1.ControlPlaneTimingStatus
		pods  map[int][]corev1.Pod
		ended bool
		// want is the status (and the record) after the pass.
		want storageTimes
	}{
		{name: "nothing known yet", pods: map[int][]corev1.Pod{0: {readyPod(0, 3)}}},
		{name: "claims bound: provisioning recorded", timed: timing(4, 4, 1), pods: map[int][]corev1.Pod{0: {readyPod(0, 3)}},
			want: storageTimes{Provisioning: timing(4, 4, 1)}},
		{name: "every client ready to start: attach joins the record", record: `{"provisioning":{"p50":"4s","max":"4s","count":1}}`,
			old: storageTimes{Provisioning: timing(4, 4, 1)}, pods: ready,
			want: storageTimes{Provisioning: timing(4, 4, 1), Attach: timing(1, 3, 2)}},
		{name: "known in one pass, both recorded at once", timed: timing(1, 1, 1), pods: ready,
			want: storageTimes{Provisioning: timing(1, 1, 1), Attach: timing(1, 3, 2)}},
		{name: "the record wins over what the pass times again", record: `{"provisioning":{"p50":"7s","max":"7s","count":1},"attach":{"p50":"5s","max":"6s","count":2}}`,
			timed: timing(1, 1, 1), pods: ready,
			want: storageTimes{Provisioning: timing(7, 7, 1), Attach: timing(5, 6, 2)}},
		{name: "status ahead of the record (the manager stopped between): status is recorded", old: storageTimes{Provisioning: timing(3, 3, 1), Attach: timing(9, 9, 2)},
			timed: timing(1, 1, 1), pods: ready,
			want: storageTimes{Provisioning: timing(3, 3, 1), Attach: timing(9, 9, 2)}},
		{name: "a garbled record is written over", record: `{"attach":{"p50":"9s","max":"1s","count":2}}`, pods: ready,
			want: storageTimes{Attach: timing(1, 3, 2)}},
		{name: "ended before every client was ready: over those that were", pods: map[int][]corev1.Pod{0: {readyPod(0, 3)}}, ended: true,
			want: storageTimes{Attach: timing(3, 3, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, owner := ownedBench(build.Clients(2))
			annotations := map[string]string{annotationOrder: `{"index":0}`}
			if tc.record != "" {
				annotations[annotationStorageTimes] = tc.record
			}
			c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(timesPlan(b, owner, annotations)).Build()
			r := &Reconciler{Client: c, APIReader: c}
			plan, err := r.plan(ctx, b)
			if err != nil || plan == nil {
				t.Fatal(plan, err)
			}
			obs := &observed{plan: plan, pods: tc.pods, clients: make([]*metav1.PartialObjectMetadata, 2)}
			old := &v1alpha1.StorageStatus{Provisioning: tc.old.Provisioning, Attach: tc.old.Attach}
			s := &v1alpha1.StorageStatus{Provisioning: tc.timed}
			r.keepStorageTimes(ctx, old, s, obs, tc.ended)
			if !sameTiming(s.Provisioning, tc.want.Provisioning) || !sameTiming(s.Attach, tc.want.Attach) {
				t.Fatalf("status has %+v, %+v; want %+v, %+v", s.Provisioning, s.Attach, tc.want.Provisioning, tc.want.Attach)
			}

			// The record, read again as the next pass (or a rebuild) reads it.
			plan, err = r.plan(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if rec := storageTimesOf(plan); !sameTiming(rec.Provisioning, tc.want.Provisioning) || !sameTiming(rec.Attach, tc.want.Attach) {
				t.Fatalf("the record holds %+v, %+v; want %+v, %+v", rec.Provisioning, rec.Attach, tc.want.Provisioning, tc.want.Attach)
			}
			if plan.Annotations[annotationOrder] != `{"index":0}` {
				t.Fatal("recording the times changed the order")
			}

			// Rebuilt: no status, nothing timed, no pods; ended.
			rebuilt := &v1alpha1.StorageStatus{}
			r.keepStorageTimes(ctx, nil, rebuilt, &observed{plan: plan, clients: make([]*metav1.PartialObjectMetadata, 2)}, true)
			before, _ := json.Marshal(s)
			after, _ := json.Marshal(rebuilt)
			if string(before) != string(after) {
				t.Fatalf("rebuilt\n%s\nwant\n%s", after, before)
			}
		})
	}
}

// A pass that read a stale plan (the cache behind the record written
// since) records nothing, and no error: the newer plan's event brings the
// pass that reads the record.
func TestStorageTimesNotWrittenOverFromAStalePlan(t *testing.T) {
	ctx := context.Background()
	b, owner := ownedBench()
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(timesPlan(b, owner, nil)).Build()
	r := &Reconciler{Client: c, APIReader: c}
	stale, err := r.plan(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	fresh := stale.DeepCopy()
	if wrote, err := r.recordStorageTimes(ctx, fresh, storageTimes{}, storageTimes{Attach: timing(2, 2, 1)}, false); !wrote || err != nil {
		t.Fatalf("first record: wrote %v, %v", wrote, err)
	}
	if wrote, err := r.recordStorageTimes(ctx, stale, storageTimes{}, storageTimes{Attach: timing(8, 8, 1)}, false); wrote || err != nil {
		t.Fatalf("from a stale plan: wrote %v, %v", wrote, err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.PlanName(b.Name)}, &cm); err != nil {
		t.Fatal(err)
	}
	if rec := storageTimesFrom(&cm); !sameTiming(rec.Attach, timing(2, 2, 1)) {
		t.Fatalf("the record holds %+v, want the first attach", rec.Attach)
	}
	// Nothing to add: no write at all.
	if wrote, err := r.recordStorageTimes(ctx, fresh, storageTimesFrom(&cm), storageTimes{Attach: timing(8, 8, 1)}, false); wrote || err != nil {
		t.Fatalf("nothing to add: wrote %v, %v", wrote, err)
	}
}

// storageTimesFrom reads the record on a whole ConfigMap.
func storageTimesFrom(cm *corev1.ConfigMap) storageTimes {
	return storageTimesOf(&metav1.PartialObjectMetadata{ObjectMeta: cm.ObjectMeta})
}

// A running status is status's own, whatever the record says (the record
// is for a status rebuilt); and a rebuild of an ended run whose record
// finish wrote times nothing the original status did not have.
func TestStorageTimesRecordOnlyForARebuild(t *testing.T) {
	ctx := context.Background()
	b, owner := ownedBench(build.Clients(2))
	ready := map[int][]corev1.Pod{0: {readyPod(0, 3)}, 1: {readyPod(1, 2)}}
	for _, tc := range []struct {
		name   string
		record string
		old    *v1alpha1.StorageStatus
		ended  bool
		want   storageTimes
	}{
		{"an edited record does not change a running status", `{"provisioning":{"p50":"7s","max":"7s","count":1},"attach":{"p50":"5s","max":"6s","count":2}}`,
			&v1alpha1.StorageStatus{Provisioning: timing(3, 3, 1), Attach: timing(1, 3, 2)}, false,
			storageTimes{Provisioning: timing(3, 3, 1), Attach: timing(1, 3, 2)}},
		{"rebuilt after an end with nothing timed: nothing, though the pods are there", `{}`, nil, true, storageTimes{}},
		{"rebuilt: the record's, not the pods' again", `{"attach":{"p50":"5s","max":"6s","count":2}}`, nil, true,
			storageTimes{Attach: timing(5, 6, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(timesPlan(b, owner, map[string]string{annotationStorageTimes: tc.record})).Build()
			r := &Reconciler{Client: c, APIReader: c}
			plan, err := r.plan(ctx, b)
			if err != nil || plan == nil {
				t.Fatal(plan, err)
			}
			s := &v1alpha1.StorageStatus{}
			r.keepStorageTimes(ctx, tc.old, s, &observed{plan: plan, pods: ready, clients: make([]*metav1.PartialObjectMetadata, 2)}, tc.ended)
			if !sameTiming(s.Provisioning, tc.want.Provisioning) || !sameTiming(s.Attach, tc.want.Attach) {
				t.Fatalf("status has %+v, %+v; want %+v, %+v", s.Provisioning, s.Attach, tc.want.Provisioning, tc.want.Attach)
			}
		})
	}
}
