package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/spec"
)

// jobOptions are the client Jobs' settings for b's run: the manager's
// image and pull policy (a tenant's own image is always pulled, so the
// kubelet checks the tenant's credentials), the run's deadline and the
// default memory limit for its workload.
func (r *Reconciler) jobOptions(b *v1alpha1.StorageBenchmark, d *spec.Run) JobOptions {
	o := r.Jobs
	// An unset spec.clients.image is the runner image: ImagePullPolicy
	// keeps the configured policy for both.
	o.ImagePullPolicy = policy.ImagePullPolicy(b.Spec.Clients.Image, r.Jobs.Image, r.Jobs.ImagePullPolicy)
	o.ActiveDeadlineSeconds = ptr.To(int64(r.runDeadline(d) / time.Second))
	o.MemoryLimit = ptr.To(policy.RunnerMemoryLimit(d.Workload, b.Spec.Clients.JobsPerClient, d.Load, d.Precond))
	return o
}

// runDeadline is the longest a run may take when every phase uses its
// whole allowance: clients ready, then each planned step with its lead,
// ramp, duration and result grace. A pod still running then is stopped
// by the Job controller whatever became of the operator.
func (r *Reconciler) runDeadline(d *spec.Run) time.Duration {
	t := r.timeouts()
	perStep := t.NextStepLead + d.Load.RampTime + d.Load.StepDuration + t.ResultGrace
	if d.Verify {
		perStep += protocol.VerifyAllowance(d.Load.RampTime + d.Load.StepDuration)
	}
	return t.Ready + t.StartLead + time.Duration(d.StepsPlanned+1)*perStep
}

// hasMemoryLimit reports whether the benchmark sets its clients' memory
// limit itself (the policy bounds it in Check).
func hasMemoryLimit(b *v1alpha1.StorageBenchmark) bool {
	if r := b.Spec.Clients.Resources; r != nil {
		_, set := r.Limits[corev1.ResourceMemory]
		return set
	}
	return false
}
