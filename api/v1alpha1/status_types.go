package v1alpha1

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types. Ready, Reconciling and Stalled follow kstatus (Argo CD,
// Flux); Complete, Failed and SLOMet say how the run ended.
const (
	// ConditionReady is True once the run finished successfully.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the run is in progress.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the run cannot make progress without
	// a change from the user (it then failed).
	ConditionStalled = "Stalled"
	// ConditionComplete is True when every planned step ran (or a stop rule
	// ended the load).
	ConditionComplete = "Complete"
	// ConditionFailed is True when the run ended without completing.
	ConditionFailed = "Failed"
	// ConditionSLOMet is True when every objective was met; absent without
	// objectives.
	ConditionSLOMet = "SLOMet"
	// ConditionStorageWarning is True when the storage makes results hard to
	// compare (a FlexVol shared with neighbours, no ReadWriteMany for a
	// shared volume); absent otherwise.
	ConditionStorageWarning = "StorageWarning"
	// ConditionClockSkew is True when the clients' clocks are further from
	// the API server's than a step's start lead tolerates unnoticed; the
	// runners correct for the offsets they measured, so it warns rather than
	// fails, unless an offset exceeds the start lead.
	ConditionClockSkew = "ClockSkew"
	// ConditionSteadyState is True when every step whose timeline could be
	// judged held its IOPS steady (analysis.steadyState), False when one
	// did not; absent when no step could be judged.
	ConditionSteadyState = "SteadyState"
	// ConditionUnstable is True when the runs of a repeated load level vary
	// by more than analysis.maxVariationPercent (IOPS or p99 latency), False
	// when none does; absent without that limit or before a level has 2
	// runs. It informs: the run goes on and is judged as before.
	ConditionUnstable = "Unstable"
	// ConditionClientBound is a curve's client-bound check
	// (load.curve.clientBoundCheck): True when the unthrottled step at twice
	// the outstanding I/O achieved more than 5 % above the maximum, so the
	// maximum was the clients' (raise ioDepth, jobsPerClient or clients);
	// False when it did not. Absent until the check ran, and without it.
	ConditionClientBound = "ClientBound"
	// ConditionClientCPUBound says whether the clients' CPU bounded the
	// figures: True when, in a step that stands, a client's fio used more
	// than 60 % of the CPU its jobs could use, or its container was
	// throttled in more than 1 % of its CFS periods (the message names the
	// steps, the clients and what to raise); False when none was. Absent
	// when no client measured its CPU. It informs: the run goes on.
	ConditionClientCPUBound = "ClientCPUBound"
	// ConditionRegressed is the comparison with spec.regression's
	// baseline: True when a step's IOPS or p99 latency is worse than the
	// baseline's, significantly and by at least the minimum effect; False
	// when none is; Unknown when the run was not compared (no usable
	// baseline, no test that could be judged, or no recorded comparison).
	// Informational: it does not make the run Stalled or Failed.
	ConditionRegressed = "Regressed"
	// ConditionClientsSpread is where clients.spreadAcrossNodes put the
	// client pods, once every client pod is scheduled: True when each runs
	// on a node of its own, False when some share a node (the reason says
	// whether the cluster had fewer Ready, schedulable nodes than clients).
	// Absent without spreadAcrossNodes. Informational.
	ConditionClientsSpread = "ClientsSpread"
	// ConditionClientsEven is how evenly the clients shared the storage,
	// judged once a run of two or more clients completed: True when in
	// every step that stands (not superseded) the clients' IOPS had a
	// coefficient of variation of at most 10 %, False naming the steps
	// where it was higher. Informational.
	ConditionClientsEven = "ClientsEven"
	// ConditionBackendMetrics is whether the steps carry what the storage
	// itself reported (steps[].backend), once the run ended: True when
	// they were joined, False saying why they could not be (no source for
	// this storage, steps too short for the source's resolution, the
	// source unreachable or without the volumes' series); Unknown while
	// the manager waits for the source's last samples. Absent when the
	// manager reads no metrics source. Informational: a run never fails
	// for it.
	ConditionBackendMetrics = "BackendMetrics"
	// ConditionDataIntegrity is what the read-backs of a run that
	// verifies (spec.verify) found: True when every block written read
	// back intact, False with reason DataCorrupted (the run is Failed
	// with the same reason and message) or NotVerified (blocks went
	// unread); Unknown while the run goes on. Absent without spec.verify.
	ConditionDataIntegrity = "DataIntegrity"
)

// StorageBenchmarkStatus is what the operator observed and measured.
type StorageBenchmarkStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, Reconciling, Stalled, Complete, Failed, SLOMet.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// clientsReady is how many clients reported their files laid out.
	// +optional
	ClientsReady int32 `json:"clientsReady,omitempty"`

	// clientsTotal is the number of client pods.
	// +optional
	ClientsTotal int32 `json:"clientsTotal,omitempty"`

	// clock is how far the ready clients' clocks are from the API server's,
	// as each runner measured it.
	// +optional
	Clock *ClockStatus `json:"clock,omitempty"`

	// stepsPlanned is the number of steps the load plans, every repetition
	// and every rerun of an unsteady step decided so far counted (stop rules
	// may end it earlier).
	// +optional
	StepsPlanned int32 `json:"stepsPlanned,omitempty"`

	// currentStep is the step running now (from 0); unset when none runs.
	// +optional
	CurrentStep *int32 `json:"currentStep,omitempty"`

	// progress is "finished/planned" steps, for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`

	// startTime is when the first step started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run ended (Complete or Failed).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// workload is the resolved I/O pattern (profile plus overrides).
	// +optional
	Workload *ResolvedWorkload `json:"workload,omitempty"`

	// storage is the storage actually used.
	// +optional
	Storage *StorageStatus `json:"storage,omitempty"`

	// steps are the aggregated results of every finished step, over all
	// clients, exactly merged.
	// +optional
	// +listType=atomic
	Steps []StepStatus `json:"steps,omitempty"`

	// stopReason says why the load ended.
	// +optional
	StopReason string `json:"stopReason,omitempty"`

	// summary is the run's peak, latency at peak, performance at the
	// latency target and knee.
	// +optional
	Summary *SummaryStatus `json:"summary,omitempty"`

	// slos are the objectives' verdicts.
	// +optional
	// +listType=map
	// +listMapKey=name
	SLOs []SLOStatus `json:"slos,omitempty"`

	// repeatability is how much the runs of each repeated load level
	// (load.repeat) varied: one entry per level with at least 2 finished
	// runs, in level order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Repeatability []RepeatabilityStatus `json:"repeatability,omitempty"`

	// regression is the comparison with spec.regression's baseline, once
	// the run has completed.
	// +optional
	Regression *RegressionStatus `json:"regression,omitempty"`

	// cleanup says, for a benchmark on an existing Filesystem claim,
	// whether the files its runners wrote there are gone once the run
	// ended: a cleanup pod removes whatever a killed runner left.
	// +optional
	Cleanup *CleanupStatus `json:"cleanup,omitempty"`

	// verification sums the steps' read-backs, in a run that verifies
	// (spec.verify); the DataIntegrity condition says its verdict.
	// +optional
	Verification *VerificationStatus `json:"verification,omitempty"`

	// verificationAfterLoss is the read-back, after a client was lost or
	// failed mid-step, of every block the clients' finished steps wrote
	// (a run that verifies on a Shared Filesystem volume).
	// +optional
	VerificationAfterLoss *VerificationStatus `json:"verificationAfterLoss,omitempty"`
}

