package controllers

import (
	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/run"
)

// The names the operator writes on objects and in their status, in one
// place: label, annotation and finalizer keys, condition reasons and event
// reasons. The condition types are the API's (api/v1alpha1); the keys the
// runners share with the manager are internal/exchange's.

// Keys on the objects the operator creates or reads.
const (
	// LabelSchedule names the schedule a run belongs to (it is listed by
	// it; the controller reference decides whether it is the schedule's).
	LabelSchedule = "storagebench.io/schedule"
	// AnnotationScheduledTime is the scheduled time a run was created for
	// (RFC 3339).
	AnnotationScheduledTime = "storagebench.io/scheduled-time"
	// AnnotationRunToken is the token of a run the manager is creating.
	AnnotationRunToken = "storagebench.io/run-token"
	// AnnotationRunSignature is the signature of a run the manager created.
	AnnotationRunSignature = "storagebench.io/run-signature"
	// AnnotationAllowBenchmark on a PersistentVolumeClaim lets benchmarks
	// use it as storage.existingClaim.
	AnnotationAllowBenchmark = "storagebench.io/allow-benchmark"
	// ConsentFiles lets a Filesystem benchmark write its files in a
	// directory of its own on the volume (BenchmarkDirectory), and remove
	// exactly those files afterwards. Nothing else on the volume is read,
	// written or re-owned.
	ConsentFiles = "files"
	// ConsentBlockOverwrite lets a Block benchmark overwrite the raw
	// device: whatever the volume held is destroyed.
	ConsentBlockOverwrite = "block-overwrite"
	// FinalizerCleanup holds a benchmark on an existing Filesystem claim
	// until its files there are removed.
	FinalizerCleanup = "storagebench.io/files-cleanup"
	// annotationCleanup on the plan ConfigMap records the cleanup's outcome.
	annotationCleanup = "storagebench.io/cleanup"
	// annotationVerdicts on the plan ConfigMap holds the run's recorded
	// verdicts (recordedVerdicts), each written with the order that made
	// it due, in the same patch.
	annotationVerdicts = "storagebench.io/verdicts"
	// legacyAnnotationRegression and legacyAnnotationSpread held the
	// Regressed and ClientsSpread verdicts before annotationVerdicts; they
	// are read, never written, for the runs recorded then.
	legacyAnnotationRegression = "storagebench.io/regression"
	legacyAnnotationSpread     = "storagebench.io/spread"
	// annotationOrder mirrors the plan ConfigMap's order.json for the operator.
	annotationOrder = "storagebench.io/order"
	// annotationStorageTimes on the plan ConfigMap records the storage's
	// control-plane times (status.storage.provisioning and attach), each
	// once, as status first shows it (controlplane.go).
	annotationStorageTimes = "storagebench.io/storage-times"
)

