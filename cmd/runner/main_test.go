package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/runner"
	"github.com/storagebench/storagebench/internal/workload"
)

func TestClientClockTestHook(t *testing.T) {
	cases := []struct {
		env     string
		shift   time.Duration
		wantErr string
	}{
		{"", 0, ""},
		{"2s", 2 * time.Second, ""},
		{"-1.5s", -1500 * time.Millisecond, ""},
		{"soon", 0, exchange.EnvTestClockOffset + `="soon" (a test hook) is not a duration`},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(exchange.EnvTestClockOffset, c.env)
			now, err := clientClock()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Until(now()) - c.shift; d.Abs() > 100*time.Millisecond {
				t.Fatalf("clock off by %s from the wanted shift %s", d, c.shift)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "64Mi", want: 64 << 20},
		{in: "1Gi", want: 1 << 30},
		{in: "1.5Gi", want: 3 << 29},
		{in: "0.5Ki", want: 512},
		{in: "500M", want: 500_000_000},
		{in: "1048576", want: 1 << 20},
		{in: " 8Ki ", want: 8 << 10},
		{in: "7Ei", want: 7 << 60},
		{in: "9223372036854775806", want: math.MaxInt64 - 1},
		{in: "", wantErr: `--working-set "": not a quantity`},
		{in: "lots", wantErr: `--working-set "lots": not a quantity`},
		{in: "64MB", wantErr: `--working-set "64MB": not a quantity`},
		{in: "0", wantErr: `--working-set "0": not positive`},
		{in: "-64Mi", wantErr: `--working-set "-64Mi": not positive`},
		{in: "0.5", wantErr: `--working-set "0.5": not a whole number of bytes`},
		{in: "100m", wantErr: `--working-set "100m": not a whole number of bytes`},
		{in: "1.0000001Ki", wantErr: "not a whole number of bytes"},
		{in: "8Ei", wantErr: `--working-set "8Ei": too large`},
		{in: "9223372036854775807", wantErr: "too large"},
		{in: "9223372036854775808", wantErr: "too large"},
		{in: "100000Ei", wantErr: "too large"},
		{in: "16Ei", wantErr: "too large"},
		{in: "1e30", wantErr: "too large"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := parseSize("--working-set", c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("parseSize(%q) = %d, %v; want an error with %q", c.in, got, err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "like 64Mi") {
					t.Errorf("error %q does not say what is wanted", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}

// TestCleanupCommand: runner cleanup's flags, report and exit status.
func TestCleanupCommand(t *testing.T) {
	const sub = "storagebench-pg-0123abcd"
	cases := []struct {
		name     string
		ours     bool // the benchmark's directory exists, the runner user's own
		args     []string
		code     int
		inFile   bool   // the report is in the --report file too
		errorHas string // in the report's error
	}{
		{"removed, reported to the file too", true, []string{"--subdir", sub, "--report", "@report"}, 0, true, ""},
		{"missing: nothing left", false, []string{"--subdir", sub, "--report", "@report"}, 0, true, ""},
		{"stdout only with -", true, []string{"--subdir", sub, "--report", "-"}, 0, false, ""},
		{"stdout only with an empty --report", true, []string{"--subdir", sub, "--report="}, 0, false, ""},
		{"somebody else's directory under the name", false, []string{"--subdir", sub, "--report", "@report"}, 3, true, "not this runner's directory"},
		{"--subdir is required", true, []string{"--report", "@report"}, 3, true, "--subdir is required"},
		{"a path is refused", true, []string{"--subdir", sub + "/..", "--report", "@report"}, 3, true, "not a single name"},
		{"an unknown flag", true, []string{"--subdir", sub, "--force"}, 2, false, ""},
		{"extra arguments", true, []string{"--subdir", sub, "extra"}, 2, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vol, out := t.TempDir(), t.TempDir()
			t.Chdir(out) // a report named "-" would land here
			dir := filepath.Join(vol, sub)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "job0.dat"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.name == "somebody else's directory under the name":
				if err := os.Chmod(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			case !c.ours:
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			reportPath := filepath.Join(out, "termination-log")
			args := []string{"--volume", vol}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "@report", reportPath))
			}
			var stdout, stderr strings.Builder
			code := cleanup(args, &stdout, &stderr)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, c.code, stdout.String(), stderr.String())
			}
			if c.code == 2 {
				if stdout.Len() != 0 || !strings.Contains(stderr.String(), "usage: runner cleanup") {
					t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
				}
				return
			}
			var rep struct {
				RemovedFiles, RemovedDirs, RemainingCount *int
				Remaining                                 []string
				Error                                     *string
			}
			if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil || rep.RemovedFiles == nil || rep.RemovedDirs == nil ||
				rep.RemainingCount == nil || rep.Remaining == nil || rep.Error == nil || strings.Count(stdout.String(), "\n") != 1 {
				t.Fatalf("report %q: %v", stdout.String(), err)
			}
			if !strings.Contains(*rep.Error, c.errorHas) || (c.errorHas == "") != (*rep.Error == "") {
				t.Fatalf("report error %q, want %q", *rep.Error, c.errorHas)
			}
			if c.code == 0 && c.ours && (*rep.RemovedFiles != 1 || *rep.RemovedDirs != 1) {
				t.Fatalf("report %s", stdout.String())
			}
			b, err := os.ReadFile(reportPath)
			switch {
			case c.inFile && (err != nil || string(b) != stdout.String()):
				t.Fatalf("report file %q, %v; stdout %q", b, err, stdout.String())
			case !c.inFile && err == nil:
				t.Fatal("a report file was written")
			}
			if entries, _ := os.ReadDir(out); !c.inFile && len(entries) != 0 {
				t.Fatalf("written in the working directory: %v", entries)
			}
			if _, err := os.Lstat(dir); c.code == 0 && err == nil {
				t.Fatal("the benchmark's directory is left")
			}
		})
	}
}

