package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageBenchmarkSchedule runs a StorageBenchmark on a cron schedule, as a
// CronJob runs a Job: each scheduled time creates a benchmark from the
// template, named after the schedule and the time, owned by the schedule.
// Finished runs beyond the history limits are deleted; status keeps a row
// per kept run.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sbsched,categories=storagebench
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Time Zone",type=string,JSONPath=`.spec.timeZone`,priority=1
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.active.name`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessfulTime`
// +kubebuilder:printcolumn:name="Peak IOPS",type=integer,JSONPath=`.status.history[0].peakIOPS`
// +kubebuilder:printcolumn:name="SLO",type=string,JSONPath=`.status.history[0].slo`
// +kubebuilder:printcolumn:name="Regression",type=string,JSONPath=`.status.history[0].regression`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 31",message="metadata.name must be at most 31 characters: each run is named <schedule>-<scheduled time in Unix minutes>, and a benchmark's name at most 40"
type StorageBenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is when to run which benchmark.
	// +required
	Spec StorageBenchmarkScheduleSpec `json:"spec"`

	// status is what the operator observed of the schedule's runs.
	// +optional
	Status StorageBenchmarkScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StorageBenchmarkScheduleList is a list of StorageBenchmarkSchedules.
type StorageBenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageBenchmarkSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StorageBenchmarkSchedule{}, &StorageBenchmarkScheduleList{})
}

// ConcurrencyPolicy says what happens when a run is due while the last
// one is still running.
// +kubebuilder:validation:Enum=Forbid;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid holds the due run while one is running, and starts
	// it when that one is gone (unless its starting deadline passed): two
	// runs on the same storage would measure each other.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes the running run and starts the due one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// StorageBenchmarkScheduleSpec is a cron schedule and the benchmark it runs.
//
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.regression) || !has(self.template.spec.regression.baseline.previousRun) || !has(self.successfulRunsHistoryLimit) || self.successfulRunsHistoryLimit >= 1",message="template.spec.regression.baseline.previousRun needs successfulRunsHistoryLimit of at least 1: the previous successful run is the baseline, and a limit of 0 deletes it",fieldPath=".successfulRunsHistoryLimit"
type StorageBenchmarkScheduleSpec struct {
	// schedule is a standard five-field cron schedule (minute hour
	// day-of-month month day-of-week) or a descriptor such as @daily, as a
	// CronJob's. The time zone goes in timeZone, not in a TZ= prefix.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('TZ=') && !self.startsWith('CRON_TZ=')",message="schedule: set the time zone in timeZone, not with a TZ= or CRON_TZ= prefix"
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone the schedule is read in, such as
	// Europe/Berlin; unset is UTC (not the manager's local time).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$`
	TimeZone *string `json:"timeZone,omitempty"`

	// suspend stops new runs from being created; a running one finishes.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// concurrencyPolicy is what happens when a run is due while one is
	// running: Forbid holds it until that one is gone (the default: two
	// runs on the same storage would measure each other), Replace deletes
	// the running one and starts once it is gone.
	// +optional
	// +kubebuilder:default=Forbid
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// startingDeadlineSeconds drops a scheduled time that could not start
	// within this many seconds of it (the manager was down, or a run was
	// still going with Forbid). Unset: a missed time starts however late,
	// and only the most recent missed one runs.
	// +optional
	// At least 10: the controller is woken a little after a scheduled
	// time, and a shorter deadline would drop it.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=31536000
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// successfulRunsHistoryLimit is how many completed runs are kept, the
	// newest; older ones are deleted with their children.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// failedRunsHistoryLimit is how many failed runs are kept, the newest.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`

	// template is the benchmark each run creates. A change applies to the
	// runs created after it; a created run keeps the spec it was created
	// with.
	// +required
	Template StorageBenchmarkTemplate `json:"template"`
}

