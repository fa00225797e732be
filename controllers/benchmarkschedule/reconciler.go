package benchmarkschedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/schedule"
	"github.com/storagebench/storagebench/internal/spec"
)

// Reconciler runs StorageBenchmarkSchedules, as the CronJob
// controller runs CronJobs: when a scheduled time is due it creates a
// StorageBenchmark from the template, owned by the schedule, and deletes
// finished runs beyond the history limits. docs/schedules.md says where it
// differs from a CronJob.
type Reconciler struct {
	client.Client
	Recorder record.EventRecorder
	// Clock tells the time (tests inject a fake one); nil is the real
	// clock.
	Clock clock.PassiveClock
	// Key signs the runs the schedules create and tells them from runs
	// somebody else made look like theirs (controllers/provenance.go).
	Key *controllers.RunKey
	// Workers is how many schedules are reconciled at once (the manager's
	// Workers).
	Workers int
	// Wait turns a duration on Clock into a real one; nil: the same.
	Wait func(time.Duration) time.Duration
}

// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarkschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarkschedules/status,verbs=update
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=storagebench.io,resources=storagebenchmarks,verbs=create;patch

// SetupWithManager registers the reconciler: a run's status change (it
// finished) wakes its schedule.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.StorageBenchmarkSchedule{}).
		Owns(&v1alpha1.StorageBenchmark{}).
		Named("storagebenchmarkschedule").
		WithOptions(controllers.ControllerOptions(r.Workers)).
		Complete(r)
}

func (r *Reconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

// Reconcile creates the due run, trims the history and projects the kept
// runs into status, written once when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s v1alpha1.StorageBenchmarkSchedule
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its runs are owned: the garbage collector removes them
	}
	old := s.DeepCopy()
	res, err := r.reconcile(ctx, &s)
	if !equality.Semantic.DeepEqual(old.Status, s.Status) {
		if uerr := r.Status().Update(ctx, &s); uerr != nil {
			return ctrl.Result{}, errors.Join(err, uerr)
		}
	}
	return controllers.RealRequeue(res, r.Wait), err
}

