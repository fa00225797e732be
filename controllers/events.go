package controllers

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
	"github.com/storagebench/storagebench/internal/numfmt"
)

// emitEvents reports the milestones between two statuses; it runs only
// after the new status was written, so each milestone is reported once.
func (r *Reconciler) emitEvents(old, b *v1alpha1.StorageBenchmark) {
	if r.Recorder == nil {
		return
	}
	was, is := old.Status.Storage, b.Status.Storage
	if is != nil && is.Claims > 0 && is.ClaimsBound == is.Claims && (was == nil || was.ClaimsBound < was.Claims || was.Claims == 0) {
		r.Recorder.Eventf(b, corev1.EventTypeNormal, EventClaimsBound, "%d claim(s) bound on StorageClass %s", is.Claims, is.StorageClassName)
	}
	if n := b.Status.ClientsTotal; n > 0 && b.Status.ClientsReady == n && old.Status.ClientsReady < n {
		r.Recorder.Eventf(b, corev1.EventTypeNormal, EventClientsReady, "all %d clients laid out their files and are ready", n)
	}
	for _, s := range b.Status.Steps[min(len(old.Status.Steps), len(b.Status.Steps)):] {
		r.Recorder.Event(b, corev1.EventTypeNormal, EventStepCompleted, stepLine(&s))
	}
	if c := b.Status.CurrentStep; c != nil && (old.Status.CurrentStep == nil || *old.Status.CurrentStep != *c) {
		r.Recorder.Eventf(b, corev1.EventTypeNormal, EventStepStarted, "step %d/%d ordered", *c+1, b.Status.StepsPlanned)
	}
	r.conditionEvent(old, b, v1alpha1.ConditionStorageWarning, corev1.EventTypeWarning, EventStorageWarning)
	r.conditionEvent(old, b, v1alpha1.ConditionComplete, corev1.EventTypeNormal, EventCompleted)
	r.conditionEvent(old, b, v1alpha1.ConditionFailed, corev1.EventTypeWarning, EventFailed)
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSLOMet); c != nil &&
		meta.FindStatusCondition(old.Status.Conditions, v1alpha1.ConditionSLOMet) == nil && witnessed(c.LastTransitionTime, r.since) {
		reason, typ := EventSLOMet, corev1.EventTypeNormal
		if c.Status != "True" {
			reason, typ = EventSLONotMet, corev1.EventTypeWarning
		}
		r.Recorder.Event(b, typ, reason, c.Message)
	}
}

func (r *Reconciler) conditionEvent(old, b *v1alpha1.StorageBenchmark, cond, typ, reason string) {
	if c := turnedTrue(old, b, cond, r.since); c != nil {
		r.Recorder.Eventf(b, typ, reason, "%s: %s", c.Reason, c.Message)
	}
}

// witnessed tells whether a transition stamped at t happened while this
// manager ran (since is when it started). A status rebuilt from the children
// after a wipe carries the transitions' recorded times: those that predate
// this manager were reported by the one that saw them, and are not reported
// or counted again.
func witnessed(t metav1.Time, since time.Time) bool {
	return !t.Time.Before(since.Truncate(time.Second))
}

// turnedTrue returns condition cond when it is true in b, was not in old,
// and turned true while this manager ran.
func turnedTrue(old, b *v1alpha1.StorageBenchmark, cond string, since time.Time) *metav1.Condition {
	c := meta.FindStatusCondition(b.Status.Conditions, cond)
	if c == nil || c.Status != metav1.ConditionTrue || meta.IsStatusConditionTrue(old.Status.Conditions, cond) ||
		!witnessed(c.LastTransitionTime, since) {
		return nil
	}
	return c
}

// stepLine describes a finished step in one line, as the reports do.
func stepLine(s *v1alpha1.StepStatus) string {
	step := fmt.Sprint(s.Index + 1)
	if s.Repetition > 0 {
		step += fmt.Sprintf(" (run %d of its level)", s.Repetition)
	}
	line := fmt.Sprintf("step %s: achieved %s IOPS, %s", step, numfmt.Count(float64(s.AchievedIOPS)), mibps(s.AchievedBytesPerSecond))
	switch {
	case s.OfferedIOPS > 0:
		line += fmt.Sprintf(" (offered %s IOPS)", numfmt.Count(float64(s.OfferedIOPS)))
	case s.OfferedBytesPerSecond > 0:
		line += fmt.Sprintf(" (offered %s)", mibps(s.OfferedBytesPerSecond))
	}
	for _, d := range []struct {
		name string
		op   *v1alpha1.OperationStatus
	}{{"read", s.Read}, {"write", s.Write}} {
		if d.op != nil {
			line += fmt.Sprintf("; %s mean %s p99 %s", d.name, d.op.Latency.Mean.Duration, d.op.Latency.P99.Duration)
		}
	}
	if s.Saturated {
		line += "; saturated"
	}
	return line
}

func mibps(bytesPerSecond int64) string { return numfmt.MiBps(float64(bytesPerSecond)) + " MiB/s" }

// countRuns counts the run transitions between two statuses for the
// operator's counters (docs/metrics.md), those that happened since this
// manager started. Like emitEvents it runs only after the new status was
// written, so each transition is counted once.
func countRuns(old, b *v1alpha1.StorageBenchmark, since time.Time) {
	if t := b.Status.StartTime; t != nil && old.Status.StartTime == nil && witnessed(*t, since) {
		sbmetrics.RunsStarted.Inc()
	}
	if turnedTrue(old, b, v1alpha1.ConditionComplete, since) != nil {
		sbmetrics.RunsCompleted.Inc()
	}
	if c := turnedTrue(old, b, v1alpha1.ConditionFailed, since); c != nil {
		sbmetrics.RunsFailed.WithLabelValues(c.Reason).Inc()
	}
}
