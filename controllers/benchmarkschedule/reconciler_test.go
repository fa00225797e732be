package benchmarkschedule

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// schedRun is a scheduled run in state st, scheduled k hours after t0.
func schedRun(k int, st v1alpha1.RunState) scheduledRun {
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: RunName("s", t0.Add(time.Duration(k)*time.Hour)), UID: types.UID(fmt.Sprint("uid-", k))}}
	return scheduledRun{b: b, scheduled: t0.Add(time.Duration(k) * time.Hour), state: st}
}

func TestOverLimitKeepsTheNewestOfEachAndEveryRunningOne(t *testing.T) {
	c, f, r := v1alpha1.RunComplete, v1alpha1.RunFailed, v1alpha1.RunRunning
	runs := []scheduledRun{schedRun(0, c), schedRun(1, f), schedRun(2, c), schedRun(3, r), schedRun(4, f), schedRun(5, c), schedRun(6, f)}
	names := func(rs []scheduledRun) []int {
		var out []int
		for _, x := range rs {
			out = append(out, int(x.scheduled.Sub(t0)/time.Hour))
		}
		return out
	}
	for _, tc := range []struct {
		successful, failed int
		want               []int
	}{
		{3, 1, []int{1, 4}},
		{1, 1, []int{0, 1, 2, 4}},
		{0, 0, []int{0, 1, 2, 4, 5, 6}},
		{10, 10, nil},
	} {
		if got := names(overLimit(runs, tc.successful, tc.failed)); !slices.Equal(got, tc.want) {
			t.Errorf("limits %d/%d: deleted %v, want %v (never the running run 3)", tc.successful, tc.failed, got, tc.want)
		}
	}
}

func TestProjectSchedule(t *testing.T) {
	done := schedRun(0, v1alpha1.RunComplete)
	done.b.Status.CompletionTime = &metav1.Time{Time: t0.Add(10 * time.Minute)}
	done.b.Status.Summary = &v1alpha1.SummaryStatus{PeakIOPS: 5000, AtTarget: &v1alpha1.AtTargetStatus{IOPS: 4000}}
	done.b.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSLOMet, Status: metav1.ConditionTrue, Reason: controllers.ReasonAllMet}}
	failed := schedRun(1, v1alpha1.RunFailed)
	failed.b.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: controllers.ReasonClientLost}}
	running := schedRun(2, v1alpha1.RunRunning)
	s := &v1alpha1.StorageBenchmarkSchedule{}
	s.Status.History = []v1alpha1.ScheduledRun{{State: "stale"}}
	projectSchedule(s, []scheduledRun{done, failed, running})
	h := s.Status.History
	if len(h) != 3 || h[0].Name != running.b.Name || h[1].Name != failed.b.Name || h[2].Name != done.b.Name {
		t.Fatalf("history %+v: want the three runs, newest first", h)
	}
	if h[2].PeakIOPS != 5000 || h[2].AtTargetIOPS != 4000 || h[2].SLO != controllers.ReasonAllMet || h[2].State != v1alpha1.RunComplete {
		t.Errorf("completed row %+v", h[2])
	}
	if h[1].Reason != controllers.ReasonClientLost || h[1].State != v1alpha1.RunFailed {
		t.Errorf("failed row %+v", h[1])
	}
	if s.Status.Active == nil || s.Status.Active.Name != running.b.Name {
		t.Errorf("active %+v, want %s", s.Status.Active, running.b.Name)
	}
	if s.Status.LastSuccessfulTime == nil || !s.Status.LastSuccessfulTime.Time.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("lastSuccessfulTime %v", s.Status.LastSuccessfulTime)
	}
}

func TestRunNameFitsABenchmarkName(t *testing.T) {
	name := RunName("a-schedule-name-of-31-character", time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC))
	if len(name) > 40 {
		t.Errorf("%q is %d characters: a benchmark's name is at most 40", name, len(name))
	}
}