// VerificationStatus is what read-backs of written blocks found: one
// step's, or (in status.verification) the run's, summed over its steps.
type VerificationStatus struct {
	// blocksWritten is how many distinct blocks the step wrote (the run:
	// summed over its steps).
	BlocksWritten int64 `json:"blocksWritten"`
	// blocksVerified is how many blocks were read back and compared:
	// after a step, every block the run had written.
	BlocksVerified int64 `json:"blocksVerified"`
	// unverified is how many blocks were not read back, because the pass
	// reached its time bound or failed (message says why).
	// +optional
	Unverified int64 `json:"unverified,omitempty"`
	// overwritten is how many of them (after a lost client) held what
	// the step the loss interrupted wrote there instead, whole or torn: a
	// write in flight, never acknowledged.
	// +optional
	Overwritten int64 `json:"overwritten,omitempty"`
	// badBlocks is how many blocks held something other than what was
	// written there.
	BadBlocks int64 `json:"badBlocks"`
	// firstBadBlocks are the first of them (the step's record lists up to
	// 16).
	// +optional
	// +kubebuilder:validation:MaxItems=5
	FirstBadBlocks []BadBlockStatus `json:"firstBadBlocks,omitempty"`
	// bytesPerSecond is how fast the read-back read (the clients'
	// bytes over the longest pass): what verification costs.
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// duration is how long the read-back took (the run: summed).
	Duration metav1.Duration `json:"duration"`
	// message says why blocks went unverified.
	// +optional
	Message string `json:"message,omitempty"`
}

// BadBlockStatus is a block read back wrong.
type BadBlockStatus struct {
	Client int32 `json:"client"`
	Job    int32 `json:"job"`
	// file is the job's file in the client's directory; empty on a raw
	// block device.
	// +optional
	File string `json:"file,omitempty"`
	// offset is the block's, in its file or device, in bytes.
	Offset int64 `json:"offset"`
	// kind is Corrupted (bytes changed, torn, zeroed), Misdirected (an
	// intact block written for another offset) or Stale (an intact block
	// of this offset from an older generation).
	Kind string `json:"kind"`
	// generation is the one written there last (the step's index + 1).
	Generation int64 `json:"generation"`
	// firstDiff is the first byte of the block that differs; expected
	// and received are up to 16 bytes from it, in hex.
	FirstDiff int32  `json:"firstDiff"`
	Expected  string `json:"expected"`
	Received  string `json:"received"`
	// foundOffset and foundGeneration are what a misdirected or stale
	// block describes itself as.
	// +optional
	FoundOffset *int64 `json:"foundOffset,omitempty"`
	// +optional
	FoundGeneration int64 `json:"foundGeneration,omitempty"`
}

