package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageBenchmark provisions volumes on a StorageClass, fans out fio client
// pods, steps the offered load in lockstep across clients and records the
// exact, aggregated ops–latency curve in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sbench,categories=storagebench
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.storage.storageClassName`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.spec.workload.profile`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Peak IOPS",type=integer,JSONPath=`.status.summary.peakIOPS`
// +kubebuilder:printcolumn:name="P99",type=string,JSONPath=`.status.summary.p99LatencyAtPeak`
// +kubebuilder:printcolumn:name="SLO",type=string,JSONPath=`.status.conditions[?(@.type=="SLOMet")].reason`
// +kubebuilder:printcolumn:name="Regression",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 40",message="metadata.name must be at most 40 characters: child objects (volumes, jobs, pods) are named after it"
type StorageBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the benchmark to run. It cannot change once the run started.
	// (The rule is on this field, not on the type: a schedule's template
	// holds the same type and may change.)
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec cannot change once the benchmark exists: delete it and create a new one"
	Spec StorageBenchmarkSpec `json:"spec"`

	// status is what the operator observed and measured.
	// +optional
	Status StorageBenchmarkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StorageBenchmarkList is a list of StorageBenchmarks.
type StorageBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageBenchmark `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StorageBenchmark{}, &StorageBenchmarkList{})
}

// StorageBenchmarkSpec says what to measure and how.
//
// +kubebuilder:validation:XValidation:rule="self.storage.sharing != 'Shared' || self.clients.count == 1 || !has(self.storage.accessMode) || self.storage.accessMode == 'ReadWriteMany'",message="storage.sharing Shared with more than one client needs storage.accessMode ReadWriteMany (or leave accessMode unset)",fieldPath=".storage.accessMode"
// +kubebuilder:validation:XValidation:rule="!has(self.storage.existingClaim) || self.storage.sharing == 'Shared' || self.clients.count == 1",message="storage.existingClaim is one volume: use storage.sharing Shared, or a single client",fieldPath=".storage.existingClaim"
// +kubebuilder:validation:XValidation:rule="!has(self.load.queueDepth) || !has(self.load.stop) || !has(self.load.stop.saturationPercent)",message="load.stop.saturationPercent needs an offered rate: it cannot be used with load.queueDepth",fieldPath=".load.stop.saturationPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.load.clients) || self.load.clients.steps.all(n, n <= self.clients.count)",message="load.clients.steps: every step must be at most clients.count (the client pods the benchmark creates)",fieldPath=".load.clients.steps"
// +kubebuilder:validation:XValidation:rule="!has(self.load.clients) || !has(self.load.stop) || !has(self.load.stop.saturationPercent) || has(self.load.clients.perClientIOPS)",message="load.stop.saturationPercent needs an offered rate: set load.clients.perClientIOPS",fieldPath=".load.stop.saturationPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.load.queueDepth) || !has(self.load.queueDepth.steps) || self.load.queueDepth.steps.all(d, d >= self.clients.jobsPerClient)",message="load.queueDepth.steps: every depth must be at least clients.jobsPerClient (each fio job needs at least one outstanding I/O)",fieldPath=".load.queueDepth.steps"
// +kubebuilder:validation:XValidation:rule="!has(self.load.queueDepth) || !has(self.load.queueDepth.start) || self.load.queueDepth.start >= self.clients.jobsPerClient",message="load.queueDepth.start must be at least clients.jobsPerClient (each fio job needs at least one outstanding I/O)",fieldPath=".load.queueDepth.start"
// +kubebuilder:validation:XValidation:rule="has(self.storage.existingClaim) || !isQuantity(string(self.storage.size)) || quantity(string(self.storage.size)).compareTo(quantity('1Mi')) < 0 || (has(self.workload.workingSetPerClient) && !isQuantity(string(self.workload.workingSetPerClient))) || (self.storage.sharing == 'Shared' ? (has(self.workload.workingSetPerClient) ? quantity(string(self.workload.workingSetPerClient)) : quantity('1Gi')).asApproximateFloat() * double(self.clients.count) <= quantity(string(self.storage.size)).asApproximateFloat() : (has(self.workload.workingSetPerClient) ? quantity(string(self.workload.workingSetPerClient)) : quantity('1Gi')).compareTo(quantity(string(self.storage.size))) <= 0)",message="workload.workingSetPerClient does not fit in storage.size: with PerClient volumes it must be at most storage.size, with a Shared volume (Filesystem or Block) clients.count × workingSetPerClient must be at most storage.size; unset, it is the profile's, 1Gi",fieldPath=".workload.workingSetPerClient"
// +kubebuilder:validation:XValidation:rule="!has(self.load.extendUntilSteady) || duration(self.load.stepDuration).getSeconds() >= (has(self.analysis) && has(self.analysis.steadyState) && has(self.analysis.steadyState.rounds) ? self.analysis.steadyState.rounds : 5)",message="load.extendUntilSteady needs a load.stepDuration of at least analysis.steadyState.rounds seconds, one timeline second per round, or no step could be judged steady",fieldPath=".load.extendUntilSteady"
// +kubebuilder:validation:XValidation:rule="!has(self.load.queueDepth) || (has(self.workload.ioEngine) ? !(self.workload.ioEngine in ['psync', 'sync']) : !(has(self.workload.profile) && self.workload.profile in ['db-log', 'etcd']))",message="load.queueDepth needs an asynchronous workload.ioEngine (libaio, io_uring or posixaio; the db-log and etcd profiles' is sync): synchronous engines keep one I/O in flight per job, so raising the queue depth would change nothing",fieldPath=".workload.ioEngine"
// +kubebuilder:validation:XValidation:rule="!has(self.load.curve) || !has(self.load.curve.percents) || size(self.load.curve.percents) <= ((has(self.load.curve.clientBoundCheck) && !self.load.curve.clientBoundCheck) || (has(self.workload.ioEngine) ? self.workload.ioEngine in ['psync', 'sync'] : (has(self.workload.profile) && self.workload.profile in ['db-log', 'etcd'])) ? 99 : 98)",message="load.curve.percents may list at most 98 percentages with the client-bound check (99 with load.curve.clientBoundCheck false, or with a synchronous workload.ioEngine, psync or sync, which skips the check): with the unthrottled step and the check, a curve has at most 100 steps",fieldPath=".load.curve.percents"
// +kubebuilder:validation:XValidation:rule="!has(self.load.repeat) || self.load.repeat <= 1 || self.load.repeat * (has(self.load.rate) ? (has(self.load.rate.steps) ? size(self.load.rate.steps) : (has(self.load.rate.start) && has(self.load.rate.max) && has(self.load.rate.increment) && self.load.rate.increment > 0 && self.load.rate.max >= self.load.rate.start ? (self.load.rate.max - self.load.rate.start) / self.load.rate.increment + 1 : 1)) : has(self.load.queueDepth) ? (has(self.load.queueDepth.steps) ? size(self.load.queueDepth.steps) : (has(self.load.queueDepth.start) && has(self.load.queueDepth.max) ? [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096].filter(f, self.load.queueDepth.start * f <= self.load.queueDepth.max).size() : 1)) : has(self.load.clients) ? size(self.load.clients.steps) : has(self.load.curve) ? (has(self.load.curve.percents) ? size(self.load.curve.percents) : 10) + ((has(self.load.curve.clientBoundCheck) && !self.load.curve.clientBoundCheck) || (has(self.workload.ioEngine) ? self.workload.ioEngine in ['psync', 'sync'] : (has(self.workload.profile) && self.workload.profile in ['db-log', 'etcd'])) ? 1 : 2) : 1) <= 100",message="load.repeat times the number of steps (a curve's unthrottled step and client-bound check included) must be at most 100: every run is a step; lower load.repeat or plan fewer steps",fieldPath=".load.repeat"
// +kubebuilder:validation:XValidation:rule="!has(self.load.extendUntilSteady) || (has(self.load.repeat) ? self.load.repeat : 1) * self.load.extendUntilSteady.maxRuns * (has(self.load.rate) ? (has(self.load.rate.steps) ? size(self.load.rate.steps) : (has(self.load.rate.start) && has(self.load.rate.max) && has(self.load.rate.increment) && self.load.rate.increment > 0 && self.load.rate.max >= self.load.rate.start ? (self.load.rate.max - self.load.rate.start) / self.load.rate.increment + 1 : 1)) : has(self.load.queueDepth) ? (has(self.load.queueDepth.steps) ? size(self.load.queueDepth.steps) : (has(self.load.queueDepth.start) && has(self.load.queueDepth.max) ? [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096].filter(f, self.load.queueDepth.start * f <= self.load.queueDepth.max).size() : 1)) : has(self.load.clients) ? size(self.load.clients.steps) : has(self.load.curve) ? (has(self.load.curve.percents) ? size(self.load.curve.percents) : 10) + ((has(self.load.curve.clientBoundCheck) && !self.load.curve.clientBoundCheck) || (has(self.workload.ioEngine) ? self.workload.ioEngine in ['psync', 'sync'] : (has(self.workload.profile) && self.workload.profile in ['db-log', 'etcd'])) ? 1 : 2) : 1) <= 100",message="load.extendUntilSteady.maxRuns times load.repeat times the number of steps (a curve's unthrottled step and client-bound check included) must be at most 100: every run is a step; lower maxRuns or plan fewer steps",fieldPath=".load.extendUntilSteady.maxRuns"
// +kubebuilder:validation:XValidation:rule="!has(self.verify) || (has(self.workload.direct) ? self.workload.direct : !(has(self.workload.profile) && self.workload.profile in ['db-log', 'etcd']))",message="verify needs workload.direct true (the db-log and etcd profiles write through the page cache): a read-back through the page cache would check the client's memory, not the storage",fieldPath=".workload.direct"
// +kubebuilder:validation:XValidation:rule="!has(self.verify) || !has(self.workload.compressPercent) || self.workload.compressPercent == 0",message="verify needs workload.compressPercent 0: verified writes carry a pattern that describes their block instead of fio's buffers",fieldPath=".workload.compressPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.verify) || !has(self.workload.dedupePercent) || self.workload.dedupePercent == 0",message="verify needs workload.dedupePercent 0: verified writes carry a pattern that describes their block instead of fio's buffers",fieldPath=".workload.dedupePercent"
type StorageBenchmarkSpec struct {
	// storage is the volume (or volumes) under test.
	// +required
	Storage StorageSpec `json:"storage"`

	// clients are the fio client pods.
	// +optional
	// +kubebuilder:default={}
	Clients ClientsSpec `json:"clients,omitempty"`

	// workload is the I/O pattern: a named profile, explicit fields, or a
	// profile with some fields overridden.
	// +optional
	// +kubebuilder:default={}
	Workload WorkloadSpec `json:"workload,omitempty"`

	// precondition fills the working set before measuring.
	// +optional
	// +kubebuilder:default={}
	Precondition PreconditionSpec `json:"precondition,omitempty"`

	// load is how the offered load steps up.
	// +required
	Load LoadSpec `json:"load"`

	// analysis tunes how the curve is read.
	// +optional
	// +kubebuilder:default={}
	Analysis AnalysisSpec `json:"analysis,omitempty"`

	// slo lists objectives evaluated into the SLOMet condition.
	// +optional
	SLO *SLOSpec `json:"slo,omitempty"`

	// regression compares the run, step by step, with a baseline run and
	// sets the Regressed condition.
	// +optional
	Regression *RegressionSpec `json:"regression,omitempty"`

	// cleanup says what happens to volumes and to the benchmark afterwards.
	// +optional
	// +kubebuilder:default={}
	Cleanup CleanupSpec `json:"cleanup,omitempty"`

	// verify makes every write verifiable and reads back, after each
	// writing step, every block the run wrote: a bad block fails the run
	// (DataIntegrity, DataCorrupted). Its I/O is never part of the
	// figures. It needs a workload that writes, with direct I/O and
	// incompressible data (compressPercent 0).
	// +optional
	Verify *VerifySpec `json:"verify,omitempty"`
}

// VerifyPass is when written blocks are read back.
// +kubebuilder:validation:Enum=AfterEachWritingStep
type VerifyPass string

// VerifyAfterEachWritingStep reads back, after each writing step, every
// block the run has written, each against what was written there last.
const VerifyAfterEachWritingStep VerifyPass = "AfterEachWritingStep"

// VerifySpec is how a run verifies what it writes.
type VerifySpec struct {
	// pass is when written blocks are read back: AfterEachWritingStep
	// (the default, and the only pass today).
	// +optional
	// +kubebuilder:default=AfterEachWritingStep
	Pass VerifyPass `json:"pass,omitempty"`
}

// Sharing says how clients map to volumes.
// +kubebuilder:validation:Enum=Shared;PerClient
type Sharing string

const (
	// SharingShared mounts one volume in every client, as NAS studies test
	// one volume from many clients; it needs ReadWriteMany for >1 client.
	SharingShared Sharing = "Shared"
	// SharingPerClient gives each client its own volume, as SAN (iSCSI LUN)
	// studies do.
	SharingPerClient Sharing = "PerClient"
)

// StorageSpec is the volume under test.
type StorageSpec struct {
	// storageClassName is the StorageClass to provision volumes from; unset
	// means the cluster's default class.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`

	// size is each volume's requested capacity.
	// +optional
	// +kubebuilder:default="10Gi"
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Mi')) >= 0 && quantity(string(self)).compareTo(quantity('1Pi')) <= 0",message="storage.size must be a quantity between 1Mi and 1Pi, for example 10Gi"
	Size resource.Quantity `json:"size,omitzero"`

	// accessMode of the claims; unset means ReadWriteMany for a Shared volume
	// with several clients and ReadWriteOnce otherwise.
	// +optional
	// +kubebuilder:validation:Enum=ReadWriteOnce;ReadWriteMany;ReadWriteOncePod
	AccessMode corev1.PersistentVolumeAccessMode `json:"accessMode,omitempty"`

	// volumeMode is Filesystem (fio writes files) or Block (fio drives the
	// raw device).
	// +optional
	// +kubebuilder:default=Filesystem
	// +kubebuilder:validation:Enum=Filesystem;Block
	VolumeMode corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`

	// sharing is Shared (one volume mounted by every client) or PerClient
	// (one volume per client).
	// +optional
	// +kubebuilder:default=PerClient
	Sharing Sharing `json:"sharing,omitempty"`

	// existingClaim benchmarks an existing PersistentVolumeClaim in the
	// benchmark's namespace instead of provisioning one; it is never deleted.
	// The claim's owner must consent with the annotation
	// storagebench.io/allow-benchmark: "files" for a Filesystem benchmark
	// (files only in a directory of the benchmark's own, removed when the
	// run ends; nothing on the volume is re-owned) or "block-overwrite" for
	// a Block benchmark (the device is overwritten). Without it the run
	// fails with ClaimNotConsented before any pod exists.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ExistingClaim *string `json:"existingClaim,omitempty"`
}

// ClientsSpec are the fio client pods.
type ClientsSpec struct {
	// count is the number of client pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Count int32 `json:"count,omitempty"`

	// jobsPerClient is fio's numjobs in each client pod.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	JobsPerClient int32 `json:"jobsPerClient,omitempty"`

	// nodeSelector places the client pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the client pods.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// spreadAcrossNodes asks the scheduler to put client pods on different
	// nodes where it can (a soft topology spread on the node's hostname).
	// +optional
	SpreadAcrossNodes bool `json:"spreadAcrossNodes,omitempty"`

	// resources of the runner container; unset means a small request and no
	// limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// image overrides the runner image (it must contain the runner and fio).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`
}

