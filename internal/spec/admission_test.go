package spec

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Admission (the CRD's OpenAPI schema and CEL rules) and Of check a spec
// twice: admission when it is created, Of when the operator runs it. Where
// both check a rule they must agree, or a spec admission accepts becomes a
// run that fails with InvalidSpec. These tests evaluate the generated CRD
// in process (crd_test.go), as the API server would, and Of on the same
// stored object, for inputs on both sides of every boundary.

// side says who checks a rule.
type side int

const (
	// shared: admission and Of both check it, and agree.
	shared side = iota
	// goOnly: Of checks it, admission cannot (why says why). A spec that
	// breaks it is admitted, and its run fails with InvalidSpec: a
	// condition, not a refusal.
	goOnly
	// admissionOnly: admission checks it; Of has no need to (why says
	// why). The shape of the spec, or what the controllers handle.
	admissionOnly
)

// rule is one validation rule, as the tables below name it.
type rule struct {
	name string
	side side
	// cel starts the message of the CRD's CEL rule that checks it; "" when
	// the OpenAPI schema does (minimum, maxItems, enum, list type) or
	// nothing does.
	cel string
	// at starts the field admission reports a schema refusal at.
	at string
	// goErr is a part of Of's error when Of refuses it.
	goErr string
	// why only one side checks it.
	why string
}

// rules are every rule admission or Of checks on a spec: every CEL rule of
// the StorageBenchmark CRD (TestEveryCELRuleIsInTheTable holds it so), and
// every rule of Of's that admission has, or cannot have.
var rules = []rule{
	// The load's mode and steps.
	{name: "one load mode", cel: "load must set exactly one of rate, queueDepth, curve or clients", goErr: "must set exactly one of rate, queueDepth, curve or clients"},
	{name: "rate: steps or start", cel: "load.rate: set either steps, or start and max", goErr: "load.rate.start: "},
	{name: "rate: generators need start", cel: "load.rate: max, increment and factorPercent only go with start", goErr: "must be 0 when steps are listed"},
	{name: "rate: one growth", cel: "load.rate: generated steps need exactly one of increment or factorPercent", goErr: "set exactly one of increment or factorPercent"},
	{name: "rate: max at least start", cel: "load.rate.max is required with start and must be at least start", goErr: "load.rate.max: "},
	{name: "rate: 100 steps by increment", cel: "load.rate generates more than 100 steps", goErr: "must leave at most 100 generated steps"},
	{name: "rate steps increasing", cel: "load.rate.steps must be strictly increasing", goErr: "steps are strictly increasing"},
	{name: "rate steps unique", at: "spec.load.rate.steps", goErr: "steps are strictly increasing"},
	{name: "rate steps at most 100", at: "spec.load.rate.steps", goErr: "must list at most 100 steps"},
	{name: "rates 1 to 2^40", at: "spec.load.rate", goErr: "load.rate."},
	{name: "factorPercent 101 to 10000", at: "spec.load.rate.factorPercent", goErr: "load.rate.factorPercent: "},
	{name: "queue depths at least jobsPerClient", cel: "load.queueDepth.steps: every depth must be at least clients.jobsPerClient", goErr: "must be at least jobsPerClient"},
	{name: "queue depth start at least jobsPerClient", cel: "load.queueDepth.start must be at least clients.jobsPerClient", goErr: "must be at least jobsPerClient"},
	{name: "queueDepth: steps or start", cel: "load.queueDepth: set either steps, or start and max", goErr: "load.queueDepth.start: "},
	{name: "queueDepth: max at least start", cel: "load.queueDepth.max is required with start and must be at least start", goErr: "load.queueDepth.max: "},
	{name: "queueDepth: max needs start", cel: "load.queueDepth.max only goes with start", goErr: "load.queueDepth.max: "},
	{name: "queue depths increasing", cel: "load.queueDepth.steps must be strictly increasing", goErr: "steps are strictly increasing"},
	{name: "queue depths at most 4096", at: "spec.load.queueDepth", goErr: "must be at most 4096"},
	{name: "client steps at most clients.count", cel: "load.clients.steps: every step must be at most clients.count", goErr: "must be at most clients.count"},
	{name: "client steps increasing", cel: "load.clients.steps must be strictly increasing", goErr: "steps are strictly increasing"},
	{name: "client steps 1 to 1000", at: "spec.load.clients.steps", goErr: "must be between 1 and 1000"},
	{name: "perClientIOPS 1 to 2^40", at: "spec.load.clients.perClientIOPS", goErr: "load.clients.perClientIOPS: "},
	// Made shared: a synchronous ioEngine skips the client-bound check in
	// Of, and now in admission's count.
	{name: "curve: 100 steps", cel: "load.curve.percents may list at most 98 percentages", goErr: "load.curve.percents: "},
	{name: "curve percents at most 99", at: "spec.load.curve.percents", goErr: "load.curve.percents: "},
	{name: "curve percents increasing", cel: "load.curve.percents must be strictly increasing", goErr: "percents are strictly increasing"},
	{name: "curve percents 1 to 100", at: "spec.load.curve.percents", goErr: "must be between 1 and 100"},
	// The step count: levels × repeat × maxRuns, each mode's levels
	// counted as plan.Steps counts them (factorPercent's: goOnly below).
	{name: "repeat × steps at most 100", cel: "load.repeat times the number of steps", goErr: "lower repeat or plan fewer steps"},
	{name: "maxRuns × repeat × steps at most 100", cel: "load.extendUntilSteady.maxRuns times load.repeat times the number of steps", goErr: "lower maxRuns or plan fewer steps"},
	{name: "repeat 1 to 10", at: "spec.load.repeat", goErr: "load.repeat: "},
	{name: "maxRuns 2 to 10", at: "spec.load.extendUntilSteady.maxRuns", goErr: "load.extendUntilSteady.maxRuns: "},

	// Durations, arrivals and stop rules.
	{name: "stepDuration 5s to 24h", cel: "load.stepDuration must be a duration between 5s and 24h", goErr: "load.stepDuration: "},
	{name: "rampTime shorter than stepDuration", cel: "load.rampTime must be shorter than load.stepDuration", goErr: "load.rampTime: "},
	{name: "rampTime at least 0", cel: "load.rampTime must be a duration of at least 0s", goErr: "load.rampTime: "},
	{name: "Poisson needs a rate", cel: "load.arrivals Poisson needs an offered rate", goErr: "load.arrivals: "},
	{name: "saturation stop needs a rate", cel: "load.stop.saturationPercent needs an offered rate", goErr: "load.stop.saturationPercent: "},
	{name: "stop maxStall 1s to 1h", cel: "load.stop.maxStall must be whole seconds between 1s and 1h", goErr: "load.stop.maxStall: "},
	{name: "stop latency limit 1us to 1h", cel: "load.stop.latency.limit must be a duration between 1us and 1h", goErr: "load.stop.latency.limit: "},
	{name: "latency selectors", at: "spec.load.stop.latency", goErr: "load.stop.latency."},

	// Analysis.
	{name: "steps long enough to judge", cel: "load.extendUntilSteady needs a load.stepDuration of at least analysis.steadyState.rounds seconds", goErr: "load.extendUntilSteady: "},
	{name: "steady-state rule", at: "spec.analysis.steadyState", goErr: "steady-state"},
	{name: "latencyTarget", cel: "analysis.latencyTarget must be a duration between 1us and 1h", goErr: "LatencyTarget must be positive"},
	{name: "saturationPercent 1 to 100", at: "spec.analysis.saturationPercent", goErr: "SaturationPercent must be in 1..100"},
	{name: "maxVariationPercent 1 to 100", at: "spec.analysis.maxVariationPercent", goErr: "MaxVariationPercent must be"},

	// Topology, workload and volume.
	{name: "clients", at: "spec.clients", goErr: "clients."},
	{name: "workload ranges", at: "spec.workload", goErr: "workload."},
	{name: "workload names", at: "spec.workload", goErr: "workload."},
	{name: "blockSize", cel: "workload.blockSize must be a power of two between 512 and 16Mi", goErr: "workload.blockSize: "},
	{name: "workingSetPerClient at most 64Ti", cel: "workload.workingSetPerClient must be a whole number of bytes between 1Mi and 64Ti", goErr: "must be at most 64 TiB"},
	// Made shared: an unset workingSetPerClient is every profile's 1Gi.
	{name: "working set fits the volume", cel: "workload.workingSetPerClient does not fit in storage.size", goErr: "must fit in storage.size"},
	// Made shared: every profile runs libaio with direct I/O at depth 16
	// but the log profiles, which the engine rules name.
	{name: "synchronous engine: ioDepth 1", cel: "workload.ioDepth must be 1 with a synchronous ioEngine", goErr: "workload.ioDepth: "},
	{name: "libaio: direct I/O", cel: "workload.direct false needs an ioEngine other than libaio", goErr: "workload.direct: "},
	// Made shared: every profile writes with direct I/O and incompressible
	// data.
	{name: "verify: direct I/O", cel: "verify needs workload.direct true", goErr: "workload.direct: "},
	{name: "verify: incompressible", cel: "verify needs workload.compressPercent 0", goErr: "workload.compressPercent: "},
	{name: "verify: no repeated buffers", cel: "verify needs workload.dedupePercent 0", goErr: "workload.dedupePercent: "},
	{name: "syncEvery: only with fsync or fdatasync", cel: "workload.syncEvery is set only with sync fsync or fdatasync", goErr: "workload.syncEvery: "},
	{name: "queue depths: an asynchronous engine", cel: "load.queueDepth needs an asynchronous workload.ioEngine", goErr: "workload.ioEngine: "},

	// Objectives and regression.
	{name: "objective: one kind", cel: "each slo objective must set exactly one of", goErr: "slo.objectives["},
	{name: "objective thresholds at least 1", at: "spec.slo.objectives", goErr: "must be positive"},
	{name: "objective maxLatency", cel: "slo objective maxLatency must be a duration between 1us and 1h", goErr: "MaxLatency must be positive"},
	{name: "objective maxStall", cel: "slo maxStall must be whole seconds between 1s and 1h", goErr: "MaxStall must be whole seconds"},
	{name: "regression significance", cel: "regression.significance must be a decimal fraction above 0 and at most 0.2", goErr: "Significance must be more than 0 and at most 0.2"},
	{name: "regression minimum effects", at: "spec.regression", goErr: "Percent must be more than 0"},

	// Go only: a condition (InvalidSpec), not admission.
	{name: "rate: one I/O per second per job", side: goOnly, goErr: "fio jobs",
		why: "the minimum is per direction and per block: it needs the resolved workload's read mix and block size (a profile's, from internal/workload's table, which the CRD does not carry), and a curve's rates are known only once its maximum is measured"},
	{name: "working set a multiple of the block size", side: goOnly, goErr: "must be a multiple of blockSizeBytes",
		why: "the block size is the profile's unless workload.blockSize is set: the CRD does not carry the profiles' block sizes"},
	{name: "working set: a block per fio job", side: goOnly, goErr: "must be at least one block",
		why: "the block size is the profile's unless workload.blockSize is set (see above)"},
	{name: "latency stop on a direction the workload does", side: goOnly, goErr: "so the rule could never fire",
		why: "whether the workload reads or writes at all is the profile's read mix unless workload.readPercent is set"},
	{name: "factorPercent steps: 100 at most, runs included", side: goOnly, goErr: "must leave at most 100",
		why: "factorPercent generates floor(step × factor / 100), growing by at least 1: no closed form counts them, and CEL has no loop; admission counts them as 1"},

	{name: "sync: a workload that writes", side: goOnly, goErr: "needs writes: readPercent must be below 100",
		why: "the read mix is the profile's unless workload.readPercent is set"},
	{name: "verify: a workload that writes", side: goOnly, goErr: "a workload that only reads writes nothing to verify",
		why: "the read mix is the profile's unless workload.readPercent is set"},
	{name: "verify: a generation per block", side: goOnly, goErr: "blocks with verify",
		why: "the block size is the profile's unless workload.blockSize is set"},

	// Admission only.
	{name: "metadata.name at most 40", side: admissionOnly, cel: "metadata.name must be at most 40 characters",
		why: "the controllers name the children after it; Of translates the spec alone"},
	{name: "spec is immutable", side: admissionOnly, cel: "spec cannot change once the benchmark exists",
		why: "a rule on updates: Of reads one spec"},
	{name: "Shared with several clients: ReadWriteMany", side: admissionOnly, cel: "storage.sharing Shared with more than one client needs storage.accessMode ReadWriteMany",
		why: "the claims are the controllers': Of does not translate the access mode"},
	{name: "existingClaim: Shared or one client", side: admissionOnly, cel: "storage.existingClaim is one volume",
		why: "the controllers mount the claim; Of only confines the clients to a directory of it"},
	{name: "storage.size 1Mi to 1Pi", side: admissionOnly, cel: "storage.size must be a quantity between 1Mi and 1Pi",
		why: "the core needs only the working set to fit in it (a shared rule)"},
	{name: "regression baseline: one kind", side: admissionOnly, cel: "regression.baseline must set exactly one of",
		why: "the controllers resolve the baseline when the run ends; Of translates the options only"},
}

// outcome is what admission and Of say of a row's spec.
type outcome int

const (
	// accepted by both.
	accepted outcome = iota
	// refused by both.
	refused
	// goRefuses: admitted, refused by Of. Only for goOnly rules.
	goRefuses
	// admissionRefuses: refused by admission, accepted by Of, which is
	// looser by design (the row's why, or an admissionOnly rule's).
	admissionRefuses
)

func (o outcome) String() string {
	return [...]string{"accepted by both", "refused by both", "admitted but refused by Of", "refused by admission but accepted by Of"}[o]
}

// row is one spec (baseSpec with patch) and what admission and Of must
// say of it.
type row struct {
	rule, name, patch string
	want              outcome
	why               string
}

const (
	// defaultCurve replaces the rate steps with a curve of the default
	// percents (12 steps with the client-bound check).
	defaultCurve = `rate: null, curve: {}`
	// psync is a synchronous engine, which skips the check.
	psync = `workload: {ioEngine: psync, ioDepth: 1}`
)

var rows = []row{
	{"one load mode", "rate steps", ``, accepted, ""},
	{"one load mode", "none", `load: {rate: null}`, refused, ""},
	{"one load mode", "rate and curve", `load: {curve: {}}`, refused, ""},

	{"rate: steps or start", "generated", `load: {rate: {steps: null, start: 1000, max: 4000, increment: 1000}}`, accepted, ""},
	{"rate: steps or start", "steps and start", `load: {rate: {start: 1000, max: 4000, increment: 1000}}`, refused, ""},
	{"rate: steps or start", "neither", `load: {rate: {steps: null}}`, refused, ""},
	{"rate: generators need start", "steps and increment", `load: {rate: {increment: 1000}}`, refused, ""},
	{"rate: generators need start", "steps and max", `load: {rate: {max: 4000}}`, refused, ""},
	{"rate: generators need start", "start and increment", `load: {rate: {steps: null, start: 1000, max: 4000, increment: 1000}}`, accepted, ""},
	{"rate: one growth", "factorPercent", `load: {rate: {steps: null, start: 1000, max: 8000, factorPercent: 200}}`, accepted, ""},
	{"rate: one growth", "both", `load: {rate: {steps: null, start: 1000, max: 8000, increment: 1000, factorPercent: 200}}`, refused, ""},
	{"rate: one growth", "neither", `load: {rate: {steps: null, start: 1000, max: 8000}}`, refused, ""},
	{"rate: max at least start", "max = start", `load: {rate: {steps: null, start: 1000, max: 1000, increment: 1}}`, accepted, ""},
	{"rate: max at least start", "max = start - 1", `load: {rate: {steps: null, start: 1000, max: 999, increment: 1}}`, refused, ""},
	{"rate: max at least start", "no max", `load: {rate: {steps: null, start: 1000, increment: 1}}`, refused, ""},
	{"rate: 100 steps by increment", "100 steps, max a step", `load: {rate: {steps: null, start: 1000, max: 100000, increment: 1000}}`, accepted, ""},
	{"rate: 100 steps by increment", "100 steps, max not a step", `load: {rate: {steps: null, start: 1000, max: 100999, increment: 1000}}`, accepted, ""},
	{"rate: 100 steps by increment", "101 steps", `load: {rate: {steps: null, start: 1000, max: 101000, increment: 1000}}`, refused, ""},
	{"rate steps increasing", "increasing", `load: {rate: {steps: [999, 1000]}}`, accepted, ""},
	{"rate steps increasing", "decreasing", `load: {rate: {steps: [1000, 999]}}`, refused, ""},
	{"rate steps unique", "a step twice", `load: {rate: {steps: [1000, 1000, 2000]}}`, refused, ""},
	{"rate steps unique", "distinct", `load: {rate: {steps: [1000, 2000]}}`, accepted, ""},
	{"rate steps at most 100", "100", `load: {rate: {steps: [` + seq(1, 100) + `]}}`, accepted, ""},
	{"rate steps at most 100", "101", `load: {rate: {steps: [` + seq(1, 101) + `]}}`, refused, ""},
	{"rates 1 to 2^40", "2^40", `load: {rate: {steps: [1099511627776]}}`, accepted, ""},
	{"rates 1 to 2^40", "2^40 + 1", `load: {rate: {steps: [1099511627777]}}`, refused, ""},
	{"rates 1 to 2^40", "0", `load: {rate: {steps: [0, 1000]}}`, refused, ""},
	{"rates 1 to 2^40", "generated max 2^40 + 1", `load: {rate: {steps: null, start: 1000, max: 1099511627777, factorPercent: 200}}`, refused, ""},
	{"factorPercent 101 to 10000", "101", `load: {rate: {steps: null, start: 1000, max: 1200, factorPercent: 101}}`, accepted, ""},
	{"factorPercent 101 to 10000", "10000", `load: {rate: {steps: null, start: 1000, max: 1200, factorPercent: 10000}}`, accepted, ""},
	{"factorPercent 101 to 10000", "100", `load: {rate: {steps: null, start: 1000, max: 1200, factorPercent: 100}}`, refused, ""},
	{"factorPercent 101 to 10000", "10001", `load: {rate: {steps: null, start: 1000, max: 1200, factorPercent: 10001}}`, refused, ""},

	{"queue depths at least jobsPerClient", "from jobsPerClient", `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {steps: [4, 8]}}}`, accepted, ""},
	{"queue depths at least jobsPerClient", "below", `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {steps: [3, 8]}}}`, refused, ""},
	{"queue depth start at least jobsPerClient", "from jobsPerClient", `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {start: 4, max: 8}}}`, accepted, ""},
	{"queue depth start at least jobsPerClient", "below", `{clients: {jobsPerClient: 4}, load: {rate: null, queueDepth: {start: 3, max: 8}}}`, refused, ""},
	{"queueDepth: steps or start", "both", `load: {rate: null, queueDepth: {steps: [1, 2], start: 1, max: 2}}`, refused, ""},
	{"queueDepth: steps or start", "neither", `load: {rate: null, queueDepth: {}}`, refused, ""},
	{"queueDepth: steps or start", "steps", `load: {rate: null, queueDepth: {steps: [1, 2]}}`, accepted, ""},
	{"queueDepth: max at least start", "max = start", `load: {rate: null, queueDepth: {start: 8, max: 8}}`, accepted, ""},
	{"queueDepth: max at least start", "max below start", `load: {rate: null, queueDepth: {start: 8, max: 4}}`, refused, ""},
	{"queueDepth: max at least start", "no max", `load: {rate: null, queueDepth: {start: 8}}`, refused, ""},
	{"queueDepth: max needs start", "steps and max", `load: {rate: null, queueDepth: {steps: [1, 2], max: 4}}`, refused, ""},
	{"queueDepth: max needs start", "start and max", `load: {rate: null, queueDepth: {start: 1, max: 4}}`, accepted, ""},
	{"client steps at most clients.count", "4 of 4", `{clients: {count: 4}, load: {rate: null, clients: {steps: [1, 4], perClientIOPS: 100}}}`, accepted, ""},
	{"client steps at most clients.count", "5 of 4", `{clients: {count: 4}, load: {rate: null, clients: {steps: [1, 5], perClientIOPS: 100}}}`, refused, ""},
	{"client steps increasing", "increasing", `{clients: {count: 4}, load: {rate: null, clients: {steps: [2, 3]}}}`, accepted, ""},
	{"client steps increasing", "decreasing", `{clients: {count: 4}, load: {rate: null, clients: {steps: [3, 2]}}}`, refused, ""},
	{"client steps 1 to 1000", "1", `load: {rate: null, clients: {steps: [1]}}`, accepted, ""},
	{"client steps 1 to 1000", "0", `load: {rate: null, clients: {steps: [0]}}`, refused, ""},
	{"perClientIOPS 1 to 2^40", "1", `load: {rate: null, clients: {steps: [1], perClientIOPS: 1}}`, accepted, ""},
	{"perClientIOPS 1 to 2^40", "2^40", `load: {rate: null, clients: {steps: [1], perClientIOPS: 1099511627776}}`, accepted, ""},
	{"perClientIOPS 1 to 2^40", "2^40 + 1", `load: {rate: null, clients: {steps: [1], perClientIOPS: 1099511627777}}`, refused, ""},
	{"perClientIOPS 1 to 2^40", "0", `load: {rate: null, clients: {steps: [1], perClientIOPS: 0}}`, admissionRefuses, "Of reads 0 as unthrottled, as an unset perClientIOPS"},
	{"queue depths increasing", "increasing", `load: {rate: null, queueDepth: {steps: [1, 2]}}`, accepted, ""},
	{"queue depths increasing", "decreasing", `load: {rate: null, queueDepth: {steps: [2, 1]}}`, refused, ""},
	{"queue depths at most 4096", "4096", `load: {rate: null, queueDepth: {steps: [4096]}}`, accepted, ""},
	{"queue depths at most 4096", "4097", `load: {rate: null, queueDepth: {steps: [4097]}}`, refused, ""},
	{"queue depths at most 4096", "max 4097", `load: {rate: null, queueDepth: {start: 1, max: 4097}}`, refused, ""},

	{"curve: 100 steps", "98 percents and the check", `load: {rate: null, curve: {percents: [` + seq(1, 98) + `]}}`, accepted, ""},
	{"curve: 100 steps", "99 percents and the check", `load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}`, refused, ""},
	{"curve: 100 steps", "99 percents, io_uring: the check", `{workload: {ioEngine: io_uring}, load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}}`, refused, ""},
	{"curve: 100 steps", "99 percents, no check", `load: {rate: null, curve: {percents: [` + seq(1, 99) + `], clientBoundCheck: false}}`, accepted, ""},
	{"curve: 100 steps", "99 percents, psync skips the check", `{` + psync + `, load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}}`, accepted, ""},
	{"curve: 100 steps", "99 percents, sync skips the check", `{workload: {ioEngine: sync, ioDepth: 1}, load: {rate: null, curve: {percents: [` + seq(1, 99) + `]}}}`, accepted, ""},
	{"curve percents at most 99", "100 percents, no check", `load: {rate: null, curve: {percents: [` + seq(1, 100) + `], clientBoundCheck: false}}`, refused, ""},
	{"curve percents at most 99", "99 percents, no check", `load: {rate: null, curve: {percents: [` + seq(1, 99) + `], clientBoundCheck: false}}`, accepted, ""},
	{"curve percents increasing", "increasing", `load: {rate: null, curve: {percents: [20, 50]}}`, accepted, ""},
	{"curve percents increasing", "decreasing", `load: {rate: null, curve: {percents: [50, 20]}}`, refused, ""},
	{"curve percents 1 to 100", "1 and 100", `load: {rate: null, curve: {percents: [1, 100]}}`, accepted, ""},
	{"curve percents 1 to 100", "0", `load: {rate: null, curve: {percents: [0, 50]}}`, refused, ""},
	{"curve percents 1 to 100", "101", `load: {rate: null, curve: {percents: [50, 101]}}`, refused, ""},

	{"repeat × steps at most 100", "50 steps × 2", `load: {repeat: 2, rate: {steps: [` + seq(1, 50) + `]}}`, accepted, ""},
	{"repeat × steps at most 100", "51 steps × 2", `load: {repeat: 2, rate: {steps: [` + seq(1, 51) + `]}}`, refused, ""},
	{"repeat × steps at most 100", "50 steps by increment × 2", `load: {repeat: 2, rate: {steps: null, start: 1000, max: 50999, increment: 1000}}`, accepted, ""},
	{"repeat × steps at most 100", "51 steps by increment × 2", `load: {repeat: 2, rate: {steps: null, start: 1000, max: 51000, increment: 1000}}`, refused, ""},
	{"repeat × steps at most 100", "50 client steps × 2", `{clients: {count: 50}, load: {repeat: 2, rate: null, clients: {steps: [` + seq(1, 50) + `]}}}`, accepted, ""},
	{"repeat × steps at most 100", "51 client steps × 2", `{clients: {count: 51}, load: {repeat: 2, rate: null, clients: {steps: [` + seq(1, 51) + `]}}}`, refused, ""},
	{"repeat × steps at most 100", "13 doubling depths × 7", `load: {repeat: 7, rate: null, queueDepth: {start: 1, max: 4096}}`, accepted, ""},
	{"repeat × steps at most 100", "13 doubling depths × 8", `load: {repeat: 8, rate: null, queueDepth: {start: 1, max: 4096}}`, refused, ""},
	{"repeat × steps at most 100", "11 doubling depths from 3 × 9", `load: {repeat: 9, rate: null, queueDepth: {start: 3, max: 4095}}`, accepted, ""},
	{"repeat × steps at most 100", "11 doubling depths from 3 × 10", `load: {repeat: 10, rate: null, queueDepth: {start: 3, max: 4095}}`, refused, ""},
	{"repeat × steps at most 100", "10 listed depths × 10", `load: {repeat: 10, rate: null, queueDepth: {steps: [` + seq(1, 10) + `]}}`, accepted, ""},
	{"repeat × steps at most 100", "11 listed depths × 10", `load: {repeat: 10, rate: null, queueDepth: {steps: [` + seq(1, 11) + `]}}`, refused, ""},
	{"repeat × steps at most 100", "default curve (12 steps) × 8", `load: {repeat: 8, ` + defaultCurve + `}`, accepted, ""},
	{"repeat × steps at most 100", "default curve (12 steps) × 9", `load: {repeat: 9, ` + defaultCurve + `}`, refused, ""},
	{"repeat × steps at most 100", "curve without the check (11 steps) × 9", `load: {repeat: 9, rate: null, curve: {clientBoundCheck: false}}`, accepted, ""},
	{"repeat × steps at most 100", "curve without the check (11 steps) × 10", `load: {repeat: 10, rate: null, curve: {clientBoundCheck: false}}`, refused, ""},
	{"repeat × steps at most 100", "psync curve (11 steps) × 9", `{` + psync + `, load: {repeat: 9, ` + defaultCurve + `}}`, accepted, ""},
	{"repeat × steps at most 100", "psync curve (11 steps) × 10", `{` + psync + `, load: {repeat: 10, ` + defaultCurve + `}}`, refused, ""},
	{"repeat × steps at most 100", "curve of 2 percents (4 steps) × 10", `load: {repeat: 10, rate: null, curve: {percents: [50, 100]}}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "33 steps × 3 runs", `load: {extendUntilSteady: {maxRuns: 3}, rate: {steps: [` + seq(1, 33) + `]}}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "34 steps × 3 runs", `load: {extendUntilSteady: {maxRuns: 3}, rate: {steps: [` + seq(1, 34) + `]}}`, refused, ""},
	{"maxRuns × repeat × steps at most 100", "default curve × 3 runs × repeat 2", `load: {repeat: 2, extendUntilSteady: {}, ` + defaultCurve + `}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "default curve × 3 runs × repeat 3", `load: {repeat: 3, extendUntilSteady: {}, ` + defaultCurve + `}`, refused, ""},
	{"maxRuns × repeat × steps at most 100", "psync curve (11 steps) × 3 runs × repeat 3", `{` + psync + `, load: {repeat: 3, extendUntilSteady: {}, ` + defaultCurve + `}}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "13 doubling depths × 7 runs", `load: {extendUntilSteady: {maxRuns: 7}, rate: null, queueDepth: {start: 1, max: 4096}}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "13 doubling depths × 8 runs", `load: {extendUntilSteady: {maxRuns: 8}, rate: null, queueDepth: {start: 1, max: 4096}}`, refused, ""},
	{"maxRuns × repeat × steps at most 100", "10 steps by increment × 10 runs", `load: {extendUntilSteady: {maxRuns: 10}, rate: {steps: null, start: 100, max: 1000, increment: 100}}`, accepted, ""},
	{"maxRuns × repeat × steps at most 100", "11 steps by increment × 10 runs", `load: {extendUntilSteady: {maxRuns: 10}, rate: {steps: null, start: 100, max: 1100, increment: 100}}`, refused, ""},
	{"repeat 1 to 10", "10", `load: {repeat: 10}`, accepted, ""},
	{"repeat 1 to 10", "11", `load: {repeat: 11}`, refused, ""},
	{"repeat 1 to 10", "0", `load: {repeat: 0}`, admissionRefuses, "Of reads 0 as unset: one run"},
	{"maxRuns 2 to 10", "10", `load: {extendUntilSteady: {maxRuns: 10}}`, accepted, ""},
	{"maxRuns 2 to 10", "11", `load: {extendUntilSteady: {maxRuns: 11}}`, refused, ""},
	{"maxRuns 2 to 10", "1", `load: {extendUntilSteady: {maxRuns: 1}}`, admissionRefuses, "Of reads 1 run as not extending"},

	{"stepDuration 5s to 24h", "5s", `load: {stepDuration: 5s, rampTime: 0s}`, accepted, ""},
	{"stepDuration 5s to 24h", "5s - 1ms", `load: {stepDuration: 4999ms, rampTime: 0s}`, refused, ""},
	{"stepDuration 5s to 24h", "24h", `load: {stepDuration: 24h}`, accepted, ""},
	{"stepDuration 5s to 24h", "24h + 1ms", `load: {stepDuration: 24h0m0.001s}`, refused, ""},
	{"rampTime shorter than stepDuration", "1ms shorter", `load: {rampTime: 59999ms}`, accepted, ""},
	{"rampTime shorter than stepDuration", "as long", `load: {rampTime: 60s}`, refused, ""},
	{"rampTime at least 0", "0s", `load: {rampTime: 0s}`, accepted, ""},
	{"rampTime at least 0", "-1ns", `load: {rampTime: -1ns}`, refused, ""},
	{"Poisson needs a rate", "rate steps", `load: {arrivals: Poisson}`, accepted, ""},
	{"Poisson needs a rate", "queue depths", `load: {arrivals: Poisson, rate: null, queueDepth: {steps: [1, 2]}}`, refused, ""},
	{"Poisson needs a rate", "client steps unthrottled", `load: {arrivals: Poisson, rate: null, clients: {steps: [1]}}`, refused, ""},
	{"Poisson needs a rate", "client steps at a rate", `load: {arrivals: Poisson, rate: null, clients: {steps: [1], perClientIOPS: 100}}`, accepted, ""},
	{"Poisson needs a rate", "queue depths, Uniform", `load: {arrivals: Uniform, rate: null, queueDepth: {steps: [1, 2]}}`, accepted, ""},
	{"saturation stop needs a rate", "rate steps", `load: {stop: {saturationPercent: 80}}`, accepted, ""},
	{"saturation stop needs a rate", "queue depths", `load: {stop: {saturationPercent: 80}, rate: null, queueDepth: {steps: [1, 2]}}`, refused, ""},
	{"saturation stop needs a rate", "client steps unthrottled", `load: {stop: {saturationPercent: 80}, rate: null, clients: {steps: [1]}}`, refused, ""},
	{"saturation stop needs a rate", "client steps at a rate", `load: {stop: {saturationPercent: 80}, rate: null, clients: {steps: [1], perClientIOPS: 100}}`, accepted, ""},
	{"stop maxStall 1s to 1h", "1s", `load: {stop: {maxStall: 1s}}`, accepted, ""},
	{"stop maxStall 1s to 1h", "1h", `load: {stop: {maxStall: 1h}}`, accepted, ""},
	{"stop maxStall 1s to 1h", "1h1s", `load: {stop: {maxStall: 1h0m1s}}`, refused, ""},
	{"stop maxStall 1s to 1h", "0s", `load: {stop: {maxStall: 0s}}`, admissionRefuses, "Of reads 0 as no stall rule"},
	{"stop latency limit 1us to 1h", "1us", `load: {stop: {latency: {limit: 1us}}}`, accepted, ""},
	{"stop latency limit 1us to 1h", "999ns", `load: {stop: {latency: {limit: 999ns}}}`, refused, ""},
	{"stop latency limit 1us to 1h", "1h", `load: {stop: {latency: {limit: 1h}}}`, accepted, ""},
	{"stop latency limit 1us to 1h", "1h1us", `load: {stop: {latency: {limit: 1h0m0.000001s}}}`, refused, ""},
	{"stop latency limit 1us to 1h", "1h1ns", `load: {stop: {latency: {limit: 1h0m0.000000001s}}}`, admissionRefuses,
		"the core counts the limit in whole microseconds and drops the nanosecond"},
	{"latency selectors", "p99.9 worst", `load: {stop: {latency: {metric: p99.9, operation: worst, limit: 1ms}}}`, accepted, ""},
	{"latency selectors", "metric p95", `load: {stop: {latency: {metric: p95, limit: 1ms}}}`, refused, ""},
	{"latency selectors", "operation both", `load: {stop: {latency: {operation: both, limit: 1ms}}}`, refused, ""},

	{"steps long enough to judge", "5 s steps, 5 rounds (the default)", `load: {extendUntilSteady: {}, stepDuration: 5s, rampTime: 0s}`, accepted, ""},
	{"steps long enough to judge", "5 s steps, 6 rounds", `{load: {extendUntilSteady: {}, stepDuration: 5s, rampTime: 0s}, analysis: {steadyState: {rounds: 6}}}`, refused, ""},
	{"steps long enough to judge", "8 s steps, 8 rounds", `{load: {extendUntilSteady: {}, stepDuration: 8s, rampTime: 0s}, analysis: {steadyState: {rounds: 8}}}`, accepted, ""},
	{"steps long enough to judge", "8 s - 1ms steps, 8 rounds", `{load: {extendUntilSteady: {}, stepDuration: 7999ms, rampTime: 0s}, analysis: {steadyState: {rounds: 8}}}`, refused, ""},
	{"steps long enough to judge", "5 s steps, 60 rounds, not extended", `{load: {stepDuration: 5s, rampTime: 0s}, analysis: {steadyState: {rounds: 60}}}`, accepted, ""},
	{"steady-state rule", "2 rounds", `analysis: {steadyState: {rounds: 2}}`, accepted, ""},
	{"steady-state rule", "1 round", `analysis: {steadyState: {rounds: 1}}`, refused, ""},
	{"steady-state rule", "60 rounds", `analysis: {steadyState: {rounds: 60}}`, accepted, ""},
	{"steady-state rule", "61 rounds", `analysis: {steadyState: {rounds: 61}}`, refused, ""},
	{"steady-state rule", "range and slope 100 %", `analysis: {steadyState: {rangePercent: 100, slopePercent: 100}}`, accepted, ""},
	{"steady-state rule", "range 101 %", `analysis: {steadyState: {rangePercent: 101}}`, refused, ""},
	{"steady-state rule", "slope 101 %", `analysis: {steadyState: {slopePercent: 101}}`, refused, ""},
	{"steady-state rule", "range 0 %", `analysis: {steadyState: {rangePercent: 0}}`, admissionRefuses, "Of reads 0 as unset: the default"},
	{"latencyTarget", "1us", `analysis: {latencyTarget: 1us}`, accepted, ""},
	{"latencyTarget", "1h", `analysis: {latencyTarget: 1h}`, accepted, ""},
	{"latencyTarget", "-1ms", `analysis: {latencyTarget: -1ms}`, refused, ""},
	{"latencyTarget", "0s", `analysis: {latencyTarget: 0s}`, admissionRefuses, "Of reads 0 as unset: the default 1 ms"},
	{"latencyTarget", "2h", `analysis: {latencyTarget: 2h}`, admissionRefuses, "the core takes any positive target"},
	{"saturationPercent 1 to 100", "100", `analysis: {saturationPercent: 100}`, accepted, ""},
	{"saturationPercent 1 to 100", "101", `analysis: {saturationPercent: 101}`, refused, ""},
	{"saturationPercent 1 to 100", "0", `analysis: {saturationPercent: 0}`, admissionRefuses, "Of reads 0 as unset: the default 90"},
	{"maxVariationPercent 1 to 100", "100", `analysis: {maxVariationPercent: 100}`, accepted, ""},
	{"maxVariationPercent 1 to 100", "101", `analysis: {maxVariationPercent: 101}`, refused, ""},
	{"maxVariationPercent 1 to 100", "0", `analysis: {maxVariationPercent: 0}`, admissionRefuses, "Of reads 0 as no limit"},

	{"clients", "1000 clients", `clients: {count: 1000}`, accepted, ""},
	{"clients", "1001 clients", `clients: {count: 1001}`, refused, ""},
	{"clients", "0 clients", `clients: {count: 0}`, refused, ""},
	{"clients", "64 jobs", `clients: {jobsPerClient: 64}`, accepted, ""},
	{"clients", "65 jobs", `clients: {jobsPerClient: 65}`, refused, ""},
	{"workload ranges", "readPercent 0", `workload: {readPercent: 0}`, accepted, ""},
	{"workload ranges", "readPercent 101", `workload: {readPercent: 101}`, refused, ""},
	{"workload ranges", "ioDepth 1024", `workload: {ioDepth: 1024}`, accepted, ""},
	{"workload ranges", "ioDepth 1025", `workload: {ioDepth: 1025}`, refused, ""},
	{"workload ranges", "ioDepth 0", `workload: {ioDepth: 0}`, refused, ""},
	{"workload ranges", "compressPercent 99", `workload: {compressPercent: 99}`, accepted, ""},
	{"workload ranges", "compressPercent 100", `workload: {compressPercent: 100}`, refused, ""},
	{"workload names", "every field named", `workload: {profile: mix-64k-50, pattern: random, ioEngine: posixaio}`, accepted, ""},
	{"workload names", "unknown profile", `workload: {profile: four-corners}`, refused, ""},
	{"workload names", "unknown pattern", `workload: {pattern: zigzag}`, refused, ""},
	{"workload names", "unknown ioEngine", `workload: {ioEngine: aio}`, refused, ""},
	{"blockSize", "512", `workload: {blockSize: 512}`, accepted, ""},
	{"blockSize", "256", `workload: {blockSize: 256}`, refused, ""},
	{"blockSize", "16Mi", `workload: {blockSize: 16Mi}`, accepted, ""},
	{"blockSize", "32Mi", `workload: {blockSize: 32Mi}`, refused, ""},
	{"blockSize", "3000", `workload: {blockSize: 3000}`, refused, ""},
	{"blockSize", "4k, 4000 bytes", `workload: {blockSize: 4k}`, refused, ""},
	{"workingSetPerClient at most 64Ti", "64Ti", `{storage: {size: 1Pi}, workload: {workingSetPerClient: 64Ti}}`, accepted, ""},
	{"workingSetPerClient at most 64Ti", "65Ti", `{storage: {size: 1Pi}, workload: {workingSetPerClient: 65Ti}}`, refused, ""},
	{"workingSetPerClient at most 64Ti", "512Ki", `workload: {workingSetPerClient: 512Ki}`, admissionRefuses,
		"the core needs a block per fio job; admission asks for at least 1Mi, a working set worth measuring"},
	{"working set fits the volume", "10Gi in 10Gi", `workload: {workingSetPerClient: 10Gi}`, accepted, ""},
	{"working set fits the volume", "10Gi + 4Ki in 10Gi", `workload: {workingSetPerClient: 10737422336}`, refused, ""},
	{"working set fits the volume", "the profile's 1Gi in 1Gi", `{storage: {size: 1Gi}, workload: {profile: oltp}}`, accepted, ""},
	{"working set fits the volume", "the profile's 1Gi in 1023Mi", `{storage: {size: 1023Mi}, workload: {profile: oltp}}`, refused, ""},
	{"working set fits the volume", "Shared: 3 × 1Gi in 3Gi", `{storage: {sharing: Shared, size: 3Gi}, clients: {count: 3}, workload: {workingSetPerClient: 1Gi}}`, accepted, ""},
	{"working set fits the volume", "Shared: 3 × 1Gi in 3Gi - 1", `{storage: {sharing: Shared, size: 3221225471}, clients: {count: 3}, workload: {workingSetPerClient: 1Gi}}`, refused, ""},
	{"working set fits the volume", "Shared: 3 × the default in 3Gi", `{storage: {sharing: Shared, size: 3Gi}, clients: {count: 3}}`, accepted, ""},
	{"working set fits the volume", "Shared: 3 × the default in 2Gi", `{storage: {sharing: Shared, size: 2Gi}, clients: {count: 3}}`, refused, ""},
	{"working set fits the volume", "Shared Block: 2 × 5Gi in 10Gi", `{storage: {sharing: Shared, volumeMode: Block}, clients: {count: 2}, workload: {workingSetPerClient: 5Gi}}`, accepted, ""},
	{"working set fits the volume", "Shared Block: 2 × 6Gi in 10Gi", `{storage: {sharing: Shared, volumeMode: Block}, clients: {count: 2}, workload: {workingSetPerClient: 6Gi}}`, refused, ""},
	{"working set fits the volume", "Shared: 512 × 2Ti in 1Pi", `{storage: {sharing: Shared, size: 1Pi}, clients: {count: 512}, workload: {workingSetPerClient: 2Ti}}`, accepted, ""},
	{"working set fits the volume", "Shared: 512 × (2Ti + 4Ki) in 1Pi", `{storage: {sharing: Shared, size: 1Pi}, clients: {count: 512}, workload: {workingSetPerClient: 2199023259648}}`, refused, ""},
	{"working set fits the volume", "an existing claim: not checked", `{storage: {existingClaim: data, sharing: Shared, size: 1Mi}, clients: {count: 3}, workload: {workingSetPerClient: 100Gi}}`, accepted, ""},
	{"synchronous engine: ioDepth 1", "psync, ioDepth 1", psync, accepted, ""},
	{"synchronous engine: ioDepth 1", "sync, ioDepth 1", `workload: {ioEngine: sync, ioDepth: 1}`, accepted, ""},
	{"synchronous engine: ioDepth 1", "psync, ioDepth 2", `workload: {ioEngine: psync, ioDepth: 2}`, refused, ""},
	{"synchronous engine: ioDepth 1", "psync, the base depth", `workload: {ioEngine: psync}`, refused, ""},
	{"synchronous engine: ioDepth 1", "sync, a profile's depth", `workload: {profile: oltp, ioEngine: sync}`, refused, ""},
	{"synchronous engine: ioDepth 1", "io_uring, ioDepth 1", `workload: {ioEngine: io_uring, ioDepth: 1}`, accepted, ""},
	{"libaio: direct I/O", "direct", `workload: {direct: true}`, accepted, ""},
	{"libaio: direct I/O", "a log profile, buffered", `workload: {profile: etcd, direct: false}`, accepted, ""},
	{"libaio: direct I/O", "a log profile on libaio", `workload: {profile: etcd, ioEngine: libaio}`, refused, ""},
	{"libaio: direct I/O", "a log profile on libaio, direct", `workload: {profile: etcd, ioEngine: libaio, direct: true}`, accepted, ""},
	{"synchronous engine: ioDepth 1", "a log profile", `workload: {profile: db-log}`, accepted, ""},
	{"synchronous engine: ioDepth 1", "a log profile, its engine named", `workload: {profile: db-log, ioEngine: psync}`, accepted, ""},
	{"synchronous engine: ioDepth 1", "a log profile, deeper", `workload: {profile: db-log, ioDepth: 4}`, refused, ""},
	{"synchronous engine: ioDepth 1", "another profile on sync", `workload: {profile: oltp, ioEngine: sync}`, refused, ""},
	{"verify: direct I/O", "a log profile", `{verify: {}, workload: {profile: db-log}}`, refused, ""},
	{"verify: direct I/O", "a log profile, direct", `{verify: {}, workload: {profile: db-log, direct: true}}`, accepted, ""},
	{"queue depths: an asynchronous engine", "a log profile", `{workload: {profile: db-log}, load: {rate: null, queueDepth: {steps: [1, 2]}}}`, refused, ""},
	{"queue depths: an asynchronous engine", "a log profile on io_uring", `{workload: {profile: db-log, ioEngine: io_uring}, load: {rate: null, queueDepth: {steps: [1, 2]}}}`, accepted, ""},
	{"verify: direct I/O", "direct writes", `{verify: {}, workload: {readPercent: 0, direct: true}}`, accepted, ""},
	{"verify: direct I/O", "buffered io_uring writes", `{verify: {}, workload: {readPercent: 0, ioEngine: io_uring, direct: false}}`, refused, ""},
	{"verify: direct I/O", "buffered io_uring without verify", `workload: {readPercent: 0, ioEngine: io_uring, direct: false}`, accepted, ""},
	{"verify: incompressible", "a profile's data", `{verify: {}, workload: {profile: oltp}}`, accepted, ""},
	{"verify: incompressible", "compressible", `{verify: {}, workload: {profile: oltp, compressPercent: 50}}`, refused, ""},
	{"verify: incompressible", "compressible without verify", `workload: {profile: oltp, compressPercent: 50}`, accepted, ""},
	{"verify: a workload that writes", "reads only, the base spec", `verify: {}`, goRefuses, ""},
	{"sync: a workload that writes", "reads only, the base spec", `workload: {sync: fdatasync}`, goRefuses, ""},
	{"sync: a workload that writes", "a read profile", `workload: {profile: rand-read, sync: fsync, syncEvery: 4}`, goRefuses, ""},
	{"verify: no repeated buffers", "none repeated", `{verify: {}, workload: {readPercent: 0, dedupePercent: 0}}`, accepted, ""},
	{"verify: no repeated buffers", "some repeated", `{verify: {}, workload: {readPercent: 0, dedupePercent: 20}}`, refused, ""},
	{"syncEvery: only with fsync or fdatasync", "fsync every 8 writes", `workload: {readPercent: 0, sync: fsync, syncEvery: 8}`, accepted, ""},
	{"syncEvery: only with fsync or fdatasync", "a log profile's fdatasync every 4", `workload: {profile: db-log, syncEvery: 4}`, accepted, ""},
	{"syncEvery: only with fsync or fdatasync", "dsync", `workload: {readPercent: 0, sync: dsync, syncEvery: 2}`, refused, ""},
	{"syncEvery: only with fsync or fdatasync", "no sync", `workload: {profile: rand-write, syncEvery: 2}`, refused, ""},
	{"verify: a workload that writes", "reads only, a profile", `{verify: {pass: AfterEachWritingStep}, workload: {profile: rand-read}}`, goRefuses, ""},
	{"verify: a workload that writes", "mixed", `{verify: {}, workload: {readPercent: 70}}`, accepted, ""},
	{"verify: a generation per block", "16Gi of 4Ki blocks", `{storage: {size: 20Gi}, verify: {}, workload: {readPercent: 0, workingSetPerClient: 16Gi}}`, accepted, ""},
	{"verify: a generation per block", "17Gi of 4Ki blocks", `{storage: {size: 20Gi}, verify: {}, workload: {readPercent: 0, workingSetPerClient: 17Gi}}`, goRefuses, ""},
	{"libaio: direct I/O", "buffered, the base engine", `workload: {direct: false}`, refused, ""},
	{"libaio: direct I/O", "buffered, a profile's engine", `workload: {profile: oltp, direct: false}`, refused, ""},
	{"libaio: direct I/O", "buffered libaio", `workload: {ioEngine: libaio, direct: false}`, refused, ""},
	{"libaio: direct I/O", "buffered io_uring", `workload: {ioEngine: io_uring, direct: false}`, accepted, ""},
	{"libaio: direct I/O", "buffered psync", `workload: {ioEngine: psync, ioDepth: 1, direct: false}`, accepted, ""},
	{"queue depths: an asynchronous engine", "posixaio", `{workload: {ioEngine: posixaio}, load: {rate: null, queueDepth: {steps: [1, 2]}}}`, accepted, ""},
	{"queue depths: an asynchronous engine", "sync", `{workload: {ioEngine: sync, ioDepth: 1}, load: {rate: null, queueDepth: {steps: [1, 2]}}}`, refused, ""},
	{"queue depths: an asynchronous engine", "psync", `{` + psync + `, load: {rate: null, queueDepth: {start: 1, max: 8}}}`, refused, ""},

	{"objective: one kind", "peakIOPS", `slo: {objectives: [{name: a, peakIOPS: 1}]}`, accepted, ""},
	{"objective: one kind", "two kinds", `slo: {objectives: [{name: a, peakIOPS: 1, peakMiBps: 1}]}`, refused, ""},
	{"objective: one kind", "none", `slo: {objectives: [{name: a}]}`, refused, ""},
	{"objective thresholds at least 1", "peakMiBps 0", `slo: {objectives: [{name: a, peakMiBps: 0}]}`, refused, ""},
	{"objective thresholds at least 1", "minIOPS 0", `slo: {objectives: [{name: a, latencyAtLoad: {maxLatency: 1ms, minIOPS: 0}}]}`, refused, ""},
	{"objective thresholds at least 1", "minMiBps 1", `slo: {objectives: [{name: a, mibpsAtLatency: {maxLatency: 1ms, minMiBps: 1}}]}`, accepted, ""},
	{"objective maxLatency", "1us", `slo: {objectives: [{name: a, iopsAtLatency: {maxLatency: 1us, minIOPS: 1}}]}`, accepted, ""},
	{"objective maxLatency", "1h", `slo: {objectives: [{name: a, latencyAtLoad: {maxLatency: 1h, minIOPS: 1}}]}`, accepted, ""},
	{"objective maxLatency", "0s", `slo: {objectives: [{name: a, iopsAtLatency: {maxLatency: 0s, minIOPS: 1}}]}`, refused, ""},
	{"objective maxLatency", "1ns", `slo: {objectives: [{name: a, iopsAtLatency: {maxLatency: 1ns, minIOPS: 1}}]}`, admissionRefuses, "the core takes any positive bound"},
	{"objective maxLatency", "2h", `slo: {objectives: [{name: a, mibpsAtLatency: {maxLatency: 2h, minMiBps: 1}}]}`, admissionRefuses, "the core takes any positive bound"},
	{"objective maxStall", "1s", `slo: {objectives: [{name: a, maxStall: 1s}]}`, accepted, ""},
	{"objective maxStall", "1h", `slo: {objectives: [{name: a, maxStall: 1h}]}`, accepted, ""},
	{"objective maxStall", "0s", `slo: {objectives: [{name: a, maxStall: 0s}]}`, refused, ""},
	{"objective maxStall", "1h1s", `slo: {objectives: [{name: a, maxStall: 1h0m1s}]}`, admissionRefuses, "the core bounds a stall objective from below only"},
	{"regression significance", "0.2", `regression: {baseline: {benchmark: a}, significance: "0.2"}`, accepted, ""},
	{"regression significance", "0.200001", `regression: {baseline: {benchmark: a}, significance: "0.200001"}`, refused, ""},
	{"regression significance", ".000001", `regression: {baseline: {benchmark: a}, significance: ".000001"}`, accepted, ""},
	{"regression significance", ".0", `regression: {baseline: {benchmark: a}, significance: ".0"}`, refused, ""},
	{"regression significance", "0.000000", `regression: {baseline: {benchmark: a}, significance: "0.000000"}`, refused, ""},
	{"regression minimum effects", "99 % and 1000 %", `regression: {baseline: {benchmark: a}, minIOPSDropPercent: 99, minP99RisePercent: 1000}`, accepted, ""},
	{"regression minimum effects", "IOPS drop 100 %", `regression: {baseline: {benchmark: a}, minIOPSDropPercent: 100}`, refused, ""},
	{"regression minimum effects", "p99 rise 1001 %", `regression: {baseline: {benchmark: a}, minP99RisePercent: 1001}`, refused, ""},
	{"regression minimum effects", "IOPS drop 0 %", `regression: {baseline: {benchmark: a}, minIOPSDropPercent: 0}`, admissionRefuses, "Of reads 0 as unset: the default"},

	{"rate: one I/O per second per job", "40 IOPS over 40 jobs", `{clients: {count: 10, jobsPerClient: 4}, load: {rate: {steps: [40, 100]}}}`, accepted, ""},
	{"rate: one I/O per second per job", "39 IOPS over 40 jobs", `{clients: {count: 10, jobsPerClient: 4}, load: {rate: {steps: [39, 100]}}}`, goRefuses, ""},
	{"rate: one I/O per second per job", "oltp: 196 IOPS over 40 jobs at 80 % reads", `{clients: {count: 10, jobsPerClient: 4}, workload: {profile: oltp}, load: {rate: {steps: [196]}}}`, accepted, ""},
	{"rate: one I/O per second per job", "oltp: 195 IOPS over 40 jobs at 80 % reads", `{clients: {count: 10, jobsPerClient: 4}, workload: {profile: oltp}, load: {rate: {steps: [195]}}}`, goRefuses, ""},
	{"rate: one I/O per second per job", "oltp sweep: 6 IOPS per client, 2 clients of 1 job", `{clients: {count: 2}, workload: {profile: oltp}, load: {rate: null, clients: {steps: [1, 2], perClientIOPS: 3}}}`, accepted, ""},
	{"rate: one I/O per second per job", "oltp sweep: 2 IOPS per client fits one client, not two", `{clients: {count: 2}, workload: {profile: oltp}, load: {rate: null, clients: {steps: [1, 2], perClientIOPS: 2}}}`, goRefuses, ""},
	{"working set a multiple of the block size", "10Gi of 8Ki blocks", `workload: {profile: oltp, workingSetPerClient: 10Gi}`, accepted, ""},
	{"working set a multiple of the block size", "10G of 8Ki blocks", `workload: {profile: oltp, workingSetPerClient: 10G}`, goRefuses, ""},
	{"working set a multiple of the block size", "1Mi + 512 of 4Ki blocks", `workload: {workingSetPerClient: 1049088}`, goRefuses, ""},
	{"working set: a block per fio job", "1Mi over 16 jobs of 64Ki blocks", `{clients: {jobsPerClient: 16}, workload: {profile: seq-read, workingSetPerClient: 1Mi}}`, accepted, ""},
	{"working set: a block per fio job", "1Mi over 32 jobs of 64Ki blocks", `{clients: {jobsPerClient: 32}, workload: {profile: seq-read, workingSetPerClient: 1Mi}}`, goRefuses, ""},
	{"working set: a block per fio job", "1Mi of 2Mi blocks", `workload: {blockSize: 2Mi, workingSetPerClient: 1Mi}`, goRefuses, ""},
	{"latency stop on a direction the workload does", "writes of a write profile", `{workload: {profile: rand-write}, load: {stop: {latency: {operation: write, limit: 1ms}}}}`, accepted, ""},
	{"latency stop on a direction the workload does", "reads of a write profile", `{workload: {profile: rand-write}, load: {stop: {latency: {operation: read, limit: 1ms}}}}`, goRefuses, ""},
	{"latency stop on a direction the workload does", "writes of the base reads", `load: {stop: {latency: {operation: write, limit: 1ms}}}`, goRefuses, ""},
	{"factorPercent steps: 100 at most, runs included", "100 steps", `load: {rate: {steps: null, start: 1, max: 100, factorPercent: 101}}`, accepted, ""},
	{"factorPercent steps: 100 at most, runs included", "101 steps", `load: {rate: {steps: null, start: 1, max: 101, factorPercent: 101}}`, goRefuses, ""},
	{"factorPercent steps: 100 at most, runs included", "20 steps × 10 runs", `load: {repeat: 10, rate: {steps: null, start: 1000, max: 1200, factorPercent: 101}}`, goRefuses, ""},
	{"factorPercent steps: 100 at most, runs included", "20 steps × 10 runs until steady", `load: {extendUntilSteady: {maxRuns: 10}, rate: {steps: null, start: 1000, max: 1200, factorPercent: 101}}`, goRefuses, ""},

	{"Shared with several clients: ReadWriteMany", "ReadWriteOnce", `{storage: {sharing: Shared, accessMode: ReadWriteOnce}, clients: {count: 2}}`, admissionRefuses, ""},
	{"existingClaim: Shared or one client", "PerClient, 2 clients", `{storage: {existingClaim: data}, clients: {count: 2}}`, admissionRefuses, ""},
	{"storage.size 1Mi to 1Pi", "2Pi", `storage: {size: 2Pi}`, admissionRefuses, ""},
	{"regression baseline: one kind", "none", `regression: {baseline: {}}`, admissionRefuses, ""},
}

// seq lists from to to, comma-separated.
func seq(from, to int) string {
	s := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, ", ")
}

// verdict is what admission and Of say of one spec.
type verdict struct {
	admission field.ErrorList
	goErr     error
}

func (v verdict) String() string {
	a := "admitted"
	if len(v.admission) > 0 {
		a = "admission: " + v.admission.ToAggregate().Error()
	}
	g := "Of: accepted"
	if v.goErr != nil {
		g = "Of: " + v.goErr.Error()
	}
	return a + "\n" + g
}

// judge stores baseSpec with patch as the API server would, and runs
// admission and Of on it.
func judge(t *testing.T, c *crd, patch string) verdict {
	t.Helper()
	obj := object(t, patch)
	c.store(t, obj)
	v := verdict{admission: c.validate(obj)}
	b, err := typed(obj)
	if err != nil {
		v.goErr = fmt.Errorf("the operator cannot decode it: %w", err)
		return v
	}
	_, v.goErr = Of(b)
	return v
}

func ruleNamed(t *testing.T, name string) rule {
	t.Helper()
	for _, r := range rules {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no rule %q in the table", name)
	return rule{}
}

// TestAdmissionAndOfAgree runs every row through admission and Of.
func TestAdmissionAndOfAgree(t *testing.T) {
	c := loadCRD(t, benchmarkCRD)
	for _, rw := range rows {
		t.Run(rw.rule+"/"+rw.name, func(t *testing.T) {
			r := ruleNamed(t, rw.rule)
			checkRow(t, r, rw)
			v := judge(t, c, rw.patch)
			admitted, goAccepts := len(v.admission) == 0, v.goErr == nil
			wantAdmitted := rw.want == accepted || rw.want == goRefuses
			wantGo := rw.want == accepted || rw.want == admissionRefuses
			if admitted != wantAdmitted || goAccepts != wantGo {
				t.Fatalf("want %s, got\n%s", rw.want, v)
			}
			if !admitted && !refusedBy(r, v.admission) {
				t.Errorf("admission refused it, but not by the rule (CEL %q, field %q):\n%s", r.cel, r.at, v)
			}
			if !goAccepts && !strings.Contains(v.goErr.Error(), r.goErr) {
				t.Errorf("Of refused it, but not by the rule (%q):\n%s", r.goErr, v)
			}
		})
	}
}

// checkRow holds a row to what its rule's side allows.
func checkRow(t *testing.T, r rule, rw row) {
	t.Helper()
	switch {
	case rw.want == goRefuses && r.side != goOnly:
		t.Fatalf("only a Go-only rule may let admission accept what Of refuses")
	case rw.want == refused && r.side != shared:
		t.Fatalf("a rule both refuse is shared")
	case rw.want == admissionRefuses && r.side == shared && rw.why == "":
		t.Fatalf("say why Of accepts what admission refuses")
	case rw.want == admissionRefuses && r.side == goOnly:
		t.Fatalf("admission refuses a Go-only rule's row: the rule is shared now")
	}
}

// refusedBy reports whether errs hold r's refusal: its CEL rule's message,
// or an error at its field.
func refusedBy(r rule, errs field.ErrorList) bool {
	for _, e := range errs {
		if r.cel != "" && strings.HasPrefix(e.Detail, r.cel) {
			return true
		}
		if r.cel == "" && r.at != "" && strings.HasPrefix(e.Field, r.at) {
			return true
		}
	}
	return false
}

// TestEveryRuleHasItsRows: a shared rule has a row admission and Of both
// accept and one both refuse; a Go-only rule a row admission lets through.
func TestEveryRuleHasItsRows(t *testing.T) {
	seen := map[string]map[outcome]int{}
	names := map[string]bool{}
	for _, r := range rules {
		if names[r.name] {
			t.Errorf("rule %q twice", r.name)
		}
		names[r.name] = true
		switch {
		case r.side == shared && r.goErr == "":
			t.Errorf("shared rule %q: say how Of refuses it (goErr)", r.name)
		case r.side == shared && r.cel == "" && r.at == "":
			t.Errorf("shared rule %q: say how admission refuses it (cel or at)", r.name)
		case r.side != shared && r.why == "":
			t.Errorf("rule %q: say why only one side checks it", r.name)
		}
	}
	for _, rw := range rows {
		if seen[rw.rule] == nil {
			seen[rw.rule] = map[outcome]int{}
		}
		seen[rw.rule][rw.want]++
	}
	for _, r := range rules {
		s := seen[r.name]
		switch r.side {
		case shared:
			if s[accepted] == 0 || s[refused] == 0 {
				t.Errorf("shared rule %q needs a row on each side of its boundary: %d accepted, %d refused", r.name, s[accepted], s[refused])
			}
		case goOnly:
			if s[goRefuses] == 0 {
				t.Errorf("Go-only rule %q needs a row that admission lets through", r.name)
			}
		}
	}
}

// TestEveryCELRuleIsInTheTable walks the CRD's CEL rules: each must be one
// rule of the table (shared, or admission-only with the reason), and each
// CEL rule the table names must still be in the CRD.
func TestEveryCELRuleIsInTheTable(t *testing.T) {
	c := loadCRD(t, benchmarkCRD)
	found := map[string]int{}
	for _, cr := range c.celRules() {
		var match []string
		for _, r := range rules {
			if r.cel != "" && strings.HasPrefix(cr.message, r.cel) {
				match = append(match, r.name)
			}
		}
		switch len(match) {
		case 0:
			t.Errorf("CEL rule at %s (%q) is no rule of the table: add it, shared with rows on both sides of its boundary, or admission-only with the reason", cr.path, cr.message)
		case 1:
			found[match[0]]++
		default:
			t.Errorf("CEL rule at %s (%q) is several rules of the table: %q", cr.path, cr.message, match)
		}
	}
	var shapeOnly []string
	for _, r := range rules {
		if r.cel != "" && found[r.name] == 0 {
			t.Errorf("the table's CEL rule %q (%q) is gone from the CRD", r.name, r.cel)
		}
		if r.side == admissionOnly {
			shapeOnly = append(shapeOnly, r.name+": "+r.why)
		}
	}
	t.Logf("CEL rules admission alone checks:\n  %s", strings.Join(shapeOnly, "\n  "))
}

// TestScheduleTemplateHasTheBenchmarksRules: a schedule's template is
// checked by Of too (InvalidTemplate), so its CEL rules must be the
// benchmark's spec's, but for the immutability of a created benchmark.
func TestScheduleTemplateHasTheBenchmarksRules(t *testing.T) {
	rulesUnder := func(c *crd, prefix string) map[celRule]bool {
		out := map[celRule]bool{}
		for _, r := range c.celRules() {
			if r.path == prefix || strings.HasPrefix(r.path, prefix+".") {
				r.path = strings.TrimPrefix(r.path, prefix)
				out[r] = true
			}
		}
		return out
	}
	bench := rulesUnder(loadCRD(t, benchmarkCRD), "spec")
	sched := rulesUnder(loadCRD(t, scheduleCRD), "spec.template.spec")
	for r := range bench {
		if r.rule == "self == oldSelf" && r.path == "" {
			continue
		}
		if !sched[r] {
			t.Errorf("the schedule's template lacks the benchmark's rule at spec%s: %q", r.path, r.message)
		}
	}
	for r := range sched {
		if !bench[r] {
			t.Errorf("the schedule's template has a rule the benchmark lacks at spec%s: %q", r.path, r.message)
		}
	}
}
