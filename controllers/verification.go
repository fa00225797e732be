package controllers

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/verify"
)

// maxBadBlocksInStatus is how many bad blocks status lists; the step's
// record keeps results.MaxBadBlocks.
const maxBadBlocksInStatus = 5

// verificationStatus is a read-back as status shows it; nil for none.
func verificationStatus(v *results.Verification) *v1alpha1.VerificationStatus {
	if v == nil {
		return nil
	}
	s := &v1alpha1.VerificationStatus{BlocksWritten: clampInt64(v.BlocksWritten), BlocksVerified: clampInt64(v.BlocksVerified),
		Unverified: clampInt64(v.Unverified), Overwritten: clampInt64(v.Overwritten), BadBlocks: clampInt64(v.BadBlockCount), Duration: metav1.Duration{Duration: v.Duration},
		Message: clip(v.Error, MaxMessage)}
	if v.Duration > 0 {
		s.BytesPerSecond = int64(math.Round(float64(v.Bytes) / v.Duration.Seconds()))
	}
	for _, b := range v.BadBlocks[:min(len(v.BadBlocks), maxBadBlocksInStatus)] {
		bs := v1alpha1.BadBlockStatus{Client: int32(b.Client), Job: int32(b.Job), File: b.File, Offset: b.Offset, Kind: string(b.Kind),
			Generation: clampInt64(b.Generation), FirstDiff: int32(b.FirstDiff), Expected: b.Expected, Received: b.Received,
			FoundGeneration: clampInt64(b.FoundGeneration)}
		if b.Kind == verify.Misdirected {
			bs.FoundOffset = ptr.To(b.FoundOffset)
		}
		s.FirstBadBlocks = append(s.FirstBadBlocks, bs)
	}
	return s
}

func clampInt64(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// setIntegrity writes a verifying run's read-backs into status: their sum
// and the DataIntegrity condition (run.IntegrityOf), as of at; after a
// lost client, the verifier's read-back (rec, nil before it) decides the
// condition unless a step's read-back found bad blocks already.
func setIntegrity(b *v1alpha1.StorageBenchmark, d *run.View, verifies bool, at time.Time, rec *lostRecord) {
	b.Status.Verification, b.Status.VerificationAfterLoss = nil, nil
	if !verifies {
		return
	}
	in := run.IntegrityOf(d.Steps, d.Ended)
	b.Status.Verification = verificationStatus(in.Total)
	if setLostIntegrity(b, rec, at) {
		return
	}
	status := metav1.ConditionUnknown
	if in.Judged {
		status = metav1.ConditionFalse
		if in.Intact {
			status = metav1.ConditionTrue
		}
	}
	setConditionStatus(b, v1alpha1.ConditionDataIntegrity, status, in.Reason, at, in.Message)
}

// integrityTime is when the read-backs last changed: the run's end, or
// the last recorded step's, or the run's start.
func integrityTime(v *run.View) time.Time {
	switch {
	case v.Ended:
		return v.EndedAt
	case len(v.Steps) > 0:
		return v.Steps[len(v.Steps)-1].Order.End()
	}
	return v.Start
}

// setLostIntegrity writes, for a run that needs a verifier after a lost
// client (needsLostVerify: a run that failed for its client, not for a
// step's bad blocks), its read-back (rec; nil while it is to come) into
// status and the DataIntegrity condition, as of at; it says whether the
// run needs one.
func setLostIntegrity(b *v1alpha1.StorageBenchmark, rec *lostRecord, at time.Time) bool {
	st, reason, msg, v, ok := lostIntegrity(b, rec)
	if !ok {
		return false
	}
	b.Status.VerificationAfterLoss = verificationStatus(v)
	setConditionStatus(b, v1alpha1.ConditionDataIntegrity, st, reason, at, msg)
	return true
}
