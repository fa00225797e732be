package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"k8s.io/client-go/kubernetes"

	"github.com/storagebench/storagebench/test/soak/samples"
)

// result is what a soak reports (result.json).
type result struct {
	Days           int     `json:"simulatedDays"`
	Factor         float64 `json:"factor"`
	RealSeconds    float64 `json:"realSeconds"`
	ClockRunningS  float64 `json:"clockRunningSeconds"`
	ClockStoodS    float64 `json:"clockStoodSeconds"`
	Schedules      int     `json:"schedules"`
	ScheduledTimes int     `json:"scheduledTimes"`
	RunsCreated    int     `json:"runsCreated"`
	HistoryChecks  int     `json:"historyChecks"`
	Checks         []check `json:"checks"`
	// Failures lists every benchmark that failed, expected or not.
	Failures    []failure     `json:"failures"`
	Restarts    []restartInfo `json:"restarts"`
	BuildSwitch *switchInfo   `json:"buildSwitch"`
	// Series are per simulated day (per 2 simulated hours below 3 days).
	BucketHours float64            `json:"bucketHours"`
	Series      []point            `json:"series"`
	Trends      map[string]trend   `json:"trends"`
	Overhead    map[string]stats   `json:"stepOverhead"`
	Ratios      map[string]float64 `json:"stepOverheadNoisyOverQuiet"`
	// PublishCall is the quiet tenant's clients' Publish (one PATCH)
	// latency in the same periods: the API server's share of the overhead.
	PublishCall map[string]stats `json:"quietPublishCall"`
	// Setup is the real time from a benchmark's creation to its last
	// client's first order (the clock stands meanwhile).
	Setup     stats          `json:"runSetup"`
	Anomalies []string       `json:"anomalies"`
	Stuck     []string       `json:"stuck"`
	Replaced  map[string]int `json:"recordsReplaced"`
	// StoodWhile is the real seconds the clock stood while something of
	// each kind worked.
	StoodWhile map[string]float64 `json:"clockStoodWhileSeconds"`
}

type check struct {
	Name    string   `json:"name"`
	Pass    bool     `json:"pass"`
	Details []string `json:"details,omitempty"`
}

// point is one bucket of the manager's figures.
type point struct {
	Bucket int `json:"bucket"`
	// Live is the live heap after GC, Heap the heap objects (MiB).
	LiveMean float64 `json:"liveHeapMiBMean"`
	LiveMax  float64 `json:"liveHeapMiBMax"`
	HeapMean float64 `json:"heapObjectsMiBMean"`
	// RequestsPerHour is API requests per simulated hour.
	RequestsPerHour float64 `json:"apiRequestsPerSimulatedHour"`
	StepRecordsMax  float64 `json:"stepRecordsMax"`
	// OrphansMax: client pods and the operator's ConfigMaps whose owner
	// is gone, not yet deleted by the garbage collector (checked every 30 s
	// real).
	OrphansMax int `json:"orphansMax"`
	Samples    int `json:"samples"`
}

// trend is a series' least-squares slope per simulated day and the ratio
// of its last third's mean to its first third's.
type trend struct {
	SlopePerDay        float64 `json:"slopePerDay"`
	LastOverFirstThird float64 `json:"lastThirdOverFirstThird"`
	Mean               float64 `json:"mean"`
}

type stats struct {
	N        int     `json:"n"`
	MedianMs float64 `json:"medianMs"`
	P95Ms    float64 `json:"p95Ms"`
	MaxMs    float64 `json:"maxMs"`
}

