package controllers

import (
	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/spec"
)

// The spec is translated into the core's terms by internal/spec, once for
// the operator and the kubectl plugin; these are its names here.

// desired is a benchmark's spec translated into the core's terms
// (spec.Run).
type desired = spec.Run

// desiredOf translates and validates the spec (spec.Of).
func desiredOf(b *v1alpha1.StorageBenchmark) (desired, error) { return spec.Of(b) }

// steadyOptionsOf are spec.analysis.steadyState's options.
func steadyOptionsOf(s *v1alpha1.StorageBenchmarkSpec) analysis.SteadyOptions {
	return spec.SteadyOptionsOf(s)
}

// clientPlan is the plan template every client reads (spec.ClientPlan).
func clientPlan(b *v1alpha1.StorageBenchmark, d *desired) protocol.ClientPlan {
	return spec.ClientPlan(b, d)
}

// BenchmarkDirectory is where a benchmark writes on an existing
// Filesystem claim (spec.BenchmarkDirectory): named after the benchmark and
// its UID, so two benchmarks, or two runs under one name, never share files.
func BenchmarkDirectory(b *v1alpha1.StorageBenchmark) string { return spec.BenchmarkDirectory(b) }