// StorageBenchmarkTemplate is a StorageBenchmark to create: labels and
// annotations for its metadata, and its spec.
type StorageBenchmarkTemplate struct {
	// metadata carries labels and annotations onto each run; other fields
	// are ignored. The schedule's own label is added.
	// +optional
	Metadata TemplateMetadata `json:"metadata,omitempty"`

	// spec is each run's spec.
	// +required
	Spec StorageBenchmarkSpec `json:"spec"`
}

// TemplateMetadata is the metadata a template may set.
type TemplateMetadata struct {
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Annotations map[string]string `json:"annotations,omitempty"`
}

// StorageBenchmarkScheduleStatus is what the operator observed: when runs
// were scheduled and what the kept ones measured.
type StorageBenchmarkScheduleStatus struct {
	// conditions: Ready (the schedule is valid and scheduled, or
	// suspended), and Stalled when it cannot run (an invalid schedule, time
	// zone or template).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastScheduleTime is the last scheduled time a run was created for.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when the newest kept completed run completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// nextScheduleTime is the next scheduled time (unset while suspended).
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// pendingScheduleTime is a scheduled time that is due but has no run
	// yet: the last run is still going (Forbid) or being deleted, or the
	// run was refused or its name is taken (the events say which). Unset
	// when nothing waits.
	// +optional
	PendingScheduleTime *metav1.Time `json:"pendingScheduleTime,omitempty"`

	// active is the run in progress, if any.
	// +optional
	Active *ScheduledRunRef `json:"active,omitempty"`

	// history has a row per kept run, newest first.
	// +optional
	// +kubebuilder:validation:MaxItems=201
	History []ScheduledRun `json:"history,omitempty"`
}

// ScheduledRunRef names a run.
type ScheduledRunRef struct {
	// name of the StorageBenchmark.
	Name string `json:"name"`
	// scheduledTime is the scheduled time it was created for.
	ScheduledTime metav1.Time `json:"scheduledTime"`
}

// RunState is a run's state in a schedule's history.
type RunState string

// Run states.
const (
	RunRunning  RunState = "Running"
	RunComplete RunState = "Complete"
	RunFailed   RunState = "Failed"
)

// RunStateOf is where a benchmark's run is, by its conditions: Failed,
// else Complete, else Running.
func RunStateOf(b *StorageBenchmark) RunState {
	switch {
	case meta.IsStatusConditionTrue(b.Status.Conditions, ConditionFailed):
		return RunFailed
	case meta.IsStatusConditionTrue(b.Status.Conditions, ConditionComplete):
		return RunComplete
	}
	return RunRunning
}

// ScheduledRun is one kept run, as its benchmark's status shows it.
type ScheduledRun struct {
	ScheduledRunRef `json:",inline"`
	// state is Running, Complete or Failed.
	State RunState `json:"state"`
	// completionTime is when it ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// peakIOPS is its status.summary.peakIOPS.
	// +optional
	PeakIOPS int64 `json:"peakIOPS,omitempty"`
	// atTargetIOPS is the IOPS of its performance at the latency target.
	// +optional
	AtTargetIOPS int64 `json:"atTargetIOPS,omitempty"`
	// slo is the reason of its SLOMet condition (AllMet, NotMet,
	// NotMeasurable); unset without objectives or before it completed.
	// +optional
	SLO string `json:"slo,omitempty"`
	// regression is the reason of its Regressed condition (Regressed,
	// NotRegressed, or why it could not be compared); unset without
	// spec.regression or before it completed.
	// +optional
	Regression string `json:"regression,omitempty"`
	// regressedMetrics are the metrics (iops, p99) it regressed in.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	RegressedMetrics []string `json:"regressedMetrics,omitempty"`
	// regressionMessage is its Regressed condition's message when it
	// regressed: the worst step and metric, the change and the p-value.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	RegressionMessage string `json:"regressionMessage,omitempty"`
	// reason is why a failed run failed (its Failed condition's reason).
	// +optional
	Reason string `json:"reason,omitempty"`
}
