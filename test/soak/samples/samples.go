// Package samples is the line format of the soak manager's samples file:
// written by test/soak/manager, read by the soak's report.
package samples

// Sample is one line of the samples file.
type Sample struct {
	Build string `json:"build"`
	PID   int    `json:"pid"`
	// Real and Sim are Unix milliseconds: the real and the simulated time.
	Real int64 `json:"real"`
	Sim  int64 `json:"sim"`
	// Live is /gc/heap/live:bytes, Heap /memory/classes/heap/objects:bytes.
	Live uint64 `json:"live"`
	Heap uint64 `json:"heap"`
	// Counters is set on the samples that carry Requests and StepRecords.
	Counters    bool    `json:"counters,omitempty"`
	Requests    float64 `json:"requests,omitempty"`
	StepRecords float64 `json:"stepRecords,omitempty"`
	// Final marks the sample written as the process stops.
	Final bool `json:"final,omitempty"`
}
