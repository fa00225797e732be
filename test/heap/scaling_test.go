package heap

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// scalingSteps is the steps of each BenchmarkManagerPerStep case: the
// steps between the first and the last are measured.
const scalingSteps = 6

// BenchmarkManagerPerStep measures what one step costs the manager at 10,
// 100, 1,000 clients (a benchmark's most) and 3,000 (three benchmarks of
// 1,000 on one manager, a step being one step of each), with the fake
// runners of BenchmarkManagerHeap: reconciles, API requests that write
// (POST, PUT, PATCH, DELETE) and that read (GET: gets, lists and watches
// alike), and CPU seconds. The manager's own metrics count them
// (controller-runtime's reconcile counter, client-go's request counter,
// the process collector's CPU), scraped from its metrics endpoint on
// loopback when every benchmark has recorded its first step and when the
// first one has recorded its last but one; the difference is divided by
// the steps recorded between (per benchmark), so neither a start (Jobs,
// claims, readiness) nor an end (the final order, suspending and deleting
// the clients' objects) is counted. The table printed last gives each
// figure's growth from one count of clients to the next: linear growth
// is the ratio of the counts, flat is 1.
func BenchmarkManagerPerStep(b *testing.B) {
	logf.SetLogger(logr.Discard())
	counts := []int{10, 100, 1000, 3000}
	rows := make([]managerCost, len(counts))
	for i, clients := range counts {
		b.Run(fmt.Sprintf("%dclients-%dsteps", clients, scalingSteps), func(b *testing.B) {
			for range b.N {
				// A benchmark has at most 1,000 clients: 3,000 are three.
				s := scenario{clients: clients, benchmarks: (clients + 999) / 1000, steps: scalingSteps, bound: 15 * time.Minute, perStep: true}
				c := run(b, s)
				b.ReportMetric(c.reconciles, "reconciles/step")
				b.ReportMetric(c.writes, "api-writes/step")
				b.ReportMetric(c.reads, "api-reads/step")
				b.ReportMetric(c.cpu, "cpu-s/step")
				rows[i] = c
			}
		})
	}
	var t strings.Builder
	fmt.Fprintf(&t, "\n| clients | reconciles/step | API writes/step | API reads/step | CPU s/step |\n|---|---|---|---|---|\n")
	for i, c := range rows {
		fmt.Fprintf(&t, "| %d | %.1f | %.1f | %.1f | %.3f |\n", counts[i], c.reconciles, c.writes, c.reads, c.cpu)
	}
	for i := 1; i < len(rows); i++ {
		a, z := rows[i-1], rows[i]
		fmt.Fprintf(&t, "| %d→%d | %.2f | %.2f | %.2f | %.2f |\n", counts[i-1], counts[i],
			ratio(z.reconciles, a.reconciles), ratio(z.writes, a.writes), ratio(z.reads, a.reads), ratio(z.cpu, a.cpu))
	}
	// b.Log of a benchmark with sub-benchmarks is not printed.
	fmt.Print(t.String())
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// managerCost is what the manager spent: its cumulative counters at one
// instant (scrape), or their growth per step (perStep).
type managerCost struct {
	reconciles, writes, reads, cpu float64
}

// perStep is the growth from before to c, per step of steps.
func (c managerCost) perStep(before managerCost, n float64) managerCost {
	return managerCost{(c.reconciles - before.reconciles) / n, (c.writes - before.writes) / n,
		(c.reads - before.reads) / n, (c.cpu - before.cpu) / n}
}

// freeLoopbackAddr returns a loopback address with a port nothing listens
// on, for the manager's metrics endpoint.
func freeLoopbackAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// scrape reads the manager's counters from its metrics endpoint.
func scrape(addr string) (managerCost, error) {
	families, err := metricFamilies(addr)
	if err != nil {
		return managerCost{}, err
	}
	var c managerCost
	sum := func(name string, keep func(*dto.Metric) bool) (float64, error) {
		f, ok := families[name]
		if !ok {
			return 0, fmt.Errorf("the manager's metrics have no %s", name)
		}
		var v float64
		for _, m := range f.GetMetric() {
			if keep(m) {
				v += m.GetCounter().GetValue()
			}
		}
		return v, nil
	}
	method := func(verbs ...string) func(*dto.Metric) bool {
		return func(m *dto.Metric) bool {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					for _, v := range verbs {
						if l.GetValue() == v {
							return true
						}
					}
				}
			}
			return false
		}
	}
	all := func(*dto.Metric) bool { return true }
	for _, f := range []struct {
		to   *float64
		name string
		keep func(*dto.Metric) bool
	}{
		{&c.reconciles, "controller_runtime_reconcile_total", all},
		{&c.writes, "rest_client_requests_total", method("POST", "PUT", "PATCH", "DELETE")},
		{&c.reads, "rest_client_requests_total", method("GET")},
		{&c.cpu, "process_cpu_seconds_total", all},
	} {
		if *f.to, err = sum(f.name, f.keep); err != nil {
			return managerCost{}, err
		}
	}
	return c, nil
}

// metricFamilies reads the manager's metrics endpoint.
func metricFamilies(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
	}
	var parser expfmt.TextParser
	return parser.TextToMetricFamilies(resp.Body)
}

// gauge reads the value of the manager's gauge name (unlabelled).
func gauge(addr, name string) (float64, error) {
	families, err := metricFamilies(addr)
	if err != nil {
		return 0, err
	}
	f, ok := families[name]
	if !ok || len(f.GetMetric()) != 1 {
		return 0, fmt.Errorf("the manager's metrics have no single %s", name)
	}
	return f.GetMetric()[0].GetGauge().GetValue(), nil
}
