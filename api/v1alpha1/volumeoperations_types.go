package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VolumeOperationsBenchmark times a StorageClass's control plane: how long
// claims take to bind, pods to get their volume, snapshots to become
// ready, clones to bind, volumes to grow and to go away, with 1, 5, 10 …
// of each started at once. Each step's latencies are exact percentiles
// of every operation it timed; status holds the curve of latency against
// concurrency per operation, with its knee and the time the slowest part
// of the path spends on one operation (the slope of the step's slowest
// operation against concurrency), and verdicts on objectives.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sbops,categories=storagebench
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.spec.storage.storageClassName`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="SLO",type=string,JSONPath=`.status.conditions[?(@.type=="SLOMet")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 40",message="metadata.name must be at most 40 characters: the claims, snapshots and pods it creates are named after it"
type VolumeOperationsBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to time. It cannot change once the benchmark exists.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec cannot change once the benchmark exists: delete it and create a new one"
	Spec VolumeOperationsBenchmarkSpec `json:"spec"`

	// status is what the operator timed.
	// +optional
	Status VolumeOperationsBenchmarkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VolumeOperationsBenchmarkList is a list of VolumeOperationsBenchmarks.
type VolumeOperationsBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeOperationsBenchmark `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VolumeOperationsBenchmark{}, &VolumeOperationsBenchmarkList{})
}

// VolumeOperation is one operation of the storage's control plane.
// +kubebuilder:validation:Enum=provision;attach;snapshot;cloneFromSnapshot;cloneFromVolume;expand;delete
type VolumeOperation string

// The operations, each timed from the operator's request to the watch
// event that shows it done.
const (
	// OperationProvision: a claim is created → it is bound.
	OperationProvision VolumeOperation = "provision"
	// OperationAttach: a pod using a bound claim is scheduled → its
	// volume is mounted and its sandbox runs (PodReadyToStartContainers).
	OperationAttach VolumeOperation = "attach"
	// OperationSnapshot: a VolumeSnapshot of a bound claim is created → it
	// is ready to use.
	OperationSnapshot VolumeOperation = "snapshot"
	// OperationCloneFromSnapshot: a claim whose data source is a ready
	// VolumeSnapshot is created → it is bound.
	OperationCloneFromSnapshot VolumeOperation = "cloneFromSnapshot"
	// OperationCloneFromVolume: a claim whose data source is a bound claim
	// is created → it is bound.
	OperationCloneFromVolume VolumeOperation = "cloneFromVolume"
	// OperationExpand: a bound claim's request is raised to
	// storage.expandTo → its capacity reaches it.
	OperationExpand VolumeOperation = "expand"
	// OperationDelete: a bound claim is deleted → its PersistentVolume is
	// gone (the storage deleted the volume).
	OperationDelete VolumeOperation = "delete"
)

// VolumeOperationsBenchmarkSpec says which operations to time, how many
// at once, on which storage.
//
// +kubebuilder:validation:XValidation:rule="!self.operations.exists(o, o in ['snapshot', 'cloneFromSnapshot']) || has(self.storage.volumeSnapshotClassName)",message="operations snapshot and cloneFromSnapshot need storage.volumeSnapshotClassName",fieldPath=".storage.volumeSnapshotClassName"
// +kubebuilder:validation:XValidation:rule="!('expand' in self.operations) || has(self.storage.expandTo)",message="operation expand needs storage.expandTo",fieldPath=".storage.expandTo"
// +kubebuilder:validation:XValidation:rule="!('attach' in self.operations) || !has(self.storage.accessMode) || self.storage.accessMode != 'ReadOnlyMany'",message="operation attach needs a writable accessMode",fieldPath=".storage.accessMode"
// +kubebuilder:validation:XValidation:rule="!has(self.objectives) || self.objectives.all(o, o.operation in self.operations)",message="every objective's operation must be one of spec.operations",fieldPath=".objectives"
type VolumeOperationsBenchmarkSpec struct {
	// storage is the class, and the volume each operation makes.
	// +required
	Storage OperationsStorage `json:"storage"`

	// operations to time; each runs in every step.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	Operations []VolumeOperation `json:"operations"`

	// concurrency lists the steps, strictly ascending: in each, every
	// operation is started this many times at once.
	// +optional
	// +listType=atomic
	// +kubebuilder:default={1,5,10,25,50}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100
	// +kubebuilder:validation:XValidation:rule="[1, 2, 3, 4, 5, 6, 7, 8, 9].all(i, i >= size(self) || self[i - 1] < self[i])",message="concurrency must be strictly ascending"
	Concurrency []int32 `json:"concurrency,omitempty"`

	// operationTimeout is how long one operation may take. One that takes
	// longer counts as timed out, and its step ends when every operation
	// is done or timed out.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="operationTimeout must be between 1s and 1h"
	OperationTimeout *metav1.Duration `json:"operationTimeout,omitempty"`

	// objectives bound operation latencies (and rates) at given
	// concurrencies; status.objectives has a verdict for each, and the
	// SLOMet condition sums them up.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Objectives []OperationObjective `json:"objectives,omitempty"`
}

// OperationsStorage is what every timed operation asks of the storage.
// +kubebuilder:validation:XValidation:rule="!has(self.expandTo) || !isQuantity(string(self.expandTo)) || quantity(string(self.expandTo)).compareTo(quantity(has(self.size) && isQuantity(string(self.size)) ? string(self.size) : '1Gi')) > 0",message="storage.expandTo must be larger than storage.size (default 1Gi)",fieldPath=".expandTo"
// +kubebuilder:validation:XValidation:rule="!has(self.size) || !isQuantity(string(self.size)) || quantity(string(self.size)).isGreaterThan(quantity('0'))",message="storage.size must be positive",fieldPath=".size"
type OperationsStorage struct {
	// storageClassName is the class under test.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	StorageClassName string `json:"storageClassName"`

	// volumeSnapshotClassName is the VolumeSnapshotClass of the snapshots
	// (operations snapshot and cloneFromSnapshot).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	VolumeSnapshotClassName *string `json:"volumeSnapshotClassName,omitempty"`

	// size of each claim.
	// +optional
	// +kubebuilder:default="1Gi"
	Size *resource.Quantity `json:"size,omitempty"`

	// expandTo is the size operation expand grows a claim to.
	// +optional
	ExpandTo *resource.Quantity `json:"expandTo,omitempty"`

	// volumeMode of the claims.
	// +optional
	// +kubebuilder:default=Filesystem
	// +kubebuilder:validation:Enum=Filesystem;Block
	VolumeMode corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`

	// accessMode of the claims.
	// +optional
	// +kubebuilder:default=ReadWriteOnce
	// +kubebuilder:validation:Enum=ReadWriteOnce;ReadWriteMany;ReadWriteOncePod;ReadOnlyMany
	AccessMode corev1.PersistentVolumeAccessMode `json:"accessMode,omitempty"`
}

