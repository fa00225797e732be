package controllers

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/test/build"
)

// The decisions' table tests: every deadline, transition and ending, from
// observed children built in memory, with no API server.

var testTimeouts = timeouts{ClaimBind: 5 * time.Minute, Ready: 30 * time.Minute, StartLead: 3 * time.Second,
	NextStepLead: time.Second, ResultGrace: 2 * time.Minute}

// world is a run of two clients as observed: claims bound, clients ready,
// Jobs running, the plan present. Options change it.
type world func(*observed)

func observedRun(opts ...world) *observed {
	o := &observed{claims: map[string]*corev1.PersistentVolumeClaim{"bench-data": bound()},
		clients: []*metav1.PartialObjectMetadata{clientCM(true, -1), clientCM(true, -1)},
		jobs:    []*batchv1.Job{{}, {}}, pods: map[int][]corev1.Pod{},
		plan: &metav1.PartialObjectMetadata{}, bound: 1}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func bound() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
}

func clientCM(ready bool, resultStep int) *metav1.PartialObjectMetadata {
	a := map[string]string{}
	if ready {
		a[exchange.AnnotationReady] = "true"
	}
	if resultStep >= 0 {
		a[exchange.AnnotationResultStep] = strconv.Itoa(resultStep)
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
}

// onNode: client k's pod runs on node name, whose Node is n (nil: deleted).
func onNode(k int, name string, n *corev1.Node) world {
	return func(o *observed) {
		o.pods[k] = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + strconv.Itoa(k) + "-x"}, Spec: corev1.PodSpec{NodeName: name},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}}
		if o.nodes == nil {
			o.nodes = map[string]*corev1.Node{}
		}
		o.nodes[name] = n
	}
}

// nodeWith is a Node whose Ready condition has status s since 2026-01-01.
func nodeWith(name string, s corev1.ConditionStatus) *corev1.Node {
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: s, LastTransitionTime: metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if s != corev1.ConditionTrue {
		c.Reason, c.Message = "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{c}}}
}

// ordered: step k ordered, starting at start, 20 s long with a 2 s ramp.
func ordered(k int, start time.Time) world {
	return func(o *observed) {
		o.order, o.ordered = protocol.StepOrder{Index: k, StartAt: start, Duration: 20 * time.Second, Ramp: 2 * time.Second}, true
	}
}

func recorded(n int) world {
	return func(o *observed) {
		for k := range n {
			o.steps = append(o.steps, run.Step{Order: protocol.StepOrder{Index: k}, Aggregate: results.StepAggregate{Step: k, Clients: 2}})
		}
	}
}

func allResults(step int) world {
	return func(o *observed) {
		for i := range o.clients {
			o.clients[i] = clientCM(true, step)
		}
	}
}

func jobWith(i int, t batchv1.JobConditionType, pods ...corev1.Pod) world {
	return func(o *observed) {
		o.jobs[i] = &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: t, Status: corev1.ConditionTrue}}}}
		o.pods[i] = pods
	}
}

func exited(name string, code int32, msg string, deleted bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg, Reason: "Error"}}}}}}
	if deleted {
		p.DeletionTimestamp = &metav1.Time{Time: t0}
	}
	return p
}