// WorkloadSpec is the I/O pattern. Fields set here override the profile's.
//
// +kubebuilder:validation:XValidation:rule="(has(self.ioEngine) ? !(self.ioEngine in ['psync', 'sync']) : !(has(self.profile) && self.profile in ['db-log', 'etcd'])) || (has(self.ioDepth) ? self.ioDepth == 1 : (has(self.profile) && self.profile in ['db-log', 'etcd']))",message="workload.ioDepth must be 1 with a synchronous ioEngine (psync, sync; the db-log and etcd profiles' engine is sync, their ioDepth 1, every other profile's 16): fio's synchronous engines issue one I/O at a time per job and would silently ignore a deeper ioDepth",fieldPath=".ioDepth"
// +kubebuilder:validation:XValidation:rule="!has(self.syncEvery) || (has(self.sync) ? self.sync != 'dsync' : (has(self.profile) && self.profile in ['db-log', 'etcd']))",message="workload.syncEvery is set only with sync fsync or fdatasync (the db-log and etcd profiles' sync is fdatasync): with dsync every write is durable on its own, and without sync no call is made",fieldPath=".syncEvery"
// +kubebuilder:validation:XValidation:rule="(has(self.direct) ? self.direct : !(has(self.profile) && self.profile in ['db-log', 'etcd'])) || (has(self.ioEngine) ? self.ioEngine != 'libaio' : (has(self.profile) && self.profile in ['db-log', 'etcd']))",message="workload.direct false needs an ioEngine other than libaio (every profile's engine but db-log's and etcd's, which write through the page cache with sync): without O_DIRECT Linux completes libaio submissions synchronously, so the ioDepth would silently be 1",fieldPath=".direct"
type WorkloadSpec struct {
	// profile is a named workload from the published studies (see
	// docs/api.md); unset means 4 KiB random reads.
	// +optional
	// +kubebuilder:validation:Enum=analytics;db-log;etcd;mix-256k-0;mix-256k-100;mix-256k-25;mix-256k-50;mix-256k-75;mix-4k-0;mix-4k-100;mix-4k-25;mix-4k-50;mix-4k-75;mix-64k-0;mix-64k-100;mix-64k-25;mix-64k-50;mix-64k-75;mix-8k-0;mix-8k-100;mix-8k-25;mix-8k-50;mix-8k-75;mixed;mongodb;mongodb-update;oltp;oltp-70-30;oltp-90-10;rand-read;rand-write;seq-read;seq-write;streaming-read;streaming-write
	Profile string `json:"profile,omitempty"`

	// blockSize is the I/O size: a power of two from 512 to 16Mi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isInteger() && quantity(string(self)).asInteger() in [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216]",message="workload.blockSize must be a power of two between 512 and 16Mi, for example 4Ki, 8Ki or 64Ki"
	BlockSize *resource.Quantity `json:"blockSize,omitempty"`

	// readPercent is the share of reads among all I/Os, 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ReadPercent *int32 `json:"readPercent,omitempty"`

	// pattern is random or sequential.
	// +optional
	// +kubebuilder:validation:Enum=random;sequential
	Pattern string `json:"pattern,omitempty"`

	// ioDepth is fio's iodepth per job (outstanding I/Os), 1 to 1024.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	IODepth *int32 `json:"ioDepth,omitempty"`

	// ioEngine is fio's ioengine.
	// +optional
	// +kubebuilder:validation:Enum=libaio;io_uring;psync;sync;posixaio
	IOEngine string `json:"ioEngine,omitempty"`

	// direct bypasses the client's page cache (O_DIRECT).
	// +optional
	Direct *bool `json:"direct,omitempty"`

	// workingSetPerClient is how much data each client reads and writes;
	// size it well beyond any cache to measure the backend.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Mi')) >= 0 && quantity(string(self)).compareTo(quantity('64Ti')) <= 0 && double(int(quantity(string(self)).asApproximateFloat())) == quantity(string(self)).asApproximateFloat()",message="workload.workingSetPerClient must be a whole number of bytes between 1Mi and 64Ti, for example 10Gi"
	WorkingSetPerClient *resource.Quantity `json:"workingSetPerClient,omitempty"`

	// compressPercent makes fio's buffers this compressible, 0 to 99; 0
	// (incompressible) keeps inline compression from flattering results.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=99
	CompressPercent *int32 `json:"compressPercent,omitempty"`

	// dedupePercent makes this share of fio's written buffers repeat an
	// earlier one, 0 to 100; 0 (no repeats) keeps inline deduplication
	// from flattering results.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	DedupePercent *int32 `json:"dedupePercent,omitempty"`

	// sync makes writes durable: fsync or fdatasync after every syncEvery
	// writes (their latency is reported as steps[].sync), or dsync (files
	// opened O_DSYNC: each write returns once durable). Unset: none, as in
	// every profile but db-log and etcd (fdatasync after each write).
	// +optional
	// +kubebuilder:validation:Enum=fsync;fdatasync;dsync
	Sync string `json:"sync,omitempty"`

	// syncEvery is how many writes each fsync or fdatasync follows, 1 (the
	// default with sync) to 1048576.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	SyncEvery *int32 `json:"syncEvery,omitempty"`
}

