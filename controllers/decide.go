package controllers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
)

// The reconciler's decisions, as pure functions of what it observed and
// the clock: no API calls, so the table tests in decide_test.go cover
// every deadline and transition without an API server.

// timeouts are the run's deadlines and leads, defaulted in one place.
type timeouts struct {
	// claimBind bounds how long a claim may stay unbound.
	claimBind time.Duration
	// ready bounds how long after creation every client must be prepared.
	ready time.Duration
	// startLead is how far ahead the first step's start instant is set.
	startLead time.Duration
	// nextStepLead is the same for every later step.
	nextStepLead time.Duration
	// resultGrace is how long after a step's end its results may arrive.
	resultGrace time.Duration
	// since is when this manager started: a step's results are awaited a
	// resultGrace after its end or after since, whichever is later, so a
	// manager that was away (restarted, upgraded, failed over) never blames
	// the clients for its own absence. Zero: no allowance.
	since time.Time
}

// verdict is a reason to end the run: a condition reason and its message.
type verdict struct{ reason, message string }

// decision is what one pass does with a running benchmark, decided from
// what was observed and the clock alone: end the run (end), or take the
// protocol's next move (act), saying so in status when it is a wait
// (reason, progress), and look again after retry at the latest.
type decision struct {
	end      *verdict
	act      action
	reason   string
	progress string
	retry    time.Duration
}

// decide is the run's one decision per pass: a reason to end it
// (failureOf, or an order the records do not lead to), else the lockstep
// protocol's next move (nextAction).
func decide(b *v1alpha1.StorageBenchmark, obs *observed, t timeouts, now time.Time, readyError func(int) string) decision {
	v, retry := failureOf(b, obs, t, now, readyError)
	if v != nil {
		return decision{end: v}
	}
	act, err := nextAction(obs)
	if err != nil {
		return decision{end: &verdict{ReasonExchangeLost, err.Error()}}
	}
	d := decision{act: act, retry: retry}
	switch act {
	case actPrepare:
		d.reason, d.progress = ReasonPreparing, fmt.Sprintf("%d/%d claims bound, %d/%d clients ready",
			obs.bound, len(obs.claims), readyCount(obs), len(obs.clients))
	case actWait:
		d.reason, d.progress = ReasonRunning, runningMessage(obs.order.Index, b.Status.StepsPlanned)
	}
	return d
}

// runningMessage says which step runs, from the pass that orders it on.
func runningMessage(index int, planned int32) string {
	return fmt.Sprintf("step %d/%d running", index+1, planned)
}