func (r *result) failedChecks() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// report computes the checks and figures, prints them and writes them.
func (s *soak) report(real time.Duration) *result {
	o := s.obs
	running, stopped, stuck := s.gov.stats()
	res := &result{Days: s.cfg.days, Factor: s.cfg.factor, RealSeconds: real.Seconds(),
		ClockRunningS: running.Seconds(), ClockStoodS: stopped.Seconds(), Stuck: stuck}
	s.mu.Lock()
	res.Restarts, res.BuildSwitch, res.Anomalies = s.restarts, s.buildSwitch, append([]string(nil), s.anomalies...)
	s.mu.Unlock()

	missing, unexpected, expected := o.missing(s.end)
	o.mu.Lock()
	res.Schedules, res.ScheduledTimes, res.RunsCreated, res.HistoryChecks = len(o.schedules), expected, o.created, o.historyChecks
	res.Failures = append([]failure(nil), o.failures...)
	res.Replaced = map[string]int{}
	for k, v := range o.replaced {
		res.Replaced[k] = v
	}
	violations := map[string][]string{}
	for k, v := range o.violations {
		violations[k] = append([]string(nil), v...)
	}
	o.mu.Unlock()
	oneRun := append(append([]string{}, violations[checkOneRun]...), prefix("missing: ", missing)...)
	oneRun = append(oneRun, prefix("unexpected: ", unexpected)...)
	var switchProblems []string
	if res.BuildSwitch == nil {
		switchProblems = []string{"no build switch happened"}
	} else if len(res.BuildSwitch.Running) == 0 {
		switchProblems = []string{"no 100-step benchmark was running at the build switch"}
	}
	res.Checks = []check{
		{Name: checkOneRun, Details: oneRun},
		{Name: checkNoFailure, Details: violations[checkNoFailure]},
		{Name: checkHistory, Details: violations[checkHistory]},
		{Name: checkForged, Details: violations[checkForged]},
		{Name: checkBuildSwitch, Details: switchProblems},
		{Name: checkNoAnomaly, Details: append(append([]string{}, res.Anomalies...), stuck...)},
	}
	for i := range res.Checks {
		res.Checks[i].Pass = len(res.Checks[i].Details) == 0
	}

	// The manager's figures, from its samples.
	bucket := 24 * time.Hour
	if s.cfg.days < 3 {
		bucket = 2 * time.Hour
	}
	res.BucketHours = bucket.Hours()
	series, err := s.series(bucket)
	if err != nil {
		res.Anomalies = append(res.Anomalies, "reading the samples: "+err.Error())
	}
	res.Series = series
	res.Trends = map[string]trend{}
	for name, f := range map[string]func(point) float64{
		"liveHeapMiB":                 func(p point) float64 { return p.LiveMean },
		"liveHeapMiBMax":              func(p point) float64 { return p.LiveMax },
		"apiRequestsPerSimulatedHour": func(p point) float64 { return p.RequestsPerHour },
		"stepRecordsMax":              func(p point) float64 { return p.StepRecordsMax },
		"orphansMax":                  func(p point) float64 { return float64(p.OrphansMax) },
	} {
		res.Trends[name] = trendOf(series, f, 24/bucket.Hours())
	}

	// The quiet tenant's step overhead, without and with the noisy one.
	at, d := s.steps.overheads(nsQuiet, longQuiet)
	var quiet, noisy []time.Duration
	for i := range at {
		if o.noisyAt(at[i]) {
			noisy = append(noisy, d[i])
		} else {
			quiet = append(quiet, d[i])
		}
	}
	res.Overhead = map[string]stats{"quiet": statsOf(quiet), "noisy": statsOf(noisy)}
	// For comparison: the same clients' own API calls (Publish, a PATCH).
	var quietCalls, noisyCalls []time.Duration
	for _, c := range s.steps.publishCalls() {
		if o.noisyAt(c.at) {
			noisyCalls = append(noisyCalls, c.took)
		} else {
			quietCalls = append(quietCalls, c.took)
		}
	}
	res.PublishCall = map[string]stats{"quiet": statsOf(quietCalls), "noisy": statsOf(noisyCalls)}
	res.Setup = statsOf(s.steps.setups())
	res.Ratios = map[string]float64{}
	if q, n := res.Overhead["quiet"], res.Overhead["noisy"]; q.N > 0 && n.N > 0 {
		res.Ratios["median"] = n.MedianMs / q.MedianMs
		res.Ratios["p95"] = n.P95Ms / q.P95Ms
	}

	res.StoodWhile = map[string]float64{}
	for k, v := range s.gov.busy() {
		res.StoodWhile[k] = v.Seconds()
	}
	text := res.table()
	fmt.Print(text)
	_, _ = s.logFile.WriteString(text)
	if s.cfg.result != "" {
		if err := os.MkdirAll(filepath.Dir(s.cfg.result), 0o755); err == nil {
			data, _ := json.MarshalIndent(res, "", "  ")
			if err := os.WriteFile(s.cfg.result, data, 0o644); err != nil {
				s.tb.Logf("writing %s: %v", s.cfg.result, err)
			}
		}
	}
	return res
}

func prefix(p string, list []string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = p + v
	}
	return out
}