func TestFailureOf(t *testing.T) {
	created := t0
	stepStart := created.Add(10 * time.Minute)
	stepEnds := stepStart.Add(22 * time.Second)
	tests := []struct {
		name   string
		obs    *observed
		clock  *v1alpha1.ClockStatus
		now    time.Time
		since  time.Time
		reason string
		msg    string
		retry  time.Duration
	}{
		{name: "all ready, nothing ordered: no deadline", obs: observedRun(), now: created.Add(time.Minute)},
		{name: "a client preparing: re-check at the ready deadline", now: created.Add(time.Minute),
			obs: observedRun(func(o *observed) { o.clients[0] = clientCM(false, -1) }), retry: 29 * time.Minute},
		{name: "a claim not bound yet: re-check at the bind deadline", now: created.Add(time.Minute),
			obs: observedRun(func(o *observed) { o.claims["bench-data"] = nil; o.bound = 0 }), retry: 4 * time.Minute},
		{name: "deadlines count from the run's beginning on the manager's clock, not the API server's", now: created.Add(time.Hour + time.Minute),
			obs: observedRun(func(o *observed) {
				// The API server's clock is an hour behind the manager's.
				o.plan.Annotations = map[string]string{annotationBegan: created.Add(time.Hour).Format(time.RFC3339Nano)}
				o.claims["bench-data"] = nil
				o.bound = 0
			}), retry: 4 * time.Minute},
		{name: "a claim not bound in time", now: created.Add(5*time.Minute + time.Second),
			obs:    observedRun(func(o *observed) { o.claims["bench-data"] = &corev1.PersistentVolumeClaim{} }),
			reason: ReasonClaimNotBound, msg: "claim bench-data is not bound 5m0s after the benchmark was created"},
		{name: "a client that could not prepare", now: created.Add(time.Minute),
			obs: observedRun(func(o *observed) {
				o.clients[1].Annotations[exchange.AnnotationReady] = "error"
			}), reason: ReasonClientFailed, msg: "client 1 could not prepare: no space left"},
		{name: "a clock too far off", now: created.Add(time.Minute), obs: observedRun(),
			clock: &v1alpha1.ClockStatus{MaxOffset: metav1.Duration{Duration: 4 * time.Second}}, reason: ReasonClockOffsetTooLarge},
		{name: "a clock off, but within the lead", now: created.Add(time.Minute), obs: observedRun(),
			clock: &v1alpha1.ClockStatus{MaxOffset: metav1.Duration{Duration: 2 * time.Second}}},
		{name: "clients not ready in time", now: created.Add(31 * time.Minute),
			obs:    observedRun(func(o *observed) { o.clients[0] = clientCM(false, -1) }),
			reason: ReasonClientsNotReady, msg: "1 of 2 clients were not ready 30m0s after the benchmark was created"},
		{name: "a recorded step a client failed", now: stepEnds, obs: observedRun(recorded(1), func(o *observed) {
			o.steps[0].Aggregate.Errors, o.steps[0].Aggregate.FailedClients = []string{"client 1: fio: io_u error"}, 1
		}), reason: ReasonClientFailed, msg: "step 1: client 1: fio: io_u error"},
		{name: "a recorded step that was interrupted", now: stepEnds, obs: observedRun(recorded(2), func(o *observed) {
			o.steps[1].Aggregate.Interrupted = true
		}), reason: ReasonClientLost, msg: "step 2 was interrupted"},
		{name: "a client Job failed with its pod's exit", now: stepStart, obs: observedRun(ordered(0, stepStart),
			jobWith(1, batchv1.JobFailed, exited("bench-client-001-x", 3, " fio: bad job file \n", false))),
			reason: ReasonClientFailed, msg: "client 1 (pod bench-client-001-x) failed with exit code 3: fio: bad job file"},
		{name: "a client Job failed because its pod was deleted", now: stepStart, obs: observedRun(ordered(0, stepStart),
			jobWith(0, batchv1.JobFailureTarget, exited("bench-client-000-x", 137, "", true))),
			reason: ReasonClientLost, msg: "client 0's pod failed: it was deleted or lost"},
		{name: "a client Job failed because its container was killed", now: stepStart, obs: observedRun(ordered(0, stepStart),
			jobWith(1, batchv1.JobFailed, exited("bench-client-001-x", 137, "", false))),
			reason: ReasonClientFailed, msg: "client 1 (pod bench-client-001-x) failed with exit code 137 (signal 9, killed): Error"},
		{name: "a container the kubelet lost is no signal", now: stepStart, obs: observedRun(ordered(0, stepStart),
			jobWith(1, batchv1.JobFailed, func() corev1.Pod {
				p := exited("bench-client-001-x", 137, "", false)
				p.Status.ContainerStatuses[0].State.Terminated.Reason = "ContainerStatusUnknown"
				return p
			}())),
			reason: ReasonClientFailed, msg: "client 1 (pod bench-client-001-x) failed with exit code 137: ContainerStatusUnknown"},
		{name: "a client pod evicted", now: stepStart, obs: observedRun(ordered(0, stepStart),
			jobWith(0, batchv1.JobFailed, func() corev1.Pod {
				p := exited("bench-client-000-x", 143, "", true)
				p.Spec.NodeName = "node-b"
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
					Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}}
				return p
			}())),
			reason: ReasonClientLost, msg: "client 0 (pod bench-client-000-x) was evicted from node node-b (EvictionByEvictionAPI: Eviction API: evicting)"},
		{name: "a client that exited before the end", now: stepStart, obs: observedRun(ordered(0, stepStart), jobWith(0, batchv1.JobComplete)),
			reason: ReasonClientLost, msg: "client 0's pod exited before the run ended"},
		{name: "a client Job complete after the final order is no failure", now: stepStart,
			obs: observedRun(jobWith(0, batchv1.JobComplete), func(o *observed) { o.order, o.ordered = protocol.StepOrder{Index: 1, Done: true}, true })},
		{name: "a step running: re-check when its results are due", now: stepStart.Add(5 * time.Second),
			obs: observedRun(ordered(0, stepStart)), retry: 17*time.Second + 2*time.Minute},
		{name: "a step whose results are late", now: stepEnds.Add(2*time.Minute + time.Second),
			obs:    observedRun(ordered(1, stepStart), recorded(1), func(o *observed) { o.clients[0] = clientCM(true, 1) }),
			reason: ReasonStepTimedOut, msg: "step 2: 1 of 2 clients did not report a result by"},
		{name: "a step whose results are all in is collected however late the manager is", now: stepEnds.Add(time.Hour),
			obs: observedRun(ordered(1, stepStart), recorded(1), allResults(1))},
		{name: "a manager that just started gives missing results a grace of its own", now: stepEnds.Add(time.Hour),
			since: stepEnds.Add(time.Hour - 10*time.Second),
			obs:   observedRun(ordered(1, stepStart), recorded(1), func(o *observed) { o.clients[0] = clientCM(true, 1) }),
			retry: 2*time.Minute - 10*time.Second},
		{name: "results still missing a grace after the manager started", now: stepEnds.Add(time.Hour),
			since:  stepEnds.Add(time.Hour - 2*time.Minute - time.Second),
			obs:    observedRun(ordered(1, stepStart), recorded(1), func(o *observed) { o.clients[0] = clientCM(true, 1) }),
			reason: ReasonStepTimedOut, msg: "step 2: 1 of 2 clients did not report a result by"},
		{name: "a client Job past its deadline: the manager did not conduct the run in time", now: stepEnds.Add(time.Hour),
			obs: observedRun(ordered(1, stepStart), recorded(1), func(o *observed) {
				o.jobs[1] = &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}}}}
				o.pods[1] = []corev1.Pod{exited("bench-client-001-x", 137, "", false)}
			}),
			reason: ReasonManagerUnavailable, msg: "client 1's Job reached its deadline while step 2 was ordered (1 steps recorded)"},
		{name: "a recorded step's order is no longer awaited", now: stepEnds.Add(time.Hour),
			obs: observedRun(ordered(0, stepStart), recorded(1))},
		{name: "a client's node not Ready", now: stepStart.Add(5 * time.Second),
			obs:    observedRun(ordered(0, stepStart), onNode(1, "node-b", nodeWith("node-b", corev1.ConditionUnknown))),
			reason: ReasonClientLost, msg: "client 1 (pod bench-1-x) lost its node node-b: Ready=Unknown since 2026-01-01T00:00:00Z (NodeStatusUnknown: Kubelet stopped posting node status.)"},
		{name: "a client's node deleted", now: stepStart.Add(5 * time.Second),
			obs:    observedRun(ordered(0, stepStart), onNode(0, "node-a", nil)),
			reason: ReasonClientLost, msg: "client 0 (pod bench-0-x) lost its node node-a: the Node was deleted"},
		{name: "a client's node Ready False (a kubelet alive, restarting) is left to the pod rules", now: stepStart.Add(5 * time.Second),
			obs: observedRun(ordered(0, stepStart), onNode(1, "node-b", nodeWith("node-b", corev1.ConditionFalse))), retry: 17*time.Second + 2*time.Minute},
		{name: "a pod not Running (made up, or not started) is not judged by its node", now: stepStart.Add(5 * time.Second),
			obs:   observedRun(ordered(0, stepStart), onNode(1, "node-b", nil), func(o *observed) { o.pods[1][0].Status.Phase = corev1.PodPending }),
			retry: 17*time.Second + 2*time.Minute},
		{name: "a client's node Ready", now: stepStart.Add(5 * time.Second),
			obs: observedRun(ordered(0, stepStart), onNode(0, "node-a", nodeWith("node-a", corev1.ConditionTrue))), retry: 17*time.Second + 2*time.Minute},
		{name: "a finished client's node lost is judged by the other rules", now: stepStart.Add(5 * time.Second),
			obs: observedRun(ordered(0, stepStart), onNode(0, "node-a", nodeWith("node-a", corev1.ConditionUnknown)), func(o *observed) {
				o.pods[0][0].Status.Phase = corev1.PodSucceeded
			}), retry: 17*time.Second + 2*time.Minute},
		{name: "a deleted client pod's node lost is judged by the other rules", now: stepStart.Add(5 * time.Second),
			obs: observedRun(ordered(0, stepStart), onNode(0, "node-a", nodeWith("node-a", corev1.ConditionUnknown)), func(o *observed) {
				o.pods[0][0].DeletionTimestamp = &metav1.Time{Time: stepStart}
			}), retry: 17*time.Second + 2*time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench()
			b.CreationTimestamp = metav1.Time{Time: created}
			b.Status.Clock = tt.clock
			to := testTimeouts
			to.Since = tt.since
			v, retry := run.Failure(observationOf(b, tt.obs), to, tt.now, func(int) string { return "no space left" })
			switch {
			case tt.reason == "" && v != nil:
				t.Fatalf("failure %s: %s, want none", v.Reason, v.Message)
			case tt.reason != "" && v == nil:
				t.Fatalf("no failure, want %s", tt.reason)
			case v != nil && (v.Reason != tt.reason || !strings.Contains(v.Message, tt.msg)):
				t.Fatalf("failure %s: %q, want %s containing %q", v.Reason, v.Message, tt.reason, tt.msg)
			case v == nil && retry != tt.retry:
				t.Fatalf("retry after %s, want %s", retry, tt.retry)
			}
		})
	}
}

