package volumeoperations

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/volops"
)

// The timer's pure logic, on a fake clock: what it records, when, and the
// samples it gives. Its watch (run) needs a cluster and is not tested
// here; the transition functions the watch calls (claim, pod, snapshot)
// are, with the objects it would deliver.

// t0 is the fake clock's start; every instant below is an offset from it.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// testTimer is a timer of n objects of op on a fake clock at t0, and the
// number of times it called done.
func testTimer(op v1alpha1.VolumeOperation, n int, timeout time.Duration) (*timer, *testingclock.FakeClock, *atomic.Int32) {
	clk := testingclock.NewFakeClock(t0)
	var calls atomic.Int32
	t := newTimer(timerKey{uid: "uid", index: 0, attempt: 1}, op, n, timeout, clk, func() { calls.Add(1) })
	return t, clk, &calls
}

// timerEvent is something the reconciler or the watch tells the timer, at an
// offset from t0.
type timerEvent struct {
	at time.Duration
	do func(*timer)
}

func evReq(at time.Duration, i int) timerEvent {
	return timerEvent{at, func(t *timer) { t.request(i) }}
}
func evStarted(at time.Duration, i int) timerEvent {
	return timerEvent{at, func(t *timer) { t.started(i) }}
}
func evDone(at time.Duration, i int) timerEvent {
	return timerEvent{at, func(t *timer) { t.finish(i, false, "") }}
}
func evFailed(at time.Duration, i int, reason string) timerEvent {
	return timerEvent{at, func(t *timer) { t.finish(i, true, reason) }}
}
func evRefused(at time.Duration, i int, msg string) timerEvent {
	return timerEvent{at, func(t *timer) { t.refuse(i, errors.New(msg)) }}
}
func evNoted(at time.Duration, i int, reason string) timerEvent {
	return timerEvent{at, func(t *timer) { t.note(i, reason) }}
}

// play applies the events in turn, each at its instant.
func play(t *timer, clk *testingclock.FakeClock, events []timerEvent) {
	for _, e := range events {
		clk.SetTime(at(e.at))
		e.do(t)
	}
}

func sample(op v1alpha1.VolumeOperation, n, i int, start, end time.Duration, outcome volops.Outcome, reason string) volops.Sample {
	return volops.Sample{Operation: volops.Operation(op), Concurrency: n, Index: i, Start: at(start), End: at(end), Outcome: outcome, Reason: reason}
}