// Reasons of a benchmark's conditions (Ready, Reconciling, Complete,
// Failed, SLOMet, SteadyState, ...).
const (
	ReasonPreparing            = run.ReasonPreparing
	ReasonRunning              = run.ReasonRunning
	ReasonCompleted            = "Completed"
	ReasonInvalidSpec          = "InvalidSpec"
	ReasonInvalidPlan          = "InvalidPlan"
	ReasonStorageClassNotFound = "StorageClassNotFound"
	ReasonClaimNotFound        = "ClaimNotFound"
	ReasonClaimNotBound        = run.ReasonClaimNotBound
	ReasonClientsNotReady      = run.ReasonClientsNotReady
	ReasonClientFailed         = run.ReasonClientFailed
	ReasonClientLost           = run.ReasonClientLost
	// DataIntegrity's reasons (run.IntegrityOf), and one of its own while
	// a verifier reads back what lost clients' finished steps wrote.
	ReasonVerified           = run.ReasonVerified
	ReasonNotVerified        = run.ReasonNotVerified
	ReasonDataCorrupted      = run.ReasonDataCorrupted
	ReasonVerifyingAfterLoss = "VerifyingAfterLoss"
	ReasonStepTimedOut       = run.ReasonStepTimedOut
	// ReasonManagerUnavailable: the clients' deadline passed while no
	// manager conducted the run.
	ReasonManagerUnavailable = run.ReasonManagerUnavailable
	ReasonAllMet             = "AllMet"
	ReasonNotMet             = "NotMet"
	ReasonNotMeasurable      = run.ReasonNotMeasurable
	ReasonFailed             = "Failed"
	// The reasons below end a run that would otherwise touch what the
	// benchmark does not own, or never end.
	ReasonNameConflict        = "NameConflict"
	ReasonCreateRefused       = "CreateRefused"
	ReasonClaimNotConsented   = "ClaimNotConsented"
	ReasonClaimTooSmall       = "ClaimTooSmall"
	ReasonForbiddenByPolicy   = "ForbiddenByPolicy"
	ReasonInvalidResult       = "InvalidResult"
	ReasonExchangeLost        = run.ReasonExchangeLost
	ReasonClockOffsetTooLarge = run.ReasonClockOffsetTooLarge
	ReasonClockSkew           = "ClockSkew"
	ReasonClocksAgree         = "ClocksAgree"
	ReasonClocksNotMeasured   = "ClocksNotMeasured"
	ReasonSteady              = run.ReasonSteady
	ReasonNotSteady           = run.ReasonNotSteady
	ReasonVariationAboveLimit = run.ReasonVariationAboveLimit
	ReasonVariationWithin     = run.ReasonVariationWithin
	ReasonClientBound         = run.ReasonClientBound
	ReasonStorageBound        = run.ReasonStorageBound
	ReasonClientCPUBusy       = run.ReasonClientCPUBusy
	ReasonClientCPUThrottled  = run.ReasonClientCPUThrottled
	ReasonClientCPUHeadroom   = run.ReasonClientCPUHeadroom
	ReasonOnDistinctNodes     = "OnDistinctNodes"
	ReasonFewerNodes          = "FewerNodesThanClients"
	ReasonSharingNodes        = "SharingNodes"
	ReasonEvenShare           = run.ReasonEvenShare
	ReasonUnevenShare         = run.ReasonUnevenShare
	// ReasonUnsupportedStorage: the storage cannot serve the benchmark.
	ReasonUnsupportedStorage = "UnsupportedStorage"
)

// Reasons of the Regressed condition. The first three are verdicts; the
// others say why the run could not be compared (status Unknown).
const (
	ReasonRegressed             = v1alpha1.RegressionReasonRegressed
	ReasonNotRegressed          = v1alpha1.RegressionReasonNotRegressed
	ReasonNotJudged             = "NotJudged"
	ReasonNoBaseline            = "NoBaseline"
	ReasonNotScheduled          = "NotScheduled"
	ReasonBaselineNotFound      = "BaselineNotFound"
	ReasonBaselineNotComplete   = "BaselineNotComplete"
	ReasonBaselineNotComparable = "BaselineNotComparable"
	ReasonBaselineInvalid       = "BaselineInvalid"
	ReasonNotCompared           = "NotCompared"
)

// Reasons of a schedule's Ready condition.
const (
	ReasonScheduled       = "Scheduled"
	ReasonSuspended       = "Suspended"
	ReasonInvalidSchedule = "InvalidSchedule"
	ReasonInvalidTemplate = "InvalidTemplate"
)

// Event reasons.
const (
	EventClaimsBound    = "ClaimsBound"
	EventClientsReady   = "ClientsReady"
	EventStepStarted    = "StepStarted"
	EventStepCompleted  = "StepCompleted"
	EventCompleted      = "Completed"
	EventFailed         = "Failed"
	EventSLOMet         = "SLOMet"
	EventSLONotMet      = "SLONotMet"
	EventStorageWarning = "StorageWarning"
	// EventCleanupIncomplete says files may be left on the claim.
	EventCleanupIncomplete  = "CleanupIncomplete"
	EventRunCreated         = "RunCreated"
	EventRunDeleted         = "RunDeleted"
	EventRunAlreadyActive   = "RunAlreadyActive"
	EventTooManyMissedTimes = "TooManyMissedTimes"
	EventRunNameTaken       = "RunNameTaken"
	EventRunRefused         = "RunRefused"
)
