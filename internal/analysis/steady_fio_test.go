package analysis_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// TestSteadyOnRealRuns judges real fio timelines: two rated jobs for 6 s
// hold their rate (steady), and the same run with the second job stopping
// after 3 s (its own runtime, appended to the rendered job in this test
// only) drops from 300 to 100 IOPS halfway (not steady).
func TestSteadyOnRealRuns(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed; `make setup` installs it")
	}
	for _, c := range []struct {
		name   string
		extra  string
		steady bool
	}{
		{"held rate", "", true},
		{"rate dropped halfway", "runtime=3000ms\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := fio.Run{Name: "steady", Engine: "psync", BlockSizeBytes: 4096, ReadPercent: 100, Random: true,
				Runtime: 6 * time.Second, Seed: 4, Jobs: []fio.Job{{IODepth: 1, ReadIOPS: 100}, {IODepth: 1, ReadIOPS: 200}}}
			job, err := fio.Render(r, fio.Layout{Directory: t.TempDir(), BytesPerJob: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			res, err := fio.Executor{Binary: bin, WorkDir: t.TempDir(), Timeline: true}.Run(context.Background(), r.Name, job+c.extra)
			if err != nil {
				t.Fatal(err)
			}
			tl := results.TimelineOf(res.Intervals)
			got := analysis.Steady(tl, analysis.SteadyOptions{Rounds: 3})
			if !got.Judged || got.Steady != c.steady {
				t.Errorf("Steady = %+v over %d seconds, want steady %v", got, len(tl.Windows), c.steady)
			}
			t.Logf("%d seconds: %+v", len(tl.Windows), got)
		})
	}
}