// PreconditionSpec fills the working set before measuring: thin volumes
// return zeros for never-written blocks, so reads would measure nothing.
type PreconditionSpec struct {
	// fill writes every client's working set once before the first step.
	// +optional
	// +kubebuilder:default=true
	Fill *bool `json:"fill,omitempty"`
}

// RateUnit is the unit of an offered rate.
// +kubebuilder:validation:Enum=IOPS;MiBps
type RateUnit string

// Arrivals is how a rated job spaces its I/Os in time.
// +kubebuilder:validation:Enum=Uniform;Poisson
type Arrivals string

const (
	// ArrivalsUniform issues I/Os at even intervals (fio's linear
	// rate_process).
	ArrivalsUniform Arrivals = "Uniform"
	// ArrivalsPoisson issues I/Os with exponentially distributed gaps of the
	// same mean (fio's poisson rate_process), as independent users would.
	ArrivalsPoisson Arrivals = "Poisson"
)

// LoadSpec is how the offered load steps. Exactly one of rate, queueDepth,
// curve or clients is set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.rate) ? 1 : 0) + (has(self.queueDepth) ? 1 : 0) + (has(self.curve) ? 1 : 0) + (has(self.clients) ? 1 : 0) == 1",message="load must set exactly one of rate, queueDepth, curve or clients"
// +kubebuilder:validation:XValidation:rule="!has(self.queueDepth) || !has(self.arrivals) || self.arrivals == 'Uniform'",message="load.arrivals Poisson needs an offered rate: use load.rate or load.curve, not load.queueDepth",fieldPath=".arrivals"
// +kubebuilder:validation:XValidation:rule="!has(self.clients) || has(self.clients.perClientIOPS) || !has(self.arrivals) || self.arrivals == 'Uniform'",message="load.arrivals Poisson needs an offered rate: set load.clients.perClientIOPS",fieldPath=".arrivals"
// +kubebuilder:validation:XValidation:rule="duration(self.rampTime) < duration(self.stepDuration)",message="load.rampTime must be shorter than load.stepDuration",fieldPath=".rampTime"
type LoadSpec struct {
	// rate offers a total rate across all clients per step; the operator
	// divides it over clients × jobs.
	// +optional
	Rate *RateSteps `json:"rate,omitempty"`

	// queueDepth raises the outstanding I/Os per client step by step.
	// +optional
	QueueDepth *QueueDepthSteps `json:"queueDepth,omitempty"`

	// curve finds the maximum with an unthrottled step, then runs at a
	// percentage of it per step (vdbench's curve).
	// +optional
	Curve *CurveSteps `json:"curve,omitempty"`

	// clients steps the number of client pods that run, at a fixed load per
	// client or unthrottled: a scale-out sweep. Every client pod is created
	// once; those a step leaves out idle through it and are not in its
	// figures.
	// +optional
	Clients *ClientSteps `json:"clients,omitempty"`

	// stepDuration is how long each step measures, 5s to 24h.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s') && duration(self) <= duration('24h')",message="load.stepDuration must be a duration between 5s and 24h, such as 60s, 5m or 1h30m"
	StepDuration metav1.Duration `json:"stepDuration,omitzero"`

	// rampTime runs before each step's measurement and is excluded from it.
	// +optional
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="load.rampTime must be a duration of at least 0s, such as 5s or 1m"
	RampTime *metav1.Duration `json:"rampTime,omitempty"`

	// stop ends the load early.
	// +optional
	Stop *StopRules `json:"stop,omitempty"`

	// arrivals is how each rated job spaces its I/Os: Uniform (even
	// intervals) or Poisson (exponential gaps of the same mean). It applies
	// to steps with an offered rate.
	// +optional
	// +kubebuilder:default=Uniform
	Arrivals Arrivals `json:"arrivals,omitempty"`

	// repeat runs every planned step this many times back to back, 1 to
	// 10, so that status.repeatability can say how much the runs of each
	// load level vary. Every run is a step of its own (status.steps,
	// stepsPlanned, stop rules), so steps × repeat must be at most 100.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Repeat int32 `json:"repeat,omitempty"`

	// extendUntilSteady runs a step again, at the same load, when its
	// IOPS were not steady (analysis.steadyState), until a run is steady or
	// maxRuns have run. Every run is a step of its own; the last one stands
	// for the planned step and the earlier ones are marked superseded and
	// left out of the curve, the summary, the SLOs and repeatability.
	// stepDuration must be at least analysis.steadyState.rounds seconds for
	// a step to be judged.
	// +optional
	ExtendUntilSteady *ExtendUntilSteady `json:"extendUntilSteady,omitempty"`
}