func TestTimerSamples(t *testing.T) {
	const timeout = 5 * time.Minute
	prov, att := v1alpha1.OperationProvision, v1alpha1.OperationAttach
	tests := []struct {
		name   string
		op     v1alpha1.VolumeOperation
		n      int
		events []timerEvent
		now    time.Duration
		// want nil: still waiting, wantWait until the next deadline.
		want     []volops.Sample
		wantWait time.Duration
	}{
		{name: "one pending: nil and the wait until its deadline", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0)}, now: time.Minute, wantWait: 4 * time.Minute},
		{name: "several pending: the wait until the nearest deadline", op: prov, n: 3,
			events: []timerEvent{evReq(0, 0), evReq(10*time.Second, 2), evReq(30*time.Second, 1)}, now: time.Minute, wantWait: 4 * time.Minute},
		{name: "one done, one pending: nil", op: prov, n: 2,
			events: []timerEvent{evReq(0, 0), evReq(time.Second, 1), evDone(2*time.Second, 0)}, now: 10 * time.Second, wantWait: 4*time.Minute + 51*time.Second},
		{name: "one timed out, one pending: nil until both are decided", op: prov, n: 2,
			events: []timerEvent{evReq(0, 0), evReq(time.Minute, 1)}, now: 5*time.Minute + time.Second, wantWait: 59 * time.Second},
		{name: "a deadline a nanosecond away: the wait is at least a millisecond", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0)}, now: timeout - time.Nanosecond, wantWait: time.Millisecond},
		{name: "all succeeded: each from its request to its end", op: prov, n: 2,
			events: []timerEvent{evReq(0, 0), evReq(time.Second, 1), evDone(3*time.Second, 1), evDone(4*time.Second, 0)}, now: 10 * time.Second,
			want: []volops.Sample{
				sample(prov, 2, 0, 0, 4*time.Second, volops.Succeeded, ""),
				sample(prov, 2, 1, time.Second, 3*time.Second, volops.Succeeded, ""),
			}},
		{name: "a succeeded one drops the errors noted while it waited", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0), evNoted(time.Second, 0, "retrying"), evDone(2*time.Second, 0)}, now: 2 * time.Second,
			want: []volops.Sample{sample(prov, 1, 0, 0, 2*time.Second, volops.Succeeded, "")}},
		{name: "failed: its reason and when it was seen failed", op: prov, n: 2,
			events: []timerEvent{evReq(0, 0), evReq(0, 1), evFailed(2*time.Second, 0, "the claim lost its volume"), evDone(3*time.Second, 1)}, now: 3 * time.Second,
			want: []volops.Sample{
				sample(prov, 2, 0, 0, 2*time.Second, volops.Failed, "the claim lost its volume"),
				sample(prov, 2, 1, 0, 3*time.Second, volops.Succeeded, ""),
			}},
		{name: "refused: failed at once with the API's error", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0), evRefused(time.Millisecond, 0, "exceeded quota")}, now: time.Millisecond,
			want: []volops.Sample{sample(prov, 1, 0, 0, time.Millisecond, volops.Failed, "request refused: exceeded quota")}},
		{name: "at its deadline exactly: timed out, ended now", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0)}, now: timeout,
			want: []volops.Sample{sample(prov, 1, 0, 0, timeout, volops.TimedOut, "not done after 5m0s")}},
		{name: "past its deadline: timed out, ended now, with the last error noted", op: prov, n: 1,
			events: []timerEvent{evReq(0, 0), evNoted(time.Second, 0, "first"), evNoted(2*time.Second, 0, "quota exceeded")}, now: 6 * time.Minute,
			want: []volops.Sample{sample(prov, 1, 0, 0, 6*time.Minute, volops.TimedOut, "not done after 5m0s: quota exceeded")}},
		{name: "the deadline is each object's own request plus the timeout", op: prov, n: 2,
			events: []timerEvent{evReq(0, 0), evReq(time.Minute, 1), evDone(5*time.Minute+30*time.Second, 1)}, now: 5*time.Minute + 30*time.Second,
			want: []volops.Sample{
				sample(prov, 2, 0, 0, 5*time.Minute+30*time.Second, volops.TimedOut, "not done after 5m0s"),
				sample(prov, 2, 1, time.Minute, 5*time.Minute+30*time.Second, volops.Succeeded, ""),
			}},
		{name: "attach: the timing starts when the pod is seen scheduled", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evStarted(2*time.Second, 0), evDone(5*time.Second, 0)}, now: 5 * time.Second,
			want: []volops.Sample{sample(att, 1, 0, 2*time.Second, 5*time.Second, volops.Succeeded, "")}},
		{name: "attach: seen scheduled twice, the first counts", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evStarted(2*time.Second, 0), evStarted(3*time.Second, 0), evDone(5*time.Second, 0)}, now: 5 * time.Second,
			want: []volops.Sample{sample(att, 1, 0, 2*time.Second, 5*time.Second, volops.Succeeded, "")}},
		{name: "attach: the deadline is from the request, not from the scheduling", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evStarted(4*time.Minute, 0)}, now: timeout,
			want: []volops.Sample{sample(att, 1, 0, 4*time.Minute, timeout, volops.TimedOut, "not done after 5m0s")}},
		{name: "attach: still pending before the request's deadline, though scheduled late", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evStarted(4*time.Minute, 0)}, now: 4*time.Minute + 30*time.Second, wantWait: 30 * time.Second},
		{name: "attach: never seen scheduled, timed out from its request", op: att, n: 1,
			events: []timerEvent{evReq(0, 0)}, now: timeout,
			want: []volops.Sample{sample(att, 1, 0, 0, timeout, volops.TimedOut, "not done after 5m0s")}},
		{name: "attach: done without being seen scheduled, it starts when it ends", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evDone(3*time.Second, 0)}, now: 3 * time.Second,
			want: []volops.Sample{sample(att, 1, 0, 3*time.Second, 3*time.Second, volops.Succeeded, "")}},
		{name: "attach: refused before it was scheduled", op: att, n: 1,
			events: []timerEvent{evReq(0, 0), evRefused(time.Second, 0, "forbidden")}, now: time.Second,
			want: []volops.Sample{sample(att, 1, 0, time.Second, time.Second, volops.Failed, "request refused: forbidden")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, clk, _ := testTimer(tt.op, tt.n, timeout)
			play(tm, clk, tt.events)
			clk.SetTime(at(tt.now))
			got, wait := tm.samples(tt.n)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("samples:\n got %s\nwant %s", fmtSamples(got), fmtSamples(tt.want))
			}
			if wait != tt.wantWait {
				t.Errorf("wait = %s, want %s", wait, tt.wantWait)
			}
			if got != nil {
				if _, err := volops.Summarize(got); err != nil {
					t.Errorf("the core refuses the samples: %v", err)
				}
			}
		})
	}
}

