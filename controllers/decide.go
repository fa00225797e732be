package controllers

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/run"
)

// The reconciler's side of the run's decision (run.Decide): the children
// it observed, reduced to the run.Observation the core's rules read. The
// rules, their order and their deadlines are the core's; what a pod, a
// Job or a Node says is read here.

// timeouts are the run's deadlines and leads (defaulted in timeouts()).
type timeouts = run.Timeouts

// verdict is a reason to end the run: a condition reason and its message.
type verdict = run.Ending

// decide is the run's one decision per pass (run.Decide) over what obs
// holds.
func decide(b *v1alpha1.StorageBenchmark, obs *observed, t timeouts, now time.Time, readyError func(int) string) run.Decision {
	return run.Decide(observationOf(b, obs), t, now, readyError)
}

// observationOf reduces what a pass observed to what the run's rules
// read: claims bound, each client's readiness, latest result, Job and
// what its pods and node say, the steps and the order.
func observationOf(b *v1alpha1.StorageBenchmark, obs *observed) run.Observation {
	o := run.Observation{Began: began(b, obs.plan), Claims: make(map[string]bool, len(obs.claims)),
		StorageClass: ptr.Deref(b.Spec.Storage.StorageClassName, "default"),
		Clients:      make([]run.Client, len(obs.clients)), Plan: obs.plan != nil,
		Steps: obs.steps, Planned: b.Status.StepsPlanned}
	for name, pvc := range obs.claims {
		o.Claims[name] = pvc != nil && pvc.Status.Phase == corev1.ClaimBound
	}
	if obs.ordered {
		o.Order = &obs.order
	}
	if c := b.Status.Clock; c != nil {
		o.ClockOffset = c.MaxOffset.Duration
	}
	for i, cm := range obs.clients {
		c := run.Client{Readiness: readinessOf(cm), Result: -1, NodeLost: nodeLost(i, obs)}
		if cm != nil {
			c.Result = exchange.ResultStep(cm)
		}
		if i < len(obs.jobs) && obs.jobs[i] != nil {
			c.Job = jobStateOf(obs.jobs[i])
		}
		if c.Job != run.JobNotEnded {
			c.Exit = exitOf(i, obs)
		}
		o.Clients[i] = c
	}
	return o
}

// jobStateOf is how a client Job stands, by its conditions.
func jobStateOf(job *batchv1.Job) run.JobState {
	failed := jobConditionOf(job, batchv1.JobFailed)
	switch {
	case failed != nil && failed.Reason == batchv1.JobReasonDeadlineExceeded:
		return run.JobDeadlineExceeded
	case failed != nil || jobCondition(job, batchv1.JobFailureTarget):
		return run.JobFailed
	case jobCondition(job, batchv1.JobComplete):
		return run.JobComplete
	}
	return run.JobNotEnded
}

// readinessOf is a client's readiness, from its ConfigMap (nil: missing).
func readinessOf(cm *metav1.PartialObjectMetadata) run.Readiness {
	if cm == nil {
		return run.Preparing
	}
	switch exchange.ReadinessOf(cm) {
	case exchange.Ready:
		return run.Prepared
	case exchange.ReadyError:
		return run.NotPrepared
	}
	return run.Preparing
}

// exitOf is what client i's pods say of how it ended: evicted, or fio's or
// the runner's error when a pod failed on its own; nil when they say
// nothing (deleted, or lost).
func exitOf(i int, obs *observed) *verdict {
	for _, p := range obs.pods[i] {
		// An eviction (a drain, preemption, the taint manager) says so on
		// the pod, whatever its exit.
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
				return &verdict{Reason: ReasonClientLost, Message: fmt.Sprintf("client %d (pod %s) was evicted from node %s (%s: %s); the run is not resumed with a new client, whose fresh layout would change what the storage caches (see docs/faults.md)",
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
				return &verdict{Reason: ReasonClientFailed, Message: fmt.Sprintf("client %d (pod %s) failed with exit code %s: %s", i, p.Name, code, msg)}
			}
		}
	}
	return nil
}

// nodeLost says why client i's running pod lost its node ("" while it
// has one): the Node was deleted, or its kubelet stopped reporting (the
// node controller marks the Node's Ready Unknown after its grace period,
// kube-controller-manager's --node-monitor-grace-period, 50 s by
// default). Ready False comes from a kubelet that still runs (a runtime
// check while it restarts, PLEG slow under heavy I/O) and whose pods still
// run: it is left to the pod and Job rules. Only pods the kubelet reported
// Running are judged (observeNodes).
func nodeLost(i int, obs *observed) string {
	pods := obs.pods[i]
	if len(pods) == 0 {
		return ""
	}
	p := pods[len(pods)-1]
	name := p.Spec.NodeName
	node, known := obs.nodes[name]
	if !known || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return ""
	}
	if node == nil {
		return fmt.Sprintf("client %d (pod %s) lost its node %s: the Node was deleted", i, p.Name, name)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown {
			return fmt.Sprintf("client %d (pod %s) lost its node %s: Ready=%s since %s (%s: %s)", i, p.Name, name,
				c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339), c.Reason, strings.TrimSpace(c.Message))
		}
	}
	return ""
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

// readyCount is how many clients are ready.
func readyCount(obs *observed) int32 {
	var n int32
	for _, cm := range obs.clients {
		if readinessOf(cm) == run.Prepared {
			n++
		}
	}
	return n
}