// ExtendUntilSteady bounds how often an unsteady step is run again.
type ExtendUntilSteady struct {
	// maxRuns is the most runs of one planned step, the first included, 2
	// to 10. A step whose last allowed run is still not steady keeps that
	// run, marked not steady.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=10
	MaxRuns int32 `json:"maxRuns,omitempty"`
}

// RateSteps lists the total offered rate of each step, or generates them
// from start, max and exactly one of increment or factorPercent.
//
// +kubebuilder:validation:XValidation:rule="has(self.steps) != has(self.start)",message="load.rate: set either steps, or start and max"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || (has(self.max) && self.max >= self.start)",message="load.rate.max is required with start and must be at least start",fieldPath=".max"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || has(self.increment) != has(self.factorPercent)",message="load.rate: generated steps need exactly one of increment or factorPercent"
// +kubebuilder:validation:XValidation:rule="has(self.start) || (!has(self.max) && !has(self.increment) && !has(self.factorPercent))",message="load.rate: max, increment and factorPercent only go with start"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || !has(self.max) || !has(self.increment) || (self.max - self.start) / self.increment < 100",message="load.rate generates more than 100 steps: raise increment or lower max"
type RateSteps struct {
	// unit of every value: IOPS or MiBps (reads and writes together).
	// +optional
	// +kubebuilder:default=IOPS
	Unit RateUnit `json:"unit,omitempty"`

	// steps lists each step's total offered rate, strictly increasing.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1099511627776
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="load.rate.steps must be strictly increasing"
	Steps []int64 `json:"steps,omitempty"`

	// start is the first generated step.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	Start *int64 `json:"start,omitempty"`

	// increment is added to each generated step.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	Increment *int64 `json:"increment,omitempty"`

	// factorPercent multiplies each generated step (200 doubles it).
	// +optional
	// +kubebuilder:validation:Minimum=101
	// +kubebuilder:validation:Maximum=10000
	FactorPercent *int32 `json:"factorPercent,omitempty"`

	// max bounds generation: steps are generated while they are <= max.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	Max *int64 `json:"max,omitempty"`
}

