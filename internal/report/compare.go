package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/numfmt"
)

// FormatText is compare's aligned text table.
const FormatText Format = "text"

// Comparison is what compare draws and tabulates: every benchmark judged on
// the same latency figure, load unit and latency target (the first
// benchmark's unless Options say otherwise), so that rows are comparable.
type Comparison struct {
	Runs     []*Run
	Selector analysis.LatencySelector
	Unit     Unit
	Target   time.Duration
	Figures  []Figures
}

// Figures are one benchmark's points of comparison, recomputed from its
// steps with the comparison's selector, unit and target (steps with fio
// errors are left out, as the analysis does).
type Figures struct {
	// Peak is the highest achieved load; PeakStep its index (-1: none).
	Peak     float64
	PeakStep int32
	// LatencyAtPeak is the selected latency at the peak (ok false when the
	// step has no I/O in the selected operation).
	LatencyAtPeak   time.Duration
	LatencyAtPeakOK bool
	// AtTarget is the highest achieved load whose latency is at or below
	// the target; AtTargetStep its index (-1: no step was).
	AtTarget        float64
	AtTargetStep    int32
	LatencyAtTarget time.Duration
	// KneeStep is the recorded knee (-1: none).
	KneeStep int32
}

// CompareRuns resolves a comparison of runs (at least one).
func CompareRuns(runs []*Run, o Options) (*Comparison, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("compare: no benchmark")
	}
	first := runs[0]
	c := &Comparison{Runs: runs, Selector: first.Target, Unit: first.Unit, Target: first.LatencyTarget}
	if o.Metric != "" {
		c.Selector.Metric = o.Metric
	}
	if o.Operation != "" {
		c.Selector.Operation = o.Operation
	}
	for _, r := range runs {
		c.Figures = append(c.Figures, figuresOf(r, c.Selector, c.Unit, c.Target))
	}
	return c, nil
}

func figuresOf(r *Run, sel analysis.LatencySelector, unit Unit, target time.Duration) Figures {
	f := Figures{PeakStep: -1, AtTargetStep: -1, KneeStep: -1}
	for i := range r.Steps {
		s := &r.Steps[i]
		if !s.Evidence() {
			continue
		}
		x := unit.Achieved(s)
		if f.PeakStep < 0 || x > f.Peak {
			f.Peak, f.PeakStep = x, int32(s.Index)
			f.LatencyAtPeak, f.LatencyAtPeakOK = s.selectedLatency(sel)
		}
		if l, ok := s.selectedLatency(sel); ok && l <= target {
			if f.AtTargetStep < 0 || x > f.AtTarget || (x == f.AtTarget && l < f.LatencyAtTarget) {
				f.AtTarget, f.AtTargetStep, f.LatencyAtTarget = x, int32(s.Index), l
			}
		}
		if s.Knee {
			f.KneeStep = int32(s.Index)
		}
	}
	return f
}

// delta renders v relative to base: "+12.3 %"; "baseline" for the first row.
func delta(v, base float64, first bool) string {
	if first {
		return "baseline"
	}
	if base == 0 {
		return "-"
	}
	return numfmt.SignedPercent((v-base)/base*100, 1)
}

// Table is the comparison's deltas at the peak and at the latency target,
// each relative to the first benchmark.
func (c *Comparison) Table() Table {
	u, sel, target := c.Unit.Label(), c.Selector, numfmt.Duration(c.Target)
	t := Table{
		Header: []string{"benchmark", "class", "profile", "peak " + u, "Δ peak", sel.String() + " at peak", "Δ latency",
			u + " at ≤ " + target, "Δ at target", sel.String() + " there", "knee"},
		Numeric: []bool{false, false, false, true, true, true, true, true, true, true, true},
	}
	base := c.Figures[0]
	for i, r := range c.Runs {
		f := c.Figures[i]
		row := []string{r.Name, orDash(r.Class), r.ProfileName()}
		if f.PeakStep < 0 {
			row = append(row, "-", "-", "-", "-")
		} else {
			row = append(row, fmt.Sprintf("%s (step %d)", c.Unit.Number(f.Peak), f.PeakStep+1), delta(f.Peak, base.Peak, i == 0))
			if f.LatencyAtPeakOK {
				row = append(row, numfmt.Duration(f.LatencyAtPeak), delta(float64(f.LatencyAtPeak), float64(base.LatencyAtPeak), i == 0 || !base.LatencyAtPeakOK))
			} else {
				row = append(row, "-", "-")
			}
		}
		if f.AtTargetStep < 0 {
			row = append(row, "none", "-", "-")
		} else {
			row = append(row, fmt.Sprintf("%s (step %d)", c.Unit.Number(f.AtTarget), f.AtTargetStep+1), delta(f.AtTarget, base.AtTarget, i == 0 || base.AtTargetStep < 0),
				numfmt.Duration(f.LatencyAtTarget))
		}
		if f.KneeStep >= 0 {
			row = append(row, fmt.Sprintf("step %d", f.KneeStep+1))
		} else {
			row = append(row, "-")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// Names are the compared runs' names: "a vs b", as SafeLine escapes them.
func (c *Comparison) Names() string {
	n := make([]string, len(c.Runs))
	for i, r := range c.Runs {
		n[i] = r.Name
	}
	return SafeLine(strings.Join(n, " vs "))
}

// Note says what the comparison is judged on, as SafeLine escapes it.
func (c *Comparison) Note() string {
	return SafeLine(fmt.Sprintf("Judged on %s against achieved %s with a latency target of %s; Δ is relative to %s.",
		c.Selector, c.Unit.Label(), numfmt.Duration(c.Target), c.Runs[0].Name))
}

// WriteText writes the comparison as compare's text format: the aligned
// table and the note (package figure renders the other formats).
func (c *Comparison) WriteText(w io.Writer) error {
	t := c.Table()
	if err := t.Text(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n"+c.Note())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