// CleanupState is where the removal of a benchmark's files on an existing
// claim stands.
// +kubebuilder:validation:Enum=Pending;Removed;Remaining
type CleanupState string

// Cleanup states.
const (
	// CleanupPending: the run ended; the files are being removed.
	CleanupPending CleanupState = "Pending"
	// CleanupRemoved: nothing of the benchmark's directory is left.
	CleanupRemoved CleanupState = "Removed"
	// CleanupRemaining: something could not be removed; the message says
	// what and where.
	CleanupRemaining CleanupState = "Remaining"
)

// CleanupStatus is the removal of a benchmark's files on an existing claim.
type CleanupStatus struct {
	// state of the removal.
	State CleanupState `json:"state"`
	// directory is the benchmark's directory on the claim.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Directory string `json:"directory,omitempty"`
	// message says what was removed, or what is left and why.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
}

// ResolvedWorkload is the workload actually run.
type ResolvedWorkload struct {
	BlockSizeBytes           int64  `json:"blockSizeBytes"`
	ReadPercent              int32  `json:"readPercent"`
	Pattern                  string `json:"pattern"`
	IODepth                  int32  `json:"ioDepth"`
	IOEngine                 string `json:"ioEngine"`
	Direct                   bool   `json:"direct"`
	WorkingSetBytesPerClient int64  `json:"workingSetBytesPerClient"`
	CompressPercent          int32  `json:"compressPercent"`
	// +optional
	DedupePercent int32 `json:"dedupePercent,omitempty"`
	// +optional
	Sync string `json:"sync,omitempty"`
	// +optional
	SyncEvery int32 `json:"syncEvery,omitempty"`
}