// QueueDepthSteps raises the outstanding I/Os per client, divided over the
// client's fio jobs.
//
// +kubebuilder:validation:XValidation:rule="has(self.steps) != has(self.start)",message="load.queueDepth: set either steps, or start and max"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || (has(self.max) && self.max >= self.start)",message="load.queueDepth.max is required with start and must be at least start",fieldPath=".max"
// +kubebuilder:validation:XValidation:rule="has(self.start) || !has(self.max)",message="load.queueDepth.max only goes with start",fieldPath=".max"
type QueueDepthSteps struct {
	// steps lists the outstanding I/Os per client of each step, strictly
	// increasing.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="load.queueDepth.steps must be strictly increasing"
	Steps []int32 `json:"steps,omitempty"`

	// start and max generate doubling steps: start, 2×start, … <= max.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	Start *int32 `json:"start,omitempty"`

	// max is the largest generated depth.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	Max *int32 `json:"max,omitempty"`
}

// ClientSteps is a scale-out sweep: each step runs the first N of the
// benchmark's clients (clients 0 to N-1), the others idle.
type ClientSteps struct {
	// steps lists how many clients run in each step, strictly increasing,
	// each at most clients.count.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="load.clients.steps must be strictly increasing"
	Steps []int32 `json:"steps"`

	// perClientIOPS is the rate each running client offers, divided over
	// its jobs; a step offers it times its clients. Unset: every step runs
	// unthrottled, each job at workload.ioDepth.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	PerClientIOPS *int64 `json:"perClientIOPS,omitempty"`
}

