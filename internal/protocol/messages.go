package protocol

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

// ClientPlan is everything one client needs to know for the whole benchmark.
// The per-step load is not in it: every step order names the step, and each
// client derives its own jobs' share with plan.Divide, which is deterministic,
// so all clients agree without the order listing every job.
type ClientPlan struct {
	Benchmark string        `json:"benchmark"`
	Client    int           `json:"client"`
	Topology  plan.Topology `json:"topology"`
	Workload  workload.Spec `json:"workload"`
	Volume    Volume        `json:"volume"`
	Seed      uint64        `json:"seed"`
	Precond   bool          `json:"precondition"`
	Fio       string        `json:"fio,omitempty"`
	// Arrivals is how rated jobs space their I/Os (plan.Load.Arrivals).
	Arrivals plan.Arrivals `json:"arrivals,omitempty"`
	// ResultWire lists the versions of the results' wire encoding the
	// conductor reads (results.WireVersions). A runner publishes its results
	// in the newest version it also knows (results.ChooseWire), or as JSON
	// when there is none: a conductor from before the wire encoding lists
	// nothing, and a runner from before it ignores the field and writes JSON,
	// which every conductor reads.
	ResultWire []int `json:"resultWire,omitempty"`
	// OrdersAhead says the conductor writes each step's successor ahead
	// (Ahead): a runner then looks for it while its step runs. Without it
	// the next order is waited for once the step is published.
	OrdersAhead bool `json:"ordersAhead,omitempty"`
	// Verify makes every step's writes verifiable, and the client read
	// back what the run wrote after each step, within the order's
	// VerifyWithin (internal/runner's verify.go).
	Verify bool `json:"verify,omitempty"`
}

// Validate checks a plan received from the conductor with the core's rules
// (plan.ValidateFor), once, where it enters the runner.
func (p ClientPlan) Validate() error { return plan.ValidateFor(p.Topology, p.Workload) }

// ClientSeed gives each client of a benchmark its own random seed range.
func ClientSeed(benchmark string, client int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(benchmark))
	return h.Sum64()>>16 + uint64(client)<<20
}

// Where a client container finds its volume: a Filesystem volume is
// mounted at DataMountPath, a Block volume is the device DevicePath. The
// operator builds the pods so (internal/exchange) and writes the paths in
// the plan (internal/spec).
const (
	DataMountPath = "/storagebench/data"
	DevicePath    = "/dev/storagebench"
)

// Volume says where the client's I/O goes.
type Volume struct {
	// Path is the volume's mount point (Filesystem) or device (Block).
	Path string `json:"path"`
	// Block is set for raw block volumes: jobs use disjoint regions.
	Block bool `json:"block,omitempty"`
	// Shared is set when several clients mount the same volume: each client
	// then works in its own directory, client-NNN.
	Shared bool `json:"shared,omitempty"`
	// Subdir confines a Filesystem client to <Path>/<Subdir> (a relative
	// path inside the volume; client-NNN goes below it when Shared), so the
	// other files of an existing claim are never touched. It is created with
	// mode 0700 when missing. Ignored for Block volumes.
	Subdir string `json:"subdir,omitempty"`
	// RemoveWhenDone makes the runner remove, when it ends, exactly the files
	// it created (its jobs' files that did not exist before, its client-NNN
	// directory when empty), then Subdir itself when empty. Ignored for Block
	// volumes.
	RemoveWhenDone bool `json:"removeWhenDone,omitempty"`
}

// AppReservePercent is the share of an existing claim's capacity that must
// stay free once the benchmark's files are laid out: the claim belongs to
// an application that keeps writing while the benchmark runs (a
// database's WAL, logs, temporary files), consent to files is not consent
// to take the last bytes it needs, and file systems slow down and fragment
// when nearly full. 10 % is the margin most volume alerts fire at. The
// operator checks it against the claim's capacity before any pod exists;
// each runner against the free space it sees before it writes.
const AppReservePercent = 10