// BUG (timer.go, samples, the "default" case): an object whose request was
// not recorded yet (requested[i] zero, "not sent" by the field's own
// comment) is not pending: its deadline is the zero time plus the timeout,
// so the wait is negative, the `wait > 0` test fails, and samples returns
// every sample — with a zero Sample (no operation, no outcome) for each
// object still waiting, which volops.Summarize refuses ("unknown
// operation"). Through Reconcile this needs timing() to run before
// requestAll returned, which the work queue's one-reconcile-per-key
// prevents today; the timer's contract still says nil while any object is
// pending.
func TestTimerSamplesObjectNotYetRequestedIsPending(t *testing.T) {
	tm, clk, _ := testTimer(v1alpha1.OperationProvision, 2, 5*time.Minute)
	play(tm, clk, []timerEvent{evReq(0, 0), evDone(time.Second, 0)}) // object 1 not requested yet
	clk.SetTime(at(2 * time.Second))
	got, wait := tm.samples(2)
	if got != nil {
		t.Errorf("samples with object 1 not yet requested = %s (wait %s), want nil and a positive wait", fmtSamples(got), wait)
		if _, err := volops.Summarize(got); err != nil {
			t.Logf("and the core refuses them: %v", err)
		}
	}
	if wait <= 0 && got == nil {
		t.Errorf("wait = %s, want positive", wait)
	}
}

func fmtSamples(ss []volops.Sample) string {
	if ss == nil {
		return "nil"
	}
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "\n  {%s c=%d i=%d start=+%s end=+%s %s %q}", s.Operation, s.Concurrency, s.Index, s.Start.Sub(t0), s.End.Sub(t0), s.Outcome, s.Reason)
	}
	return b.String()
}

func TestTimerRequest(t *testing.T) {
	for _, op := range []v1alpha1.VolumeOperation{
		v1alpha1.OperationProvision, v1alpha1.OperationSnapshot, v1alpha1.OperationCloneFromSnapshot,
		v1alpha1.OperationCloneFromVolume, v1alpha1.OperationExpand, v1alpha1.OperationDelete,
	} {
		t.Run(string(op)+" starts at its request", func(t *testing.T) {
			tm, clk, _ := testTimer(op, 2, time.Minute)
			play(tm, clk, []timerEvent{evReq(3*time.Second, 1)})
			if !tm.requested[1].Equal(at(3*time.Second)) || !tm.start[1].Equal(at(3*time.Second)) {
				t.Errorf("requested %v, start %v, want both +3s", tm.requested[1].Sub(t0), tm.start[1].Sub(t0))
			}
			if !tm.requested[0].IsZero() || !tm.start[0].IsZero() {
				t.Errorf("object 0 not requested: requested %v, start %v, want zero", tm.requested[0], tm.start[0])
			}
		})
	}
	t.Run("attach starts when seen scheduled, once", func(t *testing.T) {
		tm, clk, _ := testTimer(v1alpha1.OperationAttach, 1, time.Minute)
		play(tm, clk, []timerEvent{evReq(time.Second, 0)})
		if !tm.requested[0].Equal(at(time.Second)) || !tm.start[0].IsZero() {
			t.Fatalf("after the request: requested %v, start %v; want +1s and zero", tm.requested[0].Sub(t0), tm.start[0])
		}
		play(tm, clk, []timerEvent{evStarted(2*time.Second, 0), evStarted(3*time.Second, 0)})
		if !tm.start[0].Equal(at(2 * time.Second)) {
			t.Errorf("start = +%s, want +2s (the first scheduling seen)", tm.start[0].Sub(t0))
		}
	})
	t.Run("started does not move a request's start", func(t *testing.T) {
		tm, clk, _ := testTimer(v1alpha1.OperationProvision, 1, time.Minute)
		play(tm, clk, []timerEvent{evReq(time.Second, 0), evStarted(2*time.Second, 0)})
		if !tm.start[0].Equal(at(time.Second)) {
			t.Errorf("start = +%s, want +1s", tm.start[0].Sub(t0))
		}
	})
}

