package controllers

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/volops"
)

// The storage's control-plane times (status.storage.provisioning and
// attach), from the API's own timestamps: per claim created → bound, from
// the bound PVs describeStorage reads anyway, and per client pod scheduled
// → ready to start its containers, from the pods' conditions the cache
// keeps (stripPod). Each is summarised once (p50, max, count) and recorded
// on the plan ConfigMap (annotationStorageTimes) as status first shows it:
// the client pods are gone after a complete run, and the claims after
// cleanup.volumes: Delete, so a status rebuilt after the end takes them
// from that record, as it takes the run's verdicts from theirs.

// storageTimes is the record of the two summaries on the plan ConfigMap:
// a few dozen bytes, whatever the number of claims and clients.
type storageTimes struct {
	Provisioning *v1alpha1.ControlPlaneTimingStatus `json:"provisioning,omitempty"`
	Attach       *v1alpha1.ControlPlaneTimingStatus `json:"attach,omitempty"`
}

// storageTimesOf reads the record on plan; a summary that is not one the
// operator could have written (whoever may edit ConfigMaps in the
// namespace can change the record) is absent.
func storageTimesOf(plan *metav1.PartialObjectMetadata) storageTimes {
	var rec storageTimes
	if plan == nil {
		return rec
	}
	v, ok := plan.Annotations[annotationStorageTimes]
	if !ok || json.Unmarshal([]byte(v), &rec) != nil {
		return storageTimes{}
	}
	return rec.valid()
}

// valid is t without a summary the operator could not have made.
func (t storageTimes) valid() storageTimes {
	if !validTiming(t.Provisioning) {
		t.Provisioning = nil
	}
	if !validTiming(t.Attach) {
		t.Attach = nil
	}
	return t
}

// validTiming: t summarises at least one time, in whole seconds, with
// 0 <= p50 <= max.
func validTiming(t *v1alpha1.ControlPlaneTimingStatus) bool {
	return t != nil && t.Count >= 1 && t.P50.Duration >= 0 && t.P50.Duration <= t.Max.Duration &&
		t.P50.Duration%time.Second == 0 && t.Max.Duration%time.Second == 0
}

// timesOf is what s shows (nothing when s is nil), without a summary the
// operator could not have made.
func timesOf(s *v1alpha1.StorageStatus) storageTimes {
	if s == nil {
		return storageTimes{}
	}
	return storageTimes{Provisioning: s.Provisioning, Attach: s.Attach}.valid()
}

// or fills what t lacks from u.
func (t storageTimes) or(u storageTimes) storageTimes {
	if t.Provisioning == nil {
		t.Provisioning = u.Provisioning
	}
	if t.Attach == nil {
		t.Attach = u.Attach
	}
	return t
}

// adds says whether t has a summary rec lacks.
func (t storageTimes) adds(rec storageTimes) bool {
	return t.Provisioning != nil && rec.Provisioning == nil || t.Attach != nil && rec.Attach == nil
}

// into sets s's summaries to copies of t's (status is compared with its
// old self, so it never shares them).
func (t storageTimes) into(s *v1alpha1.StorageStatus) {
	s.Provisioning, s.Attach = t.Provisioning.DeepCopy(), t.Attach.DeepCopy()
}

// keepStorageTimes settles s's provisioning and attach, each recorded
// once: the plan's record, else what status showed (old), else what this
// pass timed — provisioning by describeStorage (in s already), attach from
// the client pods (attachTiming; ended: over those that got that far).
// What the record lacks is written to it in the same pass, before status
// shows it. A write that cannot be made now (a stale plan, an API error;
// or no plan yet) leaves status one pass ahead of the record: the next
// pass records it from status (old), and finish does for an ended run.
// Failing the pass instead would lose what it observed only once (the
// clients' mounts, read as the last one becomes ready).
func (r *Reconciler) keepStorageTimes(ctx context.Context, old, s *v1alpha1.StorageStatus, obs *observed, ended bool) {
	rec := storageTimesOf(obs.plan)
	// Status first: the record is read for a status rebuilt (old is nil),
	// so an edit of the plan's annotation does not change a running
	// status.
	want := timesOf(old).or(rec)
	if ended && hasRecord(obs.plan) {
		// The record holds what the run had timed when it ended (finish
		// writes it): a rebuild shows that, and times nothing the original
		// status did not have.
		want = rec
	} else {
		if want.Provisioning == nil {
			want.Provisioning = s.Provisioning
		}
		if want.Attach == nil {
			want.Attach = attachTiming(obs.pods, len(obs.clients), ended)
		}
	}
	if _, err := r.recordStorageTimes(ctx, obs.plan, rec, want, false); err != nil {
		log.FromContext(ctx).Info("Could not record the storage's control-plane times on the plan ConfigMap yet", "error", err.Error())
	}
	want.into(s)
}