// StepOrder tells the clients to run one step, or that there is none left.
type StepOrder struct {
	Index int `json:"index"`
	// Done says there are no more steps; the other fields are unset.
	Done bool `json:"done,omitempty"`
	// Reason says why the run ended (with Done): the stop rule's message,
	// or for a failed run the failure's.
	Reason string `json:"reason,omitempty"`
	// Failure is the condition reason of a run that failed (with Done);
	// empty for a run that completed.
	Failure string `json:"failure,omitempty"`
	// EndedAt is when the run ended (with Done): the conductor's record of
	// it, from which the operator rebuilds status.
	EndedAt time.Time `json:"endedAt,omitzero"`
	// StartAt is the wall-clock instant every client starts this step.
	StartAt  time.Time     `json:"startAt"`
	Step     plan.Step     `json:"step"`
	Duration time.Duration `json:"duration"`
	Ramp     time.Duration `json:"ramp"`
	// VerifyWithin is how long the clients' verification pass after the
	// step may take, in a run that verifies (ClientPlan.Verify); the
	// step's results are awaited that much longer.
	VerifyWithin time.Duration `json:"verifyWithin,omitempty"`
	// Lead is the first step's: how long before StartAt the order was
	// made, as every client had become ready (FirstStepLead). Zero in
	// later steps' orders, and in those of a conductor from before it,
	// which used DefaultStartLead or its own setting.
	Lead time.Duration `json:"lead,omitempty"`
}

// VerifyAllowance is how long a verification pass after a step of
// measured length d may take: twice the step, at least a minute. A
// pass reads back what the run wrote, at most the working set; what it
// has not read by then is counted unverified, not guessed.
func VerifyAllowance(d time.Duration) time.Duration { return max(2*d, time.Minute) }

// End is when an ordered step's measurement ends.
func (o StepOrder) End() time.Time { return o.StartAt.Add(o.Ramp + o.Duration) }

// Mount is the file system a client's volume is mounted from, as the
// client's kernel sees it: what was really negotiated (an NFS mount's
// version, nconnect, rsize and wsize), not what the StorageClass asked for.
type Mount struct {
	Source  string `json:"source"`
	FSType  string `json:"fsType"`
	Options string `json:"options"`
}

// Ready is what a client reports once its files are laid out and
// preconditioned.
type Ready struct {
	Client     int    `json:"client"`
	FioVersion string `json:"fioVersion"`
	// Mount is the volume's file system as the client sees it (nil for a
	// raw block device, or when /proc/self/mounts cannot be read).
	Mount        *Mount        `json:"mount,omitempty"`
	Precondition time.Duration `json:"precondition"`
	Error        string        `json:"error,omitempty"`
	// ClockOffset is the runner's clock minus the conductor's (the API
	// server's): positive when the runner is ahead. It is zero when they
	// share a clock (local runs) or when it could not be measured.
	ClockOffset time.Duration `json:"clockOffset"`
	// ClockOffsetUncertainty bounds the error of ClockOffset: the true
	// offset is within ClockOffset ± ClockOffsetUncertainty.
	ClockOffsetUncertainty time.Duration `json:"clockOffsetUncertainty"`
	// ClockOffsetError, when set, says why the offset could not be
	// measured; the runner then starts steps by its own clock.
	ClockOffsetError string `json:"clockOffsetError,omitempty"`
	// FioStartup is how long fio took on this client, launched with the
	// workload's engine and jobs, to release its first I/O of a run held
	// until an instant already past: what a step's lead must leave the
	// client after it sees the order. Zero when it was not measured.
	FioStartup time.Duration `json:"fioStartup,omitempty"`
	// At is when the report was written, on the conductor's clock (the
	// runner's less ClockOffset): the conductor tells from it how long
	// the report took to reach it.
	At time.Time `json:"at,omitzero"`
}

// MaxFioStartup bounds the fio start-up a runner may report.
const MaxFioStartup = time.Minute

// MaxClockOffset bounds the clock offset a runner may have: a node whose
// clock is further off cannot take part in a timed benchmark.
const MaxClockOffset = 24 * time.Hour

// Validate checks a ready report read from a runner that may not be trusted.
func (r Ready) Validate() error {
	switch {
	case r.Client < 0 || r.Client >= results.MaxClients:
		return fmt.Errorf("client index %d is outside [0, %d)", r.Client, results.MaxClients)
	case r.Precondition < 0:
		return fmt.Errorf("client %d: negative preconditioning time %s", r.Client, r.Precondition)
	case r.ClockOffset < -MaxClockOffset || r.ClockOffset > MaxClockOffset:
		return fmt.Errorf("client %d: clock offset %s is beyond ±%s", r.Client, r.ClockOffset, MaxClockOffset)
	case r.ClockOffsetUncertainty < 0 || r.ClockOffsetUncertainty > MaxClockOffset:
		return fmt.Errorf("client %d: clock offset uncertainty %s is outside [0, %s]", r.Client, r.ClockOffsetUncertainty, MaxClockOffset)
	case r.FioStartup < 0 || r.FioStartup > MaxFioStartup:
		return fmt.Errorf("client %d: fio start-up %s is outside [0, %s]", r.Client, r.FioStartup, MaxFioStartup)
	}
	return nil
}

// Pause waits d, or until ctx ends (then it returns ctx's error): the
// wait between polls on both sides of the protocol.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