// failureOf checks what was observed for a reason to end the run, and
// otherwise says when the next deadline falls (for a timed re-check).
// readyError says why client i could not prepare (read on demand).
func failureOf(b *v1alpha1.StorageBenchmark, obs *observed, t timeouts, now time.Time, readyError func(int) string) (*verdict, time.Duration) {
	created := began(b, obs.plan)
	v, retry := claimFailure(b, obs, created.Add(t.claimBind), t.claimBind, now)
	if v != nil {
		return v, 0
	}
	for i, cm := range obs.clients {
		if cm != nil && exchange.ReadinessOf(cm) == exchange.ReadyError {
			return &verdict{ReasonClientFailed, fmt.Sprintf("client %d could not prepare: %s", i, readyError(i))}, 0
		}
	}
	if v := clockFailure(b, t.startLead); v != nil {
		return v, 0
	}
	if v := stepFailure(obs.steps); v != nil {
		return v, 0
	}
	if v := jobFailure(obs); v != nil {
		return v, 0
	}
	if v := nodeLost(obs); v != nil {
		return v, 0
	}
	if ready := readyCount(obs); int(ready) < len(obs.clients) {
		deadline := created.Add(t.ready)
		if now.After(deadline) {
			return &verdict{ReasonClientsNotReady, fmt.Sprintf("%d of %d clients were not ready %s after the benchmark was created (scheduling, image pull, layout and preconditioning): check the client pods",
				len(obs.clients)-int(ready), len(obs.clients), t.ready)}, 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	// Results that are all in are collected however late the manager is;
	// only missing ones are judged, and only a resultGrace after both the
	// step's end and this manager's start.
	order := obs.order
	if obs.ordered && !order.Done && order.Index == len(obs.steps) && resultsFor(obs, order.Index) < len(obs.clients) {
		deadline := later(order.End(), t.since).Add(t.resultGrace)
		if now.After(deadline) {
			return &verdict{ReasonStepTimedOut, fmt.Sprintf("step %d: %d of %d clients did not report a result by %s", order.Index+1,
				len(obs.clients)-resultsFor(obs, order.Index), len(obs.clients), deadline.UTC().Format(time.RFC3339))}, 0
		}
		retry = minPositive(retry, deadline.Sub(now))
	}
	return nil, retry
}

// claimFailure ends the run on a claim still unbound after the bind
// deadline; before it, it says how long until the deadline.
func claimFailure(b *v1alpha1.StorageBenchmark, obs *observed, deadline time.Time, bind time.Duration, now time.Time) (*verdict, time.Duration) {
	var retry time.Duration
	for _, name := range slices.Sorted(maps.Keys(obs.claims)) {
		if pvc := obs.claims[name]; pvc != nil && pvc.Status.Phase == corev1.ClaimBound {
			continue
		}
		if now.After(deadline) {
			return &verdict{ReasonClaimNotBound, fmt.Sprintf("claim %s is not bound %s after the benchmark was created (StorageClass %s): check the provisioner and the claim's events",
				name, bind, ptr.Deref(b.Spec.Storage.StorageClassName, "default"))}, 0
		}
		retry = deadline.Sub(now)
	}
	return nil, retry
}

// jobFailure ends the run on a client Job that ended: at its deadline
// (the manager was away), failed, or complete before the run ended.
func jobFailure(obs *observed) *verdict {
	for i, job := range obs.jobs {
		if job == nil {
			continue
		}
		if c := jobConditionOf(job, batchv1.JobFailed); c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded {
			return managerAbsent(i, obs)
		}
		if jobCondition(job, batchv1.JobFailed) || jobCondition(job, batchv1.JobFailureTarget) {
			return clientGone(i, obs, "failed")
		}
		if jobCondition(job, batchv1.JobComplete) && (!obs.ordered || !obs.order.Done) {
			return clientGone(i, obs, "exited before the run ended")
		}
	}
	return nil
}

// stepFailure ends the run on a recorded step that a client failed or
// that was interrupted (protocol.StepFailure): its result stays recorded.
func stepFailure(steps []run.Step) *verdict {
	for _, s := range steps {
		if kind, msg := protocol.StepFailure(s.Aggregate); kind != "" {
			return &verdict{kind, msg}
		}
	}
	return nil
}

// clientGone explains a client Job that ended: fio's or the runner's error
// when its pod failed on its own, otherwise the pod was deleted or lost.
func clientGone(i int, obs *observed, what string) *verdict {
	for _, p := range obs.pods[i] {
		// An eviction (a drain, preemption, the taint manager) says so on
		// the pod, whatever its exit.
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
				return &verdict{ReasonClientLost, fmt.Sprintf("client %d (pod %s) was evicted from node %s (%s: %s); the run is not resumed with a new client, whose fresh layout would change what the storage caches (see docs/faults.md)",
					i, p.Name, p.Spec.NodeName, c.Reason, strings.TrimSpace(c.Message))}
			}
		}
		if p.DeletionTimestamp != nil {
			continue // deleted: its exit says nothing about the storage
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				msg := strings.TrimSpace(t.Message)
				if msg == "" {
					msg = t.Reason
				}
				code := strconv.Itoa(int(t.ExitCode))
				// A shell's 128+n is signal n; not when the kubelet wrote the
				// code for a container it lost (ContainerStatusUnknown).
				if t.ExitCode > 128 && t.ExitCode < 128+32 && t.Reason != "ContainerStatusUnknown" {
					code += fmt.Sprintf(" (signal %d, %s)", t.ExitCode-128, syscall.Signal(t.ExitCode-128))
				}
				return &verdict{ReasonClientFailed, fmt.Sprintf("client %d (pod %s) failed with exit code %s: %s", i, p.Name, code, msg)}
			}
		}
	}
	return &verdict{ReasonClientLost, fmt.Sprintf("client %d's pod %s: it was deleted or lost before the run ended; the run is not resumed with a new client, whose fresh layout would change what the storage caches (see docs/operator.md)", i, what)}
}

