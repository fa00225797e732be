package controllers

import (
	"encoding/json"
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
)

func existingClaimBench() *v1alpha1.StorageBenchmark {
	return newBench(func(b *v1alpha1.StorageBenchmark) {
		b.UID = "0123456789abcdef"
		b.Spec.Storage.ExistingClaim = ptr.To("postgres-data")
		b.Spec.Clients.NodeSelector = map[string]string{"pool": "db"}
	})
}

// The cleanup pod is the operator's, not the tenant's: the manager's
// runner image, the clients' user without fsGroup, no API token, bounded.
func TestBuildCleanupJob(t *testing.T) {
	b := existingClaimBench()
	b.Spec.Clients.Image = "tenant/own-runner:1"
	j := buildCleanupJob(b, JobOptions{Image: testImage})
	pod := &j.Spec.Template.Spec
	c := &pod.Containers[0]
	switch {
	case j.Name != "bench-cleanup" || j.Labels[exchange.LabelRole] != exchange.RoleCleanup:
		t.Errorf("job %s labels %v", j.Name, j.Labels)
	case c.Image != testImage:
		t.Errorf("image %q, want the manager's runner image %q, never the tenant's", c.Image, testImage)
	case !slices.Equal(c.Args, []string{"cleanup", "--volume=" + exchange.DataMountPath, "--subdir=storagebench-bench-01234567", "--report=" + exchange.TerminationLog}):
		t.Errorf("args %q", c.Args)
	case pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken:
		t.Error("the cleanup pod gets an API token")
	case pod.SecurityContext.FSGroup != nil || *pod.SecurityContext.RunAsUser != runnerUID:
		t.Errorf("security %+v: want the runners' user and no fsGroup", pod.SecurityContext)
	case pod.ActiveDeadlineSeconds == nil || j.Spec.ActiveDeadlineSeconds == nil:
		t.Error("an unbounded cleanup pod")
	case pod.Volumes[0].PersistentVolumeClaim.ClaimName != "postgres-data" || c.VolumeMounts[0].MountPath != exchange.DataMountPath:
		t.Errorf("volume %+v mounted at %+v", pod.Volumes[0], c.VolumeMounts)
	case pod.NodeSelector["pool"] != "db":
		t.Errorf("node selector %v, want the clients'", pod.NodeSelector)
	}
	if _, set := c.Resources.Limits[corev1.ResourceMemory]; !set {
		t.Error("no memory limit")
	}
}

func TestCleanupOutcome(t *testing.T) {
	b := existingClaimBench()
	report := func(r protocol.CleanupReport) string { return string(r.JSON()) }
	exited := func(code int32, msg string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bench-cleanup-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg, Reason: "Error"}}}}}}
	}
	running := &batchv1.Job{}
	failed := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}}}}
	tests := []struct {
		name  string
		job   *batchv1.Job
		pods  []corev1.Pod
		state v1alpha1.CleanupState // "": still running
		msg   string
	}{
		{"not started", running, nil, "", ""},
		{"removed", running, []corev1.Pod{exited(0, report(protocol.CleanupReport{RemovedFiles: 6, RemovedDirs: 4}))}, v1alpha1.CleanupRemoved,
			"removed storagebench-bench-01234567 on claim postgres-data: 6 files and 4 directories"},
		{"something left", running, []corev1.Pod{exited(3, report(protocol.CleanupReport{RemovedFiles: 1, Remaining: []string{"storagebench-bench-01234567/client-000/job0"},
			RemainingCount: 2, Error: "permission denied"}))}, v1alpha1.CleanupRemaining,
			"2 paths remain in storagebench-bench-01234567 on claim postgres-data (storagebench-bench-01234567/client-000/job0): permission denied"},
		{"a directory that is not the runners'", running, []corev1.Pod{exited(3, report(protocol.CleanupReport{RemainingCount: 1,
			Error: "storagebench-bench-01234567 is not this runner's directory"}))}, v1alpha1.CleanupRemaining, "is not this runner's directory"},
		{"no report, the Job retries", running, []corev1.Pod{exited(137, "OOMKilled")}, "", ""},
		{"no report, the Job failed", failed, []corev1.Pod{exited(137, "OOMKilled")}, v1alpha1.CleanupRemaining,
			"exited with code 137 without a report"},
		{"the pod never ran in time", failed, nil, v1alpha1.CleanupRemaining, "did not finish (DeadlineExceeded, within 10m0s): files may remain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := cleanupOutcome(b, tt.job, tt.pods)
			switch {
			case tt.state == "" && rec != nil:
				t.Fatalf("outcome %+v, want none yet", rec)
			case tt.state == "":
			case rec == nil:
				t.Fatalf("no outcome, want %s", tt.state)
			case rec.State != tt.state || !strings.Contains(rec.Message, tt.msg):
				t.Fatalf("outcome %s %q, want %s containing %q", rec.State, rec.Message, tt.state, tt.msg)
			}
		})
	}
}

// status.cleanup is projected from the plan ConfigMap's record: nothing
// while the run goes on or without an existing claim, Pending until the
// outcome is recorded.
func TestSetCleanup(t *testing.T) {
	plan := func(rec *cleanupRecord) *metav1.PartialObjectMetadata {
		p := &metav1.PartialObjectMetadata{}
		if rec != nil {
			v, _ := json.Marshal(rec)
			p.Annotations = map[string]string{annotationCleanup: string(v)}
		}
		return p
	}
	b := existingClaimBench()
	setCleanup(b, plan(nil), false)
	if b.Status.Cleanup != nil {
		t.Fatalf("cleanup while the run goes on: %+v", b.Status.Cleanup)
	}
	setCleanup(b, plan(nil), true)
	if c := b.Status.Cleanup; c == nil || c.State != v1alpha1.CleanupPending || c.Directory != "storagebench-bench-01234567" {
		t.Fatalf("after the end: %+v, want Pending", c)
	}
	setCleanup(b, plan(&cleanupRecord{v1alpha1.CleanupRemaining, "2 paths remain"}), true)
	if c := b.Status.Cleanup; c == nil || c.State != v1alpha1.CleanupRemaining || c.Message != "2 paths remain" {
		t.Fatalf("recorded: %+v", c)
	}
	setCleanup(b, plan(&cleanupRecord{"Bogus", "x"}), true)
	if c := b.Status.Cleanup; c == nil || c.State != v1alpha1.CleanupPending {
		t.Fatalf("a record of no known state: %+v, want Pending", c)
	}
	own := newBench()
	setCleanup(own, plan(nil), true)
	if own.Status.Cleanup != nil {
		t.Fatal("cleanup status on the benchmark's own volume")
	}
}
