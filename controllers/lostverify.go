package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/spec"
)

// A run that verifies what it writes, on a Shared Filesystem volume, and
// that failed because a client was lost or failed mid-step: the clients'
// finished steps left, beside their files, what each wrote
// (internal/runner's lost.go). Once every client pod is done with the
// volume, and before its files or claims go, the operator runs a verifier
// pod on the same claim (`runner verify-lost`: the manager's runner image,
// the clients' user, no API access) that reads back every block the
// clients' finished steps wrote. Its report is recorded on the plan
// ConfigMap (annotationLostVerify) and projected into
// status.verificationAfterLoss and the DataIntegrity condition.

const (
	// lostVerifyDeadline bounds the verifier pod; its read-back gets all
	// but a minute of it.
	lostVerifyDeadline = 30 * time.Minute
	// annotationLostVerify on the plan ConfigMap records the verifier's
	// outcome.
	annotationLostVerify = "storagebench.io/verify-after-loss"
)

// VerifierName is the verifier Job's name.
func VerifierName(benchmark string) string { return benchmark + "-verify" }

// needsLostVerify: b verifies on one Shared Filesystem volume, and its run
// failed because a client was lost or failed.
func needsLostVerify(b *v1alpha1.StorageBenchmark) bool {
	st := &b.Spec.Storage
	if b.Spec.Verify == nil || st.VolumeMode == corev1.PersistentVolumeBlock || st.Sharing != v1alpha1.SharingShared {
		return false
	}
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed)
	return c != nil && c.Status == metav1.ConditionTrue && (c.Reason == ReasonClientLost || c.Reason == ReasonClientFailed)
}

// lostRecord is the verifier's outcome as the plan ConfigMap keeps it:
// its report, or why there is none.
type lostRecord struct {
	Report *protocol.LostReport `json:"report,omitempty"`
	Error  string               `json:"error,omitempty"`
}

func lostFrom(plan *metav1.PartialObjectMetadata) *lostRecord {
	if plan == nil {
		return nil
	}
	var rec lostRecord
	v, ok := plan.Annotations[annotationLostVerify]
	if !ok || json.Unmarshal([]byte(v), &rec) != nil || (rec.Report == nil) == (rec.Error == "") {
		return nil
	}
	return &rec
}

// buildVerifierJob is the verifier pod's Job (buildVolumeJob) on the
// run's one claim.
func buildVerifierJob(b *v1alpha1.StorageBenchmark, opts JobOptions) *batchv1.Job {
	args := []string{"verify-lost", "--volume=" + exchange.DataMountPath, "--clients=" + strconv.Itoa(int(b.Spec.Clients.Count)),
		"--within=" + (lostVerifyDeadline - time.Minute).String(), "--report=" + exchange.TerminationLog}
	if b.Spec.Storage.ExistingClaim != nil {
		args = append(args, "--subdir="+spec.BenchmarkDirectory(b))
	}
	j := buildVolumeJob(b, opts, VerifierName(b.Name), exchange.RoleVerify, claimNames(b)[0], lostVerifyDeadline, args...)
	// One pod: its exit status says what it found, and a second would
	// read everything back again.
	j.Spec.BackoffLimit = ptr.To[int32](0)
	return j
}

// lostOutcome reads the verifier pod's report: nil while it runs (or has
// not started).
func lostOutcome(job *batchv1.Job, pods []corev1.Pod) *lostRecord {
	for i := len(pods) - 1; i >= 0; i-- {
		for _, cs := range pods[i].Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil {
				continue
			}
			var rep protocol.LostReport
			if err := json.Unmarshal([]byte(strings.TrimSpace(t.Message)), &rep); err == nil && rep.Verification.ValidateMerged(rep.Clients) == nil {
				return &lostRecord{Report: &rep}
			}
			if jobCondition(job, batchv1.JobFailed) {
				return &lostRecord{Error: fmt.Sprintf("the verifier pod %s exited with code %d without a report (%s)",
					pods[i].Name, t.ExitCode, clip(strings.TrimSpace(t.Reason+" "+t.Message), 512))}
			}
		}
	}
	if c := jobConditionOf(job, batchv1.JobFailed); c != nil {
		return &lostRecord{Error: fmt.Sprintf("the verifier pod did not finish (%s, within %s)", c.Reason, lostVerifyDeadline)}
	}
	return nil
}

