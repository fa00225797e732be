package results

import (
	"reflect"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/fio"
)

// e is a latency log's window: written at ms, its slowest I/O ns.
func e(ms, ns uint64) fio.LatLogEntry { return fio.LatLogEntry{TimeMs: ms, MaxNs: ns} }

func TestStallsOf(t *testing.T) {
	ms := func(v float64) uint64 { return uint64(v * 1e6) } // ms → ns
	// A job at 200 IOPS, a window written every 100 ms, whose I/O waited
	// from 3200 ms (the ticks saw 3100..6247) to 6247 ms: measured on
	// this machine with the volume's filesystem frozen for 3.05 s.
	frozen := []fio.LatLogEntry{e(3000, ms(0.09)), e(3100, ms(0.13)), e(6247, 3_047_111_573), e(6300, ms(1.06)), e(6400, ms(0.09))}
	steady := []fio.LatLogEntry{e(100, ms(0.2)), e(200, ms(0.2)), e(300, ms(0.2)), e(400, ms(0.2))}
	for _, tc := range []struct {
		name     string
		jobs     [][]fio.LatLogEntry
		tickIdle []Span
		want     []Span
	}{
		{"a stall is from when the slowest I/O was issued to when it completed", [][]fio.LatLogEntry{frozen}, nil, []Span{{3200, 6247}}},
		{"bounded by the window before: something completed then",
			[][]fio.LatLogEntry{{e(1000, ms(0.1)), e(1500, ms(900))}}, nil, []Span{{1000, 1500}}},
		{"a slow rate is no stall: nothing was waiting", [][]fio.LatLogEntry{{e(500, ms(0.1)), e(1000, ms(0.1)), e(1500, ms(0.1))}}, nil, nil},
		{"shorter than two windows: left out", [][]fio.LatLogEntry{{e(100, ms(0.1)), e(290, ms(190))}}, nil, nil},
		{"a stall from the step's start", [][]fio.LatLogEntry{{e(2500, ms(2500)), e(2600, ms(0.1))}}, nil, []Span{{0, 2500}}},
		{"every job stalled: only where all did",
			[][]fio.LatLogEntry{frozen, {e(3000, ms(0.1)), e(5000, ms(1800)), e(5100, ms(0.1)), e(6300, ms(0.1))}}, nil, []Span{{3200, 5000}}},
		{"a read and a write window written at the same ms, the slow one second",
			[][]fio.LatLogEntry{{e(1100, ms(0.1)), e(4100, ms(0.2)), e(4100, 3_000_000_000), e(4200, ms(0.1))}}, nil, []Span{{1100, 4100}}},
		{"one job kept completing: no stall", [][]fio.LatLogEntry{frozen, steady}, nil, nil},
		{"a job that completed nothing constrains nothing", [][]fio.LatLogEntry{frozen, nil}, nil, []Span{{3200, 6247}}},
		{"no logs: the ticks' spans", nil, []Span{{1000, 2000}}, []Span{{1000, 2000}}},
		{"joined with the ticks' spans the logs do not overlap: a client's jobs stopped with nothing outstanding, a stall going on at the end",
			[][]fio.LatLogEntry{frozen}, []Span{{1000, 2000}, {4200, 6250}, {7000, 9000}}, []Span{{1000, 2000}, {3200, 6247}, {7000, 9000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StallsOf(tc.jobs, tc.tickIdle); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("StallsOf() = %v, want %v", got, tc.want)
			}
		})
	}
}

// At most MaxStalls spans are kept, the longest, in order.
func TestStallsOfKeepsTheLongest(t *testing.T) {
	var log []fio.LatLogEntry
	at := uint64(0)
	for k := range MaxStalls + 10 {
		wait := uint64(300 + k%7)
		if k == 5 {
			wait = 5000
		}
		at += 50 // something completes between two stalls
		log = append(log, e(at, 100_000))
		at += wait
		log = append(log, e(at, wait*1_000_000))
	}
	got := StallsOf([][]fio.LatLogEntry{log}, nil)
	if len(got) != MaxStalls {
		t.Fatalf("%d spans, want %d", len(got), MaxStalls)
	}
	if (Timeline{Windows: []Window{{}}, Idle: got}).LongestIdle().Duration().Milliseconds() != 5000 {
		t.Errorf("the longest stall was dropped")
	}
	for k := 1; k < len(got); k++ {
		if got[k].StartMs < got[k-1].EndMs {
			t.Fatalf("spans out of order at %d: %v %v", k, got[k-1], got[k])
		}
	}
}

func TestParseLatLog(t *testing.T) {
	got, err := fio.ParseLatLog(strings.NewReader("100, 433438, 1, 0, 0\n6247, 3047111573, 1, 0, 0\n200, 95578, 0, 0, 0, 0\n\n"))
	want := []fio.LatLogEntry{e(100, 433438), e(200, 95578), e(6247, 3047111573)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseLatLog() = %v, %v; want %v in time order", got, err, want)
	}
	for _, bad := range []string{"100, x, 1\n", "100\n", "-5, 10, 1\n"} {
		if _, err := fio.ParseLatLog(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseLatLog(%q) accepted it", bad)
		}
	}
}
