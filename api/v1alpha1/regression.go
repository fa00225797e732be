package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// RegressionFingerprint identifies what a run measures, part by part — its
// workload, its clients and its load, as admission defaulted them — so that
// runs are compared with a baseline only when they measured the same thing,
// and a mismatch can be named: "workload=…;clients=…;load=…". The storage
// is not part of it: comparing storage is the point.
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
	return strings.Join([]string{part("workload", s.Workload), part("clients", clients), part("load", s.Load)}, ";")
}

// FingerprintDiff names the parts two regression fingerprints differ in:
// "load", "clients and load"; "fingerprint" when they differ otherwise.
func FingerprintDiff(a, b string) string {
	x, y := strings.Split(a, ";"), strings.Split(b, ";")
	var parts []string
	for i, p := range x {
		if i >= len(y) || p != y[i] {
			name, _, _ := strings.Cut(p, "=")
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 || len(x) != len(y) {
		return "fingerprint"
	}
	return strings.Join(parts, " and ")
}