func TestTimerFinishIsIdempotentAndDoneIsCalledOnce(t *testing.T) {
	tm, clk, calls := testTimer(v1alpha1.OperationProvision, 2, time.Minute)
	play(tm, clk, []timerEvent{evReq(0, 0), evReq(0, 1), evDone(time.Second, 0)})
	if n := calls.Load(); n != 0 {
		t.Fatalf("done called %d times with object 1 pending, want 0", n)
	}
	// Later news of a finished object changes nothing.
	play(tm, clk, []timerEvent{evFailed(2*time.Second, 0, "late"), evRefused(3*time.Second, 0, "late"), evDone(4*time.Second, 0), evNoted(5*time.Second, 0, "late")})
	if !tm.end[0].Equal(at(time.Second)) || tm.failed[0] || tm.reason[0] != "" {
		t.Errorf("object 0 after later news: end +%s, failed %v, reason %q; want +1s, false, \"\"", tm.end[0].Sub(t0), tm.failed[0], tm.reason[0])
	}
	play(tm, clk, []timerEvent{evFailed(6*time.Second, 1, "lost")})
	if n := calls.Load(); n != 1 {
		t.Fatalf("done called %d times once all are done, want 1", n)
	}
	play(tm, clk, []timerEvent{evDone(7*time.Second, 1), evFailed(8*time.Second, 0, "again"), evRefused(9*time.Second, 1, "again")})
	if n := calls.Load(); n != 1 {
		t.Errorf("done called %d times after more news, want 1", n)
	}
	if !tm.end[1].Equal(at(6*time.Second)) || !tm.failed[1] || tm.reason[1] != "lost" {
		t.Errorf("object 1: end +%s, failed %v, reason %q; want +6s, true, \"lost\"", tm.end[1].Sub(t0), tm.failed[1], tm.reason[1])
	}
}

func TestTimerFinishConcurrentCallsDoneOnce(t *testing.T) {
	const n = 64
	tm, _, calls := testTimer(v1alpha1.OperationProvision, n, time.Minute)
	var wg sync.WaitGroup
	for i := range n {
		tm.request(i)
	}
	for i := range n {
		for range 3 {
			wg.Go(func() { tm.finish(i, false, "") })
		}
	}
	wg.Wait()
	if got := calls.Load(); got != 1 {
		t.Errorf("done called %d times, want 1", got)
	}
}

func TestTimerOutOfRangeAndNilDone(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tm := newTimer(timerKey{}, v1alpha1.OperationProvision, 1, time.Minute, clk, nil)
	tm.finish(-1, false, "")
	tm.finish(1, true, "x")
	tm.note(-1, "x")
	tm.note(1, "x")
	if !tm.end[0].IsZero() || tm.reason[0] != "" {
		t.Fatalf("out-of-range calls touched object 0: end %v, reason %q", tm.end[0], tm.reason[0])
	}
	tm.finish(0, false, "") // not requested: no transition
	if !tm.end[0].IsZero() {
		t.Fatal("finish(0) before its request recorded an end")
	}
	tm.request(0)
	tm.finish(0, false, "") // done is nil: no call, no panic
	if tm.end[0].IsZero() {
		t.Error("finish(0) did not record the end")
	}
}

func TestTimerNoteAndRefuse(t *testing.T) {
	long := strings.Repeat("x", maxReason+100)
	tests := []struct {
		name   string
		events []timerEvent
		want   string
		failed bool
	}{
		{name: "the last error noted is kept", events: []timerEvent{evNoted(0, 0, "first"), evNoted(time.Second, 0, "second")}, want: "second"},
		{name: "a noted error is clipped", events: []timerEvent{evNoted(0, 0, long)}, want: long[:maxReason]},
		{name: "a failure's reason replaces the noted one", events: []timerEvent{evNoted(0, 0, "retrying"), evFailed(time.Second, 0, "gave up")}, want: "gave up", failed: true},
		{name: "a failure's reason is clipped", events: []timerEvent{evFailed(0, 0, long)}, want: long[:maxReason], failed: true},
		{name: "refused: failed, with the error", events: []timerEvent{evRefused(0, 0, `persistentvolumeclaims "x" is forbidden`)}, want: `request refused: persistentvolumeclaims "x" is forbidden`, failed: true},
		{name: "a note after the end is ignored", events: []timerEvent{evFailed(0, 0, "lost"), evNoted(time.Second, 0, "later")}, want: "lost", failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, clk, _ := testTimer(v1alpha1.OperationProvision, 1, time.Minute)
			play(tm, clk, append([]timerEvent{evReq(0, 0)}, tt.events...))
			if tm.reason[0] != tt.want || tm.failed[0] != tt.failed {
				t.Errorf("reason %q (%d bytes), failed %v; want %q (%d bytes), %v", clip(tm.reason[0]), len(tm.reason[0]), tm.failed[0], tt.want, len(tt.want), tt.failed)
			}
		})
	}
}