// verifyLost reads back, once the clients are off the volume, what the
// clients' finished steps wrote: it returns the recorded outcome, or nil
// and when to look again.
func (r *Reconciler) verifyLost(ctx context.Context, b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata) (*lostRecord, time.Duration, error) {
	if plan == nil {
		return &lostRecord{Error: "no client ran"}, 0, nil
	}
	if rec := lostFrom(plan); rec != nil {
		// Its Job goes once the report is recorded, also when an earlier
		// pass recorded it and could not delete it.
		var job batchv1.Job
		err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: VerifierName(b.Name)}, &job)
		if err == nil {
			err = r.deleteOwned(ctx, b, &job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
		return rec, 0, client.IgnoreNotFound(err)
	}
	job, pods, err := r.volumeJob(ctx, b, buildVerifierJob(b, r.Jobs))
	if err != nil || job == nil {
		return nil, 2 * time.Second, err
	}
	rec := lostOutcome(job, pods)
	if rec == nil {
		return nil, 2 * time.Second, nil
	}
	rec.Error = clip(rec.Error, MaxMessage)
	if err := r.recordOnPlan(ctx, plan, annotationLostVerify, rec); err != nil {
		return nil, 0, err
	}
	log.FromContext(ctx).Info("Verified what the lost clients' finished steps wrote", "error", rec.Error)
	if err := r.deleteOwned(ctx, b, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return nil, 0, err
	}
	return rec, 0, nil
}

// lostIntegrity is the DataIntegrity verdict after a lost client: from
// the verifier's record, or Unknown while it is to come. ok is false when
// the run needs no such verification.
func lostIntegrity(b *v1alpha1.StorageBenchmark, rec *lostRecord) (status metav1.ConditionStatus, reason, message string, v *results.Verification, ok bool) {
	if !needsLostVerify(b) {
		return "", "", "", nil, false
	}
	what := "a client was lost mid-step"
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed); c != nil {
		what = c.Message
	}
	switch {
	case rec == nil:
		return metav1.ConditionUnknown, ReasonVerifyingAfterLoss, "waiting for the clients to stop, then a verifier pod reads back what their finished steps wrote", nil, true
	case rec.Error != "":
		return metav1.ConditionFalse, ReasonNotVerified, "after the loss (" + what + "), nothing could be read back: " + rec.Error, nil, true
	}
	rep := rec.Report
	rv := &rep.Verification
	switch {
	case rv.Bad():
		return metav1.ConditionFalse, ReasonDataCorrupted, fmt.Sprintf("after the loss (%s): %s", what, protocol.VerificationMessage(rv)), rv, true
	case rv.Unverified > 0 || rep.Error != "" || len(rep.Missing) > 0:
		why := rep.Error
		if len(rep.Missing) > 0 {
			why = fmt.Sprintf("clients %v left no record of what their finished steps wrote (they finished none) %s", rep.Missing, why)
		}
		if rv.Unverified > 0 {
			why = fmt.Sprintf("%d blocks not read (%s) %s", rv.Unverified, rv.Error, why)
		}
		return metav1.ConditionFalse, ReasonNotVerified, "after the loss (" + what + "): " + strings.TrimSpace(why), rv, true
	}
	return metav1.ConditionTrue, ReasonVerified, fmt.Sprintf("after the loss (%s): every block the %d clients' finished steps wrote read back as written "+
		"(%d blocks, %d of them overwritten by the step the loss interrupted, whole or torn; which of that step's writes were acknowledged cannot be known, so they are not verified)",
		what, rep.Clients, rv.BlocksVerified, rv.Overwritten), rv, true
}

// finishLostVerify carries out, in finish, the verifier's part of a run
// that needs one: its verdict written into status (an ended run's status
// is not rebuilt); wait says to look again after again first.
func (r *Reconciler) finishLostVerify(ctx context.Context, b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata) (wait bool, again time.Duration, err error) {
	if !needsLostVerify(b) {
		return false, 0, nil
	}
	rec, again, err := r.verifyLost(ctx, b, plan)
	if err == nil && b.Status.CompletionTime != nil {
		setLostIntegrity(b, rec, b.Status.CompletionTime.Time)
	}
	return err != nil || rec == nil, again, err
}
