package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/spec"
)

// A benchmark on an existing Filesystem claim writes files in a directory
// of its own on the application's volume (BenchmarkDirectory), and each
// runner removes what it wrote when it exits. A runner that is killed (OOM,
// node lost, SIGKILL) removes nothing, so once the run has ended, and
// every client pod is done with the volume, the operator runs a cleanup
// pod on the same claim (`runner cleanup`: the manager's runner image, the
// clients' user, no API access) that removes the directory if it is the
// runners' own, and reports what is left. Its outcome is recorded on the
// plan ConfigMap (annotationCleanup) and projected into status.cleanup;
// then the cleanup Job goes, and after a complete run the client Jobs too,
// so nothing of the benchmark holds the application's claim.
//
// A benchmark deleted before that carries a finalizer (FinalizerCleanup)
// that holds it while its clients stop and the cleanup pod runs, at most
// finalizeGrace; what could not be removed is then a Warning event.

const (
	// cleanupDeadline bounds the cleanup pod.
	cleanupDeadline = 10 * time.Minute
	// finalizeGrace bounds how long a deleted benchmark waits for its
	// files to be removed.
	finalizeGrace = 15 * time.Minute
)

// needsCleanup: the benchmark writes files on somebody else's claim.
func needsCleanup(b *v1alpha1.StorageBenchmark) bool {
	return b.Spec.Storage.ExistingClaim != nil && b.Spec.Storage.VolumeMode != corev1.PersistentVolumeBlock
}

// CleanupName is the cleanup Job's name.
func CleanupName(benchmark string) string { return benchmark + "-cleanup" }

// cleanupRecord is the cleanup's outcome as the plan ConfigMap keeps it.
type cleanupRecord struct {
	State   v1alpha1.CleanupState `json:"state"`
	Message string                `json:"message"`
}

func cleanupFrom(plan *metav1.PartialObjectMetadata) *cleanupRecord {
	if plan == nil {
		return nil
	}
	var rec cleanupRecord
	v, ok := plan.Annotations[annotationCleanup]
	if !ok || json.Unmarshal([]byte(v), &rec) != nil || (rec.State != v1alpha1.CleanupRemoved && rec.State != v1alpha1.CleanupRemaining) {
		return nil
	}
	return &rec
}

// setCleanup projects the cleanup into status: nothing before the run
// ended or without files on an existing claim; Pending until its outcome
// is recorded.
func setCleanup(b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata, ended bool) {
	b.Status.Cleanup = nil
	if !needsCleanup(b) || !ended || plan == nil {
		return
	}
	s := &v1alpha1.CleanupStatus{State: v1alpha1.CleanupPending, Directory: spec.BenchmarkDirectory(b),
		Message: "waiting for the clients to stop, then a cleanup pod removes what they left"}
	if rec := cleanupFrom(plan); rec != nil {
		s.State, s.Message = rec.State, clip(rec.Message, MaxMessage)
	}
	b.Status.Cleanup = s
}

// buildCleanupJob is the cleanup pod's Job (buildVolumeJob) on the
// existing claim, running `runner cleanup`.
func buildCleanupJob(b *v1alpha1.StorageBenchmark, opts JobOptions) *batchv1.Job {
	return buildVolumeJob(b, opts, CleanupName(b.Name), exchange.RoleCleanup, ptr.Deref(b.Spec.Storage.ExistingClaim, ""), cleanupDeadline,
		"cleanup", "--volume="+exchange.DataMountPath, "--subdir="+spec.BenchmarkDirectory(b), "--report="+exchange.TerminationLog)
}

