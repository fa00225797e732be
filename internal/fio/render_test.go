package fio

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestRenderGolden(t *testing.T) {
	cases := []struct {
		name   string
		run    Run
		layout Layout
	}{
		{"oltp-rate-shared-dir", Run{Name: "step3", Engine: "libaio", Direct: true, BlockSizeBytes: 8192, ReadPercent: 80, Random: true,
			Runtime: 60 * time.Second, Ramp: 10 * time.Second, Seed: 3000,
			Jobs: []Job{{IODepth: 16, ReadIOPS: 334, WriteIOPS: 84}, {IODepth: 16, ReadIOPS: 333, WriteIOPS: 83}}},
			Layout{Directory: "/data/client-003", BytesPerJob: 1 << 30}},
		{"seqread-mibps-block", Run{Name: "step0", Engine: "io_uring", Direct: true, BlockSizeBytes: 65536, ReadPercent: 100,
			Runtime: 30 * time.Second, Seed: 7, Jobs: []Job{{IODepth: 32, ReadBytesPerSec: 52428800}, {IODepth: 32, ReadBytesPerSec: 52428800}}},
			Layout{Device: "/dev/xvdb", BytesPerJob: 8 << 30}},
		{"compressible-unthrottled", Run{Name: "max", Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 0, Random: true,
			CompressPercent: 50, Runtime: 10 * time.Second, Seed: 1, Jobs: []Job{{IODepth: 64}}},
			Layout{Directory: "/data", BytesPerJob: 1 << 20}},
		{"poisson-rate", Run{Name: "step1", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 70, Random: true,
			Runtime: 20 * time.Second, Poisson: true, Seed: 9, Jobs: []Job{{IODepth: 1, ReadIOPS: 700, WriteIOPS: 300}}},
			Layout{Directory: "/data", BytesPerJob: 1 << 20}},
		{"precondition", Precondition("precondition", "libaio", true, 2, 42, 3<<20), Layout{Directory: "/data/client-000", BytesPerJob: 3 << 20}},
		{"precondition-buffered", Precondition("precondition", "sync", false, 1, 42, 1<<20), Layout{Directory: "/data/client-000", BytesPerJob: 1 << 20}},
		{"layout-create-only", Run{Name: "layout", Engine: "libaio", Direct: true, BlockSizeBytes: 8192, ReadPercent: 70, Random: true,
			CreateOnly: true, Jobs: []Job{{IODepth: 1}, {IODepth: 1}}}, Layout{Directory: "/data/client-001", BytesPerJob: 1 << 20}},
		{"held-until-instant", Run{Name: "step2", Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
			Runtime: 20 * time.Second, Seed: 5, Jobs: []Job{{IODepth: 4, ReadIOPS: 500}},
			StartAt: time.Unix(1_795_000_000, 123_456_789), Waiter: "/usr/local/bin/runner"},
			Layout{Directory: "/data", BytesPerJob: 1 << 20}},
		{"log-fdatasync-deduped", Run{Name: "step0", Engine: "sync", BlockSizeBytes: 8192, ReadPercent: 0,
			DedupePercent: 30, Sync: "fdatasync", SyncEvery: 1, Runtime: 60 * time.Second, Seed: 2, Jobs: []Job{{IODepth: 1, WriteIOPS: 500}}},
			Layout{Directory: "/data", BytesPerJob: 64 << 20}},
		{"dsync-writes", Run{Name: "step0", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 0, Random: true,
			Sync: "dsync", Runtime: 10 * time.Second, Seed: 3, Jobs: []Job{{IODepth: 1}}},
			Layout{Directory: "/data", BytesPerJob: 1 << 20}},
		{"verified-writes-block", Run{Name: "step4", Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 30, Random: true,
			Runtime: 20 * time.Second, Seed: 5, Jobs: []Job{{IODepth: 8, ReadIOPS: 300, WriteIOPS: 700}, {IODepth: 8}},
			Verify: &VerifyWrites{Pattern: "0x0000000000000005%o", IOLogPrefix: "/work/step4"}},
			Layout{Device: "/dev/storagebench", BaseOffset: 1 << 30, BytesPerJob: 1 << 20}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Render(c.run, c.layout)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.name+".fio")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("rendered job differs from %s:\n%s", path, got)
			}
		})
	}
}

