package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type containerState int

const (
	stateWaiting containerState = iota
	stateRunning
	stateTerminated
)

// Limits of termination messages, as the kubelet's.
const (
	maxTerminationMessage = 4096
	maxLogTailLines       = 80
	maxLogTailBytes       = 2048
)

// podRun is one pod's container on this node.
type podRun struct {
	key       types.NamespacedName
	uid       types.UID
	dir       string // per-pod directory
	container corev1.Container
	startTime metav1.Time
	done      chan struct{} // closed once the process ended and its status was written

	mu          sync.Mutex // guards what follows; held while writing status
	state       containerState
	reason      string
	message     string
	startedAt   metav1.Time
	finishedAt  metav1.Time
	exitCode    int32
	pid         int
	imageID     string
	command     []string // as run, on the host
	terminating bool
}

// waitingError keeps a container waiting, with a kubelet reason.
type waitingError struct{ reason, message string }

func (e *waitingError) Error() string { return e.reason + ": " + e.message }

func (k *Kubelet) newRun(pod *corev1.Pod) *podRun {
	r := &podRun{
		key: client.ObjectKeyFromObject(pod), uid: pod.UID,
		dir:       filepath.Join(k.opts.WorkDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		startTime: metav1.Now(), done: make(chan struct{}),
		state: stateWaiting, reason: "ContainerCreating",
	}
	if len(pod.Spec.Containers) > 0 {
		r.container = pod.Spec.Containers[0]
	}
	return r
}

func (r *podRun) logPath() string         { return filepath.Join(r.dir, "container.log") }
func (r *podRun) terminationPath() string { return filepath.Join(r.dir, "termination-log") }

// exited is closed once the process ended, at once if it never started.
func (r *podRun) exited() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return r.done
}

// started reports whether the process was started.
func (r *podRun) started() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pid != 0
}

// signal signals the running process group; false if nothing runs.
func (r *podRun) signal(sig syscall.Signal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != stateRunning {
		return false
	}
	return syscall.Kill(-r.pid, sig) == nil
}

func (r *podRun) setTerminated(code int32, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.exitCode, r.reason, r.message, r.finishedAt = stateTerminated, code, reason, message, metav1.Now()
}

// startPod starts the container of a pod bound to this node, or reports why
// it waits.
func (k *Kubelet) startPod(ctx context.Context, pod *corev1.Pod) (reconcile.Result, error) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return reconcile.Result{}, nil
	}
	k.mu.Lock()
	r := k.pods[client.ObjectKeyFromObject(pod)]
	if r == nil {
		r = k.newRun(pod)
		k.pods[r.key] = r
	}
	k.mu.Unlock()
	r.mu.Lock()
	waiting := r.state == stateWaiting
	r.mu.Unlock()
	if !waiting {
		return reconcile.Result{}, k.writeStatus(ctx, r) // in case a write failed
	}
	cmd, log, err := k.prepare(ctx, pod, r)
	if err == nil {
		err = cmd.Start()
		_ = log.Close() // the child has its own descriptor
		if err != nil {
			err = &waitingError{"RunContainerError", err.Error()}
		}
	}
	if err != nil {
		var w *waitingError
		if !errors.As(err, &w) {
			w = &waitingError{"ContainerCreating", err.Error()}
		}
		r.mu.Lock()
		r.reason, r.message = w.reason, w.message
		r.mu.Unlock()
		return reconcile.Result{RequeueAfter: time.Second}, k.writeStatus(ctx, r)
	}
	r.mu.Lock()
	r.state, r.pid, r.startedAt, r.reason, r.message = stateRunning, cmd.Process.Pid, metav1.Now(), "", ""
	r.mu.Unlock()
	k.mu.Lock()
	k.logs[r.key] = r.logPath()
	k.mu.Unlock()
	k.log.V(1).Info("started", "pod", r.key, "pid", cmd.Process.Pid, "command", r.command)
	k.wg.Add(1)
	go k.waitProcess(r, cmd)
	return reconcile.Result{}, k.writeStatus(ctx, r)
}

// waitProcess records the process's end and writes the final status.
func (k *Kubelet) waitProcess(r *podRun, cmd *exec.Cmd) {
	defer k.wg.Done()
	_ = cmd.Wait() // the exit status is in ProcessState
	code := int32(cmd.ProcessState.ExitCode())
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int32(ws.Signal())
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	r.setTerminated(code, reason, k.terminationMessage(r, code))
	k.log.V(1).Info("exited", "pod", r.key, "exitCode", code)
	_ = k.writeStatus(k.ctx, r)
	close(r.done)
}

// terminationMessage is the file at terminationMessagePath or, with
// FallbackToLogsOnError after a failure, the end of the log.
func (k *Kubelet) terminationMessage(r *podRun, code int32) string {
	if f, err := os.Open(r.terminationPath()); err == nil {
		msg, _ := io.ReadAll(io.LimitReader(f, maxTerminationMessage))
		_ = f.Close()
		if len(msg) > 0 {
			return string(msg)
		}
	}
	if code == 0 || r.container.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		return ""
	}
	msg, _ := tailFile(r.logPath(), maxLogTailLines, maxLogTailBytes)
	return msg
}

// finishDeletion ends a deleted pod's process (SIGTERM, SIGKILL after the
// grace period), writes its final status and deletes it with grace period 0.
func (k *Kubelet) finishDeletion(ctx context.Context, pod *corev1.Pod) error {
	k.mu.Lock()
	r := k.pods[client.ObjectKeyFromObject(pod)]
	k.mu.Unlock()
	if r == nil || !r.started() {
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			if r == nil {
				r = k.newRun(pod)
			}
			r.setTerminated(137, "ContainerStatusUnknown", "The container could not be located when the pod was terminated")
			if err := k.writeStatus(ctx, r); err != nil {
				return err
			}
		}
		return k.deletePod(ctx, pod.Namespace, pod.Name, pod.UID)
	}
	r.mu.Lock()
	already := r.terminating
	r.terminating = true
	r.mu.Unlock()
	if already {
		return nil
	}
	grace := 30 * time.Second
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	} else if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		r.signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(grace):
			r.signal(syscall.SIGKILL)
			<-r.done
		case <-k.ctx.Done():
			return
		}
		if err := k.deletePod(k.ctx, r.key.Namespace, r.key.Name, r.uid); err != nil {
			k.log.Error(err, "deleting pod", "pod", r.key)
		}
	}()
	return nil
}

// deletePod finishes a pod's deletion, as a kubelet does once its containers
// are gone.
func (k *Kubelet) deletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	err := k.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
	return client.IgnoreNotFound(err)
}
