package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/report"
)

// result is everything one run of this program measured (result.json).
type result struct {
	Started     time.Time        `json:"started"`
	Finished    time.Time        `json:"finished"`
	Environment environment      `json:"environment"`
	Settings    settings         `json:"settings"`
	Fidelity    *fidelityResult  `json:"fidelity,omitempty"`
	Overhead    *overheadSummary `json:"overhead,omitempty"`
}

type environment struct {
	CPUs       int    `json:"cpus"`
	Kubernetes string `json:"kubernetes"`
	HostFio    string `json:"hostFio,omitempty"`
	// The machine is shared: its load tells how noisy the figures are.
	LoadAverageAtStart string `json:"loadAverageAtStart"`
	LoadAverageAtEnd   string `json:"loadAverageAtEnd"`
}

type settings struct {
	Namespace           string  `json:"namespace"`
	Profile             string  `json:"profile"`
	WorkingSetPerClient string  `json:"workingSetPerClient"`
	ClientCPU           string  `json:"clientCPU,omitempty"`
	StepDurationSeconds float64 `json:"stepDurationSeconds"`
	RampSeconds         float64 `json:"rampSeconds"`
	Rounds              int     `json:"rounds,omitempty"`
	OverheadRounds      int     `json:"overheadRounds,omitempty"`
	Rate                int64   `json:"rate,omitempty"`
	QueueDepth          int     `json:"queueDepth,omitempty"`
	Steps               int     `json:"steps,omitempty"`
	Clients             int     `json:"clients,omitempty"`
	RateIncrement       int64   `json:"rateIncrement,omitempty"`
}

func (c *config) settings() settings {
	s := settings{Namespace: c.namespace, Profile: c.profile, WorkingSetPerClient: c.workingSet, ClientCPU: c.clientCPU,
		StepDurationSeconds: seconds(c.stepDuration), RampSeconds: seconds(c.ramp)}
	if c.fidelity {
		s.Rounds, s.Rate, s.QueueDepth = c.rounds, c.rate, c.queueDepth
	}
	if c.overhead {
		s.Steps, s.Clients, s.RateIncrement, s.OverheadRounds = c.steps, c.clients, c.rateIncrement, c.overheadRounds
	}
	return s
}

