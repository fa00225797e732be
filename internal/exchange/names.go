// Package exchange is the lockstep protocol between the operator and the
// client runners, carried by ConfigMaps in the benchmark's namespace (see
// docs/operator.md): the operator writes the plan and each step's order,
// every runner writes its readiness and its latest step result. This file
// holds the names, labels and keys both sides agree on.
package exchange

import (
	"fmt"

	"github.com/storagebench/storagebench/internal/protocol"
)

// Labels on every object the operator creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "storagebench"
	LabelBenchmark = "storagebench.io/benchmark"
	// LabelClient is the client index on client ConfigMaps, Jobs and pods.
	LabelClient = "storagebench.io/client"
	// LabelRole says what an object is for: plan, client, step, data,
	// runner.
	LabelRole = "storagebench.io/role"
)

// Values of LabelRole.
const (
	RolePlan   = "plan"
	RoleClient = "client"
	RoleStep   = "step"
	RoleData   = "data"
	RoleRunner = "runner"
	// RoleCleanup is the Job and pod that remove a run's files from an
	// existing claim after the run.
	RoleCleanup = "cleanup"
	// RoleVerify is the Job and pod that read back, after a client was
	// lost, what the clients' finished steps wrote.
	RoleVerify = "verify"
)

// Annotations the runner sets on its client ConfigMap so the operator can
// tell progress without decoding results.
const (
	// AnnotationReady is "true" once the client is prepared, "error" when
	// it failed to prepare.
	AnnotationReady = "storagebench.io/ready"
	// AnnotationResultStep is the step index of result.json (or
	// result.bin).
	AnnotationResultStep = "storagebench.io/result-step"
)

// ConfigMap data keys.
const (
	KeyPlan  = "plan.json"
	KeyOrder = "order.json"
	// KeyNextOrder holds, beside KeyOrder's step, the step after it when
	// it is known ahead (protocol.Ahead): clients start it the instant
	// the current one ends, before its results are recorded.
	KeyNextOrder = "next.json"
	KeyReady     = "ready.json"
	KeyResult    = "result.json"
	// KeyResultWire is the binaryData key of a result in the compact wire
	// encoding (results.AppendWire), which a runner writes instead of
	// KeyResult when the plan lists a version it knows.
	KeyResultWire = "result.bin"
	KeyAggregate  = "aggregate.json"
)

// A pinned baseline (spec.regression.baseline.configMap): a ConfigMap of
// the user's, read by the operator and written by the plugin's baseline
// command, never by the operator.
const (
	// LabelBaseline marks a ConfigMap as a pinned baseline, with the value
	// "true": the operator reads no other.
	LabelBaseline = "storagebench.io/baseline"
	// KeyBaseline is the data key holding the analysis.Baseline document.
	KeyBaseline = "baseline.json"
)

// Environment variables of the client container.
const (
	EnvNamespace = "STORAGEBENCH_NAMESPACE"
	EnvBenchmark = "STORAGEBENCH_BENCHMARK"
	EnvClient    = "STORAGEBENCH_CLIENT"
	EnvPodName   = "POD_NAME"
	// EnvTestClockOffset is a test hook: a duration (e.g. "2s", "-1.5s")
	// added to the runner's clock, simulating a node whose clock is off.
	EnvTestClockOffset = "STORAGEBENCH_TEST_CLOCK_OFFSET"
)

// Paths inside the client container.
const (
	DataMountPath  = protocol.DataMountPath
	WorkMountPath  = "/storagebench/work"
	DevicePath     = protocol.DevicePath
	RunnerCommand  = "/usr/local/bin/runner"
	TerminationLog = "/dev/termination-log"
)

// PlanName is the ConfigMap holding the plan and the current order.
func PlanName(benchmark string) string { return benchmark + "-plan" }

// ClientName is client i's ConfigMap, Job and pod-name prefix, and its
// runner's ServiceAccount, Role and RoleBinding.
func ClientName(benchmark string, i int) string { return fmt.Sprintf("%s-client-%03d", benchmark, i) }

// StepName is the ConfigMap holding step k's merged result.
func StepName(benchmark string, k int) string { return fmt.Sprintf("%s-step-%03d", benchmark, k) }

// SharedClaimName is the one claim of a Shared benchmark.
func SharedClaimName(benchmark string) string { return benchmark + "-data" }

// ClientClaimName is client i's claim of a PerClient benchmark.
func ClientClaimName(benchmark string, i int) string {
	return fmt.Sprintf("%s-data-%03d", benchmark, i)
}
