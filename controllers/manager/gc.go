package manager

import (
	"os"
	"runtime/debug"
)

// GCPercent is the manager's garbage-collection target (GOGC) unless the
// environment sets GOGC: a collection when the heap has grown by twice
// the live heap, not once. At a thousand clients a step's results are
// read and merged as short-lived garbage, and at GOGC=100 the collector
// took about an eighth of the manager's CPU (docs/measurement.md); the
// live heap is tens of MiB there, so the extra memory is small, and the
// GOMEMLIMIT the deployment sets from the container's memory limit makes
// the collector work harder near the limit whatever this says.
const GCPercent = 200

// TuneGC sets GCPercent when GOGC is not set, and returns the percent in
// force. cmd/manager calls it first thing, and so does any harness that
// measures the manager as it ships (test/heap).
func TuneGC() int {
	if v, set := os.LookupEnv("GOGC"); set && v != "" {
		percent := debug.SetGCPercent(100) // read it back: the runtime parsed GOGC
		debug.SetGCPercent(percent)
		return percent
	}
	debug.SetGCPercent(GCPercent)
	return GCPercent
}
