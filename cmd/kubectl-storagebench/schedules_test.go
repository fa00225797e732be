package main

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// TestSchedules: a schedule with a failed and a completed run kept, its
// status written as the operator writes it, listed and printed.
func TestSchedules(t *testing.T) {
	ctx := context.Background()
	rec, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "oltp-nightly"},
		Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1alpha1.StorageBenchmarkTemplate{Spec: rec.Spec}}}
	if err := k8s.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(d).Truncate(time.Second)) }
	s.Status = v1alpha1.StorageBenchmarkScheduleStatus{
		LastScheduleTime: ptrTo(at(-2 * time.Hour)), LastSuccessfulTime: ptrTo(at(-90 * time.Minute)), NextScheduleTime: ptrTo(at(22 * time.Hour)),
		History: []v1alpha1.ScheduledRun{
			{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-29900000", ScheduledTime: at(-2 * time.Hour)}, State: v1alpha1.RunComplete,
				PeakIOPS: 61837, AtTargetIOPS: 49951, SLO: "AllMet"},
			{ScheduledRunRef: v1alpha1.ScheduledRunRef{Name: "oltp-nightly-29898560", ScheduledTime: at(-26 * time.Hour)}, State: v1alpha1.RunFailed,
				Reason: "ClientLost"},
		},
	}
	if err := k8s.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := plugin(t, "schedules", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.Contains(lines[1], "oltp-nightly  0 2 * * *  UTC") || !strings.Contains(lines[1], "120m ago") || !strings.Contains(lines[1], "in 21h") {
		t.Errorf("schedules:\n%s", out)
	}

	out, errOut, code = plugin(t, "schedules", "oltp-nightly", "-n", ns)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"Schedule:      0 2 * * * (UTC)",
		"State:         scheduled",
		"RUN                    SCHEDULED",
		"oltp-nightly-29900000",
		"Complete     61,837          49,951  AllMet",
		"Failed                               ClientLost",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("schedule lacks %q:\n%s", w, out)
		}
	}
	_, errOut, code = plugin(t, "schedules", "nope", "-n", ns)
	if code != exitError || !strings.Contains(errOut, `storagebenchmarkschedule "nope" not found in namespace "storagebench"`) {
		t.Errorf("missing schedule: exit %d, %q", code, errOut)
	}
	_, errOut, code = plugin(t, "schedules", "-n", "other")
	if code != exitOK || !strings.Contains(errOut, "No storagebenchmarkschedules found.") {
		t.Errorf("empty namespace: exit %d, %q", code, errOut)
	}
}

func ptrTo[T any](v T) *T { return &v }