// TestVerifyLostCommand: a verified local run leaves each client's state
// beside its files; verify-lost reads it back from the directory alone,
// exits 0 while every block is as written and 3 once one is not.
func TestVerifyLostCommand(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	dir := t.TempDir()
	w, err := workload.Resolve("rand-write", workload.Overrides{WorkingSetBytesPerClient: ptrTo(int64(4 << 20))})
	if err != nil {
		t.Fatal(err)
	}
	l := &runner.Local{Name: "lost", Dir: dir, Verify: true, Workload: w, Topology: plan.Topology{Clients: 1, JobsPerClient: 1},
		Load: plan.Load{Rate: &plan.RateSteps{Steps: []int64{300}}, StepDuration: 5 * time.Second}}
	out, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	verified := out.Steps[0].Aggregate.Verification.BlocksVerified
	client := filepath.Join(l.VolumePath(), "client-000")
	report := filepath.Join(t.TempDir(), "report")
	run := func(args ...string) (int, protocol.LostReport) {
		var stdout, stderr bytes.Buffer
		code := verifyLost(context.Background(), append(args, "--report", report), &stdout, &stderr)
		var rep protocol.LostReport
		if code != 2 {
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("exit %d, output %q: %v", code, stdout.String(), err)
			}
			if file, _ := os.ReadFile(report); !bytes.Equal(file, stdout.Bytes()) {
				t.Errorf("--report holds %q, stdout %q", file, stdout.String())
			}
		}
		return code, rep
	}
	// Client 1 never was: missing, not a failure.
	if code, rep := run("--volume", l.VolumePath(), "--clients", "2"); code != 0 || rep.Clients != 1 || len(rep.Missing) != 1 ||
		rep.Verification.BlocksVerified != verified || rep.Verification.BadBlockCount != 0 {
		t.Fatalf("exit %d, %+v; the run verified %d blocks", code, rep, verified)
	}
	// The first block written: zeroed.
	data, err := os.ReadFile(filepath.Join(client, "job0.dat"))
	if err != nil {
		t.Fatal(err)
	}
	var first int64 = -1
	for off := 0; off < len(data) && first < 0; off += int(w.BlockSizeBytes) {
		if data[off+7] == 1 {
			first = int64(off)
		}
	}
	f, err := os.OpenFile(filepath.Join(client, "job0.dat"), os.O_WRONLY, 0)
	if err != nil || first < 0 {
		t.Fatalf("%v; first block written at %d", err, first)
	}
	_, err = f.WriteAt(make([]byte, w.BlockSizeBytes), first)
	if err == nil {
		err = f.Sync()
	}
	_ = f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, rep := run("--volume", l.VolumePath(), "--clients", "1"); code != verifyExitBad || rep.Verification.BadBlockCount != 1 ||
		rep.Verification.BadBlocks[0].Offset != first || rep.Verification.BadBlocks[0].Client != 0 || rep.Verification.BadBlocks[0].Kind != "Corrupted" {
		t.Fatalf("exit %d, %+v", code, rep)
	}
	// A state the volume changed is not read: the client is unverified.
	state := filepath.Join(client, runner.WrittenState)
	saved, _ := os.ReadFile(state)
	saved[len(saved)-1] ^= 1
	if err := os.WriteFile(state, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, rep := run("--volume", l.VolumePath(), "--clients", "1"); code != verifyExitUnverified || !strings.Contains(rep.Error, "checksum") {
		t.Errorf("a changed state: exit %d, %+v", code, rep)
	}
	for _, bad := range [][]string{{}, {"--clients", "0"}, {"--clients", "1", "--subdir", "../etc"}, {"--clients", "1", "--subdir", "storagebench-x/.."}} {
		if code, _ := run(bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