// CurveSteps runs an unthrottled step, then steps at percentages of the
// maximum it measured.
type CurveSteps struct {
	// percents of the measured maximum, strictly increasing, 1 to 100;
	// unset means 10, 20, … 100.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=99
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="load.curve.percents must be strictly increasing"
	Percents []int32 `json:"percents,omitempty"`

	// unit the maximum is measured in and the steps offer.
	// +optional
	// +kubebuilder:default=IOPS
	Unit RateUnit `json:"unit,omitempty"`

	// clientBoundCheck runs the unthrottled step again right after it, with
	// twice the outstanding I/O (every job's ioDepth doubled), and sets the
	// ClientBound condition: a gain above 5 % means the maximum was the
	// clients', not the storage's. Default true; skipped with a synchronous
	// ioEngine (psync, sync), whose jobs keep one I/O in flight whatever
	// their ioDepth.
	// +optional
	// +kubebuilder:default=true
	ClientBoundCheck *bool `json:"clientBoundCheck,omitempty"`
}

// LatencyMetric is a latency statistic of a step.
// +kubebuilder:validation:Enum=mean;p50;p90;p99;p99.9
type LatencyMetric string

// Operation selects which I/Os a latency figure covers.
// +kubebuilder:validation:Enum=read;write;total;worst;sync
type Operation string

// LatencySelector picks one latency figure of a step.
type LatencySelector struct {
	// metric is mean, p50, p90, p99 or p99.9.
	// +optional
	// +kubebuilder:default=mean
	Metric LatencyMetric `json:"metric,omitempty"`

	// operation is read, write, total (all I/O pooled), worst (the
	// higher of read and write) or sync (the fsync or fdatasync calls of
	// a workload that makes them).
	// +optional
	// +kubebuilder:default=total
	Operation Operation `json:"operation,omitempty"`
}

// StopRules end the load early; each is checked after every step.
type StopRules struct {
	// latency stops after a step whose latency is above a limit.
	// +optional
	Latency *LatencyStop `json:"latency,omitempty"`

	// saturationPercent stops after a step that achieved less than this
	// percentage of its offered rate.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SaturationPercent *int32 `json:"saturationPercent,omitempty"`

	// maxStall stops after a step in which no client completed an I/O for
	// longer than this: whole seconds from 1s to 1h, written in h, m and s
	// (a step's timeline counts stalls in whole seconds).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([0-9]+h)?([0-9]+m)?([0-9]+s)?$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="load.stop.maxStall must be whole seconds between 1s and 1h, such as 5s, 2m or 1m30s"
	MaxStall *metav1.Duration `json:"maxStall,omitempty"`
}