func TestNextAction(t *testing.T) {
	start := t0.Add(time.Minute)
	tests := []struct {
		name string
		obs  *observed
		want run.Action
		err  bool
	}{
		{"a client not ready", observedRun(func(o *observed) { o.clients[1] = clientCM(false, -1) }), run.ActPrepare, false},
		{"no plan yet", observedRun(func(o *observed) { o.plan = nil }), run.ActPrepare, false},
		{"all ready, nothing ordered: order step 0", observedRun(), run.ActOrder, false},
		{"step 0 ordered, one result in", observedRun(ordered(0, start), func(o *observed) { o.clients[0] = clientCM(true, 0) }), run.ActWait, false},
		{"step 0 ordered, every result in: record it", observedRun(ordered(0, start), allResults(0)), run.ActCollect, false},
		{"step 0 recorded: order step 1", observedRun(ordered(0, start), allResults(0), recorded(1)), run.ActOrder, false},
		{"step 1 ordered, results still of step 0", observedRun(ordered(1, start), allResults(0), recorded(1)), run.ActWait, false},
		{"the final order", observedRun(recorded(2), func(o *observed) { o.order, o.ordered = protocol.StepOrder{Index: 2, Done: true}, true }), run.ActEnded, false},
		{"the final order, even with a client gone", observedRun(recorded(2), func(o *observed) {
			o.order, o.ordered = protocol.StepOrder{Index: 2, Done: true}, true
			o.clients[0] = nil
		}), run.ActEnded, false},
		{"an order ahead of the records", observedRun(ordered(3, start), recorded(1)), run.ActPrepare, true},
		{"records ahead of the order", observedRun(ordered(0, start), recorded(3)), run.ActPrepare, true},
		{"records without any order", observedRun(recorded(1)), run.ActPrepare, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run.NextAction(observationOf(newBench(), tt.obs))
			if got != tt.want || (err != nil) != tt.err {
				t.Fatalf("nextAction = %v, %v; want %v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

// TestDecide: one decision per pass, from the failure checks and the
// protocol's move: an ending wins over any move, a wait says so in status,
// and a step whose results are all in is recorded and the next ordered in
// the same pass (run.ActCollect, which advance follows with the order).
func TestDecide(t *testing.T) {
	start := t0.Add(time.Minute)
	b := newBench(func(b *v1alpha1.StorageBenchmark) {
		b.CreationTimestamp = metav1.Time{Time: t0}
		b.Status.StepsPlanned = 3
	})
	tests := []struct {
		name     string
		obs      *observed
		now      time.Time
		end      string
		act      run.Action
		progress string
	}{
		{name: "a client preparing", obs: observedRun(func(o *observed) { o.clients[1] = clientCM(false, -1) }), now: start,
			act: run.ActPrepare, progress: "1/1 claims bound, 1/2 clients ready"},
		{name: "step 1 running", obs: observedRun(ordered(0, start), func(o *observed) { o.clients[0] = clientCM(true, 0) }), now: start,
			act: run.ActWait, progress: "step 1/3 running"},
		{name: "step 1's results all in: record it, then order", obs: observedRun(ordered(0, start), allResults(0)), now: start, act: run.ActCollect},
		{name: "step 1 recorded: order step 2", obs: observedRun(ordered(0, start), allResults(0), recorded(1)), now: start, act: run.ActOrder},
		{name: "an ending wins over the move", obs: observedRun(ordered(0, start), allResults(0), jobWith(1, batchv1.JobFailed)), now: start,
			end: ReasonClientLost},
		{name: "an order the records do not lead to", obs: observedRun(ordered(3, start), recorded(1)), now: start, end: ReasonExchangeLost},
		{name: "a step's results late past the grace", obs: observedRun(ordered(0, start)), now: start.Add(time.Hour), end: ReasonStepTimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(b, tt.obs, testTimeouts, tt.now, func(int) string { return "" })
			switch {
			case tt.end != "":
				if d.End == nil || d.End.Reason != tt.end {
					t.Fatalf("decide ended with %+v, want reason %s", d.End, tt.end)
				}
			case d.End != nil:
				t.Fatalf("decide ended the run: %+v", d.End)
			case d.Act != tt.act || d.Progress != tt.progress:
				t.Fatalf("decide = act %v, progress %q; want act %v, progress %q", d.Act, d.Progress, tt.act, tt.progress)
			}
		})
	}
}

func TestEndingOf(t *testing.T) {
	end := t0.Add(time.Hour)
	complete := func(b *v1alpha1.StorageBenchmark) { setComplete(b, end, "all 3 steps completed") }
	failed := func(b *v1alpha1.StorageBenchmark) { setFailed(b, end, ReasonClientLost, "client 0's pod failed") }
	tests := []struct {
		name  string
		mods  []build.Option
		want  ending
		final protocol.StepOrder
	}{
		{"complete, volumes deleted: Jobs go first, then the claims", []build.Option{complete},
			ending{deleteJobs: true, deleteClaims: true}, protocol.StepOrder{Index: 2, Done: true, Reason: "all 3 steps completed", EndedAt: end}},
		{"failed, volumes deleted: Jobs suspended and kept for their logs", []build.Option{failed},
			ending{suspendJobs: true, deleteClaims: true},
			protocol.StepOrder{Index: 2, Done: true, Reason: "client 0's pod failed", Failure: ReasonClientLost, EndedAt: end}},
		{"complete, volumes retained", []build.Option{complete, func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Cleanup.Volumes = v1alpha1.VolumesRetain
		}}, ending{}, protocol.StepOrder{Index: 2, Done: true, Reason: "all 3 steps completed", EndedAt: end}},
		{"complete on an existing claim: the runners remove their files, their Jobs stay", []build.Option{complete,
			func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.ExistingClaim = ptr.To("app-data") }},
			ending{deleteClaims: true}, protocol.StepOrder{Index: 2, Done: true, Reason: "all 3 steps completed", EndedAt: end}},
		{"a TTL", []build.Option{complete, func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Cleanup.TTLSecondsAfterFinished = ptr.To[int32](60)
		}}, ending{deleteJobs: true, deleteClaims: true, deleteAt: end.Add(time.Minute)},
			protocol.StepOrder{Index: 2, Done: true, Reason: "all 3 steps completed", EndedAt: end}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench()
			b.Status.Steps = make([]v1alpha1.StepStatus, 2)
			for _, m := range tt.mods {
				m(b)
			}
			got := endingOf(b)
			if !got.final.EndedAt.Equal(tt.final.EndedAt) {
				t.Fatalf("final order ended at %s, want %s", got.final.EndedAt, tt.final.EndedAt)
			}
			got.final.EndedAt, tt.final.EndedAt = time.Time{}, time.Time{}
			if got.final != tt.final {
				t.Fatalf("final order %+v, want %+v", got.final, tt.final)
			}
			got.final = protocol.StepOrder{}
			if !got.deleteAt.Equal(tt.want.deleteAt) {
				t.Fatalf("deleteAt %s, want %s", got.deleteAt, tt.want.deleteAt)
			}
			got.deleteAt, tt.want.deleteAt = time.Time{}, time.Time{}
			if got != tt.want {
				t.Fatalf("ending %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestProjectRebuildsStatus: status is a function of the children. A
// status projected over a stale or empty one equals the status projected
// from scratch, conditions and their times included.
func TestProjectRebuildsStatus(t *testing.T) {
	b := newBench(build.Load(func(l *v1alpha1.LoadSpec) {
		l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000, 2000}}
	}))
	b.CreationTimestamp = metav1.Time{Time: t0}
	d := mustDesired(t, b)
	end := t0.Add(10 * time.Minute)
	obs := observedRun(allResults(1), func(o *observed) {
		for k := range 2 {
			agg := mkAgg(k, dirSpec{800 * float64(k+1), 300 * time.Microsecond, time.Millisecond}, dirSpec{200 * float64(k+1), time.Millisecond, 3 * time.Millisecond}, 500*time.Microsecond)
			o.steps = append(o.steps, rec(order(k, plan.Step{OfferedIOPS: int64(1000 * (k + 1))}), agg, exchange.StepName(b.Name, k)))
		}
		o.order, o.ordered = protocol.StepOrder{Index: 2, Done: true, Reason: "all 2 steps completed", EndedAt: end}, true
	})
	// As the run went: progressing since creation, then ended.
	lived := b.DeepCopy()
	setProgressing(lived, ReasonRunning, "step 2/2 running")
	if err := project(lived, &d, obs); err != nil {
		t.Fatal(err)
	}
	fresh := b.DeepCopy()
	if err := project(fresh, &d, obs); err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, fresh.Status), jsonOf(t, lived.Status); got != want {
		t.Fatalf("rebuilt status differs\n got %s\nwant %s", got, want)
	}
	if !finished(fresh) || fresh.Status.CompletionTime == nil || !fresh.Status.CompletionTime.Time.Equal(end) ||
		len(fresh.Status.Steps) != 2 || fresh.Status.Progress != "2/2" || fresh.Status.Summary == nil {
		t.Fatalf("rebuilt status %s", jsonOf(t, fresh.Status))
	}
	for _, c := range fresh.Status.Conditions {
		if !c.LastTransitionTime.Time.Equal(end) {
			t.Errorf("condition %s changed at %s, want the end %s", c.Type, c.LastTransitionTime, end)
		}
	}
	// A failed run's final order rebuilds Failed with its reason.
	obs.order = protocol.StepOrder{Index: 2, Done: true, Reason: "step 2: boom", Failure: ReasonClientFailed, EndedAt: end}
	failedRun := b.DeepCopy()
	if err := project(failedRun, &d, obs); err != nil {
		t.Fatal(err)
	}
	if c := failedCondition(failedRun); c == nil || c.Reason != ReasonClientFailed || c.Message != "step 2: boom" {
		t.Fatalf("Failed condition %+v", c)
	}
}

func failedCondition(b *v1alpha1.StorageBenchmark) *metav1.Condition {
	for i := range b.Status.Conditions {
		if c := &b.Status.Conditions[i]; c.Type == v1alpha1.ConditionFailed && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}

func TestSpread(t *testing.T) {
	placed := func(nodes ...string) world {
		return func(o *observed) {
			for i, n := range nodes {
				o.pods[i] = []corev1.Pod{{Spec: corev1.PodSpec{NodeName: n}}}
			}
		}
	}
	three := func(o *observed) { o.clients = append(o.clients, clientCM(true, -1)) }
	at := t0.Add(time.Minute)
	tests := []struct {
		name        string
		obs         *observed
		schedulable int
		want        bool
		reason, msg string
	}{
		{name: "on distinct nodes", obs: observedRun(three, placed("a", "b", "c")), schedulable: -1,
			want: true, reason: ReasonOnDistinctNodes, msg: "3 clients on 3 distinct nodes"},
		{name: "fewer nodes than clients", obs: observedRun(three, placed("b", "a", "b")), schedulable: 2,
			reason: ReasonFewerNodes, msg: "3 clients on 2 nodes: b runs clients 0 2; the cluster had 2 Ready, schedulable nodes for 3 clients when the first step was ordered"},
		{name: "sharing though nodes were free", obs: observedRun(placed("a", "a")), schedulable: 3,
			reason: ReasonSharingNodes, msg: "2 clients on 1 node: a runs clients 0 1 (the spread is a preference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := spreadOf(tt.obs, tt.schedulable, at)
			plan := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationVerdicts: run.Verdicts{rec}.Encode(maxVerdicts)}}}
			setSpread := func(b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata) {
				setVerdicts(b, verdictsOf(plan, time.Time{}), false, time.Time{})
			}
			b := newBench()
			setSpread(b, plan)
			if meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsSpread) != nil {
				t.Fatal("a condition without spreadAcrossNodes")
			}
			b.Spec.Clients.SpreadAcrossNodes = true
			setSpread(b, plan)
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsSpread)
			switch {
			case c == nil:
				t.Fatal("no condition")
			case (c.Status == metav1.ConditionTrue) != tt.want || c.Reason != tt.reason || !strings.HasPrefix(c.Message, tt.msg):
				t.Fatalf("condition %s %s %q, want %v %s %q…", c.Status, c.Reason, c.Message, tt.want, tt.reason, tt.msg)
			case !c.LastTransitionTime.Time.Equal(at):
				t.Fatalf("transition at %s, want the recorded instant", c.LastTransitionTime)
			}
			want := *c
			setSpread(b, &metav1.PartialObjectMetadata{})
			if meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsSpread) != nil {
				t.Fatal("a condition before anything was recorded")
			}
			// As a manager before recorded verdicts kept it.
			legacy := fmt.Sprintf(`{"spread":%v,"reason":%q,"message":%q,"at":%q}`, rec.Status == run.True, rec.Reason, rec.Message, at.Format(time.RFC3339))
			setSpread(b, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{legacyAnnotationSpread: legacy}}})
			if old := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionClientsSpread); old == nil || *old != want {
				t.Fatalf("from the older annotation: %+v, want %+v", old, want)
			}
		})
	}
}
