package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/internal/report/figure"
)

// scheduleFormats are report sbsched/NAME's.
var scheduleFormats = []report.Format{report.FormatMarkdown, report.FormatSVG, report.FormatPNG, report.FormatJSON}

// scheduleReport draws a schedule's history: its kept runs along their
// scheduled times (figure.RenderHistory), or lists them as JSON.
func (a *app) scheduleReport(ctx context.Context, o *outputFlags, name string) error {
	if a.fromFile() {
		return errors.New("report sbsched/NAME reads the cluster: --from-file is not supported")
	}
	if name == "" {
		return errors.New("name a storagebenchmarkschedule: sbsched/NAME")
	}
	f, opts, err := o.resolve(scheduleFormats, report.FormatMarkdown)
	if err != nil {
		return fmt.Errorf("a schedule's history: %w", err)
	}
	s, err := getNamed[v1alpha1.StorageBenchmarkSchedule](ctx, a, kindSchedule, name)
	if err != nil {
		return err
	}
	h := apireport.HistoryOf(s)
	if len(h.Runs) == 0 && f != report.FormatJSON {
		return fmt.Errorf("storagebenchmarkschedule %s keeps no runs yet: nothing to draw", name)
	}
	return a.emit(o, f, opts,
		func(w io.Writer, opts report.Options) error {
			if f == report.FormatJSON {
				return apireport.WriteScheduleDocument(w, s)
			}
			return figure.RenderHistory(w, h, f, opts)
		},
		func(opts report.Options) ([]byte, error) { return figure.HistoryPNG(h, opts) })
}
