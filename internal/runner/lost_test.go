package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/verify"
	"github.com/storagebench/storagebench/internal/workload"
)

// TestVerifyAfterALostClient: real fio writes two generations that finish
// (each saved as a runner saves it), then a third that is killed (SIGKILL)
// a second into its step, as a client whose node is lost. What the
// finished steps wrote must read back from the state on the volume alone,
// the lost step's overwrites accepted; then a block put back to an older
// generation and a changed byte are found, and a block torn between the
// last finished generation and the lost one is accepted.
func TestVerifyAfterALostClient(t *testing.T) {
	requireFio(t)
	dir := t.TempDir()
	exe := fio.Executor{WorkDir: t.TempDir()}
	l := fio.Layout{Directory: dir, BytesPerJob: 4 << 20}
	w := newWritten(l, 2, 4096)
	job0 := filepath.Join(dir, "job0.dat")
	writeGeneration(t, exe, l, w, 1)
	if err := w.save(dir, 1); err != nil {
		t.Fatal(err)
	}
	gen1, _ := os.ReadFile(job0)
	writeGeneration(t, exe, l, w, 2)
	if err := w.save(dir, 2); err != nil {
		t.Fatal(err)
	}

	// Generation 3, for 30 s, killed after a second.
	p, _ := verify.Pattern(3)
	run := fio.Run{Name: "lost", Engine: "libaio", Direct: true, BlockSizeBytes: 4096, ReadPercent: 0, Random: true,
		Runtime: 30 * time.Second, Seed: 99, Verify: &fio.VerifyWrites{Pattern: p, IOLogPrefix: filepath.Join(exe.WorkDir, "lost")},
		Jobs: []fio.Job{{IODepth: 8, WriteIOPS: 300}, {IODepth: 8, WriteIOPS: 300}}}
	job, err := fio.Render(run, l)
	if err != nil {
		t.Fatal(err)
	}
	jobFile := filepath.Join(exe.WorkDir, "lost.fio")
	if err := os.WriteFile(jobFile, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	// fio forks a process per job, in sessions of their own: every one of
	// them dies at once, as with the client's container.
	saved := w.distinct()
	follow, err := w.follow(filepath.Join(exe.WorkDir, "lost"), 3)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("fio", jobFile)
	cmd.Dir = exe.WorkDir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	killTree(t, cmd.Process.Pid)
	_ = cmd.Wait()
	// The logs of the killed step end where fio died; the state on the
	// volume is the finished steps'.
	if _, err := follow.wait(); err != nil {
		t.Fatal(err)
	}

	v, err := VerifyLost(context.Background(), dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if v.BadBlockCount != 0 || v.Unverified != 0 || v.BlocksVerified != saved || v.Overwritten == 0 || v.Overwritten == saved {
		t.Fatalf("after the lost step (%d blocks saved): %+v", saved, v)
	}

	// Job 0's blocks of generation 2 that the lost step did not touch.
	cur, _ := os.ReadFile(job0)
	var stale, corrupt, torn int64 = -1, -1, -1
	for blk, gen := range w.jobs[0].gens {
		off := int64(blk) * 4096
		if gen != 2 || binary.BigEndian.Uint64(cur[off:]) != 2 {
			continue
		}
		switch {
		case stale < 0 && binary.BigEndian.Uint64(gen1[off:]) == 1:
			stale = off
		case corrupt < 0:
			corrupt = off
		case torn < 0:
			torn = off
		}
	}
	if stale < 0 || torn < 0 {
		t.Fatalf("no blocks to damage: %d %d %d", stale, corrupt, torn)
	}
	f, err := os.OpenFile(job0, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := make([]byte, 2048)
	verify.Fill(half, 3, torn)
	for _, wr := range []struct {
		b   []byte
		off int64
	}{{gen1[stale : stale+4096], stale}, {[]byte{cur[corrupt+100] ^ 1}, corrupt + 100}, {half, torn}} {
		if _, err := f.WriteAt(wr.b, wr.off); err != nil {
			t.Fatal(err)
		}
	}
	_ = f.Sync()
	_ = f.Close()
	again, err := VerifyLost(context.Background(), dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if again.BadBlockCount != 2 || again.Overwritten != v.Overwritten+1 {
		t.Fatalf("want the stale and the corrupted block, the torn one accepted (%d overwritten before): %+v", v.Overwritten, again)
	}
	kinds := map[int64]verify.Kind{}
	for _, b := range again.BadBlocks {
		kinds[b.Offset] = b.Kind
		if b.Client != 4 || b.File != "job0.dat" || b.Generation != 2 {
			t.Errorf("bad block %+v", b)
		}
	}
	if kinds[stale] != verify.Stale || kinds[corrupt] != verify.Corrupted {
		t.Errorf("kinds %v; want %d Stale, %d Corrupted", kinds, stale, corrupt)
	}

	// A state the volume did not return as written is refused, not read.
	state := filepath.Join(dir, WrittenState)
	data, _ := os.ReadFile(state)
	data[40] ^= 0x10
	if err := os.WriteFile(state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyLost(context.Background(), dir, 4); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a changed state: %v", err)
	}
}

// killTree stops pid and its descendants (SIGSTOP, so none forks or
// writes on), kills them all, and waits until they are gone.
func killTree(t *testing.T, pid int) {
	t.Helper()
	var tree []int
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[0]
		todo = todo[1:]
		_ = syscall.Kill(p, syscall.SIGSTOP)
		tree = append(tree, p)
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, f := range tasks {
			data, _ := os.ReadFile(f)
			for _, c := range strings.Fields(string(data)) {
				if n, err := strconv.Atoi(c); err == nil {
					todo = append(todo, n)
				}
			}
		}
	}
	for _, p := range tree {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	// Gone, or dead and not yet reaped (a zombie does no I/O).
	alive := func(p int) bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		return err == nil && !strings.Contains(string(stat), ") Z ")
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range tree {
		for alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("fio's process %d outlived SIGKILL", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if len(tree) < 3 {
		t.Fatalf("fio had %d processes, want its own and one per job", len(tree))
	}
}

// TestVerifyingRunKeepsItsRecordWhenItFails: on an existing claim a
// runner removes what it wrote when it ends, but not when a run that
// verifies fails (here: stopped mid-step): the operator's verifier reads
// the finished steps' record, and its cleanup pod removes it afterwards.
func TestVerifyingRunKeepsItsRecordWhenItFails(t *testing.T) {
	requireFio(t)
	dir := t.TempDir()
	mount := filepath.Join(dir, "volume")
	if err := os.MkdirAll(mount, 0o755); err != nil {
		t.Fatal(err)
	}
	x := FileExchange{Dir: filepath.Join(dir, "exchange"), Poll: 5 * time.Millisecond}
	vol := protocol.Volume{Path: mount, Shared: true, RemoveWhenDone: true}
	r := &Runner{Plan: protocol.ClientPlan{Topology: plan.Topology{Clients: 1, JobsPerClient: 1}, Verify: true,
		Workload: spec(t, "rand-write", workload.Overrides{WorkingSetBytesPerClient: ptr(int64(2 << 20))}),
		Volume:   vol}, Coordinator: x, Publisher: x, WorkDir: filepath.Join(dir, "work"), Waiter: waiter(t)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	var ready protocol.Ready
	awaitRunner(t, func() (ok bool, err error) { ready, ok, err = x.ReadReady(0); return ok, err })
	if ready.Error != "" {
		t.Fatalf("not ready: %s", ready.Error)
	}
	order := protocol.StepOrder{StartAt: time.Now().Add(time.Second).Truncate(time.Millisecond), Step: plan.Step{OfferedIOPS: 100},
		Duration: time.Second, VerifyWithin: time.Minute}
	if err := x.WriteOrder(order); err != nil {
		t.Fatal(err)
	}
	var res results.ClientStep
	awaitRunner(t, func() (ok bool, err error) { res, ok, err = x.ReadResult(0, 0); return ok, err })
	if v := res.Verification; v == nil || v.BlocksVerified == 0 || v.BadBlockCount != 0 {
		t.Fatalf("step 0's read-back: %+v", v)
	}
	order.Index, order.StartAt, order.Duration = 1, time.Now().Add(time.Second).Truncate(time.Millisecond), time.Minute
	if err := x.WriteOrder(order); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cancel()
	if err := <-errc; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("stopped mid-step: %v", err)
	}
	client := filepath.Join(mount, "client-000")
	v, err := VerifyLost(context.Background(), client, 0)
	if err != nil || v.BlocksVerified != res.Verification.BlocksVerified || v.BadBlockCount != 0 {
		t.Fatalf("the record left for the verifier: %+v, %v; step 0 verified %d", v, err, res.Verification.BlocksVerified)
	}
}
