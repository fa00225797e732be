package chart

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/test/k8stest"
)

// TestArgoHealthChecks runs the chart's Argo CD health checks on the
// recorded benchmarks of internal/report/testdata and on each state a
// benchmark and a schedule pass through. (test/integration runs them on
// the objects of real runs too.)
func TestArgoHealthChecks(t *testing.T) {
	dir := root(t)
	recorded := func(name string) *v1alpha1.StorageBenchmark {
		b, err := os.ReadFile(filepath.Join(dir, "internal", "report", "testdata", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sbs, err := apireport.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return &sbs[0]
	}
	cond := func(typ string, status bool, reason, msg string) metav1.Condition {
		s := metav1.ConditionFalse
		if status {
			s = metav1.ConditionTrue
		}
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg}
	}
	running := recorded("oltp")
	running.Status.Conditions = []metav1.Condition{cond("Reconciling", true, "Running", "step 3/8 running"), cond("Ready", false, "Running", "step 3/8 running")}
	failed := recorded("oltp")
	failed.Status.Conditions = []metav1.Condition{cond("Failed", true, "ClientLost", "client 2 was stopped"), cond("Complete", false, "ClientLost", "")}
	regressed := recorded("throughput")
	regressed.Status.Conditions = append(regressed.Status.Conditions, cond("Regressed", true, "Regressed", "step 2 (2000 IOPS offered): IOPS 2,000 → 1,500 (−25.0 %)"))
	notRegressed := recorded("throughput")
	notRegressed.Status.Conditions = append(notRegressed.Status.Conditions, cond("Regressed", false, "NotRegressed", "none of 4 tests"))
	sched := func(suspend bool, conds ...metav1.Condition) *v1alpha1.StorageBenchmarkSchedule {
		s := &v1alpha1.StorageBenchmarkSchedule{Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 2 * * *", Suspend: ptr.To(suspend)}}
		s.Status.Conditions = conds
		return s
	}
	for _, tc := range []struct {
		name, kind string
		obj        runtime.Object
		status     string
		message    string
	}{
		{"a completed run whose SLO was not met", "StorageBenchmark", recorded("oltp"), "Degraded", "NotMet: objective 60k-iops-at-1ms not met"},
		{"a completed run whose SLOs were met", "StorageBenchmark", recorded("throughput"), "Healthy", "Completed: "},
		{"a completed run that regressed", "StorageBenchmark", regressed, "Degraded", "Regressed: step 2 (2000 IOPS offered)"},
		{"a completed run that did not regress", "StorageBenchmark", notRegressed, "Healthy", "Completed: "},
		{"a run in progress", "StorageBenchmark", running, "Progressing", "Running: step 3/8 running"},
		{"a failed run", "StorageBenchmark", failed, "Degraded", "ClientLost: client 2 was stopped"},
		{"a new benchmark", "StorageBenchmark", &v1alpha1.StorageBenchmark{}, "Progressing", "waiting for the operator"},
		{"a scheduled schedule", "StorageBenchmarkSchedule", sched(false, cond("Ready", true, "Scheduled", "next run at 2026-11-25T01:00:00Z"), cond("Stalled", false, "Scheduled", "")),
			"Healthy", "next run at 2026-11-25T01:00:00Z"},
		{"a schedule that cannot run", "StorageBenchmarkSchedule", sched(false, cond("Ready", false, "InvalidSchedule", "unknown time zone"), cond("Stalled", true, "InvalidSchedule", "unknown time zone")),
			"Degraded", "InvalidSchedule: unknown time zone"},
		{"a suspended schedule that cannot run", "StorageBenchmarkSchedule", sched(true, cond("Stalled", true, "InvalidTemplate", "template.spec: bad")),
			"Degraded", "InvalidTemplate: template.spec: bad"},
		{"a suspended schedule", "StorageBenchmarkSchedule", sched(true, cond("Ready", true, "Suspended", "suspended")), "Suspended", "suspended: no new run is created"},
		{"a new schedule", "StorageBenchmarkSchedule", sched(false), "Progressing", "waiting for the operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, msg, err := k8stest.ArgoHealth(dir, tc.kind, tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if status != tc.status || len(msg) < len(tc.message) || msg[:len(tc.message)] != tc.message {
				t.Errorf("health %s %q, want %s %q…", status, msg, tc.status, tc.message)
			}
		})
	}
}
