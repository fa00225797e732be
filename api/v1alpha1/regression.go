package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// fingerprintVersion changes when what RegressionFingerprint hashes does.
const fingerprintVersion = "v1"

// RegressionFingerprint identifies what a run measures, part by part — its
// workload and preconditioning, its clients and its load, as admission
// defaulted them — so that runs are compared with a baseline only when they
// measured the same thing, and a mismatch can be named:
// "v1;workload=…;clients=…;load=…". The storage is not part of it:
// comparing storage is the point. It hashes the spec as written and
// defaulted, not as the operator resolves it (a profile is its name), so
// that the kubectl plugin computes the same fingerprint as the operator.
func (s *StorageBenchmarkSpec) RegressionFingerprint() string {
	part := func(name string, v any) string {
		data, err := json.Marshal(v)
		if err != nil { // plain data: cannot happen
			data = []byte(err.Error())
		}
		sum := sha256.Sum256(data)
		return name + "=" + hex.EncodeToString(sum[:8])
	}
	clients := struct{ Count, JobsPerClient int32 }{s.Clients.Count, s.Clients.JobsPerClient}
	workload := struct {
		Workload     WorkloadSpec
		Precondition PreconditionSpec
	}{s.Workload, s.Precondition}
	return strings.Join([]string{fingerprintVersion, part("workload", workload), part("clients", clients), part("load", s.Load)}, ";")
}

// FingerprintDiff names the parts two regression fingerprints differ in:
// "load", "clients and load"; "fingerprint" when they differ otherwise (a
// fingerprint of another version, or not one at all).
func FingerprintDiff(a, b string) string {
	x, y := strings.Split(a, ";"), strings.Split(b, ";")
	var parts []string
	for i, p := range x {
		if i >= len(y) || p != y[i] {
			name, _, _ := strings.Cut(p, "=")
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 || len(x) != len(y) || x[0] != y[0] {
		return "fingerprint"
	}
	return strings.Join(parts, " and ")
}