// LatencyStop stops when the selected latency exceeds limit.
type LatencyStop struct {
	LatencySelector `json:",inline"`

	// limit is the latency above which the load stops, 1µs to 1h.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="load.stop.latency.limit must be a duration between 1us and 1h, such as 500us or 2ms"
	Limit metav1.Duration `json:"limit"`
}

// AnalysisSpec tunes how the curve is read.
type AnalysisSpec struct {
	// latencyTarget is the latency of "performance at target": the highest
	// achieved load whose latency stays at or below it.
	// +optional
	// +kubebuilder:default="1ms"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="analysis.latencyTarget must be a duration between 1us and 1h, such as 500us or 1ms"
	LatencyTarget metav1.Duration `json:"latencyTarget,omitzero"`

	// targetLatency is the latency figure compared with latencyTarget and
	// plotted on the curve; default the mean over all I/O, as the published
	// "performance @ 1 ms" figures use.
	// +optional
	// +kubebuilder:default={}
	TargetLatency LatencySelector `json:"targetLatency,omitempty"`

	// saturationPercent flags a throttled step as saturated when it achieved
	// less than this percentage of its offered load.
	// +optional
	// +kubebuilder:default=90
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SaturationPercent int32 `json:"saturationPercent,omitempty"`

	// steadyState sets the rule each step's IOPS, second by second, is
	// judged steady by (SNIA PTS's).
	// +optional
	// +kubebuilder:default={}
	SteadyState SteadyStateSpec `json:"steadyState,omitempty"`

	// maxVariationPercent bounds how much a repeated load level's runs may
	// vary (load.repeat): the Unstable condition is True when the
	// coefficient of variation of a level's IOPS or p99 latency is above
	// it. Unset: no limit, and no Unstable condition.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxVariationPercent *int32 `json:"maxVariationPercent,omitempty"`
}

// SteadyStateSpec is SNIA PTS's steady-state rule: a step's seconds are cut
// into rounds, and the step is steady when the rounds' mean IOPS range
// (max − min) and the excursion of their least-squares line across the
// rounds are within the given percentages of their average.
type SteadyStateSpec struct {
	// rounds is how many equal rounds a step's seconds are cut into.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=60
	Rounds int32 `json:"rounds,omitempty"`
	// rangePercent bounds the rounds' range, in % of their average.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	RangePercent int32 `json:"rangePercent,omitempty"`
	// slopePercent bounds the excursion of the rounds' least-squares line,
	// in % of their average.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SlopePercent int32 `json:"slopePercent,omitempty"`
}

// SLOSpec lists objectives; all must be met for SLOMet to be True.
type SLOSpec struct {
	// objectives to evaluate after the run.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Objectives []Objective `json:"objectives"`
}

// Objective is one storage SLO. Exactly one kind is set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.latencyAtLoad) ? 1 : 0) + (has(self.peakIOPS) ? 1 : 0) + (has(self.peakMiBps) ? 1 : 0) + (has(self.iopsAtLatency) ? 1 : 0) + (has(self.mibpsAtLatency) ? 1 : 0) + (has(self.maxStall) ? 1 : 0) == 1",message="each slo objective must set exactly one of latencyAtLoad, peakIOPS, peakMiBps, iopsAtLatency, mibpsAtLatency or maxStall"
type Objective struct {
	// name identifies the objective in status and metrics.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// latencyAtLoad: at the lowest step achieving minIOPS, the latency is
	// at most maxLatency ("p99 read ≤ 2 ms at ≥ 40,000 IOPS").
	// +optional
	LatencyAtLoad *LatencyAtLoad `json:"latencyAtLoad,omitempty"`

	// peakIOPS: the highest achieved IOPS is at least this.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	PeakIOPS *int64 `json:"peakIOPS,omitempty"`

	// peakMiBps: the highest achieved MiB/s is at least this.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	PeakMiBps *int64 `json:"peakMiBps,omitempty"`

	// iopsAtLatency: some step with latency at most maxLatency achieved at
	// least minIOPS ("IOPS at 1 ms ≥ Y").
	// +optional
	IOPSAtLatency *IOPSAtLatency `json:"iopsAtLatency,omitempty"`

	// mibpsAtLatency: some step with latency at most maxLatency achieved at
	// least minMiBps.
	// +optional
	MiBpsAtLatency *MiBpsAtLatency `json:"mibpsAtLatency,omitempty"`

	// maxStall: no step's longest run of whole seconds without a completion
	// is longer than this (whole seconds, 1s to 1h, in h, m and s).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([0-9]+h)?([0-9]+m)?([0-9]+s)?$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="slo maxStall must be whole seconds between 1s and 1h, such as 2s or 1m"
	MaxStall *metav1.Duration `json:"maxStall,omitempty"`
}

// LatencyAtLoad bounds the latency at a load.
type LatencyAtLoad struct {
	LatencySelector `json:",inline"`

	// maxLatency is the highest acceptable latency.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="slo objective maxLatency must be a duration between 1us and 1h, such as 500us or 2ms"
	MaxLatency metav1.Duration `json:"maxLatency"`

	// minIOPS is the load at which the latency is judged.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	MinIOPS int64 `json:"minIOPS"`
}

