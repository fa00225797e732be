package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/workload"
)

func TestMinTotalBruteForce(t *testing.T) {
	for r := int32(0); r <= 100; r++ {
		for _, p := range []int64{1, 2, 3, 7, 48, 97, 100, 1000} {
			want := int64(1)
			for ; ; want++ {
				reads, writes := splitReads(want, r)
				if (r == 0 || reads >= p) && (r == 100 || writes >= p) {
					break
				}
			}
			if got := minTotal(p, r); got != want {
				t.Errorf("minTotal(%d, %d) = %d, want %d", p, r, got, want)
			}
		}
	}
}

func TestSplitReads(t *testing.T) {
	for _, tt := range []struct {
		total         int64
		read          int32
		reads, writes int64
	}{
		{100, 80, 80, 20}, {7, 50, 3, 4}, {1, 99, 0, 1}, {101, 99, 99, 2}, {5, 0, 0, 5}, {5, 100, 5, 0},
		{1 << 60, 33, (1<<60)/100*33 + (1<<60)%100*33/100, (1 << 60) - ((1<<60)/100*33 + (1<<60)%100*33/100)},
	} {
		r, w := splitReads(tt.total, tt.read)
		if r != tt.reads || w != tt.writes {
			t.Errorf("splitReads(%d, %d) = %d, %d, want %d, %d", tt.total, tt.read, r, w, tt.reads, tt.writes)
		}
	}
}

// TestDivideProperties checks, for many combinations, that the job shares add
// up to the offered total exactly, that no job gets a zero share of a
// direction with I/O, and that client totals differ by at most 1.
func TestDivideProperties(t *testing.T) {
	topologies := []Topology{topo(1, 1), topo(1, 7), topo(2, 3), topo(3, 1), topo(5, 8), topo(6, 8), topo(7, 13), topo(11, 64), topo(97, 3), topo(1000, 1)}
	reads := []int32{0, 1, 3, 25, 33, 50, 67, 70, 80, 90, 99, 100}
	for _, tp := range topologies {
		for _, r := range reads {
			for _, unit := range []RateUnit{IOPS, MiBps} {
				w := wlBS(r, 8<<10)
				minimum := minimumBase(unit, tp, w)
				for _, total := range []int64{minimum, minimum + 1, minimum + 7, 2*minimum - 1, 10007, 99991, 1_000_003, 1<<40 + 13} {
					if total < minimum {
						continue
					}
					s := Step{Index: 3, OfferedIOPS: total}
					if unit == MiBps {
						s = Step{Index: 3, OfferedBytesPerSec: total}
					}
					loads, err := Divide(s, tp, w)
					if err != nil {
						t.Fatalf("%+v %d%% %s total %d: %v", tp, r, unit, total, err)
					}
					checkDivision(t, loads, tp, w, unit, total)
				}
			}
		}
	}
}

func checkDivision(t *testing.T, loads [][]JobLoad, tp Topology, w workload.Spec, unit RateUnit, total int64) {
	t.Helper()
	if len(loads) != int(tp.Clients) {
		t.Fatalf("%d clients, want %d", len(loads), tp.Clients)
	}
	wantReads, wantWrites := splitReads(total, w.ReadPercent)
	var sumR, sumW int64
	var clientR, clientW, clientAll []int64
	for c, jobs := range loads {
		if len(jobs) != int(tp.JobsPerClient) {
			t.Fatalf("client %d has %d jobs, want %d", c, len(jobs), tp.JobsPerClient)
		}
		var cr, cw int64
		for j, l := range jobs {
			r, wr := l.ReadIOPS, l.WriteIOPS
			other := l.ReadBytesPerSec | l.WriteBytesPerSec
			if unit == MiBps {
				r, wr = l.ReadBytesPerSec, l.WriteBytesPerSec
				other = l.ReadIOPS | l.WriteIOPS
			}
			if other != 0 {
				t.Errorf("client %d job %d: fields of the other unit set: %+v", c, j, l)
			}
			minShare := perJobMinimum(unit, w)
			if w.HasReads() && r < minShare || w.HasWrites() && wr < minShare {
				t.Errorf("%+v %d%% total %d: client %d job %d got %d/%d, below %d", tp, w.ReadPercent, total, c, j, r, wr, minShare)
			}
			if !w.HasReads() && r != 0 || !w.HasWrites() && wr != 0 {
				t.Errorf("client %d job %d: share in a direction without I/O: %+v", c, j, l)
			}
			if l.IODepth != w.IODepth {
				t.Errorf("client %d job %d: IODepth %d, want %d", c, j, l.IODepth, w.IODepth)
			}
			cr += r
			cw += wr
		}
		sumR += cr
		sumW += cw
		clientR, clientW, clientAll = append(clientR, cr), append(clientW, cw), append(clientAll, cr+cw)
	}
	if sumR != wantReads || sumW != wantWrites || sumR+sumW != total {
		t.Errorf("%+v %d%% %s total %d: sums %d+%d, want %d+%d", tp, w.ReadPercent, unit, total, sumR, sumW, wantReads, wantWrites)
	}
	for name, v := range map[string][]int64{"reads": clientR, "writes": clientW, "total": clientAll} {
		if slices.Max(v)-slices.Min(v) > 1 {
			t.Errorf("%+v %d%% total %d: client %s differ by more than 1: %v", tp, w.ReadPercent, total, name, v)
		}
	}
}