// buildVolumeJob is the Job of a pod that works on the run's volume
// after the run (cleanup, a lost client's verification): the manager's
// runner image (never a tenant's), the clients' user and placement, the
// claim at the clients' path, no ServiceAccount token, bounded in time
// and memory, its report in the termination message.
func buildVolumeJob(b *v1alpha1.StorageBenchmark, opts JobOptions, name, role, claim string, limit time.Duration, args ...string) *batchv1.Job {
	c := &b.Spec.Clients
	pull := opts.ImagePullPolicy
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	deadline := ptr.To(int64(limit / time.Second))
	labels := labels(b, role)
	container := corev1.Container{
		Name: role, Image: opts.Image, ImagePullPolicy: pull,
		Command: []string{exchange.RunnerCommand},
		Args:    args,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		VolumeMounts:             []corev1.VolumeMount{{Name: "data", MountPath: exchange.DataMountPath}},
		TerminationMessagePath:   exchange.TerminationLog,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          restricted(),
	}
	pod := corev1.PodSpec{
		AutomountServiceAccountToken:  ptr.To(false),
		ActiveDeadlineSeconds:         deadline,
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To[int64](10),
		NodeSelector:                  c.NodeSelector,
		Tolerations:                   c.Tolerations,
		// The runners' user, and no fsGroup: nothing on the claim is
		// re-owned.
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](runnerUID), RunAsGroup: ptr.To[int64](runnerUID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{container},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
	}
	return &batchv1.Job{
		ObjectMeta: objectMeta(b, name, role),
		Spec: batchv1.JobSpec{
			ActiveDeadlineSeconds: deadline,
			BackoffLimit:          ptr.To[int32](1),
			Template:              corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

// cleanupOutcome reads the cleanup pod's report: nil while it runs (or
// has not started).
func cleanupOutcome(b *v1alpha1.StorageBenchmark, job *batchv1.Job, pods []corev1.Pod) *cleanupRecord {
	where := fmt.Sprintf("%s on claim %s", spec.BenchmarkDirectory(b), ptr.Deref(b.Spec.Storage.ExistingClaim, ""))
	for i := len(pods) - 1; i >= 0; i-- {
		for _, cs := range pods[i].Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil {
				continue
			}
			var rep protocol.CleanupReport
			if err := json.Unmarshal([]byte(strings.TrimSpace(t.Message)), &rep); err != nil {
				if jobCondition(job, batchv1.JobFailed) {
					return &cleanupRecord{v1alpha1.CleanupRemaining, fmt.Sprintf("the cleanup pod %s exited with code %d without a report (%s): files may remain in %s",
						pods[i].Name, t.ExitCode, clip(strings.TrimSpace(t.Reason+" "+t.Message), 512), where)}
				}
				continue // the Job retries
			}
			if rep.OK() {
				return &cleanupRecord{v1alpha1.CleanupRemoved, fmt.Sprintf("removed %s: %d files and %d directories", where, rep.RemovedFiles, rep.RemovedDirs)}
			}
			msg := fmt.Sprintf("%d paths remain in %s", rep.RemainingCount, where)
			if len(rep.Remaining) > 0 {
				msg += " (" + strings.Join(rep.Remaining, ", ") + ")"
			}
			if rep.Error != "" {
				msg += ": " + rep.Error
			}
			return &cleanupRecord{v1alpha1.CleanupRemaining, msg}
		}
	}
	if c := jobConditionOf(job, batchv1.JobFailed); c != nil {
		return &cleanupRecord{v1alpha1.CleanupRemaining, fmt.Sprintf("the cleanup pod did not finish (%s, within %s): files may remain in %s",
			c.Reason, cleanupDeadline, where)}
	}
	return nil
}

// cleanUp removes the run's files on the existing claim: it returns the
// recorded outcome, or nil and when to look again while the clients still
// hold the volume or the cleanup pod runs. plan is the plan ConfigMap's
// metadata (nil: no client ever ran, nothing was written).
func (r *Reconciler) cleanUp(ctx context.Context, b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata) (*cleanupRecord, time.Duration, error) {
	if plan == nil {
		return &cleanupRecord{v1alpha1.CleanupRemoved, "no client ran on the claim"}, 0, nil
	}
	if rec := cleanupFrom(plan); rec != nil {
		return rec, 0, nil
	}
	job, pods, err := r.volumeJob(ctx, b, buildCleanupJob(b, r.Jobs))
	if err != nil || job == nil {
		return nil, 2 * time.Second, err
	}
	rec := cleanupOutcome(b, job, pods)
	if rec == nil {
		return nil, 2 * time.Second, nil
	}
	rec.Message = clip(rec.Message, MaxMessage)
	if err := r.recordOnPlan(ctx, plan, annotationCleanup, rec); err != nil {
		return nil, 0, err
	}
	log.FromContext(ctx).Info("Cleaned up the existing claim", "state", rec.State, "message", rec.Message)
	return rec, 0, nil
}

// volumeJob runs job, a pod's Job on the run's volume (buildVolumeJob),
// once no client pod may still write there, and returns it and its pods;
// nil while clients hold the volume or the Job is not in the cache yet.
func (r *Reconciler) volumeJob(ctx context.Context, b *v1alpha1.StorageBenchmark, job *batchv1.Job) (*batchv1.Job, []corev1.Pod, error) {
	busy, err := r.clientsOnVolume(ctx, b)
	if err != nil || busy {
		return nil, nil, err
	}
	if err := r.ensure(ctx, b, job, true); err != nil {
		return nil, nil, err
	}
	var cur batchv1.Job
	if err := r.Get(ctx, client.ObjectKeyFromObject(job), &cur); err != nil || !ownedBy(&cur, b) {
		return nil, nil, client.IgnoreNotFound(err)
	}
	pods, err := r.podsOf(ctx, b, job.Labels[exchange.LabelRole], map[types.UID]bool{cur.UID: true})
	if err != nil {
		return nil, nil, err
	}
	return &cur, pods, nil
}

// recordOnPlan records rec, as JSON, under key on the plan ConfigMap, on
// the condition that the plan is still the object observed.
func (r *Reconciler) recordOnPlan(ctx context.Context, plan *metav1.PartialObjectMetadata, key string, rec any) error {
	value, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.patchPlan(ctx, plan, map[string]any{"metadata": map[string]any{"uid": plan.UID,
		"annotations": map[string]string{key: string(value)}}})
}

// clientsOnVolume reports whether a client pod may still write on the
// volume: one that has not ended, unless it is being deleted from a node
// that is gone or stopped reporting (it can write nothing more there).
func (r *Reconciler) clientsOnVolume(ctx context.Context, b *v1alpha1.StorageBenchmark) (bool, error) {
	jobs, err := r.ownedJobs(ctx, b)
	if err != nil {
		return false, err
	}
	uids := map[types.UID]bool{}
	for _, j := range jobs {
		uids[j.UID] = true
	}
	pods, err := r.podsOf(ctx, b, exchange.RoleClient, uids)
	if err != nil {
		return false, err
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.DeletionTimestamp != nil && p.Spec.NodeName != "" {
			var node corev1.Node
			err := r.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node)
			if err == nil && nodeReady(&node) == corev1.ConditionUnknown {
				continue
			}
			if client.IgnoreNotFound(err) != nil {
				return false, err
			}
			if err != nil {
				continue // its node is gone
			}
		}
		return true, nil
	}
	return false, nil
}

// podsOf lists b's pods of role whose controller is one of the Jobs jobs.
func (r *Reconciler) podsOf(ctx context.Context, b *v1alpha1.StorageBenchmark, role string, jobs map[types.UID]bool) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(b.Namespace),
		client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: role}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOfNoCopy(&p); ref != nil && jobs[ref.UID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// addCleanupFinalizer makes sure a benchmark that writes on an existing
// claim is not deleted before its files there are removed.
func (r *Reconciler) addCleanupFinalizer(ctx context.Context, b *v1alpha1.StorageBenchmark) error {
	if !needsCleanup(b) || !b.DeletionTimestamp.IsZero() || controllerutil.ContainsFinalizer(b, FinalizerCleanup) {
		return nil
	}
	patch := client.MergeFromWithOptions(b.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(b, FinalizerCleanup)
	return r.Patch(ctx, b, patch)
}

// finalize runs when a benchmark holding FinalizerCleanup is deleted: its
// clients are stopped (their runners remove what they wrote), then the
// cleanup pod removes whatever is left, and the finalizer goes; after
// finalizeGrace it goes whatever is left, with a Warning event.
func (r *Reconciler) finalize(ctx context.Context, b *v1alpha1.StorageBenchmark) (time.Duration, error) {
	jobs, err := r.ownedJobs(ctx, b)
	if err != nil {
		return 0, err
	}
	for _, j := range jobs { // the clients' (ownedJobs lists no cleanup Job)
		if err := r.deleteOwned(ctx, b, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return 0, err
		}
	}
	plan, err := r.plan(ctx, b)
	if err != nil {
		return 0, err
	}
	waited := r.now().Sub(b.DeletionTimestamp.Time)
	var rec *cleanupRecord
	var again time.Duration
	if controllerutil.ContainsFinalizer(b, metav1.FinalizerDeleteDependents) {
		// Foreground deletion: the garbage collector deletes every
		// dependent first, a cleanup Job included.
		rec = &cleanupRecord{v1alpha1.CleanupRemaining, "the benchmark was deleted in the foreground, which deletes a cleanup pod before it runs: only what the runners removed themselves is gone"}
	} else if rec, again, err = r.cleanUp(ctx, b, plan); err != nil {
		return 0, err
	}
	if rec == nil && waited < finalizeGrace {
		return again, nil
	}
	if rec == nil {
		rec = &cleanupRecord{v1alpha1.CleanupRemaining, fmt.Sprintf("the cleanup did not end within %s of the deletion: files may remain in %s on claim %s",
			finalizeGrace, spec.BenchmarkDirectory(b), ptr.Deref(b.Spec.Storage.ExistingClaim, ""))}
	}
	if rec.State != v1alpha1.CleanupRemoved && r.Recorder != nil {
		r.Recorder.Event(b, corev1.EventTypeWarning, EventCleanupIncomplete, rec.Message)
	}
	patch := client.MergeFromWithOptions(b.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(b, FinalizerCleanup)
	return 0, client.IgnoreNotFound(r.Patch(ctx, b, patch))
}