// hasRecord: plan has the record (the annotation, perhaps with nothing in
// it: finish marks a run that ended before anything was timed so).
func hasRecord(plan *metav1.PartialObjectMetadata) bool {
	if plan == nil {
		return false
	}
	_, ok := plan.Annotations[annotationStorageTimes]
	return ok
}

// recordStorageTimes writes rec.or(want) onto plan as its record when
// want (without a summary the operator could not have made) adds to rec,
// or, atEnd, when plan has no record yet (finish marks the run's end so,
// even with nothing timed); wrote says so; nothing without a plan. The
// patch carries the plan's resourceVersion, so what the record holds is
// never written over: a pass that read a stale plan (its record perhaps
// without what was recorded since) writes nothing, without an error, and
// the newer plan's event queues the pass that does.
func (r *Reconciler) recordStorageTimes(ctx context.Context, plan *metav1.PartialObjectMetadata, rec, want storageTimes, atEnd bool) (wrote bool, err error) {
	want = want.valid()
	if plan == nil || !want.adds(rec) && (!atEnd || hasRecord(plan)) {
		return false, nil
	}
	value, err := json.Marshal(rec.or(want))
	if err != nil {
		return false, err
	}
	err = r.patchPlan(ctx, plan, map[string]any{"metadata": map[string]any{"resourceVersion": plan.ResourceVersion,
		"annotations": map[string]string{annotationStorageTimes: string(value)}}})
	if apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// boundAfter is how long pvc took from created to bound to pv, by the
// API's timestamps (whole seconds): pv's last phase transition (to Bound),
// else pv's creation, less pvc's creation. It may be negative (a static
// or pre-bound PV predates its claim); controlPlaneTiming clamps it.
func boundAfter(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) time.Duration {
	bound := pv.CreationTimestamp.Time
	if t := pv.Status.LastPhaseTransitionTime; t != nil && !t.IsZero() {
		bound = t.Time
	}
	return bound.Truncate(time.Second).Sub(pvc.CreationTimestamp.Truncate(time.Second))
}

// readyToStartAfter is how long p took from scheduled to ready to start
// its containers (volumes attached and mounted, sandbox made), by its
// conditions' transition times (whole seconds): PodReadyToStartContainers
// less PodScheduled, both True; ok is false while either is not.
func readyToStartAfter(p *corev1.Pod) (d time.Duration, ok bool) {
	var scheduled, ready *metav1.Time
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue || c.LastTransitionTime.IsZero() {
			continue
		}
		switch c.Type {
		case corev1.PodScheduled:
			scheduled = &c.LastTransitionTime
		case corev1.PodReadyToStartContainers:
			ready = &c.LastTransitionTime
		}
	}
	if scheduled == nil || ready == nil {
		return 0, false
	}
	return ready.Truncate(time.Second).Sub(scheduled.Truncate(time.Second)), true
}

// attachTiming times the clients' pods from scheduled to ready to start
// (readyToStartAfter): every pod of clients 0…clients-1 that has both
// conditions True, once each client has such a pod; nil before, unless
// the run ended, when it is over the pods that have them (nil: none).
// pods are the pods of the clients' Jobs, which b controls (observe).
func attachTiming(pods map[int][]corev1.Pod, clients int, ended bool) *v1alpha1.ControlPlaneTimingStatus {
	var ds []time.Duration
	all := clients > 0
	for k := range clients {
		timed := false
		for i := range pods[k] {
			if d, ok := readyToStartAfter(&pods[k][i]); ok {
				ds, timed = append(ds, d), true
			}
		}
		all = all && timed
	}
	if !all && !ended {
		return nil
	}
	return controlPlaneTiming(ds)
}

// maxControlPlaneTime bounds one control-plane time.
const maxControlPlaneTime = 365 * 24 * time.Hour

// controlPlaneTiming summarises times taken from the API's timestamps,
// each clamped at 0: the nearest-rank p50, the max and how many; nil when
// there are none.
func controlPlaneTiming(ds []time.Duration) *v1alpha1.ControlPlaneTimingStatus {
	if len(ds) == 0 {
		return nil
	}
	sorted := make([]time.Duration, len(ds))
	for i, d := range ds {
		// Whole seconds between 0 and a year: a clock far off (or a
		// timestamp at the edge of time.Time) gives a summary that the
		// record's check accepts, so it is written once.
		sorted[i] = min(max(d, 0), maxControlPlaneTime).Truncate(time.Second)
	}
	slices.Sort(sorted)
	return &v1alpha1.ControlPlaneTimingStatus{P50: metav1.Duration{Duration: volops.NearestRank(sorted, 50)},
		Max: metav1.Duration{Duration: sorted[len(sorted)-1]}, Count: int32(min(len(sorted), math.MaxInt32))}
}
