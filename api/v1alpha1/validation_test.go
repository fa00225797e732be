package v1alpha1_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/testenv"
	"github.com/storagebench/storagebench/internal/workload"
	"github.com/storagebench/storagebench/test/build"
)

// These tests run the CRD in a real kube-apiserver (and etcd), so that every
// OpenAPI marker and CEL rule is checked by the code that enforces it in a
// cluster, including its CEL cost limits.

// namespace holds every object the tests create.
const namespace = "validation"

var (
	k8s     client.Client
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, c, err := testenv.Start(filepath.Join("..", "..", "config", "crd", "bases"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "validation tests need a real kube-apiserver and etcd:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the API server:", err)
		}
	}()
	k8s, restCfg = c, env.Config
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		fmt.Fprintln(os.Stderr, "creating the test namespace:", err)
		return 1
	}
	return m.Run()
}

// baseSpec is a valid spec; every bad spec changes one thing in it.
const baseSpec = `
storage:
  storageClassName: fast
load:
  rate:
    steps: [1000, 2000, 4000]
`

// newObject returns a StorageBenchmark named name whose spec is baseSpec
// merged with patch, a YAML JSON merge patch (RFC 7386: maps merge, null
// deletes, everything else replaces).
func newObject(t *testing.T, name, patch string) *unstructured.Unstructured {
	t.Helper()
	spec, err := build.PatchedSpec(baseSpec, patch)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "StorageBenchmark",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       spec,
	}}
}

// causes returns the field causes of an Invalid error.
func causes(t *testing.T, err error) []metav1.StatusCause {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error %v carries no status details", err)
	}
	return status.Status().Details.Causes
}

// violations drops the note the API server adds when a schema error kept it
// from evaluating CEL rules.
func violations(cs []metav1.StatusCause) []metav1.StatusCause {
	return slices.DeleteFunc(slices.Clone(cs), func(c metav1.StatusCause) bool {
		return c.Field == rootField && strings.Contains(c.Message, "some validation rules were not checked because the object was invalid")
	})
}

// rootField is how the API server names the object itself as a field.
const rootField = "<nil>"

type badSpec struct {
	name string
	// objName overrides the object's name (default: a name derived from
	// the case's index).
	objName string
	// patch is merged into baseSpec.
	patch string
	// field is where the API server reports the violation and msg a part
	// of its message.
	field, msg string
	// also is a part of the message of a second violation at the same
	// field, for the bad specs that break two rules at once; empty means
	// exactly one violation.
	also string
}

const (
	// quantityPattern starts the OpenAPI pattern every quantity has.
	quantityPattern = `should match '^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))`

	stepDurationMsg = "load.stepDuration must be a duration between 5s and 24h, such as 60s, 5m or 1h30m"
	extendMsg       = "load.extendUntilSteady.maxRuns times load.repeat times the number of steps (a curve's unthrottled step and client-bound check included) must be at most 100: every run is a step; lower maxRuns or plan fewer steps"
	repeatMsg       = "load.repeat times the number of steps (a curve's unthrottled step and client-bound check included) must be at most 100: every run is a step; lower load.repeat or plan fewer steps"
	maxLatencyMsg   = "slo objective maxLatency must be a duration between 1us and 1h, such as 500us or 2ms"
	// durationPattern is the pattern of Go's time.ParseDuration syntax
	// every duration field has.
	durationPattern = "should match '^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$'"
)

const profileEnumMsg = `supported values: "analytics", "db-log", "etcd", "mix-256k-0"`