// StorageStatus is the storage actually used.
type StorageStatus struct {
	// storageClassName is the class the claims were provisioned from.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// provisioner of that class.
	// +optional
	Provisioner string `json:"provisioner,omitempty"`
	// claims is the number of claims benchmarked.
	// +optional
	Claims int32 `json:"claims,omitempty"`
	// claimsBound is how many of them are bound.
	// +optional
	ClaimsBound int32 `json:"claimsBound,omitempty"`
	// capacity is the smallest bound volume's real capacity, which may
	// exceed the request (provisioners round up).
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// volumeMode is Filesystem or Block.
	// +optional
	VolumeMode string `json:"volumeMode,omitempty"`
	// accessMode of the claims.
	// +optional
	AccessMode string `json:"accessMode,omitempty"`
	// parameters of the class worth recording with results (an allowlist:
	// never secret references).
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`
	// mountOptions the class asks for.
	// +optional
	// +listType=atomic
	MountOptions []string `json:"mountOptions,omitempty"`
	// mounts are the distinct mounts the clients saw in /proc/mounts: what
	// was really negotiated (NFS version, nconnect, rsize/wsize).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	Mounts []ObservedMount `json:"mounts,omitempty"`
	// volumes describe the bound volumes (at most 8; see volumesOmitted).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Volumes []VolumeStatus `json:"volumes,omitempty"`
	// volumesOmitted counts bound volumes not listed in volumes.
	// +optional
	VolumesOmitted int32 `json:"volumesOmitted,omitempty"`
	// driver is the Trident driver (backend type), when the class is
	// Trident's.
	// +optional
	Driver string `json:"driver,omitempty"`
	// backend is the Trident backend serving the first volume, read from
	// its TridentBackend when Trident's CRDs are installed.
	// +optional
	Backend *BackendStatus `json:"backend,omitempty"`
	// entitlement is the throughput a Google Cloud NetApp Volumes service
	// level grants the volume(s).
	// +optional
	Entitlement *EntitlementStatus `json:"entitlement,omitempty"`
	// provisioning is how long each of the benchmark's own claims took
	// from created to bound: its bound PV's lastPhaseTransitionTime (else
	// the PV's creation) less the claim's creation, 0 at the least (a
	// pre-bound or static PV may predate its claim). Recorded once, when
	// every claim is bound, and kept on the run's plan ConfigMap, from
	// which a rebuilt status takes it. From the API's timestamps, so in
	// whole seconds. Absent before every claim is bound, on
	// storage.existingClaim (the claim is not the benchmark's), and when
	// a status rebuilt after the claims were deleted has no record of it.
	// +optional
	Provisioning *ControlPlaneTimingStatus `json:"provisioning,omitempty"`
	// attach is how long each client pod took from scheduled to ready to
	// start its containers (its volumes attached and mounted, its sandbox
	// made): its PodReadyToStartContainers condition's transition less
	// its PodScheduled condition's, 0 at the least. Recorded once, when
	// every client has a pod with both conditions True (a run that ends
	// first records it over the pods that had them), and kept on the
	// run's plan ConfigMap, from which a rebuilt status takes it. From the
	// API's timestamps, so in whole seconds. Absent before then, when no
	// pod had both conditions, and when a status rebuilt after the client
	// pods were gone has no record of it.
	// +optional
	Attach *ControlPlaneTimingStatus `json:"attach,omitempty"`
}

// ControlPlaneTimingStatus summarises control-plane times (one per claim
// or per pod) taken from the API's own timestamps, which have one-second
// resolution: every figure is a whole number of seconds.
type ControlPlaneTimingStatus struct {
	// p50 is the median by the nearest-rank rule: the ⌈count/2⌉-th
	// smallest time.
	P50 metav1.Duration `json:"p50"`
	// max is the longest time.
	Max metav1.Duration `json:"max"`
	// count is how many times were taken.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// ObservedMount is one distinct mount of the volume as clients saw it.
type ObservedMount struct {
	FSType  string `json:"fsType"`
	Options string `json:"options"`
	// clients that saw this mount.
	Clients int32 `json:"clients"`
}

// VolumeStatus is one bound volume.
type VolumeStatus struct {
	Claim            string `json:"claim"`
	PersistentVolume string `json:"persistentVolume"`
	// capacity is the volume's real size (Trident rounds small Google
	// Cloud NetApp Volumes requests up to 100 GiB).
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// +optional
	CSIDriver string `json:"csiDriver,omitempty"`
	// volumeHandle is a CSI volume's handle: its ID on the storage.
	// +optional
	VolumeHandle string `json:"volumeHandle,omitempty"`
	// path is a local or hostPath volume's path on its node.
	// +optional
	Path string `json:"path,omitempty"`
	// node is the node a volume is pinned to, when its affinity names one.
	// +optional
	Node string `json:"node,omitempty"`
	// backendUUID, internalName and protocol are Trident's CSI volume
	// attributes.
	// +optional
	BackendUUID string `json:"backendUUID,omitempty"`
	// +optional
	InternalName string `json:"internalName,omitempty"`
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// The TridentVolume's placement and policies, when readable.
	// +optional
	Pool string `json:"pool,omitempty"`
	// +optional
	QoSPolicy string `json:"qosPolicy,omitempty"`
	// +optional
	ServiceLevel string `json:"serviceLevel,omitempty"`
	// +optional
	SnapshotReserve string `json:"snapshotReserve,omitempty"`
	// +optional
	TieringPolicy string `json:"tieringPolicy,omitempty"`
	// +optional
	SpaceReserve string `json:"spaceReserve,omitempty"`
}

// BackendStatus is a Trident backend.
type BackendStatus struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// +optional
	Driver string `json:"driver,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	State string `json:"state,omitempty"`
	// protocol is what the backend serves its volumes with: iscsi, nvme or
	// fcp for a SAN driver (its sanType, Trident's default iscsi), nfs or
	// smb for a NAS driver (its nasType, default nfs).
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// svm is the ONTAP storage VM the backend's volumes live in.
	// +optional
	SVM string `json:"svm,omitempty"`
}

// EntitlementStatus is a service level's throughput ceiling.
type EntitlementStatus struct {
	ServiceLevel string `json:"serviceLevel"`
	// throughputBytesPerSecond is the ceiling of all benchmarked volumes
	// together (service level × real capacity); 0 for Flex.
	// +optional
	ThroughputBytesPerSecond int64 `json:"throughputBytesPerSecond,omitempty"`
	// poolShared: the limit belongs to a Flex pool shared with other volumes.
	// +optional
	PoolShared bool `json:"poolShared,omitempty"`
	// peakPercent is the peak achieved throughput as a percentage of the
	// ceiling.
	// +optional
	PeakPercent int32 `json:"peakPercent,omitempty"`
	// message explains the ceiling.
	// +optional
	Message string `json:"message,omitempty"`
	// saturationNote says when a step saturated near the ceiling.
	// +optional
	SaturationNote string `json:"saturationNote,omitempty"`
}

// ClientSpreadStatus is the spread of the clients' IOPS (reads and writes)
// in one step.
type ClientSpreadStatus struct {
	// minIOPS is the lowest client's IOPS.
	MinIOPS int64 `json:"minIOPS"`
	// maxIOPS is the highest client's IOPS.
	MaxIOPS int64 `json:"maxIOPS"`
	// cvPercent is the coefficient of variation of the clients' IOPS (the
	// population standard deviation over the mean), in percent, rounded:
	// 0 is an even share of the storage.
	CVPercent int32 `json:"cvPercent"`
}

