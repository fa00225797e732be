package controllers

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/test/build"
)

// A curve runs its unthrottled step again at twice the outstanding I/O; the
// ClientBound condition says whether that gained more than 5 %, and the
// curve's rates are built from the maximum alone.
func TestProjectClientBoundCheck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		check      float64 // IOPS the check achieved; the maximum is 10,000
		wantStatus metav1.ConditionStatus
		wantReason string
		wantText   string
	}{
		{"client-bound", 12300, metav1.ConditionTrue, ReasonClientBound, "+23.0 %: the maximum is the clients'"},
		{"storage-bound", 10100, metav1.ConditionFalse, ReasonStorageBound, "+1.0 % (at most 5 %)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
				l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS", Percents: []int32{50}}
			}))
			b.CreationTimestamp = metav1.Time{Time: t0}
			d := mustDesired(t, b)
			if !d.Load.Curve.ClientBoundCheck || d.StepsPlanned != 3 {
				t.Fatalf("check %v, %d steps planned; want the check and 3 steps", d.Load.Curve.ClientBoundCheck, d.StepsPlanned)
			}
			achieved := []float64{10000, tc.check, 5000}
			obs := observedRun(allResults(5), func(o *observed) {
				for k, iops := range achieved {
					next, stop, err := plan.Next(d.Load, outcomes(o.steps))
					if err != nil || stop != nil {
						t.Fatalf("plan.Next after %d steps: %v %v", k, stop, err)
					}
					agg := mkAgg(k, dirSpec{iops, time.Millisecond, 2 * time.Millisecond}, dirSpec{}, time.Millisecond)
					o.steps = append(o.steps, rec(order(k, *next), agg, exchange.StepName(b.Name, k)))
				}
				o.order, o.ordered = protocol.StepOrder{Index: 3, Done: true, Reason: "all 3 steps completed", EndedAt: t0.Add(time.Hour)}, true
			})
			if err := project(b, &d, obs); err != nil {
				t.Fatal(err)
			}
			s := b.Status.Steps
			if len(s) != 3 || !s[1].ClientBoundCheck || !s[1].Unthrottled || s[0].ClientBoundCheck || s[2].OfferedIOPS != 5000 {
				t.Fatalf("steps %s; want the check second and 50 %% of the 10,000 maximum third", jsonOf(t, s))
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientBound)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantText) ||
				!strings.Contains(c.Message, "(step 2)") {
				t.Fatalf("ClientBound %+v", c)
			}
			if want := obs.steps[1].Order.End(); !c.LastTransitionTime.Time.Equal(want) {
				t.Errorf("ClientBound stamped %v, want the check's end %v", c.LastTransitionTime, want)
			}
			if !meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) || meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed) {
				t.Errorf("the verdict must not end the run otherwise: %v", conditionSet(b))
			}
		})
	}
}

// A synchronous engine keeps one I/O per job in flight whatever its depth,
// so a curve on it has no client-bound check; nor does one that turns it off.
func TestClientBoundCheckSkipped(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*v1alpha1.StorageBenchmark)
	}{
		{"psync", build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp", IOEngine: "psync", IODepth: ptr.To[int32](1)})},
		{"turned off", build.Load(func(l *v1alpha1.LoadSpec) { l.Curve.ClientBoundCheck = ptr.To(false) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
				l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS", Percents: []int32{50}}
			}), tc.mod)
			d := mustDesired(t, b)
			if d.Load.Curve.ClientBoundCheck || d.StepsPlanned != 2 {
				t.Fatalf("check %v, %d steps planned; want no check, 2 steps", d.Load.Curve.ClientBoundCheck, d.StepsPlanned)
			}
		})
	}
}

// The clients' CPU reaches status: each step's busiest and most throttled
// client and the clients past a bound, and the ClientCPUBound condition
// naming them, stamped with the last measured step's end; absent when no
// client measured its CPU.
func TestProjectClientCPU(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cpu        []results.ClientCPU
		wantStatus metav1.ConditionStatus // "": no condition
		wantReason string
		wantText   string
	}{
		{"not measured", []results.ClientCPU{{}, {}}, "", "", ""},
		{"headroom", []results.ClientCPU{{Measured: 3, MaxBusyPercent: 9.6}, {Measured: 3, MaxBusyPercent: 21.4}}, metav1.ConditionFalse, ReasonClientCPUHeadroom, "in steps 1, 2, the busiest client's fio used 21 %"},
		{"throttled", []results.ClientCPU{{Measured: 3, MaxBusyPercent: 9.6}, {Measured: 3, MaxBusyPercent: 30, MaxThrottledPercent: 64.4, Bound: []int{0, 2}, BoundCount: 2}},
			metav1.ConditionTrue, ReasonClientCPUThrottled, "in step 2, clients 0, 2 were past a bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(build.Load(func(l *v1alpha1.LoadSpec) { l.Rate = &v1alpha1.RateSteps{Steps: []int64{100, 200}} }))
			b.CreationTimestamp = metav1.Time{Time: t0}
			d := mustDesired(t, b)
			obs := observedRun(allResults(5), func(o *observed) {
				for k, cpu := range tc.cpu {
					next, _, err := plan.Next(d.Load, outcomes(o.steps))
					if err != nil || next == nil {
						t.Fatalf("plan.Next after %d steps: %v", k, err)
					}
					agg := mkAgg(k, dirSpec{float64(100 * (k + 1)), time.Millisecond, 2 * time.Millisecond}, dirSpec{}, time.Millisecond)
					agg.ClientCPU = cpu
					o.steps = append(o.steps, rec(order(k, *next), agg, exchange.StepName(b.Name, k)))
				}
				o.order, o.ordered = protocol.StepOrder{Index: 2, Done: true, Reason: "all 2 steps completed", EndedAt: t0.Add(time.Hour)}, true
			})
			if err := project(b, &d, obs); err != nil {
				t.Fatal(err)
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientCPUBound)
			if tc.wantStatus == "" {
				if c != nil || b.Status.Steps[0].ClientCPU != nil {
					t.Fatalf("condition %+v, step %+v; want neither", c, b.Status.Steps[0].ClientCPU)
				}
				return
			}
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantText) {
				t.Fatalf("ClientCPUBound %+v", c)
			}
			// True since the first bound step (2), False since the first
			// measured one (1): as a status that lived through the run.
			first := 0
			if tc.wantStatus == metav1.ConditionTrue {
				first = 1
			}
			if want := obs.steps[first].Order.End(); !c.LastTransitionTime.Time.Equal(want) {
				t.Errorf("stamped %v, want step %d's end %v", c.LastTransitionTime, first+1, want)
			}
			last := tc.cpu[1]
			got := b.Status.Steps[1].ClientCPU
			if got == nil || float64(got.BusyPercent) != math.Ceil(last.MaxBusyPercent) || float64(got.ThrottledPercent) != math.Ceil(last.MaxThrottledPercent) ||
				int(got.BoundCount) != last.BoundCount || len(got.BoundClients) != len(last.Bound) {
				t.Fatalf("step 2's clientCPU %+v, want %+v", got, last)
			}
		})
	}
}
