// Command manager is the storagebench manager as the soak (test/soak) runs
// it: manager.New, as cmd/manager builds it, on the soak's
// simulated clock (test/soak/simclock) and with the soak's fixed run key,
// against $KUBECONFIG, until SIGTERM.
//
// The soak builds it twice, with different -ldflags "-X main.build=…", to
// replace the running manager by a new build mid-run. It writes:
//
//   - -ready: "<build> <pid>" once its caches have synced (the driver
//     resumes the clock then);
//   - -samples: one JSON line per sample, appended: its live heap after
//     the last GC (/gc/heap/live:bytes) and its heap objects
//     (/memory/classes/heap/objects:bytes) every 250 ms, and, once per
//     simulated hour and when it stops, its API requests so far
//     (rest_client_requests_total, all codes and methods, as its metrics
//     endpoint shows them) and the step records it holds
//     (storagebench_manager_step_records).
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/metrics"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/manager"
	sbmetrics "github.com/storagebench/storagebench/internal/metrics"
	"github.com/storagebench/storagebench/test/soak/samples"
	"github.com/storagebench/storagebench/test/soak/simclock"
)

// build names this binary; the soak sets it with -ldflags -X.
var build = "dev"

func main() {
	var (
		clockPath, runKey, ready, samplesPath, metricsAddr, image string
		workers                                                   int
		r                                                         controllers.Reconciler
	)
	flag.StringVar(&clockPath, "clock", "", "the simulated clock's file (simclock)")
	flag.StringVar(&runKey, "run-key", "", "the run key, hex")
	flag.StringVar(&ready, "ready", "", "file written once the caches have synced")
	flag.StringVar(&samplesPath, "samples", "", "file the heap and counter samples are appended to")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "metrics endpoint (plain HTTP); 0: none")
	flag.StringVar(&image, "runner-image", "storagebench-runner:soak", "client image")
	flag.IntVar(&workers, "workers", controllers.DefaultWorkers, "max concurrent reconciles")
	flag.DurationVar(&r.StartLead, "step-start-lead", 0, "first step's lead (simulated)")
	flag.DurationVar(&r.NextStepLead, "next-step-start-lead", 0, "later steps' lead (simulated)")
	flag.DurationVar(&r.ResultGrace, "result-grace", 0, "result grace (simulated)")
	flag.DurationVar(&r.ReadyTimeout, "ready-timeout", 0, "ready timeout (simulated)")
	flag.DurationVar(&r.ClaimBindTimeout, "claim-bind-timeout", 0, "claim bind timeout (simulated)")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	logf.SetLogger(zap.New(zap.UseFlagOptions(&zo), zap.WriteTo(os.Stderr)))
	if err := run(clockPath, runKey, ready, samplesPath, metricsAddr, image, workers, r); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func run(clockPath, runKey, ready, samplesPath, metricsAddr, image string, workers int, r controllers.Reconciler) error {
	clock, err := simclock.Open(clockPath)
	if err != nil {
		return err
	}
	keyBytes, err := hex.DecodeString(runKey)
	if err != nil {
		return fmt.Errorf("-run-key: %w", err)
	}
	key, err := controllers.NewRunKey(keyBytes, time.Time{})
	if err != nil {
		return err
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	r.Jobs = controllers.JobOptions{Image: image}
	mgr, err := manager.New(cfg, manager.Options{
		MetricsAddr: metricsAddr,
		ProbeAddr:   "0",
		Reconciler:  r,
		RunKey:      key,
		Clock:       clock,
		Workers:     workers,
	})
	if err != nil {
		return err
	}
	out, err := os.OpenFile(samplesPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			if err := os.WriteFile(ready, fmt.Appendf(nil, "%s %d\n", build, os.Getpid()), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "writing the ready file:", err)
			}
		}
	}()
	logf.Log.Info("starting the soak manager", "build", build, "pid", os.Getpid())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample(ctx, clock, json.NewEncoder(out))
	}()
	err = mgr.Start(ctx)
	stop()
	<-sampled
	return err
}

// sample writes a heap sample every 250 ms and the counters once per
// simulated hour, until ctx ends, then a final sample with the counters.
func sample(ctx context.Context, clock *simclock.Reader, enc *json.Encoder) {
	ms := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	hour := clock.Now().Truncate(time.Hour)
	write := func(counters, final bool) {
		metrics.Read(ms)
		s := samples.Sample{Build: build, PID: os.Getpid(), Real: time.Now().UnixMilli(), Sim: clock.Now().UnixMilli(),
			Live: ms[0].Value.Uint64(), Heap: ms[1].Value.Uint64(), Counters: counters, Final: final}
		if counters {
			s.Requests = requests()
			s.StepRecords = gaugeValue()
		}
		if err := enc.Encode(s); err != nil {
			fmt.Fprintln(os.Stderr, "writing a sample:", err)
		}
	}
	write(true, false)
	for {
		select {
		case <-ctx.Done():
			write(true, true)
			return
		case <-tick.C:
		}
		now := clock.Now().Truncate(time.Hour)
		write(!now.Equal(hour), false)
		hour = now
	}
}

// requests is rest_client_requests_total summed over its series, read from
// the registry the metrics endpoint serves.
func requests() float64 {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gathering metrics:", err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// gaugeValue is storagebench_manager_step_records.
func gaugeValue() float64 {
	var m dto.Metric
	if err := sbmetrics.StepRecords.Write(&m); err != nil {
		return -1
	}
	return m.GetGauge().GetValue()
}