func TestDivideExamples(t *testing.T) {
	// 10 IOPS at 50 % reads over 2 clients × 2 jobs: reads 5, writes 5.
	// Read remainder (1) goes to slot 0 (c0 j0); write remainder (1)
	// continues at slot 1 (c1 j0).
	loads, err := Divide(Step{OfferedIOPS: 10}, topo(2, 2), wl(50))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]JobLoad{
		{{ReadIOPS: 2, WriteIOPS: 1, IODepth: 16}, {ReadIOPS: 1, WriteIOPS: 1, IODepth: 16}},
		{{ReadIOPS: 1, WriteIOPS: 2, IODepth: 16}, {ReadIOPS: 1, WriteIOPS: 1, IODepth: 16}},
	}
	if !equalLoads(loads, want) {
		t.Errorf("Divide = %+v, want %+v", loads, want)
	}

	// 3 clients × 2 jobs, 100 % reads, 8 IOPS: remainder 2 goes to c0 j0, c1 j0.
	loads, err = Divide(Step{OfferedIOPS: 8}, topo(3, 2), wl(100))
	if err != nil {
		t.Fatal(err)
	}
	want = [][]JobLoad{
		{{ReadIOPS: 2, IODepth: 16}, {ReadIOPS: 1, IODepth: 16}},
		{{ReadIOPS: 2, IODepth: 16}, {ReadIOPS: 1, IODepth: 16}},
		{{ReadIOPS: 1, IODepth: 16}, {ReadIOPS: 1, IODepth: 16}},
	}
	if !equalLoads(loads, want) {
		t.Errorf("Divide = %+v, want %+v", loads, want)
	}

	// MiBps: 1 MiB/s write-only over 1 client × 3 jobs of 4 KiB blocks.
	loads, err = Divide(Step{OfferedBytesPerSec: 1 << 20}, topo(1, 3), wlBS(0, 4096))
	if err != nil {
		t.Fatal(err)
	}
	want = [][]JobLoad{{{WriteBytesPerSec: 349526, IODepth: 16}, {WriteBytesPerSec: 349525, IODepth: 16}, {WriteBytesPerSec: 349525, IODepth: 16}}}
	if !equalLoads(loads, want) {
		t.Errorf("Divide = %+v, want %+v", loads, want)
	}
}

func TestDivideQueueDepth(t *testing.T) {
	for _, tt := range []struct {
		qd   int32
		jobs int32
		want []int32
	}{
		{8, 8, []int32{1, 1, 1, 1, 1, 1, 1, 1}},
		{16, 8, []int32{2, 2, 2, 2, 2, 2, 2, 2}},
		{11, 4, []int32{3, 3, 3, 2}},
		{64, 1, []int32{64}},
		{4096, 64, slices.Repeat([]int32{64}, 64)},
		{97, 5, []int32{20, 20, 19, 19, 19}},
	} {
		loads, err := Divide(Step{Index: 2, QueueDepthPerClient: tt.qd}, topo(3, tt.jobs), wl(70))
		if err != nil {
			t.Fatalf("qd %d jobs %d: %v", tt.qd, tt.jobs, err)
		}
		for c, jobs := range loads {
			var got []int32
			var sum int32
			for _, l := range jobs {
				if l.ReadIOPS|l.WriteIOPS|l.ReadBytesPerSec|l.WriteBytesPerSec != 0 {
					t.Errorf("queue-depth step has a rate: %+v", l)
				}
				got = append(got, l.IODepth)
				sum += l.IODepth
			}
			if !slices.Equal(got, tt.want) || sum != tt.qd {
				t.Errorf("qd %d jobs %d client %d: depths %v (sum %d), want %v", tt.qd, tt.jobs, c, got, sum, tt.want)
			}
		}
	}
}

