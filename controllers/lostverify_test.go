package controllers

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
)

func lostBench(reason string) *v1alpha1.StorageBenchmark {
	return newBench(func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Verify = &v1alpha1.VerifySpec{Pass: v1alpha1.VerifyAfterEachWritingStep}
		b.Spec.Storage.Sharing = v1alpha1.SharingShared
		b.Spec.Clients.Count = 3
		b.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: reason,
			Message: "client 1 (pod bench-client-001-x) was deleted"}}
	})
}

func TestNeedsLostVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.StorageBenchmark)
		want   bool
	}{
		{"a Shared Filesystem run that lost a client", func(*v1alpha1.StorageBenchmark) {}, true},
		{"a client that failed", func(b *v1alpha1.StorageBenchmark) { b.Status.Conditions[0].Reason = ReasonClientFailed }, true},
		{"another failure", func(b *v1alpha1.StorageBenchmark) { b.Status.Conditions[0].Reason = "StepTimedOut" }, false},
		{"not verifying", func(b *v1alpha1.StorageBenchmark) { b.Spec.Verify = nil }, false},
		{"per-client volumes", func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.Sharing = v1alpha1.SharingPerClient }, false},
		{"a Block volume", func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock }, false},
		{"complete", func(b *v1alpha1.StorageBenchmark) { b.Status.Conditions[0].Status = metav1.ConditionFalse }, false},
	} {
		b := lostBench(ReasonClientLost)
		tc.change(b)
		if got := needsLostVerify(b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The verifier is the operator's pod, as the cleanup pod is, on the
// run's one claim, over every client's directory.
func TestBuildVerifierJob(t *testing.T) {
	b := lostBench(ReasonClientLost)
	b.Spec.Clients.Image = "tenant/own-runner:1"
	j := buildVerifierJob(b, JobOptions{Image: testImage})
	pod := &j.Spec.Template.Spec
	c := &pod.Containers[0]
	want := []string{"verify-lost", "--volume=" + exchange.DataMountPath, "--clients=3", "--within=29m0s", "--report=" + exchange.TerminationLog}
	switch {
	case j.Name != "bench-verify" || j.Labels[exchange.LabelRole] != exchange.RoleVerify:
		t.Errorf("job %s labels %v", j.Name, j.Labels)
	case c.Image != testImage:
		t.Errorf("image %q, want the manager's runner image", c.Image)
	case !slices.Equal(c.Args, want):
		t.Errorf("args %q, want %q", c.Args, want)
	case pod.Volumes[0].PersistentVolumeClaim.ClaimName != exchange.SharedClaimName("bench"):
		t.Errorf("claim %q", pod.Volumes[0].PersistentVolumeClaim.ClaimName)
	case pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || *j.Spec.ActiveDeadlineSeconds != 1800:
		t.Errorf("token %v, deadline %v", pod.AutomountServiceAccountToken, j.Spec.ActiveDeadlineSeconds)
	case *j.Spec.BackoffLimit != 0:
		t.Errorf("backoff limit %d: a second pod would read everything back again", *j.Spec.BackoffLimit)
	}
	b.UID = "0123456789abcdef"
	b.Spec.Storage.ExistingClaim = ptr.To("postgres-data")
	j = buildVerifierJob(b, JobOptions{Image: testImage})
	if a := j.Spec.Template.Spec.Containers[0].Args; !slices.Contains(a, "--subdir=storagebench-bench-01234567") ||
		j.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "postgres-data" {
		t.Errorf("on an existing claim: args %q", a)
	}
}

func TestLostOutcomeAndVerdict(t *testing.T) {
	exited := func(msg string) []corev1.Pod {
		return []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "bench-verify-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Message: msg}}}}}}}
	}
	running := &batchv1.Job{}
	failed := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}}}}
	intact := protocol.LostReport{Clients: 3, Verification: results.Verification{Clients: 3, BlocksVerified: 6000, Overwritten: 400}}
	bad := protocol.LostReport{Clients: 3, Verification: results.Verification{Clients: 3, BlocksVerified: 6000, BadBlockCount: 1,
		BadBlocks: []results.BadBlock{{Client: 1, File: "job0.dat", Offset: 4096, Kind: verify.Stale, Generation: 2, FoundGeneration: 1}}}}
	missing := intact
	missing.Clients, missing.Missing, missing.Verification.Clients = 2, []int{1}, 2
	forged := bad
	forged.Verification.BadBlocks = []results.BadBlock{{Client: 1, File: "../etc", Kind: verify.Stale}}
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		pods   []corev1.Pod
		status metav1.ConditionStatus // "": no record yet
		reason string
		msg    string
	}{
		{"running", running, nil, metav1.ConditionUnknown, ReasonVerifyingAfterLoss, "a verifier pod reads back"},
		{"intact", running, exited(string(intact.JSON())), metav1.ConditionTrue, ReasonVerified,
			"every block the 3 clients' finished steps wrote read back as written (6000 blocks, 400 of them overwritten"},
		{"a stale block", running, exited(string(bad.JSON())), metav1.ConditionFalse, ReasonDataCorrupted,
			"1 of 6000 blocks read back wrong; the first, client 1 job0.dat offset 4096, is Stale"},
		{"a client left no record", running, exited(string(missing.JSON())), metav1.ConditionFalse, ReasonNotVerified,
			"clients [1] left no record"},
		{"a report that does not validate, retried", running, exited(string(forged.JSON())), metav1.ConditionUnknown, ReasonVerifyingAfterLoss, ""},
		{"a report that does not validate, given up", failed, exited(string(forged.JSON())), metav1.ConditionFalse, ReasonNotVerified, "without a report"},
		{"no report in time", failed, nil, metav1.ConditionFalse, ReasonNotVerified, "did not finish (DeadlineExceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := lostBench(ReasonClientLost)
			rec := lostOutcome(tc.job, tc.pods)
			st, reason, msg, _, ok := lostIntegrity(b, rec)
			if !ok || st != tc.status || reason != tc.reason || !strings.Contains(msg, tc.msg) {
				t.Errorf("got %s %s %q", st, reason, msg)
			}
		})
	}
}