// ClientCPUStatus is the clients' CPU in a step: the busiest client's fio
// and the most throttled client's container, and the clients past a bound
// (fio busy above 60 % of the CPU its jobs could use, or the container
// throttled in more than 1 % of its CFS periods).
type ClientCPUStatus struct {
	// busyPercent is the busiest client's fio CPU time (user and system)
	// over what its jobs could use in their run time, in percent, rounded
	// up: one CPU per job, at most the CPUs of the node, at most the
	// container's CPU limit.
	BusyPercent int32 `json:"busyPercent"`
	// throttledPercent is the most throttled container's share of CFS
	// periods in which it was throttled, in percent, rounded up; 0 without
	// a CPU limit.
	// +optional
	ThrottledPercent int32 `json:"throttledPercent,omitempty"`
	// boundClients are the indices of the clients past a bound (at most
	// 20), and boundCount how many were.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	BoundClients []int32 `json:"boundClients,omitempty"`
	// +optional
	BoundCount int32 `json:"boundCount,omitempty"`
}

// StepStatus is one finished step, aggregated over all clients.
type StepStatus struct {
	// index of the step, from 0.
	Index int32 `json:"index"`
	// repetition is which run of its load level the step is, 1 to
	// load.repeat; unset when the load does not repeat.
	// +optional
	Repetition int32 `json:"repetition,omitempty"`
	// offeredIOPS is the total offered rate, or 0 when the step did not
	// offer an IOPS rate.
	// +optional
	OfferedIOPS int64 `json:"offeredIOPS,omitempty"`
	// offeredBytesPerSecond is the total offered bandwidth, or 0.
	// +optional
	OfferedBytesPerSecond int64 `json:"offeredBytesPerSecond,omitempty"`
	// queueDepthPerClient is the outstanding I/Os per client of a
	// queue-depth step.
	// +optional
	QueueDepthPerClient int32 `json:"queueDepthPerClient,omitempty"`
	// percentOfMax is a curve step's percentage of the measured maximum.
	// +optional
	PercentOfMax int32 `json:"percentOfMax,omitempty"`
	// unthrottled marks a curve's first step (no rate limit).
	// +optional
	Unthrottled bool `json:"unthrottled,omitempty"`
	// clientBoundCheck marks the unthrottled step a curve runs again at
	// twice the outstanding I/O (load.curve.clientBoundCheck).
	// +optional
	ClientBoundCheck bool `json:"clientBoundCheck,omitempty"`
	// attempt is which run of its planned step this is when the load runs
	// unsteady steps again (load.extendUntilSteady), from 1; unset
	// otherwise.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// superseded marks a run that was not steady and was run again: the
	// step after it stands for the planned step, and this one is left out
	// of the curve, the summary, the SLOs and repeatability.
	// +optional
	Superseded bool `json:"superseded,omitempty"`
	// clients is the number of client results merged.
	Clients int32 `json:"clients"`
	// startTime is the instant every client was told to start.
	StartTime metav1.Time `json:"startTime"`
	// startSkew is the spread of the clients' actual start instants.
	StartSkew metav1.Duration `json:"startSkew"`
	// achievedIOPS is reads and writes together, summed over clients.
	AchievedIOPS int64 `json:"achievedIOPS"`
	// achievedBytesPerSecond is reads and writes together.
	AchievedBytesPerSecond int64 `json:"achievedBytesPerSecond"`
	// activeClients is how many clients ran a step of a scale-out sweep
	// (load.clients), the first ones; the others idled and are not in its
	// figures. Unset with any other load.
	// +optional
	ActiveClients int32 `json:"activeClients,omitempty"`
	// clientIOPS is how evenly the clients shared the step's I/O; unset
	// with one client.
	// +optional
	ClientIOPS *ClientSpreadStatus `json:"clientIOPS,omitempty"`
	// clientCPU is the clients' CPU in the step; unset when none measured
	// it.
	// +optional
	ClientCPU *ClientCPUStatus `json:"clientCPU,omitempty"`
	// latency is over all I/O of the step, reads and writes pooled.
	// +optional
	Latency *LatencyStatus `json:"latency,omitempty"`
	// read is the reads' throughput and latency; unset without reads.
	// +optional
	Read *OperationStatus `json:"read,omitempty"`
	// write is the writes' throughput and latency; unset without writes.
	// +optional
	Write *OperationStatus `json:"write,omitempty"`
	// sync is the fsync or fdatasync calls of a workload that makes them
	// (workload.sync): their rate (iops), count (ios) and latency (each
	// call's time, merged as I/O latency is); bytesPerSecond is 0. They
	// are not I/O: not in achievedIOPS or latency. Unset without them.
	// +optional
	Sync *OperationStatus `json:"sync,omitempty"`
	// saturated: a throttled step achieved less than the saturation
	// percentage of its offered load.
	// +optional
	Saturated bool `json:"saturated,omitempty"`
	// queueFull marks a saturated step whose clients kept nearly all the
	// I/O they may have outstanding in flight (by Little's law, achieved
	// IOPS × mean latency ≥ 90 % of ioDepth × jobs × clients): the rate was
	// bound by the clients' queue depth, so more outstanding I/O might have
	// sustained it.
	// +optional
	QueueFull bool `json:"queueFull,omitempty"`
	// knee marks the knee of the ops–latency curve.
	// +optional
	Knee bool `json:"knee,omitempty"`
	// interrupted: a client was stopped during the step.
	// +optional
	Interrupted bool `json:"interrupted,omitempty"`
	// entitlementPercent is the achieved throughput as a percentage of the
	// volumes' service-level entitlement (Google Cloud NetApp Volumes).
	// +optional
	EntitlementPercent int32 `json:"entitlementPercent,omitempty"`
	// closedLoop marks a latency measured closed-loop: fio times an I/O
	// from when it issued it, not from when it was due, so the latency of a
	// step that offered no rate (queue depth, a curve's unthrottled step) or
	// did not sustain the rate it offered (saturated) leaves out the time
	// I/Os waited to be issued, and is not an open-loop figure.
	// +optional
	ClosedLoop bool `json:"closedLoop,omitempty"`
	// steadyState is the steady-state verdict on the step's IOPS second by
	// second (analysis.steadyState); unset when its timeline was too short
	// to judge.
	// +optional
	SteadyState *SteadyStateStatus `json:"steadyState,omitempty"`
	// longestStall is the longest time in which no client completed an
	// I/O, as fio's one-second ticks show it; unset when there was none.
	// +optional
	LongestStall *StallStatus `json:"longestStall,omitempty"`
	// backend is what the storage itself reported over the step's
	// measured window, beside the clients' figures; unset until the run
	// ended and the figures were read (condition BackendMetrics).
	// +optional
	Backend *StepBackendStatus `json:"backend,omitempty"`
	// configMap names the step's ConfigMap, its record: the order it ran
	// under and its exact merge over all clients, fio's latency histograms
	// included (kept out of status to keep it small). Status is rebuilt
	// from it.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`

	// verification is the read-back after the step, in a run that
	// verifies (spec.verify).
	// +optional
	Verification *VerificationStatus `json:"verification,omitempty"`
	// errors fio reported (at most 5).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	Errors []string `json:"errors,omitempty"`
}