// OperationPercentile is the latency figure an objective bounds.
// +kubebuilder:validation:Enum=p50;p90;p99;max
type OperationPercentile string

// OperationObjective bounds one operation's latency at every step up to a
// concurrency: "p99 provision ≤ 10 s up to 25 at once".
type OperationObjective struct {
	// name identifies the objective in status and metrics.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// operation the objective is about; it must be one of spec.operations.
	// +required
	Operation VolumeOperation `json:"operation"`

	// percentile of the step's latencies that is bounded.
	// +optional
	// +kubebuilder:default=p99
	Percentile OperationPercentile `json:"percentile,omitempty"`

	// maxLatency is the bound; equal passes.
	// +required
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="maxLatency must be positive"
	MaxLatency metav1.Duration `json:"maxLatency"`

	// upToConcurrency limits the objective to the steps of at most this
	// concurrency; unset: every step.
	// +optional
	// +kubebuilder:validation:Minimum=1
	UpToConcurrency *int32 `json:"upToConcurrency,omitempty"`

	// minPerMinute is the fewest operations a step must complete per
	// minute; unset: no bound.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinPerMinute *int32 `json:"minPerMinute,omitempty"`
}

// VolumeOperationsBenchmarkStatus is what the operator timed.
type VolumeOperationsBenchmarkStatus struct {
	// observedGeneration is the generation status was written for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready (its reason is the run's state: Running, Complete,
	// or why it failed) and SLOMet.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// progress says where the run is, for people: "step 2 of 5 (10 at
	// once): snapshot".
	// +optional
	Progress string `json:"progress,omitempty"`

	// current is the operation step under way; unset before the first and
	// after the last.
	// +optional
	Current *OperationsCurrent `json:"current,omitempty"`

	// startTime is when the first step started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// provisioner of the class, as read when the run started.
	// +optional
	Provisioner string `json:"provisioner,omitempty"`

	// operations holds one curve per operation, in spec order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=7
	Operations []OperationCurveStatus `json:"operations,omitempty"`

	// objectives has a verdict for each of spec.objectives once the run
	// is complete.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Objectives []SLOStatus `json:"objectives,omitempty"`

	// notes say what the class's driver does that the figures show (a
	// Trident economy driver's shared volumes, a clone that is a FlexClone
	// or a new volume), as read from the class when the run started; only
	// for drivers the operator knows (docs/trident.md).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Notes []OperationNote `json:"notes,omitempty"`
}

