package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storagebench/storagebench/internal/fio"
)

func TestParseCPUStat(t *testing.T) {
	v2 := "usage_usec 8000\nuser_usec 5000\nsystem_usec 3000\nnr_periods 120\nnr_throttled 30\nthrottled_usec 2500000\nnr_bursts 0\n"
	v1 := "nr_periods 120\nnr_throttled 30\nthrottled_time 2500000123\n"
	for name, tc := range map[string]struct {
		text string
		v2   bool
		want cpuStat
	}{
		"v2":            {v2, true, cpuStat{120, 30, 2_500_000}},
		"v1, ns":        {v1, false, cpuStat{120, 30, 2_500_000}},
		"garbled":       {"nr_periods x\nnr_throttled -1\n", true, cpuStat{}},
		"v1 key, in v2": {v1, true, cpuStat{120, 30, 0}},
	} {
		if got := parseCPUStat([]byte(tc.text), tc.v2); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

func TestQuotaMilli(t *testing.T) {
	for _, tc := range []struct {
		quota, period string
		want          uint64
	}{
		{"max", "100000", 0}, {"-1", "100000", 0}, {"50000", "100000", 500}, {"20000", "100000", 200},
		{"250000", "100000", 2500}, {"1000", "1000000", 1}, {"50", "100000", 1}, {"50000", "0", 0}, {"", "", 0},
	} {
		if got := quotaMilli(tc.quota, tc.period); got != tc.want {
			t.Errorf("quota %q period %q: %d, want %d", tc.quota, tc.period, got, tc.want)
		}
	}
}

func TestCPUStatSince(t *testing.T) {
	before, after := cpuStat{100, 10, 1000}, cpuStat{150, 12, 1600}
	if got := after.since(before); got != (cpuStat{50, 2, 600}) {
		t.Fatalf("since: %+v", got)
	}
	if got := before.since(after); got != (cpuStat{}) {
		t.Fatalf("a counter that went back gives %+v, want zero", got)
	}
}

// The runner finds its cgroup: in a container at the mount's root (the path
// /proc/self/cgroup names is the host's), outside one at that path; v2 and
// v1 layouts, limits read from each.
func TestFindCgroupCPU(t *testing.T) {
	write := func(t *testing.T, dir string, files map[string]string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("v2 container", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, map[string]string{"cgroup.controllers": "cpu io memory", "cpu.stat": "nr_periods 4\nnr_throttled 1\nthrottled_usec 70\n", "cpu.max": "20000 100000\n"})
		cg, ok := findCgroupCPU(root, []byte("0::/kubepods/burstable/pod1/abc\n"))
		st, _ := cg.stat()
		if !ok || cg.dir != root || !cg.v2 || st != (cpuStat{4, 1, 70}) || cg.limitMilli() != 200 {
			t.Fatalf("%+v %v %+v limit %d", cg, ok, st, cg.limitMilli())
		}
	})
	t.Run("v2 process", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, map[string]string{"cgroup.controllers": "cpu", "cpu.stat": "nr_periods 0\n", "cpu.max": "max 100000\n"})
		dir := filepath.Join(root, "user.slice", "a")
		write(t, dir, map[string]string{"cpu.stat": "nr_periods 9\n", "cpu.max": "100000 100000\n"})
		cg, ok := findCgroupCPU(root, []byte("0::/user.slice/a\n"))
		if !ok || cg.dir != dir || cg.limitMilli() != 1000 {
			t.Fatalf("%+v %v limit %d", cg, ok, cg.limitMilli())
		}
	})
	t.Run("v1 container", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, "cpu,cpuacct")
		write(t, dir, map[string]string{"cpu.stat": "nr_periods 10\nnr_throttled 5\nthrottled_time 5000\n", "cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"})
		cg, ok := findCgroupCPU(root, []byte("11:memory:/kubepods/x\n4:cpu,cpuacct:/kubepods/x\n0::/\n"))
		st, _ := cg.stat()
		if !ok || cg.dir != dir || cg.v2 || st != (cpuStat{10, 5, 5}) || cg.limitMilli() != 0 {
			t.Fatalf("%+v %v %+v limit %d", cg, ok, st, cg.limitMilli())
		}
	})
	t.Run("none", func(t *testing.T) {
		if cg, ok := findCgroupCPU(t.TempDir(), []byte("0::/\n")); ok {
			t.Fatalf("found %+v in an empty tree", cg)
		}
	})
}

// cpuOf counts the container's periods from the step's baseline to its
// end, and none when either reading is missing (never since boot).
func TestCPUOfCountsFromTheBaseline(t *testing.T) {
	out := &fio.Output{Jobs: []fio.JobResult{{RuntimeMs: 10_000, UsrCPU: 10, SysCPU: 5}}}
	r := &Runner{}
	l := &launched{jobs: 1, cpu: cpuStat{100, 10, 1000}, cpuOK: true, cpuEnd: cpuStat{200, 15, 3000}, cpuEndOK: true}
	c := r.cpuOf(l, out)
	if c.Periods != 100 || c.ThrottledPeriods != 5 || c.ThrottledUs != 2000 || c.FioUs != 1_500_000 || c.RunUs != 10_000_000 {
		t.Fatalf("%+v", c)
	}
	l.cpuOK = false
	if c := r.cpuOf(l, out); c.Periods != 0 || c.ThrottledPeriods != 0 {
		t.Fatalf("without a baseline: %+v", c)
	}
}