// StepBackendStatus is what the storage reported over one step: NetApp
// Harvest's volume figures, the means of the samples taken wholly inside
// the step's measured window, summed over the benchmarked volumes.
type StepBackendStatus struct {
	// resolution is the source's: each sample is the rate over one
	// interval this long.
	Resolution metav1.Duration `json:"resolution"`
	// samples is the fewest samples a volume had in the window.
	// +optional
	Samples int32 `json:"samples,omitempty"`
	// tooShort marks a step whose measured window was shorter than twice
	// the resolution: no sample lies wholly inside it, so it has no
	// figures.
	// +optional
	TooShort bool `json:"tooShort,omitempty"`
	// iops, readIOPS and writeIOPS are the operations the storage served
	// per second.
	// +optional
	IOPS int64 `json:"iops,omitempty"`
	// +optional
	ReadIOPS int64 `json:"readIOPS,omitempty"`
	// +optional
	WriteIOPS int64 `json:"writeIOPS,omitempty"`
	// bytesPerSecond is reads and writes together.
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// latency, readLatency and writeLatency are the storage's mean time
	// per operation, each volume's weighted by its operations.
	// +optional
	Latency *metav1.Duration `json:"latency,omitempty"`
	// +optional
	ReadLatency *metav1.Duration `json:"readLatency,omitempty"`
	// +optional
	WriteLatency *metav1.Duration `json:"writeLatency,omitempty"`
	// latencyGap is the clients' mean latency minus the storage's: the
	// time an I/O spent outside the storage (network, the client's
	// kernel and queues). Near zero, the latency is the storage's.
	// +optional
	LatencyGap *metav1.Duration `json:"latencyGap,omitempty"`
}

// RepeatabilityStatus is how much the runs of one load level varied.
type RepeatabilityStatus struct {
	// level is the planned step the runs repeat, from 0.
	Level int32 `json:"level"`
	// offeredIOPS, offeredBytesPerSecond, queueDepthPerClient,
	// percentOfMax and unthrottled are the level's load, as its steps show
	// it.
	// +optional
	OfferedIOPS int64 `json:"offeredIOPS,omitempty"`
	// +optional
	OfferedBytesPerSecond int64 `json:"offeredBytesPerSecond,omitempty"`
	// +optional
	QueueDepthPerClient int32 `json:"queueDepthPerClient,omitempty"`
	// +optional
	PercentOfMax int32 `json:"percentOfMax,omitempty"`
	// +optional
	Unthrottled bool `json:"unthrottled,omitempty"`
	// runs is the number of finished runs the figures are over (a failed
	// run is not counted).
	Runs int32 `json:"runs"`
	// iops is the spread of the runs' achieved IOPS (reads and writes).
	IOPS IOPSVariation `json:"iops"`
	// p99 is the spread of the runs' p99 latency of the operation
	// analysis.targetLatency judges; unset when a run had no such I/O.
	// +optional
	P99 *LatencyVariation `json:"p99,omitempty"`
	// stable: neither coefficient of variation is above
	// analysis.maxVariationPercent (judged on the exact figures); unset
	// without that limit.
	// +optional
	Stable *bool `json:"stable,omitempty"`
}