// figures are one step's results as status records them: achieved IOPS
// (reads and writes, rounded) and completion latency over all I/O.
type figures struct {
	OfferedIOPS         int64 `json:"offeredIOPS,omitempty"`
	QueueDepthPerClient int32 `json:"queueDepthPerClient,omitempty"`
	IOPS                int64 `json:"iops"`
	MeanNs              int64 `json:"meanNs"`
	P99Ns               int64 `json:"p99Ns"`
	// Start is when fio was launched for the step (its ramp included), End
	// when it finished.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

type fidelityResult struct {
	Claim            string `json:"claim"`
	StorageClass     string `json:"storageClass"`
	PersistentVolume string `json:"persistentVolume"`
	// HostPath is the volume's directory, where both the runner pod and the
	// plain runs did their I/O.
	HostPath string `json:"hostPath"`
	// JobFile is the last plain run's fio job file (its fio json+ report
	// lies next to it).
	JobFile   string `json:"jobFile"`
	RunnerFio string `json:"runnerFio"`
	// Goal bounds the mean ratios at an offered rate to [Goal, 1/Goal];
	// SaturatedBand the IOPS ratio at saturation likewise.
	Goal          float64              `json:"ratioGoal"`
	SaturatedBand float64              `json:"saturatedBand"`
	Cases         []fidelityCaseResult `json:"cases"`
	// WorstIOPSRatio is the lowest of the cases' IOPS ratios.
	WorstIOPSRatio float64 `json:"worstIOPSRatio"`
	Met            bool    `json:"met"`
}

type fidelityCaseResult struct {
	Case   string          `json:"case"`
	Rounds []fidelityRound `json:"rounds"`
	// Means over the rounds, and their ratios operator/plain.
	OperatorIOPS  float64 `json:"operatorIOPS"`
	PlainIOPS     float64 `json:"plainIOPS"`
	OperatorP99Ns float64 `json:"operatorP99Ns"`
	PlainP99Ns    float64 `json:"plainP99Ns"`
	IOPSRatio     float64 `json:"iopsRatio"`
	P99Ratio      float64 `json:"p99Ratio"`
	// The rounds' ratios: their mean and 95 % confidence interval.
	IOPSRatioCI interval `json:"iopsRatioOfRounds"`
	P99RatioCI  interval `json:"p99RatioOfRounds"`
	Saturating  bool     `json:"saturating,omitempty"`
	Met         bool     `json:"met"`
}

type fidelityRound struct {
	Round     int     `json:"round"`
	Benchmark string  `json:"benchmark"`
	Operator  figures `json:"operator"`
	Plain     figures `json:"plain"`
	IOPSRatio float64 `json:"iopsRatio"`
	P99Ratio  float64 `json:"p99Ratio"`
	// PlainStartedAfterSeconds is the time from the operator's step end to
	// the plain step's start (pod teardown, preconditioning, start lead).
	PlainStartedAfterSeconds float64 `json:"plainStartedAfterOperatorEndSeconds"`
}

// overheadSummary is the overhead measured over rounds: each run's ratio,
// their mean and its 95 % confidence interval, judged against the goal.
type overheadSummary struct {
	Goal  float64          `json:"ratioGoal"`
	Ratio interval         `json:"ratio"`
	Met   bool             `json:"met"`
	Split *splitSummary    `json:"split,omitempty"`
	Runs  []overheadResult `json:"runs"`
}

// splitSummary is each part of the runs' wall times in seconds over the
// rounds, and the operator's own part judged against its goal.
type splitSummary struct {
	Storage      interval `json:"storageSeconds"`
	Kubelet      interval `json:"kubeletSeconds"`
	Clients      interval `json:"clientsSeconds"`
	FioOverrun   interval `json:"fioOverrunSeconds"`
	Operator     interval `json:"operatorSeconds"`
	OperatorGoal float64  `json:"operatorGoalSeconds"`
	OperatorMet  bool     `json:"operatorMet"`
}

type overheadResult struct {
	Benchmark               string  `json:"benchmark"`
	Clients                 int     `json:"clients"`
	StorageClass            string  `json:"storageClass"`
	StepDurationSeconds     float64 `json:"stepDurationSeconds"`
	RampSeconds             float64 `json:"rampSeconds"`
	SumStepDurationsSeconds float64 `json:"sumStepDurationsSeconds"`
	// SumStepIOSeconds adds every step's ramp.
	SumStepIOSeconds float64 `json:"sumStepIOSeconds"`
	// WallSeconds is from just before the create call to Complete seen True.
	WallSeconds float64 `json:"wallSeconds"`
	// Ratio is WallSeconds / SumStepDurationsSeconds.
	Ratio              float64 `json:"ratio"`
	RatioIncludingRamp float64 `json:"ratioIncludingRamp"`
	// The API's own record, to the second: creationTimestamp and the
	// Complete condition's lastTransitionTime.
	CreationTimestamp          time.Time `json:"creationTimestamp"`
	CompleteLastTransitionTime time.Time `json:"completeLastTransitionTime"`
	WallByConditionSeconds     float64   `json:"wallByConditionSeconds"`
	// FirstIOSeconds is from the create call to the earliest client
	// launching fio for step 1 (whose ramp is I/O).
	FirstIOSeconds      float64        `json:"firstIOSeconds"`
	Milestones          []milestone    `json:"milestones"`
	Steps               []overheadStep `json:"steps"`
	PreconditionSeconds []float64      `json:"preconditionSecondsPerClient"`
	// Split is who spent the wall time; nil unless every milestone was
	// seen.
	Split *overheadSplit `json:"split,omitempty"`
}

type milestone struct {
	Name               string    `json:"name"`
	At                 time.Time `json:"at,omitzero"`
	SinceCreateSeconds float64   `json:"sinceCreateSeconds"`
	Source             string    `json:"source"`
}

type overheadStep struct {
	Index        int   `json:"step"`
	OfferedIOPS  int64 `json:"offeredIOPS"`
	AchievedIOPS int64 `json:"achievedIOPS"`
	Saturated    bool  `json:"saturated,omitempty"`
	// Since the create call: the order's start instant, the earliest fio
	// launch, the latest fio end; GapSeconds is from the previous step's end
	// to this step's first fio launch.
	StartInstantSeconds float64 `json:"startInstantSeconds"`
	FioStartSeconds     float64 `json:"fioStartSeconds"`
	EndSeconds          float64 `json:"endSeconds"`
	GapSeconds          float64 `json:"gapSeconds,omitempty"`
}

// printSummary writes the human summary: one table per measurement and
// the ratios against their goals.
func printSummary(w io.Writer, r *result) {
	if f := r.Fidelity; f != nil {
		fmt.Fprintf(w, "FIDELITY: operator (runner pod, %s) vs plain %s on the host, same step, same files in %s\n\n",
			f.RunnerFio, r.Environment.HostFio, f.HostPath)
		t := report.Table{Header: []string{"STEP", "ROUND", "OPERATOR IOPS", "PLAIN IOPS", "IOPS RATIO", "OPERATOR P99", "PLAIN P99", "P99 RATIO"},
			Numeric: []bool{false, true, true, true, true, true, true, true}}
		for _, c := range f.Cases {
			for _, rd := range c.Rounds {
				t.Rows = append(t.Rows, []string{c.Case, strconv.Itoa(rd.Round), fmtCount(rd.Operator.IOPS), fmtCount(rd.Plain.IOPS),
					fmtRatio(rd.IOPSRatio), fmtLatency(rd.Operator.P99Ns), fmtLatency(rd.Plain.P99Ns), fmtRatio(rd.P99Ratio)})
			}
			t.Rows = append(t.Rows, []string{c.Case, "mean", numfmt.Count(c.OperatorIOPS), numfmt.Count(c.PlainIOPS),
				fmtRatio(c.IOPSRatio), fmtLatency(int64(c.OperatorP99Ns)), fmtLatency(int64(c.PlainP99Ns)), fmtRatio(c.P99Ratio)})
		}
		_ = t.Text(w)
		fmt.Fprintln(w)
		for _, c := range f.Cases {
			band := f.Goal
			judged := "IOPS and p99"
			if c.Saturating {
				band, judged = f.SaturatedBand, "IOPS (p99 reported)"
			}
			fmt.Fprintf(w, "%s: IOPS ratio %s; p99 ratio %s; goal: %s mean within %.2f–%.4f: %s\n",
				c.Case, c.IOPSRatioCI, c.P99RatioCI, judged, band, 1/band, verdict(c.Met))
		}
		fmt.Fprintf(w, "fidelity: %s\n\n", verdict(f.Met))
	}
	if s := r.Overhead; s != nil && len(s.Runs) > 0 {
		rt := report.Table{Header: []string{"ROUND", "WALL", "STEPS", "RATIO", "WITH RAMPS", "FIRST I/O"},
			Numeric: []bool{true, true, true, true, true, true}}
		for i, o := range s.Runs {
			rt.Rows = append(rt.Rows, []string{strconv.Itoa(i + 1), fmtSeconds(o.WallSeconds), fmtSeconds(o.SumStepDurationsSeconds),
				fmtRatio(o.Ratio), fmtRatio(o.RatioIncludingRamp), fmtSeconds(o.FirstIOSeconds)})
		}
		fmt.Fprintf(w, "OVERHEAD: wall time create → Complete over the sum of the step durations, %d rounds\n\n", len(s.Runs))
		_ = rt.Text(w)
		fmt.Fprintf(w, "\noverhead ratio %s (goal: mean ≤ %.2f: %s)\n", s.Ratio, s.Goal, verdict(s.Met))
		if p := s.Split; p != nil {
			printSplit(w, s.Runs, p)
		}
		fmt.Fprintf(w, "\nthe last round in detail:\n")
		printOverheadRun(w, &s.Runs[len(s.Runs)-1])
	}
}

// printSplit writes who spent the runs' wall times, per round and as
// means with their intervals.
func printSplit(w io.Writer, runs []overheadResult, p *splitSummary) {
	t := report.Table{Header: []string{"ROUND", "STORAGE", "KUBELET", "CLIENTS", "STEPS", "FIO OVERRUN", "OPERATOR", "= CREATE", "+ PODS", "+ LEAD", "+ GAPS", "+ TAIL"},
		Numeric: []bool{true, true, true, true, true, true, true, true, true, true, true, true}}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for i, r := range runs {
		if s := r.Split; s != nil {
			t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), ms(s.StorageSeconds), ms(s.KubeletSeconds), ms(s.ClientsSeconds), ms(s.StepsSeconds),
				ms(s.FioOverrunSeconds), ms(s.OperatorSeconds), ms(s.OperatorCreateSeconds), ms(s.OperatorPodsSeconds),
				ms(s.OperatorLeadSeconds), ms(s.OperatorGapsSeconds), ms(s.OperatorTailSeconds)})
		}
	}
	fmt.Fprintf(w, "\nwho spent the wall time, in seconds (storage: first claim → all bound; kubelet: scheduled and bound → Running;\n"+
		"clients: Running → ready, layout and precondition; the operator's own: create → claim, bound → pods scheduled,\nready → first I/O, the gaps between steps, last end → Complete)\n\n")
	_ = t.Text(w)
	fmt.Fprintf(w, "\nstorage %s s\nkubelet %s s\nclients %s s\nfio overrun %s s\noperator %s s (goal: mean ≤ %.2f s: %s)\n",
		p.Storage, p.Kubelet, p.Clients, p.FioOverrun, p.Operator, p.OperatorGoal, verdict(p.OperatorMet))
}

