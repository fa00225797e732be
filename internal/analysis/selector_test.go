package analysis

import (
	"errors"
	"testing"

	"github.com/storagebench/storagebench/internal/results"
)

func TestLatencySelectorOf(t *testing.T) {
	both := mixed(1, 700, 800*us, 300, 3*ms)      // writes slower
	readsSlower := mixed(2, 700, 5*ms, 300, 2*ms) // reads slower
	readOnly := reads(3, 1000, 900*us)            // no writes
	writeOnly := writes(4, 1000, 4*ms)            // no reads
	empty := results.StepAggregate{Step: 5}       // no I/O at all
	pct := both                                   // distinct percentiles
	pct.Read.Latency.P99Ns, pct.Read.Latency.P50Ns = 1840*us, 500*us
	pct.Write.Latency.P99Ns = 1500 * us
	synced := writes(6, 300, 2*ms) // a log: each write followed by an fdatasync
	synced.Sync = dir(300, 7*ms)
	for _, tc := range []struct {
		name   string
		sel    LatencySelector
		a      results.StepAggregate
		want   uint64
		wantOK bool
	}{
		{"zero selector is mean total", LatencySelector{}, both, 1460 * us, true},
		{"explicit mean total", LatencySelector{"mean", "total"}, both, 1460 * us, true},
		{"empty metric is mean", LatencySelector{Operation: "read"}, both, 800 * us, true},
		{"read", LatencySelector{"p99", "read"}, pct, 1840 * us, true},
		{"read p50", LatencySelector{"p50", "read"}, pct, 500 * us, true},
		{"write", LatencySelector{"p99", "write"}, both, 3 * ms, true},
		{"max total", LatencySelector{"max", "total"}, both, 3 * ms, true},
		{"worst picks write when writes are slower", LatencySelector{"p99", "worst"}, both, 3 * ms, true},
		{"worst picks read when reads are slower", LatencySelector{"p99", "worst"}, readsSlower, 5 * ms, true},
		{"worst per metric", LatencySelector{"p99", "worst"}, pct, 1840 * us, true},
		{"worst with reads only", LatencySelector{"p99", "worst"}, readOnly, 900 * us, true},
		{"worst with writes only", LatencySelector{"p99", "worst"}, writeOnly, 4 * ms, true},
		{"worst without I/O", LatencySelector{"p99", "worst"}, empty, 0, false},
		{"read selector on a write-only step", LatencySelector{"p99", "read"}, writeOnly, 0, false},
		{"write selector on a read-only step", LatencySelector{"mean", "write"}, readOnly, 0, false},
		{"total without I/O", LatencySelector{}, empty, 0, false},
		{"sync calls", LatencySelector{"p99", "sync"}, synced, 7 * ms, true},
		{"sync calls are not the total", LatencySelector{"p99", "total"}, synced, 2 * ms, true},
		{"sync selector without sync calls", LatencySelector{"p99", "sync"}, writeOnly, 0, false},
		{"unknown metric", LatencySelector{"p98", "read"}, both, 0, false},
		{"unknown operation", LatencySelector{"p99", "sideways"}, both, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.sel.Of(tc.a)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Of = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestLatencySelectorString(t *testing.T) {
	for _, tc := range []struct {
		sel  LatencySelector
		want string
	}{
		{LatencySelector{}, "mean latency"},
		{LatencySelector{"p99", "read"}, "p99 read latency"},
		{LatencySelector{"p99.9", "write"}, "p99.9 write latency"},
		{LatencySelector{"p99", "total"}, "p99 latency"},
		{LatencySelector{"max", "worst"}, "max worst-direction latency"},
	} {
		if got := tc.sel.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.sel, got, tc.want)
		}
	}
}

func TestLatencySelectorValidate(t *testing.T) {
	for _, tc := range []struct {
		sel     LatencySelector
		wantErr bool
	}{
		{LatencySelector{}, false},
		{LatencySelector{"p99.99", "worst"}, false},
		{LatencySelector{"min", "read"}, false},
		{LatencySelector{"p95", ""}, false},
		{LatencySelector{"p98", "read"}, true},
		{LatencySelector{"P99", "read"}, true},
		{LatencySelector{"p99", "both"}, true},
	} {
		err := tc.sel.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%#v.Validate() = %v, wantErr %v", tc.sel, err, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidSelector) {
			t.Errorf("%#v.Validate() = %v, does not wrap ErrInvalidSelector", tc.sel, err)
		}
	}
}
