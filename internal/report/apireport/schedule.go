package apireport

import (
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
)

// ScheduleTable lists schedules as `kubectl storagebench schedules` prints
// them: the schedule, whether it is suspended, the run in progress, when
// it last scheduled and succeeded, and when it runs next.
func ScheduleTable(items []v1alpha1.StorageBenchmarkSchedule, now time.Time, withNamespace bool) report.Table {
	t := report.Table{Header: []string{"NAME", "SCHEDULE", "TIME ZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "LAST SUCCESS", "NEXT", "RUNS"}}
	if withNamespace {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for i := range items {
		s := &items[i]
		active := ""
		if s.Status.Active != nil {
			active = s.Status.Active.Name
		}
		row := []string{s.Name, s.Spec.Schedule, ptr.Deref(s.Spec.TimeZone, "UTC"), fmt.Sprint(ptr.Deref(s.Spec.Suspend, false)), active,
			ago(s.Status.LastScheduleTime, now), ago(s.Status.LastSuccessfulTime, now), in(s.Status.NextScheduleTime, now), fmt.Sprint(len(s.Status.History))}
		if withNamespace {
			row = append([]string{s.Namespace}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ScheduleHistoryTable has a row per kept run of a schedule, newest first
// (report.ScheduleHistory.Table).
func ScheduleHistoryTable(s *v1alpha1.StorageBenchmarkSchedule) report.Table {
	h := HistoryOf(s)
	return h.Table()
}

// HistoryOf is a schedule's kept runs, newest first, as the history table
// and figure show them.
func HistoryOf(s *v1alpha1.StorageBenchmarkSchedule) report.ScheduleHistory {
	h := report.ScheduleHistory{Name: s.Name}
	for _, r := range s.Status.History {
		h.Runs = append(h.Runs, report.HistoryRun{
			Name: r.Name, Scheduled: r.ScheduledTime.Time, State: report.State(r.State),
			PeakIOPS: r.PeakIOPS, AtTargetIOPS: r.AtTargetIOPS, SLO: r.SLO, Reason: r.Reason,
			Regression: r.Regression, RegressedMetrics: r.RegressedMetrics,
		})
	}
	return h
}

// ScheduleDocument is the JSON history of a schedule: its kept runs as
// status.history holds them, newest first.
type ScheduleDocument struct {
	Name      string                  `json:"name"`
	Namespace string                  `json:"namespace,omitempty"`
	Schedule  string                  `json:"schedule"`
	History   []v1alpha1.ScheduledRun `json:"history"`
}

// WriteScheduleDocument writes a schedule's JSON history, indented, with
// a final newline.
func WriteScheduleDocument(w io.Writer, s *v1alpha1.StorageBenchmarkSchedule) error {
	d := ScheduleDocument{Name: s.Name, Namespace: s.Namespace, Schedule: s.Spec.Schedule, History: s.Status.History}
	if d.History == nil {
		d.History = []v1alpha1.ScheduledRun{}
	}
	return writeJSON(w, d)
}

// WriteScheduleStatus prints a schedule: its settings and times, then its
// history, each line as report.SafeLine escapes it (the spec is a
// namespace editor's, the Stalled condition may quote an error).
func WriteScheduleStatus(w io.Writer, s *v1alpha1.StorageBenchmarkSchedule, now time.Time) error {
	state := "scheduled"
	switch {
	case ptr.Deref(s.Spec.Suspend, false):
		state = "suspended"
	case meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.ConditionStalled):
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled)
		state = "stalled: " + c.Reason + ": " + c.Message
	}
	lines := []string{
		"Name:          " + s.Name,
		"Namespace:     " + s.Namespace,
		"Schedule:      " + s.Spec.Schedule + " (" + ptr.Deref(s.Spec.TimeZone, "UTC") + ")",
		"State:         " + state,
		"Last schedule: " + orDash(ago(s.Status.LastScheduleTime, now)),
		"Last success:  " + orDash(ago(s.Status.LastSuccessfulTime, now)),
		"Next:          " + orDash(in(s.Status.NextScheduleTime, now)),
	}
	for _, l := range report.SafeLines(lines) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	if len(s.Status.History) == 0 {
		_, err := fmt.Fprintln(w, "\nNo kept runs.")
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	t := ScheduleHistoryTable(s)
	return t.Text(w)
}

// ago is "5m ago" for a past instant, "" when unset.
func ago(t *metav1.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

// in is "in 5m" for a future instant, "" when unset.
func in(t *metav1.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "in " + duration.HumanDuration(t.Sub(now))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
