package report

import (
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// ScheduleHistory is a schedule's kept runs, as `kubectl storagebench
// schedules NAME` tabulates them and `report sbsched/NAME` draws them.
type ScheduleHistory struct {
	// Name is the schedule's.
	Name string
	// Runs are newest first, as the schedule's status keeps them.
	Runs []HistoryRun
}

// HistoryRun is one kept run of a schedule.
type HistoryRun struct {
	Name      string
	Scheduled time.Time
	// State is Running, Complete or Failed.
	State State
	// PeakIOPS and AtTargetIOPS are 0 when unknown: a run that did not
	// complete, or no step that met the latency target.
	PeakIOPS, AtTargetIOPS int64
	// SLO is the SLOMet reason; Reason why a failed run failed.
	SLO, Reason string
	// Regression is the Regressed condition's reason (Regressed,
	// NotRegressed, or why the run was not compared), RegressedMetrics
	// the metrics it regressed in (iops, p99).
	Regression       string
	RegressedMetrics []string
}

// Failed reports whether the run failed.
func (r *HistoryRun) Failed() bool { return r.State == StateFailed }

// Regressed reports whether the run regressed against its baseline.
func (r *HistoryRun) Regressed() bool { return r.Regression == "Regressed" }

// Table has a row per kept run, newest first: the run, when it was
// scheduled, its state, peak, IOPS at the latency target, SLO verdict (for
// a failed run, why it failed) and the regression verdict with the
// metrics that regressed.
func (h *ScheduleHistory) Table() Table {
	t := Table{Header: []string{"RUN", "SCHEDULED", "STATE", "PEAK IOPS", "AT TARGET IOPS", "SLO", "REGRESSION"},
		Numeric: []bool{false, false, false, true, true, false, false}}
	iops := func(v int64) string {
		if v == 0 {
			return ""
		}
		return numfmt.Count(float64(v))
	}
	for i := range h.Runs {
		r := &h.Runs[i]
		verdict := r.SLO
		if r.Failed() && r.Reason != "" {
			verdict = r.Reason
		}
		regression := r.Regression
		if len(r.RegressedMetrics) > 0 {
			regression += " (" + strings.Join(r.RegressedMetrics, ", ") + ")"
		}
		t.Rows = append(t.Rows, []string{r.Name, r.Scheduled.UTC().Format(time.RFC3339), string(r.State), iops(r.PeakIOPS), iops(r.AtTargetIOPS), verdict, regression})
	}
	return t
}
