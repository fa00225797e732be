package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updatePodStatus applies mutate to the current status of the pod (same name
// and UID) and writes it if it changed. A pod that is gone is not an error.
func (k *Kubelet) updatePodStatus(ctx context.Context, ref client.Object, mutate func(*corev1.PodStatus)) error {
	key, uid := client.ObjectKeyFromObject(ref), ref.GetUID()
	err := retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
	}, func() error {
		pod := &corev1.Pod{}
		if err := k.reader.Get(ctx, key, pod); err != nil {
			return err
		}
		if pod.UID != uid {
			return nil
		}
		old := pod.Status.DeepCopy()
		mutate(&pod.Status)
		if equality.Semantic.DeepEqual(old, &pod.Status) {
			return nil
		}
		return k.client.Status().Update(ctx, pod)
	})
	return client.IgnoreNotFound(err)
}

// writeStatus writes the status the run's state implies.
func (k *Kubelet) writeStatus(ctx context.Context, r *podRun) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := k.updatePodStatus(ctx, podRef(r.key, r.uid), r.applyStatus)
	if err != nil && ctx.Err() == nil {
		k.log.Error(err, "writing pod status", "pod", r.key)
	}
	return err
}

// applyStatus sets what a kubelet reports for the run's state. The caller
// holds r.mu.
func (r *podRun) applyStatus(st *corev1.PodStatus) {
	if st.StartTime == nil {
		st.StartTime = &r.startTime
	}
	st.HostIP, st.HostIPs = podIP, []corev1.HostIP{{IP: podIP}}
	cs := corev1.ContainerStatus{Name: r.container.Name, Image: r.container.Image, ImageID: r.imageID}
	if r.pid != 0 {
		st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
		cs.ContainerID = fmt.Sprintf("harness://%d", r.pid)
	}
	notReady := "ContainersNotReady"
	switch r.state {
	case stateWaiting:
		st.Phase = corev1.PodPending
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: r.reason, Message: r.message}
	case stateRunning:
		st.Phase = corev1.PodRunning
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: r.startedAt}
		cs.Ready, cs.Started = true, ptrBool(true)
	case stateTerminated:
		st.Phase = corev1.PodSucceeded
		if r.exitCode != 0 {
			st.Phase = corev1.PodFailed
		}
		cs.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: r.exitCode, Reason: r.reason, Message: r.message,
			StartedAt: r.startedAt, FinishedAt: r.finishedAt, ContainerID: cs.ContainerID,
		}
		cs.Started = ptrBool(false)
		notReady = "PodCompleted"
	}
	st.ContainerStatuses = []corev1.ContainerStatus{cs}
	sandbox := corev1.ConditionTrue
	if r.state == stateTerminated {
		sandbox = corev1.ConditionFalse
	}
	setCondition(st, corev1.PodReadyToStartContainers, sandbox, "", "")
	setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "", "")
	if r.state == stateRunning {
		setCondition(st, corev1.ContainersReady, corev1.ConditionTrue, "", "")
		setCondition(st, corev1.PodReady, corev1.ConditionTrue, "", "")
	} else {
		msg := fmt.Sprintf("containers with unready status: [%s]", r.container.Name)
		if notReady == "PodCompleted" {
			msg = ""
		}
		setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, notReady, msg)
		setCondition(st, corev1.PodReady, corev1.ConditionFalse, notReady, msg)
	}
}

// setCondition sets a pod condition, keeping its transition time unless its
// status changes.
func setCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.Now()
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now(),
	})
}

func ptrBool(b bool) *bool { return &b }

// podRef names a pod for status writes and deletion.
func podRef(key types.NamespacedName, uid types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid}}
}