// series reads the samples into buckets of the simulated span: live heap
// and heap objects (mean, max), API requests per simulated hour (each
// process's counter differences, its first counted from zero), the step
// records held (max).
func (s *soak) series(bucket time.Duration) ([]point, error) {
	f, err := os.Open(s.samplesPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	n := int((s.end.Sub(s.start) + bucket - 1) / bucket)
	pts := make([]point, n)
	live, heap := make([]float64, n), make([]float64, n)
	requests := make([]float64, n)
	last := map[int]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var sm samples.Sample
		if err := json.Unmarshal(sc.Bytes(), &sm); err != nil {
			return nil, err
		}
		// A sample at a bucket's end (a restart at midnight) belongs to
		// the bucket it ends.
		i := int((time.UnixMilli(sm.Sim).Sub(s.start) - time.Millisecond) / bucket)
		i = max(0, min(i, n-1))
		p := &pts[i]
		p.Bucket = i
		p.Samples++
		mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
		live[i] += mib(sm.Live)
		heap[i] += mib(sm.Heap)
		p.LiveMax = math.Max(p.LiveMax, mib(sm.Live))
		if sm.Counters {
			requests[i] += sm.Requests - last[sm.PID]
			last[sm.PID] = sm.Requests
			p.StepRecordsMax = math.Max(p.StepRecordsMax, sm.StepRecords)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, g := range s.garbage {
		i := int((g.at.Sub(s.start) - time.Millisecond) / bucket)
		i = max(0, min(i, n-1))
		pts[i].OrphansMax = max(pts[i].OrphansMax, g.n)
	}
	s.mu.Unlock()
	for i := range pts {
		pts[i].Bucket = i
		if c := float64(pts[i].Samples); c > 0 {
			pts[i].LiveMean, pts[i].HeapMean = live[i]/c, heap[i]/c
		}
		span := min(bucket, s.end.Sub(s.start.Add(time.Duration(i)*bucket)))
		pts[i].RequestsPerHour = requests[i] / span.Hours()
	}
	return pts, nil
}

// trendOf is the least-squares slope of f over the points, per simulated
// day (perDay points a day), and its last third's mean over its first
// third's.
func trendOf(pts []point, f func(point) float64, perDay float64) trend {
	n := len(pts)
	if n == 0 {
		return trend{}
	}
	var sx, sy, sxx, sxy float64
	for i, p := range pts {
		x, y := float64(i)/perDay, f(p)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	fn := float64(n)
	t := trend{Mean: sy / fn}
	if d := fn*sxx - sx*sx; d != 0 {
		t.SlopePerDay = (fn*sxy - sx*sy) / d
	}
	third := max(1, n/3)
	var first, lastSum float64
	for i := range third {
		first += f(pts[i])
		lastSum += f(pts[n-1-i])
	}
	if first != 0 {
		t.LastOverFirstThird = lastSum / first
	}
	return t
}

func statsOf(d []time.Duration) stats {
	if len(d) == 0 {
		return stats{}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	rank := func(p float64) time.Duration {
		k := int(math.Ceil(p*float64(len(d)))) - 1
		return d[max(0, min(k, len(d)-1))]
	}
	ms := func(v time.Duration) float64 { return float64(v) / float64(time.Millisecond) }
	return stats{N: len(d), MedianMs: ms(rank(0.5)), P95Ms: ms(rank(0.95)), MaxMs: ms(d[len(d)-1])}
}

// table is the result as text.
func (r *result) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== soak: %d simulated days in %s real (clock running %s, standing %s), factor %g\n",
		r.Days, (time.Duration(r.RealSeconds) * time.Second).Round(time.Second),
		(time.Duration(r.ClockRunningS) * time.Second).Round(time.Second), (time.Duration(r.ClockStoodS) * time.Second).Round(time.Second), r.Factor)
	fmt.Fprintf(&b, "%d schedules, %d scheduled times, %d runs created; %d history checks\n\n", r.Schedules, r.ScheduledTimes, r.RunsCreated, r.HistoryChecks)
	fmt.Fprintf(&b, "| check | result |\n|---|---|\n")
	for _, c := range r.Checks {
		v := "PASS"
		if !c.Pass {
			v = fmt.Sprintf("FAIL (%d)", len(c.Details))
		}
		fmt.Fprintf(&b, "| %s | %s |\n", c.Name, v)
	}
	for _, c := range r.Checks {
		for i, d := range c.Details {
			if i == 20 {
				fmt.Fprintf(&b, "  … %d more\n", len(c.Details)-20)
				break
			}
			fmt.Fprintf(&b, "  %s: %s\n", c.Name, d)
		}
	}
	expected, other := 0, 0
	for _, f := range r.Failures {
		if f.Expected {
			expected++
		} else {
			other++
		}
	}
	fmt.Fprintf(&b, "\nfailed runs: %d expected (hostile record targets, ExchangeObjectLost), %d other\n", expected, other)
	fmt.Fprintf(&b, "restarts: %d", len(r.Restarts))
	if sw := r.BuildSwitch; sw != nil {
		fmt.Fprintf(&b, "; build switch %s → %s at simulated %s, running: %s", sw.From, sw.To, sw.Sim.Format(time.RFC3339), strings.Join(sw.Running, ", "))
	}
	fmt.Fprintf(&b, "\n\n| %gh bucket | live heap MiB (mean) | live heap MiB (max) | heap objects MiB (mean) | API requests / sim. hour | step records (max) | orphans (max) |\n|---|---|---|---|---|---|---|\n", r.BucketHours)
	for _, p := range r.Series {
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.0f | %.0f | %d |\n", p.Bucket, p.LiveMean, p.LiveMax, p.HeapMean, p.RequestsPerHour, p.StepRecordsMax, p.OrphansMax)
	}
	fmt.Fprintf(&b, "\n| series | mean | slope per simulated day | last third / first third |\n|---|---|---|---|\n")
	names := make([]string, 0, len(r.Trends))
	for n := range r.Trends {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := r.Trends[n]
		fmt.Fprintf(&b, "| %s | %.2f | %+.3f | %.3f |\n", n, t.Mean, t.SlopePerDay, t.LastOverFirstThird)
	}
	kinds := make([]string, 0, len(r.StoodWhile))
	for k := range r.StoodWhile {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return r.StoodWhile[kinds[i]] > r.StoodWhile[kinds[j]] })
	fmt.Fprintf(&b, "\nrun setup (created → last client's first order), real ms: %d runs, median %.0f, p95 %.0f, max %.0f\n",
		r.Setup.N, r.Setup.MedianMs, r.Setup.P95Ms, r.Setup.MaxMs)
	fmt.Fprintf(&b, "the clock stood while (real s, kinds overlap):")
	for i, k := range kinds {
		if i == 8 {
			break
		}
		fmt.Fprintf(&b, " %s %.0f;", k, r.StoodWhile[k])
	}
	fmt.Fprintln(&b)
	q, n := r.Overhead["quiet"], r.Overhead["noisy"]
	fmt.Fprintf(&b, "\nquiet tenant's step overhead (last publish of step k → order k+1 at the runner), real ms:\n")
	fmt.Fprintf(&b, "| period | steps | median | p95 |\n|---|---|---|---|\n| quiet | %d | %.1f | %.1f |\n| noisy tenant working | %d | %.1f | %.1f |\n",
		q.N, q.MedianMs, q.P95Ms, n.N, n.MedianMs, n.P95Ms)
	if len(r.Ratios) > 0 {
		fmt.Fprintf(&b, "noisy / quiet: median ×%.2f, p95 ×%.2f\n", r.Ratios["median"], r.Ratios["p95"])
	}
	qc, nc := r.PublishCall["quiet"], r.PublishCall["noisy"]
	fmt.Fprintf(&b, "for comparison, the same clients' Publish (one PATCH), real ms: quiet median %.1f p95 %.1f (%d); noisy median %.1f p95 %.1f (%d)\n",
		qc.MedianMs, qc.P95Ms, qc.N, nc.MedianMs, nc.P95Ms, nc.N)
	return b.String()
}

// apiServerRequests is the API server's own count of the requests it
// served, by verb and resource (apiserver_request_total), largest first:
// the soak's whole load, the manager's and everybody else's.
func (s *soak) apiServerRequests(ctx context.Context) (string, error) {
	cs, err := kubernetes.NewForConfig(s.cluster.Config)
	if err != nil {
		return "", err
	}
	data, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", err
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	counts := map[string]float64{}
	var total float64
	for _, m := range families["apiserver_request_total"].GetMetric() {
		var verb, resource, sub string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			}
		}
		if sub != "" {
			resource += "/" + sub
		}
		counts[verb+" "+resource] += m.GetCounter().GetValue()
		total += m.GetCounter().GetValue()
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	var b strings.Builder
	fmt.Fprintf(&b, "API server requests: %.0f;", total)
	for i, k := range keys {
		if i == 25 {
			break
		}
		fmt.Fprintf(&b, " %s %.0f;", k, counts[k])
	}
	return b.String(), nil
}