// OperationNote is one fact about the storage a reader of the curves must
// know.
type OperationNote struct {
	// reason is a CamelCase name of the fact, such as FlexClone.
	Reason string `json:"reason"`
	// operations of the run the note concerns.
	// +listType=atomic
	Operations []VolumeOperation `json:"operations"`
	// message says it in one sentence.
	Message string `json:"message"`
}

// OperationStage is where an operation step is.
// +kubebuilder:validation:Enum=Preparing;Timing;Clearing
type OperationStage string

// The stages of an operation step.
const (
	// StagePreparing: what the operation starts from is made and waited
	// for (claims bound, a source snapshot ready), untimed.
	StagePreparing OperationStage = "Preparing"
	// StageTiming: the operations were requested and are timed.
	StageTiming OperationStage = "Timing"
	// StageClearing: everything the step made is deleted, and waited for,
	// volumes included, before the next step.
	StageClearing OperationStage = "Clearing"
)

// OperationsCurrent is the operation step under way.
type OperationsCurrent struct {
	// index of the operation step: spec.concurrency's index × the number
	// of operations + the operation's index in spec.operations.
	Index int32 `json:"index"`
	// operation and concurrency of the step.
	Operation   VolumeOperation `json:"operation"`
	Concurrency int32           `json:"concurrency"`
	// stage the step is in, since when.
	Stage OperationStage `json:"stage"`
	Since metav1.Time    `json:"since"`
	// attempt counts the step's starts: a manager that restarted while
	// operations were timed lost their timings, and the step runs again.
	Attempt int32 `json:"attempt"`
	// recorded is true once the step's figures are in operations[] (set
	// while clearing).
	// +optional
	Recorded bool `json:"recorded,omitempty"`
	// volumes are the PersistentVolumes of the step's claims, noted while
	// clearing: the next step waits until the storage deleted them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	Volumes []string `json:"volumes,omitempty"`
}

// OperationCurveStatus is one operation's steps and their curve.
type OperationCurveStatus struct {
	// operation timed.
	Operation VolumeOperation `json:"operation"`

	// steps recorded so far, in spec.concurrency order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Steps []OperationStepStatus `json:"steps,omitempty"`

	// kneeConcurrency is the concurrency at which median latency bends
	// upward; unset when the curve has no knee.
	// +optional
	KneeConcurrency *int32 `json:"kneeConcurrency,omitempty"`

	// perOperation is the slope of each step's slowest operation against
	// its concurrency (least squares, steps without failures): the time
	// the path spends on one operation when it does them one at a time;
	// about 0 when it does them in parallel.
	// +optional
	PerOperation *FittedDuration `json:"perOperation,omitempty"`
}

// FittedDuration is a fitted figure and its 95 % confidence interval.
type FittedDuration struct {
	// value is the fitted figure.
	Value metav1.Duration `json:"value"`
	// low and high bound its 95 % confidence interval (equal to value
	// with two steps, or when the steps lie on a line).
	Low  metav1.Duration `json:"low"`
	High metav1.Duration `json:"high"`
	// steps fitted.
	Steps int32 `json:"steps"`
}

// OperationStepStatus is one operation at one concurrency.
type OperationStepStatus struct {
	// concurrency: operations started at once.
	Concurrency int32 `json:"concurrency"`
	// succeeded, failed and timedOut count them by outcome.
	Succeeded int32 `json:"succeeded"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	TimedOut int32 `json:"timedOut,omitempty"`
	// latency of the succeeded operations: exact order statistics
	// (nearest rank).
	// +optional
	Latency *OperationLatencyStatus `json:"latency,omitempty"`
	// span is from the first request to the last completion.
	Span metav1.Duration `json:"span"`
	// perMinute is succeeded ÷ span, per minute, as a decimal.
	// +optional
	PerMinute string `json:"perMinute,omitempty"`
	// reason of the first operation that failed or timed out.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// OperationLatencyStatus is the latency of a step's succeeded operations.
type OperationLatencyStatus struct {
	Min  metav1.Duration `json:"min"`
	Mean metav1.Duration `json:"mean"`
	P50  metav1.Duration `json:"p50"`
	P90  metav1.Duration `json:"p90"`
	P99  metav1.Duration `json:"p99"`
	Max  metav1.Duration `json:"max"`
}