func (r *Reconciler) reconcile(ctx context.Context, s *v1alpha1.StorageBenchmarkSchedule) (ctrl.Result, error) {
	now := r.now()
	runs, err := r.runs(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Before trimming: a run trimmed now still says it was scheduled.
	last := lastScheduled(s, runs)
	if last.After(s.CreationTimestamp.Time) {
		s.Status.LastScheduleTime = controllers.Stamp(last)
	}
	runs, err = r.trim(ctx, s, runs)
	if err != nil {
		return ctrl.Result{}, err
	}
	projectSchedule(s, runs)
	pending := s.Status.PendingScheduleTime
	s.Status.PendingScheduleTime = nil
	sched, err := schedule.Parse(s.Spec.Schedule, ptr.Deref(s.Spec.TimeZone, ""))
	if err != nil {
		setScheduleCondition(s, false, controllers.ReasonInvalidSchedule, err.Error())
		s.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	if _, err := spec.Of(&v1alpha1.StorageBenchmark{Spec: s.Spec.Template.Spec}); err != nil {
		setScheduleCondition(s, false, controllers.ReasonInvalidTemplate, "template.spec: "+err.Error())
		s.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	if ptr.Deref(s.Spec.Suspend, false) {
		setScheduleCondition(s, true, controllers.ReasonSuspended, "suspended: no new run is created")
		s.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	var notBefore time.Time
	if d := s.Spec.StartingDeadlineSeconds; d != nil {
		notBefore = now.Add(-time.Duration(*d) * time.Second)
	}
	due := sched.DueAt(last, now, notBefore)
	// A time still due since an earlier reconcile was reported then: its
	// events are not repeated at every wake-up.
	fresh := pending == nil || !pending.Time.Equal(due.Time)
	if due.TooMany && fresh {
		r.Recorder.Eventf(s, corev1.EventTypeWarning, controllers.EventTooManyMissedTimes,
			"more than %d scheduled times were missed; only the most recent, %s, runs", schedule.MaxMissed, due.Time.UTC().Format(time.RFC3339))
	}
	if !due.Time.IsZero() {
		created, err := r.start(ctx, s, runs, due.Time, fresh)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !created {
			s.Status.PendingScheduleTime = controllers.Stamp(due.Time)
		}
	}
	return announceNext(s, sched, due.Next, last, now), nil
}

// announceNext says in s's status when the schedule runs next (after the
// last run, should the clock have gone back) and whether a due run waits,
// and wakes the controller then.
func announceNext(s *v1alpha1.StorageBenchmarkSchedule, sched *schedule.Schedule, next, last, now time.Time) ctrl.Result {
	s.Status.NextScheduleTime = nil
	msg := "no scheduled time within five years"
	if !next.After(last) {
		next = sched.Next(last) // the clock went back: the next time is after the last run
	}
	if !next.IsZero() {
		s.Status.NextScheduleTime = controllers.Stamp(next)
		msg = "next run at " + next.UTC().Format(time.RFC3339)
	}
	if p := s.Status.PendingScheduleTime; p != nil {
		msg = "the run for " + p.UTC().Format(time.RFC3339) + " is due and waits (its events say why); " + msg
	}
	setScheduleCondition(s, true, controllers.ReasonScheduled, msg)
	if next.IsZero() {
		return ctrl.Result{}
	}
	// Wake at the next time (a little after: the clock may round down).
	return ctrl.Result{RequeueAfter: next.Sub(now) + 100*time.Millisecond}
}

// runFor is the schedule's run for the scheduled time at, from its
// template, labelled with the schedule and its time, before it is signed.
func runFor(s *v1alpha1.StorageBenchmarkSchedule, at time.Time) *v1alpha1.StorageBenchmark {
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{
		Namespace:   s.Namespace,
		Name:        RunName(s.Name, at),
		Labels:      maps.Clone(s.Spec.Template.Metadata.Labels),
		Annotations: maps.Clone(s.Spec.Template.Metadata.Annotations),
	}, Spec: *s.Spec.Template.Spec.DeepCopy()}
	if b.Labels == nil {
		b.Labels = map[string]string{}
	}
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Labels[controllers.LabelSchedule] = s.Name
	b.Annotations[controllers.AnnotationScheduledTime] = at.UTC().Format(time.RFC3339)
	delete(b.Annotations, controllers.AnnotationRunSignature)
	return b
}

// scheduledRun is a run of the schedule as the controller sees it.
type scheduledRun struct {
	b         *v1alpha1.StorageBenchmark
	scheduled time.Time
	state     v1alpha1.RunState
	// deleting: on its way out. Still occupying the storage (its pods may
	// be stopping), so it blocks a new run; no longer history.
	deleting bool
}

// runs lists the schedule's runs, oldest scheduled first: benchmarks
// labelled with its name that it controls and created (signed with the run
// key). Anything else is not a run, and is never counted, trimmed or
// touched. A run whose creation was interrupted before its signature was
// written is signed here, when it is the latest the schedule knows of.
func (r *Reconciler) runs(ctx context.Context, s *v1alpha1.StorageBenchmarkSchedule) ([]scheduledRun, error) {
	var list v1alpha1.StorageBenchmarkList
	if err := r.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{controllers.LabelSchedule: s.Name}); err != nil {
		return nil, err
	}
	var out []scheduledRun
	var interrupted []*v1alpha1.StorageBenchmark
	for i := range list.Items {
		b := &list.Items[i]
		switch r.key().ProvenanceOf(b, s.UID) {
		case controllers.Signed:
			out = append(out, runOf(b))
		case controllers.Unsigned:
			interrupted = append(interrupted, b)
		}
	}
	for _, b := range interrupted {
		if !controllers.ScheduledTimeOf(b).After(lastScheduled(s, out)) {
			continue // an old time: not a creation of this manager's in flight
		}
		if err := r.key().Sign(ctx, r.Client, b, s.UID); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		out = append(out, runOf(b))
	}
	slices.SortFunc(out, func(x, y scheduledRun) int {
		if c := x.scheduled.Compare(y.scheduled); c != 0 {
			return c
		}
		return cmp.Compare(x.b.Name, y.b.Name)
	})
	return out, nil
}

func runOf(b *v1alpha1.StorageBenchmark) scheduledRun {
	return scheduledRun{b: b, scheduled: controllers.ScheduledTimeOf(b), state: v1alpha1.RunStateOf(b), deleting: !b.DeletionTimestamp.IsZero()}
}

// key is the run key; an ephemeral one without a manager (unit tests).
func (r *Reconciler) key() *controllers.RunKey {
	if r.Key == nil {
		r.Key = controllers.EphemeralRunKey()
	}
	return r.Key
}

// lastScheduled is the latest scheduled time a run was created for: status
// remembers it (a run may have been trimmed), the kept runs show it (a
// status may be lost), and before any run there is the schedule's
// creation.
func lastScheduled(s *v1alpha1.StorageBenchmarkSchedule, runs []scheduledRun) time.Time {
	last := s.CreationTimestamp.Time
	if t := s.Status.LastScheduleTime; t != nil && t.After(last) {
		last = t.Time
	}
	for _, run := range runs {
		if run.scheduled.After(last) {
			last = run.scheduled
		}
	}
	return last
}

// overLimit returns the finished runs beyond the history limits, oldest
// first: the newest successfulRunsHistoryLimit completed runs and
// failedRunsHistoryLimit failed ones are kept, and running ones always.
func overLimit(runs []scheduledRun, successful, failed int) []scheduledRun {
	var out []scheduledRun
	keep := map[v1alpha1.RunState]int{v1alpha1.RunComplete: successful, v1alpha1.RunFailed: failed}
	for i := len(runs) - 1; i >= 0; i-- {
		st := runs[i].state
		if st == v1alpha1.RunRunning || runs[i].deleting {
			continue
		}
		if keep[st] > 0 {
			keep[st]--
			continue
		}
		out = append(out, runs[i])
	}
	slices.Reverse(out)
	return out
}

// trim deletes the finished runs beyond the history limits (each by UID,
// so a benchmark recreated under the name is not deleted) and returns the
// runs kept.
func (r *Reconciler) trim(ctx context.Context, s *v1alpha1.StorageBenchmarkSchedule, runs []scheduledRun) ([]scheduledRun, error) {
	gone := overLimit(runs, int(ptr.Deref(s.Spec.SuccessfulRunsHistoryLimit, 3)), int(ptr.Deref(s.Spec.FailedRunsHistoryLimit, 1)))
	for _, run := range gone {
		if err := r.deleteRun(ctx, s, run, fmt.Sprintf("deleted %s run %s: beyond the history limit", run.state, run.b.Name)); err != nil {
			return nil, err
		}
	}
	return slices.DeleteFunc(runs, func(run scheduledRun) bool {
		return slices.ContainsFunc(gone, func(g scheduledRun) bool { return g.b.UID == run.b.UID })
	}), nil
}

// deleteRun deletes a run by its UID (a benchmark recreated under the
// name is not deleted), in the background, and says so with event when it
// did: a run already gone or replaced is no error and no event.
func (r *Reconciler) deleteRun(ctx context.Context, s *v1alpha1.StorageBenchmarkSchedule, run scheduledRun, event string) error {
	uid := run.b.UID
	err := r.Delete(ctx, run.b, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil
	case err != nil:
		return err
	}
	r.Recorder.Event(s, corev1.EventTypeNormal, controllers.EventRunDeleted, event)
	return nil
}

// RunName is the name of a schedule's run for a scheduled time: the
// schedule's name and the time in Unix minutes, as a CronJob names its
// Jobs, so a restarted controller finds the run it created.
func RunName(schedule string, at time.Time) string {
	return schedule + "-" + strconv.FormatInt(at.Unix()/60, 10)
}

// start creates the run for scheduled time at, after the concurrency
// policy, and reports whether it exists now: with a run going (or one
// still being deleted, whose pods may still use the storage), Forbid leaves
// the time due (it starts when the run is gone, unless the starting
// deadline passes first), and Replace deletes the running one and starts
// once it is gone. Events are sent when report is set (the first time
// this time is due).
func (r *Reconciler) start(ctx context.Context, s *v1alpha1.StorageBenchmarkSchedule, runs []scheduledRun, at time.Time, report bool) (bool, error) {
	when := at.UTC().Format(time.RFC3339)
	blocked := false
	for _, run := range runs {
		switch {
		case run.deleting:
			blocked = true
		case run.state != v1alpha1.RunRunning:
		case s.Spec.ConcurrencyPolicy != v1alpha1.ConcurrencyReplace:
			if report {
				r.Recorder.Eventf(s, corev1.EventTypeNormal, controllers.EventRunAlreadyActive,
					"the run for %s is due, but %s is still running (concurrencyPolicy Forbid)", when, run.b.Name)
			}
			return false, nil
		default:
			if err := r.deleteRun(ctx, s, run, fmt.Sprintf("deleted running run %s: the run for %s replaces it once it is gone (concurrencyPolicy Replace)",
				run.b.Name, when)); err != nil {
				return false, err
			}
			blocked = true
		}
	}
	if blocked {
		return false, nil // woken again when the deleted run is gone
	}
	b := runFor(s, at)
	r.key().StampToken(b, s.UID)
	if err := controllerutil.SetControllerReference(s, b, r.Scheme()); err != nil {
		return false, err
	}
	err := r.Create(ctx, b)
	switch {
	case apierrors.IsAlreadyExists(err):
		var cur v1alpha1.StorageBenchmark
		if err := r.Get(ctx, client.ObjectKeyFromObject(b), &cur); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		switch r.key().ProvenanceOf(&cur, s.UID) {
		case controllers.Signed:
		case controllers.Unsigned: // this manager's creation, interrupted before its signature
			if err := r.key().Sign(ctx, r.Client, &cur, s.UID); err != nil {
				return false, client.IgnoreNotFound(err)
			}
		default:
			// Somebody else's benchmark holds the name, whatever its
			// owner reference says: never adopted.
			if report {
				r.Recorder.Eventf(s, corev1.EventTypeWarning, controllers.EventRunNameTaken,
					"the run for %s cannot be created: %s exists and this schedule did not create it", when, b.Name)
			}
			return false, nil
		}
	case err != nil && isRefusal(err):
		if report {
			r.Recorder.Eventf(s, corev1.EventTypeWarning, controllers.EventRunRefused, "the run for %s was refused: %s", when, protocol.Truncate(err.Error(), controllers.MaxMessage))
		}
		return false, nil
	case err != nil:
		return false, err
	default:
		if err := r.key().Sign(ctx, r.Client, b, s.UID); err != nil {
			return false, err // signed at the next reconcile (runs)
		}
		r.Recorder.Eventf(s, corev1.EventTypeNormal, controllers.EventRunCreated, "created %s for %s", b.Name, when)
	}
	s.Status.LastScheduleTime = controllers.Stamp(at)
	return true, nil
}

// isRefusal reports a create the API server refused for good.
func isRefusal(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)
}

// projectSchedule writes the kept runs into status: the active run, the
// newest completion of a completed run, and a row per run, newest first.
func projectSchedule(s *v1alpha1.StorageBenchmarkSchedule, runs []scheduledRun) {
	s.Status.Active = nil
	s.Status.History = nil
	for i := len(runs) - 1; i >= 0; i-- {
		run := runs[i]
		if run.deleting {
			continue
		}
		row := v1alpha1.ScheduledRun{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: run.b.Name, ScheduledTime: *controllers.Stamp(run.scheduled)},
			State: run.state, CompletionTime: run.b.Status.CompletionTime}
		if sum := run.b.Status.Summary; sum != nil {
			row.PeakIOPS = sum.PeakIOPS
			if sum.AtTarget != nil {
				row.AtTargetIOPS = sum.AtTarget.IOPS
			}
		}
		if c := meta.FindStatusCondition(run.b.Status.Conditions, v1alpha1.ConditionSLOMet); c != nil {
			row.SLO = c.Reason
		}
		if c := meta.FindStatusCondition(run.b.Status.Conditions, v1alpha1.ConditionRegressed); c != nil {
			row.Regression = c.Reason
			if c.Status == metav1.ConditionTrue {
				row.RegressionMessage = protocol.Truncate(c.Message, 512)
				row.RegressedMetrics = run.b.Status.Regression.RegressedMetrics()
			}
		}
		switch run.state {
		case v1alpha1.RunRunning:
			if s.Status.Active == nil {
				s.Status.Active = ptr.To(row.ScheduledRunRef)
			}
			row.CompletionTime = nil
		case v1alpha1.RunFailed:
			if c := meta.FindStatusCondition(run.b.Status.Conditions, v1alpha1.ConditionFailed); c != nil {
				row.Reason = c.Reason
			}
		case v1alpha1.RunComplete:
			if t := run.b.Status.CompletionTime; t != nil && (s.Status.LastSuccessfulTime == nil || t.After(s.Status.LastSuccessfulTime.Time)) {
				s.Status.LastSuccessfulTime = t.DeepCopy()
			}
		}
		s.Status.History = append(s.Status.History, row)
	}
}

// setScheduleCondition sets Ready, and Stalled when the schedule cannot
// run (kstatus).
func setScheduleCondition(s *v1alpha1.StorageBenchmarkSchedule, ready bool, reason, msg string) {
	set := func(typ string, st bool) {
		status := metav1.ConditionFalse
		if st {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: protocol.Truncate(msg, controllers.MaxMessage), ObservedGeneration: s.Generation})
	}
	set(v1alpha1.ConditionReady, ready)
	set(v1alpha1.ConditionStalled, !ready)
}