var badSpecs = []badSpec{
	// metadata
	{name: "name longer than 40 characters", objName: strings.Repeat("n", 41),
		field: rootField, msg: "metadata.name must be at most 40 characters: child objects (volumes, jobs, pods) are named after it"},

	// type errors and missing required fields
	{name: "spec.storage missing", patch: `storage: null`,
		field: "spec.storage", msg: "Required value"},
	{name: "spec.load missing", patch: `load: null`,
		field: "spec.load", msg: "Required value"},
	{name: "storage is not an object", patch: `storage: fast`,
		field: "spec.storage", msg: `must be of type object: "string"`},
	{name: "clients.count is a string", patch: `clients: {count: three}`,
		field: "spec.clients.count", msg: `must be of type integer: "string"`},
	{name: "rate steps is not a list", patch: `load: {rate: {steps: "1000"}}`,
		field: "spec.load.rate.steps", msg: `must be of type array: "string"`},
	{name: "workload.direct is a string", patch: `workload: {direct: "yes"}`,
		field: "spec.workload.direct", msg: `must be of type boolean: "string"`},

	// storage
	{name: "empty storageClassName", patch: `storage: {storageClassName: ""}`,
		field: "spec.storage.storageClassName", msg: "should be at least 1 chars long"},
	{name: "storage.size too small", patch: `storage: {size: 512Ki}`,
		field: "spec.storage.size", msg: "storage.size must be a quantity between 1Mi and 1Pi, for example 10Gi"},
	{name: "storage.size too big", patch: `storage: {size: 2Pi}`,
		field: "spec.storage.size", msg: "storage.size must be a quantity between 1Mi and 1Pi, for example 10Gi"},
	{name: "storage.size not a quantity", patch: `storage: {size: 10GB}`,
		field: "spec.storage.size", msg: quantityPattern, also: "storage.size must be a quantity between 1Mi and 1Pi, for example 10Gi"},
	{name: "accessMode ReadOnlyMany", patch: `storage: {accessMode: ReadOnlyMany}`,
		field: "spec.storage.accessMode", msg: `Unsupported value: "ReadOnlyMany": supported values: "ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod"`},
	{name: "volumeMode Raw", patch: `storage: {volumeMode: Raw}`,
		field: "spec.storage.volumeMode", msg: `Unsupported value: "Raw": supported values: "Filesystem", "Block"`},
	{name: "sharing in lower case", patch: `storage: {sharing: shared}`,
		field: "spec.storage.sharing", msg: `Unsupported value: "shared": supported values: "Shared", "PerClient"`},
	{name: "Shared, 3 clients, ReadWriteOnce", patch: `{storage: {sharing: Shared, accessMode: ReadWriteOnce}, clients: {count: 3}}`,
		field: "spec.storage.accessMode", msg: "storage.sharing Shared with more than one client needs storage.accessMode ReadWriteMany"},
	{name: "Shared Block, 2 clients, ReadWriteOncePod", patch: `{storage: {sharing: Shared, volumeMode: Block, accessMode: ReadWriteOncePod}, clients: {count: 2}}`,
		field: "spec.storage.accessMode", msg: "storage.sharing Shared with more than one client needs storage.accessMode ReadWriteMany"},
	{name: "existingClaim with PerClient and 3 clients", patch: `{storage: {existingClaim: data, sharing: PerClient}, clients: {count: 3}}`,
		field: "spec.storage.existingClaim", msg: "storage.existingClaim is one volume: use storage.sharing Shared, or a single client"},

	// clients
	{name: "clients.count 0", patch: `clients: {count: 0}`,
		field: "spec.clients.count", msg: "should be greater than or equal to 1"},
	{name: "clients.count 1001", patch: `clients: {count: 1001}`,
		field: "spec.clients.count", msg: "should be less than or equal to 1000"},
	{name: "jobsPerClient 0", patch: `clients: {jobsPerClient: 0}`,
		field: "spec.clients.jobsPerClient", msg: "should be greater than or equal to 1"},
	{name: "jobsPerClient 65", patch: `clients: {jobsPerClient: 65}`,
		field: "spec.clients.jobsPerClient", msg: "should be less than or equal to 64"},
	{name: "empty image", patch: `clients: {image: ""}`,
		field: "spec.clients.image", msg: "should be at least 1 chars long"},
	{name: "33 tolerations", patch: `clients: {tolerations: [` + strings.Repeat(`{operator: Exists},`, 33) + `]}`,
		field: "spec.clients.tolerations", msg: "must have at most 32 items"},

	// workload
	{name: "unknown profile", patch: `workload: {profile: oltp-50-50}`,
		field: "spec.workload.profile", msg: `Unsupported value: "oltp-50-50": ` + profileEnumMsg},
	{name: "blockSize not a power of two", patch: `workload: {blockSize: 3000}`,
		field: "spec.workload.blockSize", msg: "workload.blockSize must be a power of two between 512 and 16Mi, for example 4Ki, 8Ki or 64Ki"},
	{name: "blockSize 12Ki", patch: `workload: {blockSize: 12Ki}`,
		field: "spec.workload.blockSize", msg: "workload.blockSize must be a power of two between 512 and 16Mi"},
	{name: "blockSize below 512", patch: `workload: {blockSize: "256"}`,
		field: "spec.workload.blockSize", msg: "workload.blockSize must be a power of two between 512 and 16Mi"},
	{name: "blockSize above 16Mi", patch: `workload: {blockSize: 32Mi}`,
		field: "spec.workload.blockSize", msg: "workload.blockSize must be a power of two between 512 and 16Mi"},
	{name: "blockSize 1.5Ki", patch: `workload: {blockSize: 1.5Ki}`,
		field: "spec.workload.blockSize", msg: "workload.blockSize must be a power of two between 512 and 16Mi"},
	{name: "blockSize not a quantity", patch: `workload: {blockSize: 4KB}`,
		field: "spec.workload.blockSize", msg: quantityPattern, also: "workload.blockSize must be a power of two between 512 and 16Mi"},
	{name: "readPercent 101", patch: `workload: {readPercent: 101}`,
		field: "spec.workload.readPercent", msg: "should be less than or equal to 100"},
	{name: "readPercent -1", patch: `workload: {readPercent: -1}`,
		field: "spec.workload.readPercent", msg: "should be greater than or equal to 0"},
	{name: "pattern rand", patch: `workload: {pattern: rand}`,
		field: "spec.workload.pattern", msg: `Unsupported value: "rand": supported values: "random", "sequential"`},
	{name: "ioDepth 0", patch: `workload: {ioDepth: 0}`,
		field: "spec.workload.ioDepth", msg: "should be greater than or equal to 1"},
	{name: "ioDepth 1025", patch: `workload: {ioDepth: 1025}`,
		field: "spec.workload.ioDepth", msg: "should be less than or equal to 1024"},
	{name: "ioEngine aio", patch: `workload: {ioEngine: aio}`,
		field: "spec.workload.ioEngine", msg: `Unsupported value: "aio": supported values: "libaio", "io_uring", "psync", "sync", "posixaio"`},
	{name: "compressPercent 100", patch: `workload: {compressPercent: 100}`,
		field: "spec.workload.compressPercent", msg: "should be less than or equal to 99"},
	{name: "workingSetPerClient below 1Mi", patch: `workload: {workingSetPerClient: 512Ki}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient must be a whole number of bytes between 1Mi and 64Ti, for example 10Gi"},
	{name: "workingSetPerClient not a whole number of bytes", patch: `workload: {workingSetPerClient: "1048576.5"}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient must be a whole number of bytes between 1Mi and 64Ti, for example 10Gi"},
	{name: "workingSetPerClient above 64Ti", patch: `{storage: {size: 1Pi}, workload: {workingSetPerClient: 65Ti}}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient must be a whole number of bytes between 1Mi and 64Ti, for example 10Gi"},
	{name: "PerClient working set larger than the volume", patch: `workload: {workingSetPerClient: 11Gi}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient does not fit in storage.size"},
	{name: "Shared working sets larger than the volume", patch: `{storage: {sharing: Shared}, clients: {count: 3}, workload: {workingSetPerClient: 4Gi}}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient does not fit in storage.size"},
	{name: "Shared Block working sets larger than the device", patch: `{storage: {sharing: Shared, volumeMode: Block}, clients: {count: 2}, workload: {workingSetPerClient: 6Gi}}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient does not fit in storage.size"},
	{name: "Block working set larger than the device", patch: `{storage: {volumeMode: Block, size: 1Gi}, workload: {workingSetPerClient: 2Gi}}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient does not fit in storage.size"},
	{name: "the profile's working set larger than the volume", patch: `{storage: {size: 512Mi}, workload: {profile: oltp}}`,
		field: "spec.workload.workingSetPerClient", msg: "workload.workingSetPerClient does not fit in storage.size"},
	{name: "synchronous engine at the profile's depth", patch: `workload: {profile: oltp, ioEngine: psync}`,
		field: "spec.workload.ioDepth", msg: "workload.ioDepth must be 1 with a synchronous ioEngine"},
	{name: "buffered libaio, the profile's engine", patch: `workload: {profile: oltp, direct: false}`,
		field: "spec.workload.direct", msg: "workload.direct false needs an ioEngine other than libaio"},
	{name: "queue depths on a synchronous engine", patch: `{workload: {ioEngine: sync, ioDepth: 1}, load: {rate: null, queueDepth: {steps: [1, 2]}}}`,
		field: "spec.workload.ioEngine", msg: "load.queueDepth needs an asynchronous workload.ioEngine"},

	// load: modes
	{name: "no load mode", patch: `load: {rate: null, stepDuration: 60s}`,
		field: "spec.load", msg: "load must set exactly one of rate, queueDepth, curve or clients"},
	{name: "two load modes", patch: `load: {curve: {percents: [50, 100]}}`,
		field: "spec.load", msg: "load must set exactly one of rate, queueDepth, curve or clients"},

	// load.rate
	{name: "rate steps decreasing", patch: `load: {rate: {steps: [2000, 1000]}}`,
		field: "spec.load.rate.steps", msg: "load.rate.steps must be strictly increasing"},
	{name: "rate steps duplicated", patch: `load: {rate: {steps: [1000, 1000, 2000]}}`,
		field: "spec.load.rate.steps[1]", msg: "Duplicate value: 1000"},
	{name: "rate step 0", patch: `load: {rate: {steps: [0, 1000]}}`,
		field: "spec.load.rate.steps[0]", msg: "should be greater than or equal to 1"},
	{name: "rate steps empty", patch: `load: {rate: {steps: []}}`,
		field: "spec.load.rate.steps", msg: "should have at least 1 items"},
	{name: "101 rate steps", patch: `load: {rate: {steps: [` + seq(1, 101) + `]}}`,
		field: "spec.load.rate.steps", msg: "must have at most 100 items"},
	{name: "rate unit KIOPS", patch: `load: {rate: {unit: KIOPS}}`,
		field: "spec.load.rate.unit", msg: `Unsupported value: "KIOPS": supported values: "IOPS", "MiBps"`},
	{name: "rate with steps and start", patch: `load: {rate: {start: 1000, max: 4000, increment: 1000}}`,
		field: "spec.load.rate", msg: "load.rate: set either steps, or start and max"},
	{name: "rate with neither steps nor start", patch: `load: {rate: {steps: null, unit: IOPS}}`,
		field: "spec.load.rate", msg: "load.rate: set either steps, or start and max"},
	{name: "rate start without max", patch: `load: {rate: {steps: null, start: 1000, increment: 1000}}`,
		field: "spec.load.rate.max", msg: "load.rate.max is required with start and must be at least start"},
	{name: "rate max below start", patch: `load: {rate: {steps: null, start: 1000, max: 500, increment: 100}}`,
		field: "spec.load.rate.max", msg: "load.rate.max is required with start and must be at least start"},
	{name: "rate with increment and factorPercent", patch: `load: {rate: {steps: null, start: 1000, max: 8000, increment: 1000, factorPercent: 200}}`,
		field: "spec.load.rate", msg: "load.rate: generated steps need exactly one of increment or factorPercent"},
	{name: "rate start with neither increment nor factorPercent", patch: `load: {rate: {steps: null, start: 1000, max: 8000}}`,
		field: "spec.load.rate", msg: "load.rate: generated steps need exactly one of increment or factorPercent"},
	{name: "rate max with listed steps", patch: `load: {rate: {max: 8000}}`,
		field: "spec.load.rate", msg: "load.rate: max, increment and factorPercent only go with start"},
	{name: "rate generates 101 steps", patch: `load: {rate: {steps: null, start: 1000, max: 101000, increment: 1000}}`,
		field: "spec.load.rate", msg: "load.rate generates more than 100 steps: raise increment or lower max"},
	{name: "rate factorPercent 100", patch: `load: {rate: {steps: null, start: 1000, max: 8000, factorPercent: 100}}`,
		field: "spec.load.rate.factorPercent", msg: "should be greater than or equal to 101"},
	{name: "rate max above 2^40", patch: `load: {rate: {steps: null, start: 1000, max: 1099511627777, factorPercent: 200}}`,
		field: "spec.load.rate.max", msg: "should be less than or equal to 1099511627776"},

	// load.queueDepth
	{name: "queueDepth steps below jobsPerClient", patch: `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {steps: [2, 8, 16]}}}`,
		field: "spec.load.queueDepth.steps", msg: "load.queueDepth.steps: every depth must be at least clients.jobsPerClient"},
	{name: "queueDepth start below jobsPerClient", patch: `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {start: 2, max: 64}}}`,
		field: "spec.load.queueDepth.start", msg: "load.queueDepth.start must be at least clients.jobsPerClient"},
	{name: "queueDepth steps decreasing", patch: `load: {rate: null, queueDepth: {steps: [8, 4]}}`,
		field: "spec.load.queueDepth.steps", msg: "load.queueDepth.steps must be strictly increasing"},
	{name: "queueDepth step 5000", patch: `load: {rate: null, queueDepth: {steps: [1, 5000]}}`,
		field: "spec.load.queueDepth.steps[1]", msg: "should be less than or equal to 4096"},
	{name: "queueDepth start without max", patch: `load: {rate: null, queueDepth: {start: 1}}`,
		field: "spec.load.queueDepth.max", msg: "load.queueDepth.max is required with start and must be at least start"},
	{name: "queueDepth max with steps", patch: `load: {rate: null, queueDepth: {steps: [1, 2], max: 8}}`,
		field: "spec.load.queueDepth.max", msg: "load.queueDepth.max only goes with start"},
	{name: "saturationPercent with queueDepth", patch: `load: {rate: null, queueDepth: {steps: [1, 2]}, stop: {saturationPercent: 90}}`,
		field: "spec.load.stop.saturationPercent", msg: "load.stop.saturationPercent needs an offered rate: it cannot be used with load.queueDepth"},
	{name: "Poisson arrivals with queueDepth", patch: `load: {rate: null, queueDepth: {steps: [8, 16]}, arrivals: Poisson}`,
		field: "spec.load.arrivals", msg: "load.arrivals Poisson needs an offered rate: use load.rate or load.curve, not load.queueDepth"},
	{name: "maxStall below a second", patch: `load: {stop: {maxStall: 0s}}`,
		field: "spec.load.stop.maxStall", msg: "load.stop.maxStall must be whole seconds between 1s and 1h"},
	{name: "maxStall not whole seconds", patch: `load: {stop: {maxStall: 2500ms}}`,
		field: "spec.load.stop.maxStall", msg: "should match '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$'"},
	{name: "maxStall over an hour", patch: `load: {stop: {maxStall: 61m}}`,
		field: "spec.load.stop.maxStall", msg: "load.stop.maxStall must be whole seconds between 1s and 1h"},
	{name: "steady-state rounds 1", patch: `analysis: {steadyState: {rounds: 1}}`,
		field: "spec.analysis.steadyState.rounds", msg: "should be greater than or equal to 2"},
	{name: "steady-state range 0", patch: `analysis: {steadyState: {rangePercent: 0}}`,
		field: "spec.analysis.steadyState.rangePercent", msg: "should be greater than or equal to 1"},
	{name: "arrivals unknown", patch: `load: {arrivals: Bursty}`,
		field: "spec.load.arrivals", msg: `Unsupported value: "Bursty"`},

	// load.repeat: every run is a step, so steps × repeat ≤ 100
	{name: "repeat 0", patch: `load: {repeat: 0}`,
		field: "spec.load.repeat", msg: "should be greater than or equal to 1"},
	{name: "repeat 11", patch: `load: {repeat: 11}`,
		field: "spec.load.repeat", msg: "should be less than or equal to 10"},
	{name: "99 curve percentages with the client-bound check", patch: `load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}`,
		field: "spec.load.curve.percents", msg: "load.curve.percents may list at most 98 percentages with the client-bound check"},
	{name: "34 rate steps × 3 runs", patch: `load: {repeat: 3, rate: {steps: [` + seq(1, 34) + `]}}`,
		field: "spec.load.repeat", msg: repeatMsg},
	{name: "51 generated rate steps × 2 runs", patch: `load: {repeat: 2, rate: {steps: null, start: 1000, max: 51000, increment: 1000}}`,
		field: "spec.load.repeat", msg: repeatMsg},
	{name: "13 doubling queue depths × 8 runs", patch: `load: {repeat: 8, rate: null, queueDepth: {start: 1, max: 4096}}`,
		field: "spec.load.repeat", msg: repeatMsg},
	{name: "the default curve (12 steps with its client-bound check) × 9 runs", patch: `load: {repeat: 9, rate: null, curve: {}}`,
		field: "spec.load.repeat", msg: repeatMsg},
	// load.extendUntilSteady: its most runs are steps too
	{name: "extendUntilSteady maxRuns 1", patch: `load: {extendUntilSteady: {maxRuns: 1}}`,
		field: "spec.load.extendUntilSteady.maxRuns", msg: "should be greater than or equal to 2"},
	{name: "extendUntilSteady maxRuns 11", patch: `load: {extendUntilSteady: {maxRuns: 11}}`,
		field: "spec.load.extendUntilSteady.maxRuns", msg: "should be less than or equal to 10"},
	{name: "34 rate steps × 3 runs until steady", patch: `load: {extendUntilSteady: {maxRuns: 3}, rate: {steps: [` + seq(1, 34) + `]}}`,
		field: "spec.load.extendUntilSteady.maxRuns", msg: extendMsg},
	{name: "the default curve × the default 3 runs until steady × repeat 3", patch: `load: {repeat: 3, extendUntilSteady: {}, rate: null, curve: {}}`,
		field: "spec.load.extendUntilSteady.maxRuns", msg: extendMsg},
	{name: "extendUntilSteady with 5 s steps and 6 rounds", patch: `{load: {extendUntilSteady: {}, stepDuration: 5s, rampTime: 0s}, analysis: {steadyState: {rounds: 6}}}`,
		field: "spec.load.extendUntilSteady", msg: "load.extendUntilSteady needs a load.stepDuration of at least analysis.steadyState.rounds seconds"},
	{name: "extendUntilSteady with fewer seconds than 8 rounds", patch: `{load: {extendUntilSteady: {}, stepDuration: 7s}, analysis: {steadyState: {rounds: 8}}}`,
		field: "spec.load.extendUntilSteady", msg: "at least analysis.steadyState.rounds seconds"},
	// regression: one baseline, a significance and effects in range
	{name: "regression without a baseline", patch: `regression: {baseline: {}}`,
		field: "spec.regression.baseline", msg: "regression.baseline must set exactly one of previousRun, benchmark, benchmarks or configMap"},
	{name: "regression with two baselines", patch: `regression: {baseline: {previousRun: {}, benchmark: nightly}}`,
		field: "spec.regression.baseline", msg: "exactly one of previousRun, benchmark, benchmarks or configMap"},
	{name: "regression with one benchmark and a list", patch: `regression: {baseline: {benchmark: a, benchmarks: [b, c]}}`,
		field: "spec.regression.baseline", msg: "exactly one of previousRun, benchmark, benchmarks or configMap"},
	{name: "regression on an empty list of benchmarks", patch: `regression: {baseline: {benchmarks: []}}`,
		field: "spec.regression.baseline.benchmarks", msg: "should have at least 1 items"},
	{name: "regression on 21 benchmarks", patch: `regression: {baseline: {benchmarks: [` + names(21) + `]}}`,
		field: "spec.regression.baseline.benchmarks", msg: "must have at most 20 items"},
	{name: "regression on a benchmark name that is no name", patch: `regression: {baseline: {benchmarks: [Nightly_1]}}`,
		field: "spec.regression.baseline.benchmarks[0]", msg: "should match"},
	{name: "regression on the previous 0 runs", patch: `regression: {baseline: {previousRun: {runs: 0}}}`,
		field: "spec.regression.baseline.previousRun.runs", msg: "should be greater than or equal to 1"},
	{name: "regression on the previous 21 runs", patch: `regression: {baseline: {previousRun: {runs: 21}}}`,
		field: "spec.regression.baseline.previousRun.runs", msg: "should be less than or equal to 20"},
	{name: "regression significance 0.5", patch: `regression: {baseline: {benchmark: a}, significance: "0.5"}`,
		field: "spec.regression.significance", msg: "regression.significance must be a decimal fraction above 0 and at most 0.2"},
	{name: "regression significance 0", patch: `regression: {baseline: {benchmark: a}, significance: "0.0"}`,
		field: "spec.regression.significance", msg: "above 0 and at most 0.2"},
	{name: "regression significance 1e-3", patch: `regression: {baseline: {benchmark: a}, significance: "1e-3"}`,
		field: "spec.regression.significance", msg: "should match"},
	{name: "regression minIOPSDropPercent 100", patch: `regression: {baseline: {benchmark: a}, minIOPSDropPercent: 100}`,
		field: "spec.regression.minIOPSDropPercent", msg: "should be less than or equal to 99"},
	{name: "regression minP99RisePercent 0", patch: `regression: {baseline: {benchmark: a}, minP99RisePercent: 0}`,
		field: "spec.regression.minP99RisePercent", msg: "should be greater than or equal to 1"},
	{name: "regression baseline benchmark not a name", patch: `regression: {baseline: {benchmark: "../x"}}`,
		field: "spec.regression.baseline.benchmark", msg: "should match"},
	{name: "maxVariationPercent 0", patch: `analysis: {maxVariationPercent: 0}`,
		field: "spec.analysis.maxVariationPercent", msg: "should be greater than or equal to 1"},
	{name: "maxVariationPercent 101", patch: `analysis: {maxVariationPercent: 101}`,
		field: "spec.analysis.maxVariationPercent", msg: "should be less than or equal to 100"},

	// load.curve
	{name: "curve percents decreasing", patch: `load: {rate: null, curve: {percents: [50, 20]}}`,
		field: "spec.load.curve.percents", msg: "load.curve.percents must be strictly increasing"},
	{name: "curve percent 101", patch: `load: {rate: null, curve: {percents: [50, 101]}}`,
		field: "spec.load.curve.percents[1]", msg: "should be less than or equal to 100"},

	// load durations
	{name: "stepDuration 2s", patch: `load: {stepDuration: 2s, rampTime: 1s}`,
		field: "spec.load.stepDuration", msg: stepDurationMsg},
	{name: "stepDuration 25h", patch: `load: {stepDuration: 25h}`,
		field: "spec.load.stepDuration", msg: stepDurationMsg},
	{name: "stepDuration not a duration", patch: `load: {stepDuration: one minute}`,
		field: "spec.load.stepDuration", msg: `must be of type duration: "one minute"`, also: durationPattern},
	// OpenAPI's duration format also accepts days, weeks and spaces, which
	// the operator's Go types (time.ParseDuration) cannot decode.
	{name: "stepDuration in days", patch: `load: {stepDuration: 1d}`,
		field: "spec.load.stepDuration", msg: durationPattern},
	{name: "stepDuration with a space", patch: `load: {stepDuration: "1 h"}`,
		field: "spec.load.stepDuration", msg: durationPattern},
	{name: "stepDuration is a number", patch: `load: {stepDuration: 90}`,
		field: "spec.load.stepDuration", msg: `must be of type duration: "int64"`},
	{name: "rampTime as long as the step", patch: `load: {stepDuration: 30s, rampTime: 30s}`,
		field: "spec.load.rampTime", msg: "load.rampTime must be shorter than load.stepDuration"},
	{name: "rampTime negative", patch: `load: {rampTime: -1s}`,
		field: "spec.load.rampTime", msg: "load.rampTime must be a duration of at least 0s, such as 5s or 1m"},

	// load.stop
	{name: "stop latency limit 2h", patch: `load: {stop: {latency: {limit: 2h}}}`,
		field: "spec.load.stop.latency.limit", msg: "load.stop.latency.limit must be a duration between 1us and 1h, such as 500us or 2ms"},
	{name: "stop latency limit 0s", patch: `load: {stop: {latency: {limit: 0s}}}`,
		field: "spec.load.stop.latency.limit", msg: "load.stop.latency.limit must be a duration between 1us and 1h, such as 500us or 2ms"},
	{name: "stop latency without limit", patch: `load: {stop: {latency: {metric: p99}}}`,
		field: "spec.load.stop.latency.limit", msg: "Required value"},
	{name: "stop latency metric p95", patch: `load: {stop: {latency: {metric: p95, limit: 5ms}}}`,
		field: "spec.load.stop.latency.metric", msg: `Unsupported value: "p95": supported values: "mean", "p50", "p90", "p99", "p99.9"`},
	{name: "stop saturationPercent 0", patch: `load: {stop: {saturationPercent: 0}}`,
		field: "spec.load.stop.saturationPercent", msg: "should be greater than or equal to 1"},

	// analysis
	{name: "latencyTarget in weeks", patch: `analysis: {latencyTarget: 1w}`,
		field: "spec.analysis.latencyTarget", msg: durationPattern, also: "analysis.latencyTarget must be a duration between 1us and 1h, such as 500us or 1ms"},
	{name: "latencyTarget 0s", patch: `analysis: {latencyTarget: 0s}`,
		field: "spec.analysis.latencyTarget", msg: "analysis.latencyTarget must be a duration between 1us and 1h, such as 500us or 1ms"},
	{name: "analysis saturationPercent 101", patch: `analysis: {saturationPercent: 101}`,
		field: "spec.analysis.saturationPercent", msg: "should be less than or equal to 100"},
	{name: "targetLatency operation both", patch: `analysis: {targetLatency: {operation: both}}`,
		field: "spec.analysis.targetLatency.operation", msg: `Unsupported value: "both": supported values: "read", "write", "total", "worst"`},

	// slo
	{name: "slo without objectives", patch: `slo: {objectives: []}`,
		field: "spec.slo.objectives", msg: "should have at least 1 items"},
	{name: "slo objective of no kind", patch: `slo: {objectives: [{name: fast}]}`,
		field: "spec.slo.objectives[0]", msg: "each slo objective must set exactly one of latencyAtLoad, peakIOPS, peakMiBps, iopsAtLatency, mibpsAtLatency or maxStall"},
	{name: "slo objective of two kinds", patch: `slo: {objectives: [{name: fast, peakIOPS: 1000, peakMiBps: 100}]}`,
		field: "spec.slo.objectives[0]", msg: "each slo objective must set exactly one of latencyAtLoad, peakIOPS, peakMiBps, iopsAtLatency, mibpsAtLatency or maxStall"},
	{name: "slo maxStall in milliseconds", patch: `slo: {objectives: [{name: failover, maxStall: 1500ms}]}`,
		field: "spec.slo.objectives[0].maxStall", msg: "should match '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$'"},
	{name: "slo maxStall of two hours", patch: `slo: {objectives: [{name: failover, maxStall: 2h}]}`,
		field: "spec.slo.objectives[0].maxStall", msg: "slo maxStall must be whole seconds between 1s and 1h"},
	{name: "slo objective name with capitals", patch: `slo: {objectives: [{name: P99_Read, peakIOPS: 1000}]}`,
		field: "spec.slo.objectives[0].name", msg: "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"},
	{name: "slo objective names duplicated", patch: `slo: {objectives: [{name: fast, peakIOPS: 1000}, {name: fast, peakMiBps: 100}]}`,
		field: "spec.slo.objectives[1]", msg: "Duplicate value"},
	{name: "slo peakIOPS 0", patch: `slo: {objectives: [{name: fast, peakIOPS: 0}]}`,
		field: "spec.slo.objectives[0].peakIOPS", msg: "should be greater than or equal to 1"},
	{name: "slo maxLatency 0s", patch: `slo: {objectives: [{name: p99, latencyAtLoad: {metric: p99, maxLatency: 0s, minIOPS: 1000}}]}`,
		field: "spec.slo.objectives[0].latencyAtLoad.maxLatency", msg: maxLatencyMsg},
	{name: "slo maxLatency 2h", patch: `slo: {objectives: [{name: at, iopsAtLatency: {maxLatency: 2h, minIOPS: 1}}]}`,
		field: "spec.slo.objectives[0].iopsAtLatency.maxLatency", msg: maxLatencyMsg},
	{name: "slo maxLatency in days", patch: `slo: {objectives: [{name: at, mibpsAtLatency: {maxLatency: 1d, minMiBps: 1}}]}`,
		field: "spec.slo.objectives[0].mibpsAtLatency.maxLatency", msg: durationPattern, also: maxLatencyMsg},
	{name: "slo minMiBps above 2^40", patch: `slo: {objectives: [{name: at, mibpsAtLatency: {maxLatency: 1ms, minMiBps: 1099511627777}}]}`,
		field: "spec.slo.objectives[0].mibpsAtLatency.minMiBps", msg: "should be less than or equal to 1099511627776"},
	{name: "slo iopsAtLatency without minIOPS", patch: `slo: {objectives: [{name: at1ms, iopsAtLatency: {maxLatency: 1ms}}]}`,
		field: "spec.slo.objectives[0].iopsAtLatency.minIOPS", msg: "Required value"},
	{name: "17 slo objectives", patch: `slo: {objectives: [` + objectives(17) + `]}`,
		field: "spec.slo.objectives", msg: "must have at most 16 items"},

	// cleanup
	{name: "cleanup volumes Keep", patch: `cleanup: {volumes: Keep}`,
		field: "spec.cleanup.volumes", msg: `Unsupported value: "Keep": supported values: "Delete", "Retain"`},
	{name: "ttl negative", patch: `cleanup: {ttlSecondsAfterFinished: -1}`,
		field: "spec.cleanup.ttlSecondsAfterFinished", msg: "should be greater than or equal to 0"},
	{name: "ttl above a year", patch: `cleanup: {ttlSecondsAfterFinished: 31536001}`,
		field: "spec.cleanup.ttlSecondsAfterFinished", msg: "should be less than or equal to 31536000"},
}

// seq lists from..to as YAML flow items.
func seq(from, to int) string {
	s := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, ", ")
}

// objectives lists n distinct valid objectives as YAML flow items.
func objectives(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("{name: o%d, peakIOPS: %d}", i, i+1)
	}
	return strings.Join(s, ", ")
}

func TestInvalidSpecsRejected(t *testing.T) {
	seen := map[string]bool{}
	for i, tc := range badSpecs {
		key := tc.objName + "\x00" + tc.patch
		if seen[key] {
			t.Fatalf("case %q repeats an earlier bad spec", tc.name)
		}
		seen[key] = true
		t.Run(tc.name, func(t *testing.T) {
			name := tc.objName
			if name == "" {
				name = fmt.Sprintf("bad-%03d", i)
			}
			obj := newObject(t, name, tc.patch)
			err := k8s.Create(context.Background(), obj)
			if err == nil {
				_ = k8s.Delete(context.Background(), obj)
				t.Fatalf("bad spec accepted: %v", obj.Object["spec"])
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want an Invalid error", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q\ndoes not contain %q", err, tc.msg)
			}
			cs := violations(causes(t, err))
			var found bool
			for _, c := range cs {
				if c.Field == tc.field && strings.Contains(c.Message, tc.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no cause at field %q with message %q; causes: %+v", tc.field, tc.msg, cs)
			}
			want := 1
			if tc.also != "" {
				want = 2
				if !slices.ContainsFunc(cs, func(c metav1.StatusCause) bool {
					return c.Field == tc.field && strings.Contains(c.Message, tc.also)
				}) {
					t.Errorf("no cause at field %q with message %q; causes: %+v", tc.field, tc.also, cs)
				}
			}
			if len(cs) != want {
				t.Errorf("want %d violations, got %d: %+v", want, len(cs), cs)
			}
		})
	}
	if len(badSpecs) < 30 {
		t.Errorf("only %d bad specs, want at least 30", len(badSpecs))
	}
}

// goodSpecs must all be accepted: they guard against rules that reject
// more than they should.
var goodSpecs = []struct{ name, patch string }{
	{"minimal", ``},
	{"regression on the previous run", `regression: {baseline: {previousRun: {}}}`},
	{"regression on the previous 20 runs", `regression: {baseline: {previousRun: {runs: 20}}}`},
	{"regression on 20 named runs", `regression: {baseline: {benchmarks: [` + names(20) + `]}}`},
	{"regression on a pinned baseline, 0.1 % significance", `regression: {baseline: {configMap: oltp-baseline}, significance: ".001", minIOPSDropPercent: 5, minP99RisePercent: 1000}`},
	{"Poisson arrivals on rate steps", `load: {arrivals: Poisson}`},
	{"maxStall in whole seconds", `load: {stop: {maxStall: 2m3s}}`},
	{"maxStall of an hour", `load: {stop: {maxStall: 1h}}`},
	{"slo maxStall", `slo: {objectives: [{name: failover, maxStall: 30s}]}`},
	{"Poisson arrivals on a curve", `load: {rate: null, curve: {percents: [50]}, arrivals: Poisson}`},
	{"integer quantities", `{storage: {size: 10737418240}, workload: {blockSize: 4096, workingSetPerClient: 1073741824}}`},
	{"every workload field", `workload: {profile: oltp, blockSize: 16Mi, readPercent: 0, pattern: sequential, ioDepth: 1024, ioEngine: io_uring, direct: false, workingSetPerClient: 10Gi, compressPercent: 99}`},
	{"fractional quantities that are whole bytes", `{storage: {size: 2.5Gi}, workload: {workingSetPerClient: 1.5Gi}}`},
	{"largest working set", `{storage: {size: 1Pi}, workload: {workingSetPerClient: 64Ti}}`},
	{"smallest block and working set", `{storage: {size: 1Mi}, workload: {blockSize: 512, workingSetPerClient: 1Mi}}`},
	{"Shared, 3 clients, accessMode unset", `{storage: {sharing: Shared}, clients: {count: 3}, workload: {workingSetPerClient: 3Gi}}`},
	{"Shared, 3 clients, ReadWriteMany", `{storage: {sharing: Shared, accessMode: ReadWriteMany}, clients: {count: 3}}`},
	{"Shared, 1 client, ReadWriteOncePod", `{storage: {sharing: Shared, accessMode: ReadWriteOncePod}}`},
	{"Shared Block, 2 clients, ReadWriteMany", `{storage: {sharing: Shared, volumeMode: Block, accessMode: ReadWriteMany}, clients: {count: 2}, workload: {workingSetPerClient: 5Gi}}`},
	{"PerClient, 1000 clients, ReadWriteOnce", `{storage: {accessMode: ReadWriteOnce}, clients: {count: 1000, jobsPerClient: 64}}`},
	{"existingClaim, Shared, 4 clients, large working set", `{storage: {existingClaim: data, sharing: Shared}, clients: {count: 4}, workload: {workingSetPerClient: 100Gi}}`},
	{"existingClaim, 1 client", `storage: {existingClaim: data}`},
	{"rate generated by increment, exactly 100 steps", `load: {rate: {steps: null, unit: MiBps, start: 100, max: 10000, increment: 100}}`},
	{"rate generated by factorPercent", `load: {rate: {steps: null, start: 1000, max: 1099511627776, factorPercent: 200}, stop: {saturationPercent: 80}}`},
	{"100 rate steps", `load: {rate: {steps: [` + seq(1, 100) + `]}}`},
	{"98 curve percentages and the client-bound check", `load: {rate: null, curve: {percents: [` + seq(1, 98) + `]}}`},
	{"99 curve percentages without it", `load: {rate: null, curve: {percents: [` + seq(1, 99) + `], clientBoundCheck: false}}`},
	{"10 rate steps × 10 runs", `{load: {repeat: 10, rate: {steps: [` + seq(1, 10) + `]}}, analysis: {maxVariationPercent: 100}}`},
	{"50 generated rate steps × 2 runs", `load: {repeat: 2, rate: {steps: null, start: 1000, max: 50000, increment: 1000}}`},
	{"10 doubling queue depths × 10 runs", `load: {repeat: 10, rate: null, queueDepth: {start: 8, max: 4096}}`},
	{"33 rate steps × 3 runs until steady", `load: {extendUntilSteady: {maxRuns: 3}, rate: {steps: [` + seq(1, 33) + `]}}`},
	{"5 s steps with 5 rounds, whatever the ramp", `load: {extendUntilSteady: {maxRuns: 10}, stepDuration: 5s, rampTime: 4s}`},
	{"the default curve × 8 runs", `{load: {repeat: 8, rate: null, curve: {}}, analysis: {maxVariationPercent: 1}}`},
	{"the default curve without its client-bound check × 9 runs", `{load: {repeat: 9, rate: null, curve: {clientBoundCheck: false}}}`},
	{"a synchronous engine's curve, which skips the check, × 9 runs", `{workload: {ioEngine: psync, ioDepth: 1}, load: {repeat: 9, rate: null, curve: {}}}`},
	{"99 curve percentages on a synchronous engine", `{workload: {ioEngine: sync, ioDepth: 1}, load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}}`},
	// Steps generated by a factor are counted by the operator, not at
	// admission (InvalidSpec when they are too many).
	{"generated by factorPercent × 10 runs", `load: {repeat: 10, rate: {steps: null, start: 1000, max: 1200, factorPercent: 101}}`},
	{"queueDepth steps at jobsPerClient", `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {steps: [4, 8, 4096]}}}`},
	{"queueDepth generated", `{clients: {jobsPerClient: 2}, load: {rate: null, queueDepth: {start: 2, max: 2}}}`},
	{"curve default percents", `load: {rate: null, curve: {}}`},
	{"curve with percents and stop rules", `load: {rate: null, curve: {percents: [1, 50, 100], unit: MiBps}, stop: {saturationPercent: 100, latency: {metric: p99.9, operation: worst, limit: 1h}}}`},
	{"durations at their bounds", `load: {stepDuration: 24h, rampTime: 23h59m59s, stop: {latency: {limit: 1us}}}`},
	{"shortest step", `load: {stepDuration: 5s, rampTime: 0s}`},
	{"every Go duration syntax", `{load: {stepDuration: 1h0m0.5s, rampTime: .5s, stop: {latency: {limit: 500µs}}}, analysis: {latencyTarget: 250μs}, slo: {objectives: [{name: at, iopsAtLatency: {maxLatency: 1.5ms, minIOPS: 1}}]}}`},
	{"every slo kind", `slo: {objectives: [` +
		`{name: p99-read, latencyAtLoad: {metric: p99, operation: read, maxLatency: 2ms, minIOPS: 40000}}, ` +
		`{name: peak, peakIOPS: 100000}, ` +
		`{name: bw, peakMiBps: 500}, ` +
		`{name: iops-at-1ms, iopsAtLatency: {maxLatency: 1ms, minIOPS: 20000}}, ` +
		`{name: mibps-at-5ms, mibpsAtLatency: {metric: p90, operation: write, maxLatency: 5ms, minMiBps: 200}}]}`},
	{"16 slo objectives", `slo: {objectives: [` + objectives(16) + `]}`},
	{"verify what a workload writes", `{verify: {}, workload: {readPercent: 30}}`},
	{"analysis and cleanup", `{analysis: {latencyTarget: 500us, saturationPercent: 100, targetLatency: {metric: p99, operation: worst}}, cleanup: {volumes: Retain, ttlSecondsAfterFinished: 31536000}}`},
	{"client placement", `clients: {nodeSelector: {disk: ssd}, tolerations: [{key: storage, operator: Exists, effect: NoSchedule}], spreadAcrossNodes: true, image: "example.com/runner:v1", resources: {requests: {cpu: 500m, memory: 256Mi}}}`},
}

func TestValidSpecsAccepted(t *testing.T) {
	for i, tc := range goodSpecs {
		t.Run(tc.name, func(t *testing.T) {
			obj := newObject(t, fmt.Sprintf("good-%03d", i), tc.patch)
			if err := k8s.Create(context.Background(), obj); err != nil {
				t.Fatalf("valid spec rejected: %v", err)
			}
			// The operator must be able to decode whatever the API server
			// accepted into its Go types.
			var sb v1alpha1.StorageBenchmark
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), &sb); err != nil {
				t.Errorf("accepted spec does not decode into the Go types: %v", err)
			}
			if err := k8s.Delete(context.Background(), obj); err != nil {
				t.Errorf("deleting: %v", err)
			}
		})
	}
}

func TestNameOf40CharactersAccepted(t *testing.T) {
	obj := newObject(t, strings.Repeat("n", 40), "")
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("40-character name rejected: %v", err)
	}
	if err := k8s.Delete(context.Background(), obj); err != nil {
		t.Errorf("deleting: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	ctx := context.Background()
	minimal := `
apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmark
metadata:
  name: defaults
  namespace: validation
spec:
  storage:
    storageClassName: fast
  load:
    rate:
      steps: [1000, 2000]
`
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(minimal), &u.Object); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, u); err != nil {
		t.Fatalf("minimal spec rejected: %v", err)
	}
	var sb v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "defaults"}, &sb); err != nil {
		t.Fatal(err)
	}
	s := sb.Spec
	check := func(field string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s defaulted to %v, want %v", field, got, want)
		}
	}
	check("storage.storageClassName", deref(s.Storage.StorageClassName), "fast")
	check("clients.count", s.Clients.Count, int32(1))
	check("clients.jobsPerClient", s.Clients.JobsPerClient, int32(1))
	check("storage.size", s.Storage.Size.String(), "10Gi")
	check("storage.volumeMode", s.Storage.VolumeMode, corev1.PersistentVolumeFilesystem)
	check("storage.sharing", s.Storage.Sharing, v1alpha1.SharingPerClient)
	check("storage.accessMode", s.Storage.AccessMode, corev1.PersistentVolumeAccessMode(""))
	check("load.stepDuration", s.Load.StepDuration.Duration, 60*time.Second)
	check("load.rampTime", s.Load.RampTime.Duration, 5*time.Second) // defaulted: never nil here
	check("load.arrivals", s.Load.Arrivals, v1alpha1.ArrivalsUniform)
	check("load.repeat", s.Load.Repeat, int32(1))
	check("analysis.maxVariationPercent set", s.Analysis.MaxVariationPercent != nil, false)
	if s.Load.Rate == nil {
		t.Fatal("load.rate lost")
	}
	check("load.rate.unit", s.Load.Rate.Unit, v1alpha1.RateUnit("IOPS"))
	check("load.rate.steps", fmt.Sprint(s.Load.Rate.Steps), "[1000 2000]")
	check("analysis.latencyTarget", s.Analysis.LatencyTarget.Duration, time.Millisecond)
	check("analysis.targetLatency.metric", s.Analysis.TargetLatency.Metric, v1alpha1.LatencyMetric("mean"))
	check("analysis.targetLatency.operation", s.Analysis.TargetLatency.Operation, v1alpha1.Operation("total"))
	check("analysis.saturationPercent", s.Analysis.SaturationPercent, int32(90))
	check("analysis.steadyState.rounds", s.Analysis.SteadyState.Rounds, int32(5))
	check("analysis.steadyState.rangePercent", s.Analysis.SteadyState.RangePercent, int32(20))
	check("analysis.steadyState.slopePercent", s.Analysis.SteadyState.SlopePercent, int32(10))
	check("cleanup.volumes", s.Cleanup.Volumes, v1alpha1.VolumesDelete)
	check("cleanup.ttlSecondsAfterFinished set", s.Cleanup.TTLSecondsAfterFinished != nil, false)
	check("precondition.fill set", s.Precondition.Fill != nil, true)
	if s.Precondition.Fill != nil {
		check("precondition.fill", *s.Precondition.Fill, true)
	}
	check("workload.profile", s.Workload.Profile, "")
	check("slo set", s.SLO != nil, false)

	// Defaults inside optional structs apply when the struct is given.
	curve := newObject(t, "defaults-curve", `load: {rate: null, curve: {}, stop: {latency: {limit: 2ms}}}`)
	if err := k8s.Create(ctx, curve); err != nil {
		t.Fatalf("curve spec rejected: %v", err)
	}
	var c v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(curve), &c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Load.Curve == nil || c.Spec.Load.Stop == nil || c.Spec.Load.Stop.Latency == nil {
		t.Fatalf("curve or stop lost: %+v", c.Spec.Load)
	}
	check("load.curve.unit", c.Spec.Load.Curve.Unit, v1alpha1.RateUnit("IOPS"))
	check("load.curve.percents", len(c.Spec.Load.Curve.Percents), 0)
	check("load.stop.latency.metric", c.Spec.Load.Stop.Latency.Metric, v1alpha1.LatencyMetric("mean"))
	check("load.stop.latency.operation", c.Spec.Load.Stop.Latency.Operation, v1alpha1.Operation("total"))
	check("load.stop.latency.limit", c.Spec.Load.Stop.Latency.Limit.Duration, 2*time.Millisecond)

	slo := newObject(t, "defaults-slo", `slo: {objectives: [{name: p99, latencyAtLoad: {maxLatency: 2ms, minIOPS: 100}}, {name: at1ms, iopsAtLatency: {maxLatency: 1ms, minIOPS: 1}}, {name: bw, mibpsAtLatency: {maxLatency: 1ms, minMiBps: 1}}]}`)
	if err := k8s.Create(ctx, slo); err != nil {
		t.Fatalf("slo spec rejected: %v", err)
	}
	var o v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(slo), &o); err != nil {
		t.Fatal(err)
	}
	if o.Spec.SLO == nil || len(o.Spec.SLO.Objectives) != 3 {
		t.Fatalf("objectives lost: %+v", o.Spec.SLO)
	}
	for _, sel := range []v1alpha1.LatencySelector{
		o.Spec.SLO.Objectives[0].LatencyAtLoad.LatencySelector,
		o.Spec.SLO.Objectives[1].IOPSAtLatency.LatencySelector,
		o.Spec.SLO.Objectives[2].MiBpsAtLatency.LatencySelector,
	} {
		check("objective metric", sel.Metric, v1alpha1.LatencyMetric("mean"))
		check("objective operation", sel.Operation, v1alpha1.Operation("total"))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestSpecImmutable(t *testing.T) {
	ctx := context.Background()
	obj := newObject(t, "immutable", `workload: {profile: oltp}`)
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(obj)

	get := func() *v1alpha1.StorageBenchmark {
		t.Helper()
		var sb v1alpha1.StorageBenchmark
		if err := k8s.Get(ctx, key, &sb); err != nil {
			t.Fatal(err)
		}
		return &sb
	}

	specChanges := []struct {
		name   string
		mutate func(*v1alpha1.StorageBenchmarkSpec)
	}{
		{"rate steps", func(s *v1alpha1.StorageBenchmarkSpec) { s.Load.Rate.Steps = append(s.Load.Rate.Steps, 8000) }},
		{"clients.count", func(s *v1alpha1.StorageBenchmarkSpec) { s.Clients.Count = 2 }},
		{"workload.profile", func(s *v1alpha1.StorageBenchmarkSpec) { s.Workload.Profile = "rand-read" }},
		{"storage.size", func(s *v1alpha1.StorageBenchmarkSpec) { s.Storage.Size = resource.MustParse("20Gi") }},
		{"adding an slo", func(s *v1alpha1.StorageBenchmarkSpec) {
			s.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{{Name: "peak", PeakIOPS: ptr(int64(10))}}}
		}},
	}
	for _, c := range specChanges {
		t.Run("spec "+c.name, func(t *testing.T) {
			sb := get()
			c.mutate(&sb.Spec)
			err := k8s.Update(ctx, sb)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("spec change: got %v, want an Invalid error", err)
			}
			const msg = "spec cannot change once the benchmark exists: delete it and create a new one"
			var found bool
			for _, cs := range causes(t, err) {
				if cs.Field == "spec" && strings.Contains(cs.Message, msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("error %v lacks %q at spec", err, msg)
			}
		})
	}

	t.Run("spec patched unchanged", func(t *testing.T) {
		// Re-sending the spec as read, defaults included, is no change.
		sb := get()
		if err := k8s.Update(ctx, sb); err != nil {
			t.Fatalf("update with the same spec refused: %v", err)
		}
	})

	t.Run("labels and annotations", func(t *testing.T) {
		sb := get()
		sb.Labels = map[string]string{"team": "storage"}
		sb.Annotations = map[string]string{"note": "baseline"}
		if err := k8s.Update(ctx, sb); err != nil {
			t.Fatalf("metadata update refused: %v", err)
		}
		got := get()
		if got.Labels["team"] != "storage" || got.Annotations["note"] != "baseline" {
			t.Errorf("metadata not stored: %v %v", got.Labels, got.Annotations)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		sb := get()
		before := sb.Spec.DeepCopy()
		sb.Status.ObservedGeneration = sb.Generation
		sb.Status.StepsPlanned = 3
		sb.Status.Progress = "1/3"
		sb.Status.Conditions = []metav1.Condition{{
			Type: v1alpha1.ConditionReconciling, Status: metav1.ConditionTrue,
			Reason: "Running", Message: "step 1 of 3", LastTransitionTime: metav1.Now(),
		}}
		// A spec change sent to the status subresource is ignored, not an
		// error.
		sb.Spec.Clients.Count = 7
		if err := k8s.Status().Update(ctx, sb); err != nil {
			t.Fatalf("status update refused: %v", err)
		}
		got := get()
		if got.Status.Progress != "1/3" || got.Status.StepsPlanned != 3 || len(got.Status.Conditions) != 1 {
			t.Errorf("status not stored: %+v", got.Status)
		}
		if got.Spec.Clients.Count != before.Clients.Count {
			t.Errorf("status update changed spec.clients.count to %d", got.Spec.Clients.Count)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestPatchesOnNonCanonicalSpec: the spec is stored as the user wrote it,
// and "1024Mi", 4096 or an explicit false come back from the Go types as
// "1Gi", "4Ki" or nothing, so a client that re-sends a decoded spec with
// Update changes it in the eyes of the immutability rule. Metadata must
// therefore be written with a patch, and status through the status
// subresource; both work whatever the spec looks like.
func TestPatchesOnNonCanonicalSpec(t *testing.T) {
	ctx := context.Background()
	obj := newObject(t, "non-canonical", `{storage: {size: 1024Mi}, clients: {spreadAcrossNodes: false, tolerations: []}, workload: {blockSize: 4096, workingSetPerClient: 0.5Gi}, load: {stepDuration: 90s, rampTime: 1000ms}}`)
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	var sb v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), &sb); err != nil {
		t.Fatal(err)
	}
	before := sb.DeepCopy()
	sb.Finalizers = append(sb.Finalizers, "storagebench.io/cleanup")
	sb.Labels = map[string]string{"team": "storage"}
	if err := k8s.Patch(ctx, &sb, client.MergeFrom(before)); err != nil {
		t.Fatalf("merge patch of metadata refused: %v", err)
	}
	sb.Status.Progress = "0/3"
	if err := k8s.Status().Update(ctx, &sb); err != nil {
		t.Fatalf("status update refused: %v", err)
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("StorageBenchmark"))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(stored.Object, "spec", "storage", "size"); got != "1024Mi" {
		t.Errorf("stored storage.size %q, want it as written, 1024Mi", got)
	}
	if got := stored.GetFinalizers(); !slices.Equal(got, []string{"storagebench.io/cleanup"}) {
		t.Errorf("finalizers %q", got)
	}
	if got, _, _ := unstructured.NestedString(stored.Object, "status", "progress"); got != "0/3" {
		t.Errorf("status.progress %q, want 0/3", got)
	}
	// Clean up: the API server runs no controller that would remove the
	// finalizer.
	latest := &v1alpha1.StorageBenchmark{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), latest); err != nil {
		t.Fatal(err)
	}
	orig := latest.DeepCopy()
	latest.Finalizers = nil
	if err := k8s.Patch(ctx, latest, client.MergeFrom(orig)); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
}

// TestPrinterColumns asks the API server for the Table kubectl get prints.
func TestPrinterColumns(t *testing.T) {
	ctx := context.Background()
	obj := newObject(t, "columns", `{workload: {profile: mix-8k-75}, slo: {objectives: [{name: peak, peakIOPS: 1000}]}}`)
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	var sb v1alpha1.StorageBenchmark
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), &sb); err != nil {
		t.Fatal(err)
	}
	p99 := metav1.Duration{Duration: 1500 * time.Microsecond}
	sb.Status = v1alpha1.StorageBenchmarkStatus{
		Progress: "3/3",
		Storage:  &v1alpha1.StorageStatus{StorageClassName: "fast"},
		Summary:  &v1alpha1.SummaryStatus{PeakIOPS: 41234, P99LatencyAtPeak: &p99},
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue, Reason: "AllStepsRan", LastTransitionTime: metav1.Now()},
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Completed", LastTransitionTime: metav1.Now()},
			{Type: v1alpha1.ConditionSLOMet, Status: metav1.ConditionFalse, Reason: "ObjectivesNotMet", LastTransitionTime: metav1.Now()},
		},
	}
	if err := k8s.Status().Update(ctx, &sb); err != nil {
		t.Fatalf("status update: %v", err)
	}

	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/storagebench.io/v1alpha1/namespaces/%s/storagebenchmarks/columns", strings.TrimSuffix(restCfg.Host, "/"), namespace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET table: %s: %s", resp.Status, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatalf("decoding the table: %v", err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	wantNames := []string{"Name", "Status", "Class", "Profile", "Step", "Peak IOPS", "P99", "SLO", "Regression", "Age"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("columns %q, want %q", names, wantNames)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	cells := make([]string, len(table.Rows[0].Cells))
	for i, c := range table.Rows[0].Cells {
		cells[i] = fmt.Sprint(c)
	}
	want := []string{"columns", "Completed", "fast", "mix-8k-75", "3/3", "41234", "1.5ms", "ObjectivesNotMet"}
	if !slices.Equal(cells[:len(want)], want) {
		t.Errorf("row %q, want it to start with %q", cells, want)
	}
	if cells[len(cells)-1] == "" || cells[len(cells)-1] == "<nil>" {
		t.Errorf("Age cell empty: %q", cells)
	}
}

// TestEnumsMatchWorkload reads the generated CRD (no API server) and checks
// that the enums of workload.profile, ioEngine and pattern are exactly what
// internal/workload accepts, so the two cannot drift apart.
func TestEnumsMatchWorkload(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "storagebench.io_storagebenchmarks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("decoding the CRD: %v", err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("want one version with a schema, got %d", len(crd.Spec.Versions))
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	wl := root.Properties["spec"].Properties["workload"]

	enum := func(field string) []string {
		t.Helper()
		p, ok := wl.Properties[field]
		if !ok {
			t.Fatalf("spec.workload.%s missing from the CRD", field)
		}
		var out []string
		for _, v := range p.Enum {
			var s string
			if err := json.Unmarshal(v.Raw, &s); err != nil {
				t.Fatalf("spec.workload.%s enum value %s: %v", field, v.Raw, err)
			}
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(vs []string) []string {
		vs = slices.Clone(vs)
		slices.Sort(vs)
		return vs
	}
	strs := func(vs any) []string {
		var out []string
		switch vs := vs.(type) {
		case []workload.IOEngine:
			for _, v := range vs {
				out = append(out, string(v))
			}
		case []workload.Pattern:
			for _, v := range vs {
				out = append(out, string(v))
			}
		}
		return out
	}

	for _, c := range []struct {
		field string
		want  []string
	}{
		{"profile", workload.ProfileNames()},
		{"ioEngine", strs(workload.IOEngines())},
		{"pattern", strs(workload.Patterns())},
	} {
		got, want := enum(c.field), sorted(c.want)
		if len(want) == 0 {
			t.Fatalf("internal/workload lists no %s values", c.field)
		}
		if !slices.Equal(got, want) {
			t.Errorf("spec.workload.%s enum drifted from internal/workload:\n CRD:      %q\n workload: %q", c.field, got, want)
		}
	}
}

// names lists n benchmark names, comma-separated.
func names(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("nightly-%d", i)
	}
	return strings.Join(out, ", ")
}
