package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/internal/report/figure"
)

// The kinds a command's argument may name (splitRef's kind; plain NAME
// is a StorageBenchmark).
const (
	kindBenchmark  = "storagebenchmark"
	kindOperations = "volumeoperationsbenchmark"
	kindSchedule   = "storagebenchmarkschedule"
)

// kindOf is the kind a reference's kind names: kindBenchmark for none,
// "" for one the plugin does not know.
func kindOf(kind string) string {
	switch kind {
	case "", "sbench", "storagebenchmark", "storagebenchmarks":
		return kindBenchmark
	case "sbops", "volumeoperationsbenchmark", "volumeoperationsbenchmarks":
		return kindOperations
	case "sbsched", "schedule", "schedules", "storagebenchmarkschedule", "storagebenchmarkschedules":
		return kindSchedule
	}
	return ""
}

// operationsReportHelp is report's help on report sbops/NAME.
const operationsReportHelp = `report sbops/NAME (or volumeoperationsbenchmark/NAME) draws a
VolumeOperationsBenchmark: concurrency on x, latency in seconds on y; per
operation its steps' p50 joined by a line and their max as a thinner dashed
line, the knee ringed, a step with failed or timed-out operations crossed,
and the fitted time per operation (with its 95 % confidence interval) in
the legend; md and html add a step table per operation. json writes
status.operations as they are. It reads the cluster or --from-file.`

// operationsFormats are report sbops/NAME's.
var operationsFormats = []report.Format{report.FormatMarkdown, report.FormatHTML, report.FormatSVG, report.FormatPNG, report.FormatJSON}

// getOperations returns one VolumeOperationsBenchmark by name: from the
// --from-file objects (an empty name is allowed when they hold exactly
// one), or from the cluster.
func (a *app) getOperations(ctx context.Context, name string) (*v1alpha1.VolumeOperationsBenchmark, error) {
	if a.fromFile() {
		saved, err := a.loadFiles()
		if err != nil {
			return nil, err
		}
		ops := saved.operations
		if name == "" {
			if len(ops) != 1 {
				return nil, fmt.Errorf("the files hold %d volumeoperationsbenchmarks: name one (sbops/NAME)", len(ops))
			}
			return &ops[0], nil
		}
		return findSaved(ops, kindOperations, name, a.fromFiles)
	}
	if name == "" {
		return nil, errors.New("name a volumeoperationsbenchmark: sbops/NAME")
	}
	return getNamed[v1alpha1.VolumeOperationsBenchmark](ctx, a, kindOperations, name)
}

// listOperations prints the VolumeOperationsBenchmarks of the namespace
// (every namespace with all), or of the --from-file objects.
func (a *app) listOperations(ctx context.Context, all bool) error {
	var items []v1alpha1.VolumeOperationsBenchmark
	if a.fromFile() {
		saved, err := a.loadFiles()
		if err != nil {
			return err
		}
		items = saved.operations
	} else {
		var list v1alpha1.VolumeOperationsBenchmarkList
		if err := a.listObjects(ctx, &list, all); err != nil {
			return err
		}
		items = list.Items
	}
	if len(items) == 0 {
		fmt.Fprintln(a.errOut, "No volumeoperationsbenchmarks found.")
		return nil
	}
	sortByName(items)
	t := apireport.OperationsListTable(items, a.now(), all)
	return t.Text(a.out)
}

// operationsStatus prints a VolumeOperationsBenchmark: its state, storage
// and plan, a step table and the time per operation of each operation.
func (a *app) operationsStatus(ctx context.Context, name string) error {
	b, err := a.getOperations(ctx, name)
	if err != nil {
		return err
	}
	return apireport.WriteOperationsStatus(a.out, b, a.now())
}

// operationsReport draws a VolumeOperationsBenchmark's latency against
// concurrency (figure.RenderOperations), or writes status.operations as
// JSON.
func (a *app) operationsReport(cmd *cobra.Command, o *outputFlags, name string) error {
	if err := notWith(cmd, "a volumeoperationsbenchmark (it draws each operation's p50 and max latency)", "timeline", "latency"); err != nil {
		return err
	}
	ctx := cmd.Context()
	f, opts, err := o.resolve(operationsFormats, report.FormatMarkdown)
	if err != nil {
		return fmt.Errorf("a volumeoperationsbenchmark's report: %w", err)
	}
	b, err := a.getOperations(ctx, name)
	if err != nil {
		return err
	}
	r := apireport.OperationsFromAPI(b)
	return a.emit(o, f, opts,
		func(w io.Writer, opts report.Options) error {
			if f == report.FormatJSON {
				return apireport.WriteOperationsDocument(w, b)
			}
			return figure.RenderOperations(w, r, f, opts)
		},
		func(opts report.Options) ([]byte, error) { return figure.OperationsPNG(r, opts) })
}