// outcome of a transition: what the timer recorded for object 0.
type outcome struct {
	ended, failed, started bool
	reason                 string
}

func outcomeOf(t *timer) outcome {
	return outcome{ended: !t.end[0].IsZero(), failed: t.failed[0], started: !t.start[0].IsZero(), reason: t.reason[0]}
}

var (
	waits = outcome{}
	ends  = outcome{ended: true, started: true}
)

func failedWith(reason string) outcome {
	return outcome{ended: true, failed: true, started: true, reason: reason}
}

func claimWith(phase corev1.PersistentVolumeClaimPhase, capacity string, mods ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	if capacity != "" {
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

func withCondition(typ corev1.PersistentVolumeClaimConditionType, status corev1.ConditionStatus) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Status.Conditions = append(c.Status.Conditions, corev1.PersistentVolumeClaimCondition{Type: typ, Status: status})
	}
}

func withResize(st corev1.ClaimResourceStatus) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{corev1.ResourceStorage: st}
	}
}

func TestTimerClaim(t *testing.T) {
	prov, exp := v1alpha1.OperationProvision, v1alpha1.OperationExpand
	tests := []struct {
		name string
		op   v1alpha1.VolumeOperation
		obj  runtime.Object
		want outcome
	}{
		{"provision: pending waits", prov, claimWith(corev1.ClaimPending, ""), waits},
		{"provision: bound ends it", prov, claimWith(corev1.ClaimBound, "1Gi"), ends},
		{"provision: lost fails it", prov, claimWith(corev1.ClaimLost, ""), failedWith("the claim lost its volume")},
		{"cloneFromVolume: bound ends it", v1alpha1.OperationCloneFromVolume, claimWith(corev1.ClaimBound, "1Gi"), ends},
		{"cloneFromSnapshot: bound ends it", v1alpha1.OperationCloneFromSnapshot, claimWith(corev1.ClaimBound, "1Gi"), ends},
		{"cloneFromSnapshot: lost fails it", v1alpha1.OperationCloneFromSnapshot, claimWith(corev1.ClaimLost, "1Gi"), failedWith("the claim lost its volume")},
		{"not a claim: ignored", prov, &corev1.Pod{}, waits},
		{"expand: bound below the target waits", exp, claimWith(corev1.ClaimBound, "1Gi"), waits},
		{"expand: capacity at the target ends it", exp, claimWith(corev1.ClaimBound, "2Gi"), ends},
		{"expand: capacity above the target ends it", exp, claimWith(corev1.ClaimBound, "3Gi"), ends},
		{"expand: the same size in other units ends it", exp, claimWith(corev1.ClaimBound, "2048Mi"), ends},
		{"expand: no capacity waits", exp, claimWith(corev1.ClaimBound, ""), waits},
		{"expand: FileSystemResizePending True ends it", exp,
			claimWith(corev1.ClaimBound, "1Gi", withCondition(corev1.PersistentVolumeClaimFileSystemResizePending, corev1.ConditionTrue)), ends},
		{"expand: FileSystemResizePending False waits", exp,
			claimWith(corev1.ClaimBound, "1Gi", withCondition(corev1.PersistentVolumeClaimFileSystemResizePending, corev1.ConditionFalse)), waits},
		{"expand: Resizing waits", exp,
			claimWith(corev1.ClaimBound, "1Gi", withCondition(corev1.PersistentVolumeClaimResizing, corev1.ConditionTrue)), waits},
		{"expand: ControllerResizeInProgress waits", exp,
			claimWith(corev1.ClaimBound, "1Gi", withResize(corev1.PersistentVolumeClaimControllerResizeInProgress)), waits},
		{"expand: ControllerResizeInfeasible fails it", exp,
			claimWith(corev1.ClaimBound, "1Gi", withResize(corev1.PersistentVolumeClaimControllerResizeInfeasible)), failedWith("resize infeasible: ControllerResizeInfeasible")},
		{"expand: NodeResizeInfeasible fails it", exp,
			claimWith(corev1.ClaimBound, "1Gi", withResize(corev1.PersistentVolumeClaimNodeResizeInfeasible)), failedWith("resize infeasible: NodeResizeInfeasible")},
		{"expand: at the target though infeasible reported: done", exp,
			claimWith(corev1.ClaimBound, "2Gi", withResize(corev1.PersistentVolumeClaimControllerResizeInfeasible)), ends},
		{"expand: lost fails it", exp, claimWith(corev1.ClaimLost, "1Gi"), failedWith("the claim lost its volume")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, clk, _ := testTimer(tt.op, 1, time.Minute)
			tm.expand = resource.MustParse("2Gi")
			play(tm, clk, []timerEvent{evReq(0, 0)})
			clk.SetTime(at(time.Second))
			tm.claim(0, tt.obj)
			want := tt.want
			want.started = true // the request started it
			if got := outcomeOf(tm); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if tt.want.ended && !tm.end[0].Equal(at(time.Second)) {
				t.Errorf("end = +%s, want +1s (when the watch delivered it)", tm.end[0].Sub(t0))
			}
		})
	}
}