// nodeLost ends the run when a running client's node is gone or its
// kubelet stopped reporting: the node controller marks the Node's Ready
// Unknown after its grace period (kube-controller-manager's
// --node-monitor-grace-period, 50 s by default), and the client on it can
// then neither report nor be stopped, so the run cannot go on. Ready False
// comes from a kubelet that still runs (a runtime check while it restarts,
// PLEG slow under heavy I/O) and whose pods still run: it is left to the
// pod and Job rules. Only pods the kubelet reported Running are judged
// (observeNodes).
func nodeLost(obs *observed) *verdict {
	for i := range obs.clients {
		pods := obs.pods[i]
		if len(pods) == 0 {
			continue
		}
		p := pods[len(pods)-1]
		name := p.Spec.NodeName
		node, known := obs.nodes[name]
		if !known || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		if node == nil {
			return &verdict{ReasonClientLost, fmt.Sprintf("client %d (pod %s) lost its node %s: the Node was deleted", i, p.Name, name)}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown {
				return &verdict{ReasonClientLost, fmt.Sprintf("client %d (pod %s) lost its node %s: Ready=%s since %s (%s: %s)", i, p.Name, name,
					c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339), c.Reason, strings.TrimSpace(c.Message))}
			}
		}
	}
	return nil
}

// action is the lockstep protocol's next move.
type action int

const (
	// actPrepare: not every client is ready (or the plan is missing).
	actPrepare action = iota
	// actWait: a step is ordered and some of its results are still out.
	actWait
	// actCollect: every result of the ordered step is in: record it.
	actCollect
	// actOrder: the recorded steps are all there are so far: order the
	// next step (or the end).
	actOrder
	// actEnded: the final order was written; the run has ended.
	actEnded
)

// nextAction is the protocol's transition for what was observed: all
// ready → order step 0; step k's results all in → record step k; step k
// recorded → order step k+1 (or the end). An order the records do not lead
// to (a step ConfigMap deleted under the run) is an error that ends it.
func nextAction(obs *observed) (action, error) {
	n := len(obs.steps)
	switch {
	case obs.ordered && obs.order.Done:
		return actEnded, nil
	case int(readyCount(obs)) < len(obs.clients) || obs.plan == nil:
		return actPrepare, nil
	case obs.ordered && obs.order.Index == n:
		if resultsFor(obs, n) < len(obs.clients) {
			return actWait, nil
		}
		return actCollect, nil
	case !obs.ordered && n == 0, obs.ordered && obs.order.Index == n-1:
		return actOrder, nil
	}
	return actPrepare, fmt.Errorf("step %d is ordered, but the step ConfigMaps record %d steps: a step's record was deleted or replaced during the run, and the run cannot go on without losing it", obs.order.Index+1, n)
}

// managerAbsent explains a client Job that reached its deadline. The
// deadline is the longest the run may take with every allowance used
// (runDeadline): a manager conducting the run would have ended it before,
// with the reason of whatever held it up. So the clients waited for a
// manager that did not come back in time, and the run cannot go on.
func managerAbsent(i int, obs *observed) *verdict {
	where := "before the first step was ordered"
	if obs.ordered && !obs.order.Done {
		where = fmt.Sprintf("while step %d was ordered (%d steps recorded)", obs.order.Index+1, len(obs.steps))
	}
	return &verdict{ReasonManagerUnavailable, fmt.Sprintf("client %d's Job reached its deadline %s: the clients wait at most the longest the run may take with every allowance used, and the manager did not conduct the run within it (it was stopped, being upgraded or failing over, or could not reach the API server); the clients stopped and the run cannot go on without them", i, where)}
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	return jobConditionOf(j, t) != nil
}

// jobConditionOf is j's condition of type t when it is True, else nil.
func jobConditionOf(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// later is the later of two instants.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func readyCount(obs *observed) int32 {
	var n int32
	for _, cm := range obs.clients {
		if cm != nil && exchange.ReadinessOf(cm) == exchange.Ready {
			n++
		}
	}
	return n
}

func resultsFor(obs *observed, step int) int {
	n := 0
	for _, cm := range obs.clients {
		if cm != nil && exchange.ResultStep(cm) == step {
			n++
		}
	}
	return n
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
