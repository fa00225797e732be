// Command verifycost measures what verification costs: the same local run
// (runner.Local, real fio on this machine's disk) with and without
// spec.verify's read-back, for the OLTP and streaming-write profiles, one
// run each, alternating, and prints achieved IOPS with verification ÷
// without and the read-backs' own rate and length.
//
//	go run ./hack/verifycost [-dir _work/verifycost] [-step 15s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/runner"
	"github.com/storagebench/storagebench/internal/workload"
)

func main() {
	dir := flag.String("dir", "_work/verifycost", "work directory (the volume stand-in is on its filesystem)")
	step := flag.Duration("step", 15*time.Second, "measured length of the one unthrottled step")
	flag.Parse()
	abs, err := filepath.Abs(*dir)
	if err == nil {
		err = run(abs, *step)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifycost:", err)
		os.Exit(1)
	}
}

func run(dir string, step time.Duration) error {
	ws := int64(256 << 20)
	fmt.Printf("2 clients × 1 job, queue depth 16 per client, unthrottled, %s per step, %s working set per client\n\n", step, "256 MiB")
	fmt.Println("| profile | IOPS plain | IOPS verified | ratio | read back | read-back time | read-back rate |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, profile := range []string{"oltp", "seq-write"} {
		w, err := workload.Resolve(profile, workload.Overrides{WorkingSetBytesPerClient: &ws})
		if err != nil {
			return err
		}
		var iops [2]float64
		var back string
		for k, verify := range []bool{false, true} {
			l := &runner.Local{Name: "cost", Dir: filepath.Join(dir, fmt.Sprintf("%s-%v", profile, verify)), Verify: verify, Workload: w,
				Topology: plan.Topology{Clients: 2, JobsPerClient: 1},
				Load:     plan.Load{QueueDepth: &plan.QueueDepthSteps{Steps: []int32{16}}, StepDuration: step, RampTime: 2 * time.Second}}
			out, err := l.Run(context.Background())
			if err != nil {
				return fmt.Errorf("%s (verify %v): %w", profile, verify, err)
			}
			a := out.Steps[0].Aggregate
			iops[k] = a.Total.IOPS
			if v := a.Verification; v != nil {
				if v.BadBlockCount != 0 || v.Unverified != 0 {
					return fmt.Errorf("%s: the read-back found %d bad blocks, %d unverified", profile, v.BadBlockCount, v.Unverified)
				}
				back = fmt.Sprintf("%d blocks | %s | %.0f MB/s", v.BlocksVerified, v.Duration.Round(time.Millisecond), float64(v.Bytes)/v.Duration.Seconds()/1e6)
			}
			if err := os.RemoveAll(l.Dir); err != nil {
				return err
			}
		}
		fmt.Printf("| %s | %.0f | %.0f | %.3f | %s |\n", profile, iops[0], iops[1], iops[1]/iops[0], back)
	}
	return nil
}