// BUG (timer.go, request): request overwrites start[i] even when object i
// was already seen done. The watch lists the step's timed objects before
// the first request (run), and for expand those are the prepared claims,
// already bound: a class whose volumes are larger than asked (a driver's
// minimum size or rounding, e.g. 1Gi asked, 10Gi made) reports a capacity
// at or above storage.expandTo at once, so claim() finishes the object at
// the initial list, and request(i) then sets start after end. samples gives
// End < Start, volops.Summarize refuses it (ErrEndBeforeStart), recordStep
// fails and the run ends with InvalidTimings. Expected: a transition seen
// before the request is not the request's (ignored, or the object at least
// never ends before it starts).
func TestTimerExpandClaimAtTargetBeforeItsRequest(t *testing.T) {
	tm, clk, _ := testTimer(v1alpha1.OperationExpand, 1, time.Minute)
	tm.expand = resource.MustParse("2Gi")
	tm.claim(0, claimWith(corev1.ClaimBound, "10Gi")) // the watch's initial list, at t0: no transition
	play(tm, clk, []timerEvent{evReq(time.Second, 0)})
	clk.SetTime(at(1500 * time.Millisecond))
	if got, _ := tm.samples(1); got != nil {
		t.Fatalf("samples before the request's own change = %s, want nil", fmtSamples(got))
	}
	tm.claim(0, claimWith(corev1.ClaimBound, "10Gi")) // the patch's update event
	got, _ := tm.samples(1)
	if len(got) != 1 || got[0].Outcome != volops.Succeeded || got[0].Duration() != 500*time.Millisecond {
		t.Fatalf("samples = %s, want one Succeeded in 500ms", fmtSamples(got))
	}
	if _, err := volops.Summarize(got); err != nil {
		t.Errorf("the core refuses the step: %v", err)
	}
}

func podWith(phase corev1.PodPhase, conds ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Reason: "Evicted", Message: "node low on disk"}}
	for _, c := range conds {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return p
}