// IOPSVariation is the spread of an IOPS figure over runs, rounded to
// whole IOPS and percent.
type IOPSVariation struct {
	// mean of the runs.
	Mean int64 `json:"mean"`
	// cvPercent is the coefficient of variation: the sample standard
	// deviation as a percentage of the mean (rounded).
	CVPercent int32 `json:"cvPercent"`
	// ci95Low and ci95High bound the 95 % confidence interval of the mean
	// (Student's t), the low end at 0 at the least.
	CI95Low  int64 `json:"ci95Low"`
	CI95High int64 `json:"ci95High"`
}

// LatencyVariation is the spread of a latency figure over runs, exact to
// the nanosecond, its CV rounded to a whole percent.
type LatencyVariation struct {
	// mean of the runs.
	Mean metav1.Duration `json:"mean"`
	// cvPercent is the coefficient of variation: the sample standard
	// deviation as a percentage of the mean (rounded).
	CVPercent int32 `json:"cvPercent"`
	// ci95Low and ci95High bound the 95 % confidence interval of the mean
	// (Student's t), the low end at 0 at the least.
	CI95Low  metav1.Duration `json:"ci95Low"`
	CI95High metav1.Duration `json:"ci95High"`
}

// OperationStatus is one direction of a step.
type OperationStatus struct {
	// iops summed over clients.
	IOPS int64 `json:"iops"`
	// bytesPerSecond summed over clients.
	BytesPerSecond int64 `json:"bytesPerSecond"`
	// ios is the number of I/Os measured.
	IOs int64 `json:"ios"`
	// latency of the merged distribution (completion latency).
	Latency LatencyStatus `json:"latency"`
}

// SteadyStateStatus is a step's steady-state verdict: the step's timeline is
// cut into rounds, and it is steady when the rounds' mean IOPS range and the
// excursion of their least-squares line are within the bounds.
type SteadyStateStatus struct {
	// steady is true when both excursions are within their bounds.
	Steady bool `json:"steady"`
	// rangePercent is max − min of the rounds' IOPS, as a percentage of
	// their mean (rounded).
	RangePercent int32 `json:"rangePercent"`
	// slopePercent is how far the rounds' least-squares line moves from the
	// first round to the last, as a percentage of their mean (rounded).
	SlopePercent int32 `json:"slopePercent"`
}

// StallStatus is the longest time no client completed an I/O in a step, as
// fio's one-second status ticks show it: to within about a second, and a
// stall shorter than a tick is not seen.
type StallStatus struct {
	// start is when the stall began, after the step's ramp.
	Start metav1.Duration `json:"start"`
	// duration is how long it lasted.
	Duration metav1.Duration `json:"duration"`
	// p999Around is the highest p99.9 latency of the seconds within a
	// second of the stall, where the I/Os that waited through it complete.
	// +optional
	P999Around *metav1.Duration `json:"p999Around,omitempty"`
}

// LatencyStatus are latency figures of a merged distribution; percentiles
// come from the summed fio histogram bins with fio's own rule.
type LatencyStatus struct {
	Mean metav1.Duration `json:"mean"`
	P50  metav1.Duration `json:"p50"`
	P90  metav1.Duration `json:"p90"`
	P99  metav1.Duration `json:"p99"`
	P999 metav1.Duration `json:"p99.9"`
	Max  metav1.Duration `json:"max"`
	// overflowIOs counts the I/Os that took about 17 s or longer: fio
	// files them all in its last histogram bin, so no percentile can tell
	// them apart and max is their only exact figure. Unset when none did.
	// +optional
	OverflowIOs int64 `json:"overflowIOs,omitempty"`
}

// SummaryStatus is the run's result.
type SummaryStatus struct {
	// peakIOPS is the highest achieved IOPS of a successful step.
	// +optional
	PeakIOPS int64 `json:"peakIOPS,omitempty"`
	// peakIOPSStep is the step that achieved it.
	// +optional
	PeakIOPSStep *int32 `json:"peakIOPSStep,omitempty"`
	// peakBytesPerSecond is the highest achieved bandwidth.
	// +optional
	PeakBytesPerSecond int64 `json:"peakBytesPerSecond,omitempty"`
	// latencyAtPeak is the target latency figure at the peak-IOPS step.
	// +optional
	LatencyAtPeak *metav1.Duration `json:"latencyAtPeak,omitempty"`
	// p99LatencyAtPeak is the worse of read and write p99 at the peak.
	// +optional
	P99LatencyAtPeak *metav1.Duration `json:"p99LatencyAtPeak,omitempty"`
	// latencyTarget is the target "performance at target" is judged on.
	// +optional
	LatencyTarget *metav1.Duration `json:"latencyTarget,omitempty"`
	// atTarget is the highest achieved load whose latency is at or below
	// the target; unset when no step is.
	// +optional
	AtTarget *AtTargetStatus `json:"atTarget,omitempty"`
	// kneeStep is the step at the knee of the curve; unset when none.
	// +optional
	KneeStep *int32 `json:"kneeStep,omitempty"`
}