// IOPSAtLatency asks for IOPS within a latency bound.
type IOPSAtLatency struct {
	LatencySelector `json:",inline"`

	// maxLatency is the latency bound.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="slo objective maxLatency must be a duration between 1us and 1h, such as 500us or 2ms"
	MaxLatency metav1.Duration `json:"maxLatency"`

	// minIOPS is the IOPS required within the bound.
	// +required
	// +kubebuilder:validation:Minimum=1
	MinIOPS int64 `json:"minIOPS"`
}

// MiBpsAtLatency asks for throughput within a latency bound.
type MiBpsAtLatency struct {
	LatencySelector `json:",inline"`

	// maxLatency is the latency bound.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="slo objective maxLatency must be a duration between 1us and 1h, such as 500us or 2ms"
	MaxLatency metav1.Duration `json:"maxLatency"`

	// minMiBps is the throughput required within the bound.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	MinMiBps int64 `json:"minMiBps"`
}

// RegressionSpec compares a run with its baseline, step by step: its IOPS
// and p99 latency against the same figures of several baseline runs, so
// that a change is judged against how much runs of unchanged storage
// differ (a one-sided prediction test of the run's figure among the
// baseline runs', Holm-adjusted over all the run's tests). A test
// regresses when its adjusted p-value is below significance and the change
// is at least the minimum effect, in the worse direction. p99 is tested
// for a rise beyond its minimum effect, its run-to-run spread taken as at
// least 0.25 on the log scale: only gross p99 changes regress. With fewer
// than 3 baseline runs p99 is not judged and IOPS are judged by their
// per-second samples (docs/schedules.md).
type RegressionSpec struct {
	// baseline is the run to compare with.
	// +required
	Baseline RegressionBaseline `json:"baseline"`

	// significance is the family-wise error rate of one comparison, a
	// decimal fraction: "0.01" means 1 %.
	// +optional
	// +kubebuilder:default="0.01"
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^0?[.][0-9]{1,6}$`
	// +kubebuilder:validation:XValidation:rule="double(self) > 0.0 && double(self) <= 0.2",message="regression.significance must be a decimal fraction above 0 and at most 0.2, such as 0.01"
	Significance string `json:"significance,omitempty"`

	// minIOPSDropPercent: a step's IOPS regressed only when their median
	// fell by at least this percentage of the baseline's.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	MinIOPSDropPercent int32 `json:"minIOPSDropPercent,omitempty"`

	// minP99RisePercent: a step's p99 latency regressed only when its
	// median rose by at least this percentage of the baseline's.
	// +optional
	// +kubebuilder:default=25
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MinP99RisePercent int32 `json:"minP99RisePercent,omitempty"`
}

// RegressionBaseline names the baseline. Exactly one field is set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.previousRun) ? 1 : 0) + (has(self.benchmark) ? 1 : 0) + (has(self.benchmarks) ? 1 : 0) + (has(self.configMap) ? 1 : 0) == 1",message="regression.baseline must set exactly one of previousRun, benchmark, benchmarks or configMap"
type RegressionBaseline struct {
	// previousRun is the newest successful runs of the same
	// StorageBenchmarkSchedule scheduled before this one: for a schedule's
	// template. Runs judged Regressed are left out while the schedule keeps
	// any other. A benchmark no schedule created has no previous run.
	// +optional
	PreviousRun *PreviousRunBaseline `json:"previousRun,omitempty"`

	// benchmark is a completed StorageBenchmark in this namespace: one
	// baseline run (p99 is then not judged; see benchmarks).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Benchmark *string `json:"benchmark,omitempty"`

	// benchmarks are completed StorageBenchmarks in this namespace, runs of
	// the same workload on storage that is known good: their spread is the
	// run-to-run variation a change is judged against.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Benchmarks []string `json:"benchmarks,omitempty"`

	// configMap is a pinned baseline in this namespace: a ConfigMap
	// labelled storagebench.io/baseline=true whose key baseline.json holds
	// a run's per-second samples, as `kubectl storagebench baseline`
	// writes it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ConfigMap *string `json:"configMap,omitempty"`
}

// PreviousRunBaseline selects the previous successful runs of the
// benchmark's schedule.
type PreviousRunBaseline struct {
	// runs is how many of them make the baseline: the newest that the
	// schedule keeps (successfulRunsHistoryLimit), up to this many. At
	// least 3 are needed to judge p99 and to judge IOPS against the
	// run-to-run variation; the first runs of a schedule have fewer.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	Runs int32 `json:"runs,omitempty"`
}

// MinBaselineRuns is how many baseline runs a run-level comparison needs
// (analysis.MinBaselineRuns).
const MinBaselineRuns = 3

// VolumePolicy says what happens to provisioned volumes after the run.
// +kubebuilder:validation:Enum=Delete;Retain
type VolumePolicy string

const (
	// VolumesDelete deletes provisioned claims when the run finishes.
	VolumesDelete VolumePolicy = "Delete"
	// VolumesRetain keeps them (they are not owned by the benchmark, so
	// they outlive it too).
	VolumesRetain VolumePolicy = "Retain"
)

// CleanupSpec says what happens after the run.
type CleanupSpec struct {
	// volumes: Delete removes provisioned claims when the run finishes (or
	// the benchmark is deleted); Retain keeps them. An existingClaim is never
	// deleted.
	// +optional
	// +kubebuilder:default=Delete
	Volumes VolumePolicy `json:"volumes,omitempty"`

	// ttlSecondsAfterFinished deletes the benchmark this long after it
	// finished; unset keeps it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}
