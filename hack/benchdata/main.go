// Command benchdata records the client result the wire benchmarks start
// from (internal/results/testdata/client-step-20s.json): one runner's real
// 20-second step, two 8 KiB 80/20 random jobs at 1,000 IOPS each through
// libaio with O_DIRECT, merged and given its timeline exactly as the runner
// does it (results.FromFio, results.TimelineOf, Fit). Run it with
// `make bench-data` on a quiet machine; the figures in the file are fio's.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

func main() {
	out := flag.String("out", "internal/results/testdata/client-step-20s.json", "where to write the result")
	dir := flag.String("dir", "", "directory for fio's data files (default: a temporary one under /var/tmp)")
	runtime := flag.Duration("runtime", 20*time.Second, "measured duration of the step")
	flag.Parse()
	if err := record(*out, *dir, *runtime); err != nil {
		fmt.Fprintln(os.Stderr, "benchdata:", err)
		os.Exit(1)
	}
}

func record(out, dir string, runtime time.Duration) error {
	if dir == "" {
		d, err := os.MkdirTemp("/var/tmp", "storagebench-benchdata-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(d) }()
		dir = d
	}
	work, err := os.MkdirTemp("", "storagebench-benchdata-work-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	run := fio.Run{Name: "bench", Engine: "libaio", Direct: true, BlockSizeBytes: 8192, ReadPercent: 80, Random: true,
		Runtime: runtime, Ramp: time.Second, Seed: 1,
		Jobs: []fio.Job{{IODepth: 8, ReadIOPS: 800, WriteIOPS: 200}, {IODepth: 8, ReadIOPS: 800, WriteIOPS: 200}}}
	job, err := fio.Render(run, fio.Layout{Directory: dir, BytesPerJob: 256 << 20})
	if err != nil {
		return err
	}
	start := time.Now().UTC()
	res, err := fio.Executor{WorkDir: work, Timeline: true}.Run(context.Background(), run.Name, job)
	if err != nil {
		return err
	}
	if res.TimelineErr != nil {
		return fmt.Errorf("fio's status stream: %w", res.TimelineErr)
	}
	cs := results.ClientStep{Client: 0, Step: 0, Jobs: len(run.Jobs), PlannedStart: start, ActualStart: start, End: time.Now().UTC()}
	cs.Read, cs.Write, cs.Sync = results.FromFio(res.Output)
	cs.Timeline = results.TimelineOf(res.Intervals).Fit(results.ClientTimelineBytes)
	if err := cs.Validate(); err != nil {
		return fmt.Errorf("the recorded result does not pass validation: %w", err)
	}
	data, err := json.Marshal(&cs)
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}