// AtTargetStatus is "performance @ latency target".
type AtTargetStatus struct {
	Step           int32           `json:"step"`
	IOPS           int64           `json:"iops"`
	BytesPerSecond int64           `json:"bytesPerSecond"`
	Latency        metav1.Duration `json:"latency"`
}

// Verdict of an objective.
// +kubebuilder:validation:Enum=Met;NotMet;NotMeasurable
type Verdict string

// SLOStatus is one objective's verdict.
type SLOStatus struct {
	// name of the objective.
	Name string `json:"name"`
	// verdict is Met, NotMet or NotMeasurable.
	Verdict Verdict `json:"verdict"`
	// message explains the verdict with the measured figures.
	// +optional
	Message string `json:"message,omitempty"`
}

// ClockStatus summarises the clients' clock offsets, measured by each runner
// against the API server's clock (positive: the client is ahead). Step
// start instants are in the API server's clock; runners correct for their
// offset, so what remains is the uncertainty of the measurement.
type ClockStatus struct {
	// maxOffset is the largest absolute offset of a client's clock.
	// +optional
	MaxOffset metav1.Duration `json:"maxOffset,omitempty"`

	// spread is the largest offset minus the smallest: how far apart the
	// clients would start without correction.
	// +optional
	Spread metav1.Duration `json:"spread,omitempty"`

	// uncertainty is the largest uncertainty of a measured offset.
	// +optional
	Uncertainty metav1.Duration `json:"uncertainty,omitempty"`

	// unmeasured counts clients that could not measure their offset.
	// +optional
	Unmeasured int32 `json:"unmeasured,omitempty"`
}

// RegressionStatus is a completed run compared with its baseline.
type RegressionStatus struct {
	// baseline is what the run was compared with: StorageBenchmark/<name>,
	// several of them, or ConfigMap/<name>.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Baseline string `json:"baseline,omitempty"`
	// baselineRuns is how many baseline runs the comparison had.
	// +optional
	BaselineRuns int32 `json:"baselineRuns,omitempty"`
	// tests are the comparisons made, IOPS and p99 of each step.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=200
	Tests []RegressionTestStatus `json:"tests,omitempty"`
}

// RegressionVerdict is one test's outcome.
// +kubebuilder:validation:Enum=Regressed;NotRegressed;NotJudged
type RegressionVerdict string

// Regression verdicts.
const (
	RegressionRegressed    RegressionVerdict = "Regressed"
	RegressionNotRegressed RegressionVerdict = "NotRegressed"
	RegressionNotJudged    RegressionVerdict = "NotJudged"
)

// RegressionMetrics are the metrics a step is compared in.
var RegressionMetrics = []string{"iops", "p99"}

// RegressedMetrics are the metrics a run regressed in, in
// RegressionMetrics' order (none for a nil status).
func (r *RegressionStatus) RegressedMetrics() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, m := range RegressionMetrics {
		if slices.ContainsFunc(r.Tests, func(t RegressionTestStatus) bool { return t.Metric == m && t.Verdict == RegressionRegressed }) {
			out = append(out, m)
		}
	}
	return out
}

// The Regressed condition's verdict reasons (the others say why a run was
// not compared).
const (
	RegressionReasonRegressed    = "Regressed"
	RegressionReasonNotRegressed = "NotRegressed"
)

// RegressionTestStatus is one metric of one step compared.
type RegressionTestStatus struct {
	// step is this run's step (status.steps[].index).
	Step int32 `json:"step"`
	// metric is iops (per-second IOPS) or p99 (per-second p99 latency).
	// +kubebuilder:validation:Enum=iops;p99
	Metric string `json:"metric"`
	// verdict of the test.
	Verdict RegressionVerdict `json:"verdict"`
	// baselineMedian and currentMedian are the medians of the per-second
	// samples: IOPS, or nanoseconds of p99 latency.
	// +optional
	BaselineMedian int64 `json:"baselineMedian,omitempty"`
	// +optional
	CurrentMedian int64 `json:"currentMedian,omitempty"`
	// changePercent is the change of the median, signed, as a decimal.
	// +optional
	ChangePercent string `json:"changePercent,omitempty"`
	// pValue is the test's Holm-adjusted one-sided p-value.
	// +optional
	PValue string `json:"pValue,omitempty"`
	// message says what was compared, or why the test was not judged.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
}