// printOverheadRun writes one overhead run's milestones and steps.
func printOverheadRun(w io.Writer, o *overheadResult) {
	fmt.Fprintf(w, "OVERHEAD: %d rate steps of %gs (+ %gs ramp), %d clients on one Shared %s volume\n\n",
		len(o.Steps), o.StepDurationSeconds, o.RampSeconds, o.Clients, o.StorageClass)
	t := report.Table{Header: []string{"SINCE CREATE", "+", "MILESTONE"}, Numeric: []bool{true, true, false}}
	prev := 0.0
	for _, m := range o.Milestones {
		if m.At.IsZero() {
			t.Rows = append(t.Rows, []string{"—", "", m.Name + " (not observed)"})
			continue
		}
		t.Rows = append(t.Rows, []string{fmtSeconds(m.SinceCreateSeconds), fmtSeconds(m.SinceCreateSeconds - prev), m.Name})
		prev = m.SinceCreateSeconds
	}
	_ = t.Text(w)
	fmt.Fprintln(w)
	st := report.Table{Header: []string{"STEP", "OFFERED", "ACHIEVED", "START INSTANT", "FIO START", "END", "GAP BEFORE"},
		Numeric: []bool{true, true, true, true, true, true, true}}
	for _, s := range o.Steps {
		gap := ""
		if s.Index > 1 {
			gap = fmtSeconds(s.GapSeconds)
		}
		st.Rows = append(st.Rows, []string{strconv.Itoa(s.Index), fmtCount(s.OfferedIOPS), fmtCount(s.AchievedIOPS),
			fmtSeconds(s.StartInstantSeconds), fmtSeconds(s.FioStartSeconds), fmtSeconds(s.EndSeconds), gap})
	}
	_ = st.Text(w)
	fmt.Fprintf(w, "\nwall time create → Complete: %s for %s of steps: ratio %s; with the ramps (%s): %s\n",
		fmtSeconds(o.WallSeconds), fmtSeconds(o.SumStepDurationsSeconds), fmtRatio(o.Ratio),
		fmtSeconds(o.SumStepIOSeconds), fmtRatio(o.RatioIncludingRamp))
	fmt.Fprintf(w, "create → first I/O: %s; API record: creationTimestamp %s, Complete lastTransitionTime %s (%s, whole seconds)\n",
		fmtSeconds(o.FirstIOSeconds), o.CreationTimestamp.UTC().Format(time.RFC3339), o.CompleteLastTransitionTime.UTC().Format(time.RFC3339),
		fmtSeconds(o.WallByConditionSeconds))
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

func fmtCount(v int64) string { return numfmt.Count(float64(v)) }

func fmtLatency(ns int64) string { return numfmt.Latency(uint64(max(ns, 0))) }

func fmtRatio(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + " s" }