func TestDivideUnthrottled(t *testing.T) {
	w := wl(50)
	w.IODepth = 32
	loads, err := Divide(Step{Unthrottled: true}, topo(2, 3), w)
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range loads {
		for _, l := range jobs {
			if l != (JobLoad{IODepth: 32}) {
				t.Errorf("unthrottled job load = %+v", l)
			}
		}
	}
	// The client-bound check: every job at twice its depth, no rate.
	loads, err = Divide(Step{Unthrottled: true, ClientBoundCheck: true}, topo(2, 3), w)
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range loads {
		for _, l := range jobs {
			if l != (JobLoad{IODepth: 64}) {
				t.Errorf("client-bound check job load = %+v", l)
			}
		}
	}
}

func TestDivideErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		s      Step
		t      Topology
		w      workload.Spec
		wantIn string
	}{
		{"zero read share", Step{Index: 4, OfferedIOPS: 235}, topo(6, 8), wl(80),
			"step 5 offers 235 IOPS, below the minimum of 236 IOPS: each of the 48 fio jobs (6 clients × 8 jobs) needs at least 1 read IOPS and 1 write IOPS at 80 % reads, and fio treats a rate of 0 as unlimited"},
		{"bytes below a block per job", Step{OfferedBytesPerSec: 4096*4 - 1}, topo(2, 2), wlBS(100, 4096),
			"offers 16383 B/s, below the minimum of 16384 B/s (1 MiBps)"},
		{"negative", Step{OfferedIOPS: -1}, topo(1, 1), wl(50), "negative"},
		{"both units", Step{OfferedIOPS: 100, OfferedBytesPerSec: 100}, topo(1, 1), wl(50), "both"},
		{"rate and depth", Step{OfferedIOPS: 100, QueueDepthPerClient: 4}, topo(1, 1), wl(50), "cannot also"},
		{"rate and unthrottled", Step{OfferedIOPS: 100, Unthrottled: true}, topo(1, 1), wl(50), "cannot also"},
		{"depth below jobs", Step{QueueDepthPerClient: 3}, topo(1, 4), wl(50), "every job needs at least one outstanding I/O"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Divide(tt.s, tt.t, tt.w)
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Divide error = %v, want it to contain %q", err, tt.wantIn)
			}
		})
	}
}

func TestMinimumRate(t *testing.T) {
	for _, tt := range []struct {
		unit RateUnit
		t    Topology
		w    workload.Spec
		want int64
	}{
		{IOPS, topo(1, 1), wl(100), 1},
		{IOPS, topo(1, 1), wl(50), 2},
		{IOPS, topo(1, 1), wl(99), 2},
		{IOPS, topo(1, 1), wl(1), 100},
		{IOPS, topo(2, 1), wl(99), 101},
		{IOPS, topo(6, 8), wl(100), 48},
		{IOPS, topo(6, 8), wl(80), 236},
		{IOPS, topo(6, 8), wl(90), 471},
		{MiBps, topo(6, 8), wlBS(100, 64<<10), 3},
		{MiBps, topo(1, 1), wlBS(0, 4096), 1},
		{MiBps, topo(1000, 64), wlBS(50, 16<<20), 2000 * 64 * 16},
	} {
		if got := MinimumRate(tt.unit, tt.t, tt.w); got != tt.want {
			t.Errorf("MinimumRate(%s, %+v, %d%% %d B) = %d, want %d", tt.unit, tt.t, tt.w.ReadPercent, tt.w.BlockSizeBytes, got, tt.want)
		}
	}
}

func equalLoads(a, b [][]JobLoad) bool {
	return slices.EqualFunc(a, b, slices.Equal)
}

// Outstanding sums the depths Divide gives, without building the loads.
func TestOutstandingIsDividesDepths(t *testing.T) {
	w := wl(70)
	w.IODepth = 8
	for _, s := range []Step{
		{OfferedIOPS: 900}, {Unthrottled: true}, {Unthrottled: true, ClientBoundCheck: true},
		{QueueDepthPerClient: 7}, {QueueDepthPerClient: 64},
	} {
		tp := topo(3, 3)
		loads, err := Divide(s, tp, w)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, jobs := range loads {
			for _, l := range jobs {
				want += int64(l.IODepth)
			}
		}
		if got := Outstanding(s, tp, w); got != want {
			t.Errorf("step %+v: Outstanding %d, Divide's depths sum to %d", s, got, want)
		}
	}
}
