// Package spec translates a StorageBenchmark's spec (api/v1alpha1) into the
// core's terms, once: the workload, topology, load, analysis options,
// objectives, regression options and volume a run is made of. It is the
// edge between the API and the core: it reads API types and speaks the
// core's, and knows no Kubernetes client. The operator (controllers) runs
// what Of returns; the kubectl plugin (internal/report/apireport) reads
// saved benchmarks with the same translation, so that a default lives in
// one place.
//
// # Validation
//
// Of validates the translated spec with the core's own rules (plan.Validate,
// workload.Resolve, analysis' Options.Validate, ValidateObjective,
// RegressionOptionsOf) and a few of its own: a working set that fits the
// volume (a profile's default one included) and steps long enough to be
// judged steady when unsteady steps are run again. The first violated rule
// is returned; field errors (*workload.FieldError) name the field as the
// spec does ("workload.blockSize", not the core's
// "workload.blockSizeBytes").
//
// Admission checks the same spec first, with the CRD's OpenAPI schema and
// CEL rules (config/crd/bases). Where a rule exists in both places the two
// must agree, boundary included: admission_test.go evaluates the CRD's
// rules in process and Of on the same inputs, and names every rule that
// only one side checks, and why. A spec admission accepts that Of refuses
// ends its run with the InvalidSpec condition instead of being refused;
// that is left to the rules admission cannot express (those that need a
// profile's block size or read mix, or a step count that factorPercent
// generates).
//
// # Defaults
//
// Of reads the spec as the API server stores it, its defaults filled in
// (the CRD's +kubebuilder:default markers); a field it finds unset takes
// the core's default (analysis.Options.WithDefaults, plan's). The API's
// own defaults that the core does not know are here (DefaultStepDuration,
// DefaultRampTime) for readers of saved objects; admission_test.go checks
// every marker default that restates a Go default against it.
package spec