func TestRenderRejects(t *testing.T) {
	good := Run{Name: "s", Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 50, Runtime: time.Minute, Jobs: []Job{{IODepth: 1}}}
	dir := Layout{Directory: "/data", BytesPerJob: 1 << 20}
	cases := []struct {
		name   string
		mutate func(*Run, *Layout)
		want   string
	}{
		{"name", func(r *Run, _ *Layout) { r.Name = "a b\nexec_prerun=rm" }, "job name"},
		{"engine", func(r *Run, _ *Layout) { r.Engine = "libaio\nexec_prerun=rm" }, "ioengine"},
		{"no jobs", func(r *Run, _ *Layout) { r.Jobs = nil }, "at least one job"},
		{"both targets", func(_ *Run, l *Layout) { l.Device = "/dev/sdb" }, "exactly one"},
		{"relative path", func(_ *Run, l *Layout) { l.Directory = "data" }, "absolute"},
		{"colon in path", func(_ *Run, l *Layout) { l.Directory = "/data:/etc" }, "':'"},
		{"env expansion", func(_ *Run, l *Layout) { l.Directory = "/data/${HOME}" }, "'$'"},
		{"newline", func(_ *Run, l *Layout) { l.Directory = "/data\nexec_prerun=x" }, "control"},
		{"relative waiter", func(r *Run, _ *Layout) { r.StartAt, r.Waiter = time.Unix(1, 0), "runner" }, "absolute path"},
		{"waiter with a shell word", func(r *Run, _ *Layout) { r.StartAt, r.Waiter = time.Unix(1, 0), "/bin/runner;rm" }, "absolute path"},
		{"verify pattern of another form", func(r *Run, _ *Layout) {
			r.Verify = &VerifyWrites{Pattern: "0x05%o\nexec_prerun=rm", IOLogPrefix: "/work/s"}
		}, "verify pattern"},
		{"verify log path with a word break", func(r *Run, _ *Layout) {
			r.Verify = &VerifyWrites{Pattern: "0x0000000000000001%o", IOLogPrefix: "/work/s x"}
		}, "I/O log"},
		{"verify with compressible buffers", func(r *Run, _ *Layout) {
			r.Verify, r.CompressPercent = &VerifyWrites{Pattern: "0x0000000000000001%o", IOLogPrefix: "/work/s"}, 50
		}, "not compressible"},
		{"sync of another kind", func(r *Run, _ *Layout) { r.Sync = "osync\nexec_prerun=rm" }, "only fsync, fdatasync or dsync"},
		{"fsync without a count", func(r *Run, _ *Layout) { r.Sync = "fsync" }, "needs a count of writes"},
		{"verify with repeated buffers", func(r *Run, _ *Layout) {
			r.Verify, r.DedupePercent = &VerifyWrites{Pattern: "0x0000000000000001%o", IOLogPrefix: "/work/s"}, 10
		}, "not repeated buffers"},
		{"create-only held", func(r *Run, _ *Layout) { r.CreateOnly, r.StartAt, r.Waiter = true, time.Unix(1, 0), "/bin/runner" }, "create-only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, l := good, dir
			r.Jobs = append([]Job(nil), good.Jobs...)
			c.mutate(&r, &l)
			_, err := Render(r, l)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want error containing %q, got %v", c.want, err)
			}
		})
	}
	if _, err := Render(good, dir); err != nil {
		t.Fatalf("valid run rejected: %v", err)
	}
}

func TestRWModes(t *testing.T) {
	cases := []struct {
		random bool
		read   int32
		want   string
	}{
		{true, 100, "randread"}, {true, 0, "randwrite"}, {true, 70, "randrw"},
		{false, 100, "read"}, {false, 0, "write"}, {false, 50, "rw"},
	}
	for _, c := range cases {
		if got := rwMode(c.random, c.read); got != c.want {
			t.Errorf("rwMode(%v,%d) = %s, want %s", c.random, c.read, got, c.want)
		}
	}
}

func TestLatLogWindow(t *testing.T) {
	for _, tc := range []struct{ runtime, want time.Duration }{
		{time.Minute, 100 * time.Millisecond},
		{time.Hour, 100 * time.Millisecond},
		{2 * time.Hour, 200 * time.Millisecond},
		{24 * time.Hour, 2400 * time.Millisecond},
		{time.Hour + time.Second, 101 * time.Millisecond},
	} {
		if got := LatLogWindow(tc.runtime); got != tc.want {
			t.Errorf("LatLogWindow(%v) = %v, want %v", tc.runtime, got, tc.want)
		}
		if n := tc.runtime / LatLogWindow(tc.runtime); n > MaxLatLogWindows {
			t.Errorf("a %v step has %d windows", tc.runtime, n)
		}
	}
}