func TestTimerPod(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want outcome
	}{
		{"pending, not scheduled: waits, not started", podWith(corev1.PodPending), waits},
		{"scheduled: started", podWith(corev1.PodPending, corev1.PodScheduled), outcome{started: true}},
		{"scheduled False: not started", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}}}, waits},
		{"ready to start containers: ended", podWith(corev1.PodPending, corev1.PodScheduled, corev1.PodReadyToStartContainers), ends},
		{"ready to start containers False: started, waits", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}}}}, outcome{started: true}},
		{"Ready alone does not end it", podWith(corev1.PodRunning, corev1.PodScheduled, corev1.PodReady), outcome{started: true}},
		{"failed: failed with its reason and message", podWith(corev1.PodFailed, corev1.PodScheduled), failedWith("the pod failed: Evicted node low on disk")},
		{"failed after its sandbox ran: done (ready to start containers first)", podWith(corev1.PodFailed, corev1.PodScheduled, corev1.PodReadyToStartContainers), ends},
		{"not a pod: ignored", &corev1.PersistentVolumeClaim{}, waits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, clk, _ := testTimer(v1alpha1.OperationAttach, 1, time.Minute)
			play(tm, clk, []timerEvent{evReq(0, 0)})
			clk.SetTime(at(time.Second))
			tm.pod(0, tt.obj)
			if got := outcomeOf(tm); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("scheduled, then ready: timed from the scheduling", func(t *testing.T) {
		tm, clk, _ := testTimer(v1alpha1.OperationAttach, 1, time.Minute)
		play(tm, clk, []timerEvent{evReq(0, 0)})
		clk.SetTime(at(2 * time.Second))
		tm.pod(0, podWith(corev1.PodPending, corev1.PodScheduled))
		clk.SetTime(at(3 * time.Second))
		tm.pod(0, podWith(corev1.PodPending, corev1.PodScheduled)) // an update that changes nothing
		clk.SetTime(at(7 * time.Second))
		tm.pod(0, podWith(corev1.PodPending, corev1.PodScheduled, corev1.PodReadyToStartContainers))
		got, wait := tm.samples(1)
		want := []volops.Sample{sample(v1alpha1.OperationAttach, 1, 0, 2*time.Second, 7*time.Second, volops.Succeeded, "")}
		if !reflect.DeepEqual(got, want) || wait != 0 {
			t.Errorf("samples %s, wait %s; want %s, 0", fmtSamples(got), wait, fmtSamples(want))
		}
	})
}

func snapshotWith(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot"}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestTimerSnapshot(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want outcome
	}{
		{"no status: waits", snapshotWith(nil), waits},
		{"not ready: waits", snapshotWith(map[string]any{"readyToUse": false}), waits},
		{"ready to use: ended", snapshotWith(map[string]any{"readyToUse": true}), ends},
		{"ready to use despite an old error: ended", snapshotWith(map[string]any{"readyToUse": true, "error": map[string]any{"message": "old"}}), ends},
		{"an error: noted, still waits", snapshotWith(map[string]any{"readyToUse": false, "error": map[string]any{"message": "failed to take snapshot: quota"}}),
			outcome{reason: "failed to take snapshot: quota"}},
		{"an empty error message: nothing noted", snapshotWith(map[string]any{"error": map[string]any{"message": ""}}), waits},
		{"not unstructured: ignored", &corev1.Pod{}, waits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, clk, _ := testTimer(v1alpha1.OperationSnapshot, 1, time.Minute)
			play(tm, clk, []timerEvent{evReq(0, 0)})
			clk.SetTime(at(time.Second))
			tm.snapshot(0, tt.obj)
			want := tt.want
			want.started = true // the request started it
			if got := outcomeOf(tm); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	t.Run("an error noted, then the timeout: the error is in the reason", func(t *testing.T) {
		tm, clk, _ := testTimer(v1alpha1.OperationSnapshot, 1, time.Minute)
		play(tm, clk, []timerEvent{evReq(0, 0)})
		clk.SetTime(at(10 * time.Second))
		tm.snapshot(0, snapshotWith(map[string]any{"readyToUse": false, "error": map[string]any{"message": "snapshot controller: class not found"}}))
		clk.SetTime(at(time.Minute))
		got, _ := tm.samples(1)
		want := []volops.Sample{sample(v1alpha1.OperationSnapshot, 1, 0, 0, time.Minute, volops.TimedOut, "not done after 1m0s: snapshot controller: class not found")}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("samples %s, want %s", fmtSamples(got), fmtSamples(want))
		}
	})
	t.Run("an error noted, then ready: succeeded", func(t *testing.T) {
		tm, clk, _ := testTimer(v1alpha1.OperationSnapshot, 1, time.Minute)
		play(tm, clk, []timerEvent{evReq(0, 0)})
		clk.SetTime(at(time.Second))
		tm.snapshot(0, snapshotWith(map[string]any{"error": map[string]any{"message": "retrying"}}))
		clk.SetTime(at(4 * time.Second))
		tm.snapshot(0, snapshotWith(map[string]any{"readyToUse": true}))
		got, _ := tm.samples(1)
		want := []volops.Sample{sample(v1alpha1.OperationSnapshot, 1, 0, 0, 4*time.Second, volops.Succeeded, "")}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("samples %s, want %s", fmtSamples(got), fmtSamples(want))
		}
	})
}
