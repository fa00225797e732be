package spec

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
	"github.com/storagebench/storagebench/test/build"
)

func profileSpec(t *testing.T, name string) workload.Spec {
	t.Helper()
	p, ok := workload.Lookup(name)
	if !ok {
		t.Fatalf("no profile %s", name)
	}
	return p.Spec
}

func TestOfWorkload(t *testing.T) {
	mixed := profileSpec(t, "mixed")
	if mixed.BlockSizeBytes == 8192 || mixed.Pattern == workload.Sequential {
		t.Fatal("the test needs a profile that the overrides change")
	}
	tests := []struct {
		name string
		w    v1alpha1.WorkloadSpec
		want workload.Spec
	}{
		{"base", v1alpha1.WorkloadSpec{}, workload.BaseSpec()},
		{"profile", v1alpha1.WorkloadSpec{Profile: "oltp"}, profileSpec(t, "oltp")},
		{"blockSize 8Ki", v1alpha1.WorkloadSpec{Profile: "seq-read", BlockSize: qty("8Ki")},
			func() workload.Spec { s := profileSpec(t, "seq-read"); s.BlockSizeBytes = 8192; return s }()},
		{"blockSize as plain bytes", v1alpha1.WorkloadSpec{BlockSize: qty("65536")},
			func() workload.Spec { s := workload.BaseSpec(); s.BlockSizeBytes = 65536; return s }()},
		{"workingSetPerClient 10Gi", v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: qty("10Gi")},
			func() workload.Spec { s := profileSpec(t, "oltp"); s.WorkingSetBytesPerClient = 10 << 30; return s }()},
		{"profile plus every override", v1alpha1.WorkloadSpec{
			Profile: "mixed", BlockSize: qty("8Ki"), ReadPercent: ptr.To[int32](70), Pattern: "sequential",
			IODepth: ptr.To[int32](32), IOEngine: "io_uring", Direct: ptr.To(false),
			WorkingSetPerClient: qty("2Gi"), CompressPercent: ptr.To[int32](50),
		}, workload.Spec{BlockSizeBytes: 8192, ReadPercent: 70, Pattern: workload.Sequential, IODepth: 32,
			IOEngine: workload.IOUring, Direct: false, WorkingSetBytesPerClient: 2 << 30, CompressPercent: 50}},
		{"readPercent 0 keeps the rest", v1alpha1.WorkloadSpec{Profile: "oltp", ReadPercent: ptr.To[int32](0)},
			func() workload.Spec { s := profileSpec(t, "oltp"); s.ReadPercent = 0; return s }()},
		{"synchronous engine with depth 1", v1alpha1.WorkloadSpec{IOEngine: "psync", IODepth: ptr.To[int32](1)},
			func() workload.Spec { s := workload.BaseSpec(); s.IOEngine, s.IODepth = workload.PSync, 1; return s }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustRun(t, newBench(build.Workload(tt.w)))
			if d.Workload != tt.want {
				t.Errorf("workload %+v, want %+v", d.Workload, tt.want)
			}
		})
	}
}

func TestOfTopologyAndPlan(t *testing.T) {
	b := newBench(build.Clients(10), build.JobsPerClient(4), build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: qty("4Gi")}))
	d := mustRun(t, b)
	if d.Topology != (plan.Topology{Clients: 10, JobsPerClient: 4}) {
		t.Errorf("topology %+v", d.Topology)
	}
	p := ClientPlan(b, &d)
	// The plan offers the runners every wire version this build reads, and
	// rate steps without stop rules are ordered ahead.
	want := protocol.ClientPlan{Benchmark: testName, Topology: d.Topology, Workload: d.Workload, Volume: d.Volume, Precond: true,
		ResultWire: results.WireVersions, OrdersAhead: true}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ClientPlan() = %+v, want %+v", p, want)
	}
	// A stop rule decides each step from the one before: none is ahead.
	b.Spec.Load.Stop = &v1alpha1.StopRules{MaxStall: &metav1.Duration{Duration: 90 * time.Second}}
	d = mustRun(t, b)
	if p := ClientPlan(b, &d); p.OrdersAhead {
		t.Error("a load with a stop rule is ordered ahead")
	}
}

func TestOfLoadModes(t *testing.T) {
	minute, ramp := time.Minute, 5*time.Second
	tests := []struct {
		name      string
		load      func(l *v1alpha1.LoadSpec)
		want      plan.Load
		wantSteps int
	}{
		{"rate steps", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000, 2000, 3000}}
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Steps: []int64{1000, 2000, 3000}}}, 3},
		{"rate increment", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Start: ptr.To[int64](1000), Increment: ptr.To[int64](500), Max: ptr.To[int64](3000)}
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Start: 1000, Increment: 500, Max: 3000}}, 5},
		{"rate factor", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Start: ptr.To[int64](1000), FactorPercent: ptr.To[int32](200), Max: ptr.To[int64](8000)}
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Start: 1000, FactorPercent: 200, Max: 8000}}, 4},
		{"rate MiBps", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "MiBps", Steps: []int64{100, 200}}
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.MiBps, Steps: []int64{100, 200}}}, 2},
		{"queue depth steps", func(l *v1alpha1.LoadSpec) {
			l.QueueDepth = &v1alpha1.QueueDepthSteps{Steps: []int32{1, 2, 4, 8}}
		}, plan.Load{QueueDepth: &plan.QueueDepthSteps{Steps: []int32{1, 2, 4, 8}}}, 4},
		{"queue depth doubling", func(l *v1alpha1.LoadSpec) {
			l.QueueDepth = &v1alpha1.QueueDepthSteps{Start: ptr.To[int32](1), Max: ptr.To[int32](64)}
		}, plan.Load{QueueDepth: &plan.QueueDepthSteps{Start: 1, Max: 64}}, 7},
		{"curve default percents", func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS"}
		}, plan.Load{Curve: &plan.CurveSpec{Unit: plan.IOPS, ClientBoundCheck: true}}, 12},
		{"curve MiBps percents", func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "MiBps", Percents: []int32{50, 100}}
		}, plan.Load{Curve: &plan.CurveSpec{Unit: plan.MiBps, Percents: []int32{50, 100}, ClientBoundCheck: true}}, 4},
		{"curve without the client-bound check", func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS", Percents: []int32{50, 100}, ClientBoundCheck: ptr.To(false)}
		}, plan.Load{Curve: &plan.CurveSpec{Unit: plan.IOPS, Percents: []int32{50, 100}}}, 3},
		{"rate steps repeated: every run is a planned step", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000, 2000}}
			l.Repeat = 3
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Steps: []int64{1000, 2000}}, Repeat: 3}, 6},
		{"curve repeated, its unthrottled step too", func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS", Percents: []int32{50, 100}}
			l.Repeat = 2
		}, plan.Load{Curve: &plan.CurveSpec{Unit: plan.IOPS, Percents: []int32{50, 100}, ClientBoundCheck: true}, Repeat: 2}, 8},
		{"extended until steady: at most maxRuns runs of each step", func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000, 2000}}
			l.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 4}
		}, plan.Load{Rate: &plan.RateSteps{Unit: plan.IOPS, Steps: []int64{1000, 2000}}, ExtendUntilSteady: 4}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustRun(t, newBench(build.Load(tt.load)))
			tt.want.StepDuration, tt.want.RampTime = minute, ramp
			if !reflect.DeepEqual(d.Load, tt.want) {
				t.Errorf("load %s, want %s", dump(d.Load), dump(tt.want))
			}
			if d.StepsPlanned != tt.wantSteps {
				t.Errorf("StepsPlanned %d, want %d", d.StepsPlanned, tt.wantSteps)
			}
		})
	}
}

// dump shows a load with its pointers followed.
func dump(l plan.Load) string {
	s := "{"
	if l.Rate != nil {
		s += fmt.Sprintf("rate:%+v ", *l.Rate)
	}
	if l.QueueDepth != nil {
		s += fmt.Sprintf("queueDepth:%+v ", *l.QueueDepth)
	}
	if l.Curve != nil {
		s += fmt.Sprintf("curve:%+v ", *l.Curve)
	}
	return s + "stop:" + stopString(l.Stop) + " step:" + l.StepDuration.String() + " ramp:" + l.RampTime.String() + fmt.Sprintf(" repeat:%d", l.Repeat) + "}"
}

func stopString(st plan.StopRules) string {
	s := fmt.Sprintf("{saturation:%d", st.SaturationPercent)
	if st.Latency != nil {
		s += fmt.Sprintf(" latency:%+v", *st.Latency)
	}
	return s + "}"
}

func TestOfStopRules(t *testing.T) {
	tests := []struct {
		name    string
		stop    *v1alpha1.StopRules
		profile string
		want    plan.StopRules
	}{
		{"none", nil, "oltp", plan.StopRules{}},
		{"p99 worst 2ms", &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "p99", Operation: "worst"}, Limit: metav1.Duration{Duration: 2 * time.Millisecond}}},
			"oltp", plan.StopRules{Latency: &plan.LatencyStop{Metric: plan.P99, Operation: plan.Worst, LimitMicroseconds: 2000}}},
		{"mean total 1.5ms", &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "mean", Operation: "total"}, Limit: metav1.Duration{Duration: 1500 * time.Microsecond}}},
			"oltp", plan.StopRules{Latency: &plan.LatencyStop{Metric: plan.Mean, Operation: plan.Total, LimitMicroseconds: 1500}}},
		{"p99.9 read 750us", &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "p99.9", Operation: "read"}, Limit: metav1.Duration{Duration: 750 * time.Microsecond}}},
			"oltp", plan.StopRules{Latency: &plan.LatencyStop{Metric: plan.P999, Operation: plan.Read, LimitMicroseconds: 750}}},
		{"p90 write 1h", &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "p90", Operation: "write"}, Limit: metav1.Duration{Duration: time.Hour}}},
			"rand-write", plan.StopRules{Latency: &plan.LatencyStop{Metric: plan.P90, Operation: plan.Write, LimitMicroseconds: 3_600_000_000}}},
		{"empty selector means mean total", &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{Limit: metav1.Duration{Duration: 3 * time.Millisecond}}},
			"oltp", plan.StopRules{Latency: &plan.LatencyStop{Metric: plan.Mean, Operation: plan.Total, LimitMicroseconds: 3000}}},
		{"saturation only", &v1alpha1.StopRules{SaturationPercent: ptr.To[int32](85)}, "oltp", plan.StopRules{SaturationPercent: 85}},
		{"stall 1m30s", &v1alpha1.StopRules{MaxStall: &metav1.Duration{Duration: 90 * time.Second}}, "oltp", plan.StopRules{MaxStallSeconds: 90}},
		{"both", &v1alpha1.StopRules{SaturationPercent: ptr.To[int32](70), Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "p50", Operation: "total"}, Limit: metav1.Duration{Duration: time.Millisecond}}},
			"oltp", plan.StopRules{SaturationPercent: 70, Latency: &plan.LatencyStop{Metric: plan.P50, Operation: plan.Total, LimitMicroseconds: 1000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(build.Workload(v1alpha1.WorkloadSpec{Profile: tt.profile}), func(b *v1alpha1.StorageBenchmark) { b.Spec.Load.Stop = tt.stop })
			d := mustRun(t, b)
			if !reflect.DeepEqual(d.Load.Stop, tt.want) {
				t.Errorf("stop %s, want %s", stopString(d.Load.Stop), stopString(tt.want))
			}
		})
	}
}

func TestOfAnalysis(t *testing.T) {
	custom := func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Analysis = v1alpha1.AnalysisSpec{LatencyTarget: metav1.Duration{Duration: 500 * time.Microsecond},
			TargetLatency: v1alpha1.LatencySelector{Metric: "p99", Operation: "worst"}, SaturationPercent: 80}
	}
	tests := []struct {
		name string
		mods []build.Option
		want analysis.Options
	}{
		{"defaults, IOPS rate", nil, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90}},
		{"custom", []build.Option{custom}, analysis.Options{LatencyTarget: 500 * time.Microsecond,
			TargetSelector: analysis.LatencySelector{Metric: "p99", Operation: "worst"}, SaturationPercent: 80}},
		{"empty selector means mean total", []build.Option{func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Analysis.TargetLatency = v1alpha1.LatencySelector{}
		}}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90}},
		{"MiBps rate plots bytes", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "MiBps", Steps: []int64{10, 20}}
		})}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90, Throughput: analysis.ThroughputBytes}},
		{"MiBps curve plots bytes", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "MiBps"}
		})}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90, Throughput: analysis.ThroughputBytes}},
		{"IOPS curve plots IOPS", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.Curve = &v1alpha1.CurveSteps{Unit: "IOPS"}
		})}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90}},
		{"queue depth plots IOPS", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.QueueDepth = &v1alpha1.QueueDepthSteps{Steps: []int32{1, 4}}
		})}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90}},
		{"maxVariationPercent", []build.Option{func(b *v1alpha1.StorageBenchmark) {
			b.Spec.Analysis.MaxVariationPercent = ptr.To[int32](7)
		}}, analysis.Options{LatencyTarget: time.Millisecond,
			TargetSelector: analysis.LatencySelector{Metric: "mean", Operation: "total"}, SaturationPercent: 90, MaxVariationPercent: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustRun(t, newBench(tt.mods...))
			if d.Analysis != tt.want {
				t.Errorf("analysis %+v, want %+v", d.Analysis, tt.want)
			}
			wantAxis := tt.want.Throughput
			if wantAxis == "" {
				wantAxis = analysis.ThroughputIOPS
			}
			if got := d.Analysis.WithDefaults().Throughput; got != wantAxis {
				t.Errorf("throughput axis %q, want %q", got, wantAxis)
			}
		})
	}
}

func TestOfObjectives(t *testing.T) {
	sel := v1alpha1.LatencySelector{Metric: "p99", Operation: "read"}
	b := newBench(func(b *v1alpha1.StorageBenchmark) {
		b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{
			{Name: "latency-at-load", LatencyAtLoad: &v1alpha1.LatencyAtLoad{LatencySelector: sel,
				MaxLatency: metav1.Duration{Duration: 2 * time.Millisecond}, MinIOPS: 40000}},
			{Name: "peak-iops", PeakIOPS: ptr.To[int64](50000)},
			{Name: "peak-mibps", PeakMiBps: ptr.To[int64](4000)},
			{Name: "iops-at-latency", IOPSAtLatency: &v1alpha1.IOPSAtLatency{
				MaxLatency: metav1.Duration{Duration: time.Millisecond}, MinIOPS: 30000}},
			{Name: "mibps-at-latency", MiBpsAtLatency: &v1alpha1.MiBpsAtLatency{
				LatencySelector: v1alpha1.LatencySelector{Metric: "p99.9", Operation: "worst"},
				MaxLatency:      metav1.Duration{Duration: 5 * time.Millisecond}, MinMiBps: 800}},
		}}
	})
	d := mustRun(t, b)
	want := []analysis.Objective{
		{Name: "latency-at-load", LatencyAtLoad: &analysis.LatencyAtLoad{Selector: analysis.LatencySelector{Metric: "p99", Operation: "read"},
			MaxLatency: 2 * time.Millisecond, MinIOPS: 40000}},
		{Name: "peak-iops", PeakIOPS: ptr.To[int64](50000)},
		{Name: "peak-mibps", PeakMiBps: ptr.To[int64](4000)},
		{Name: "iops-at-latency", IOPSAtLatency: &analysis.IOPSAtLatency{Selector: analysis.LatencySelector{Metric: "mean", Operation: "total"},
			MaxLatency: time.Millisecond, MinIOPS: 30000}},
		{Name: "mibps-at-latency", MiBpsAtLatency: &analysis.MiBpsAtLatency{Selector: analysis.LatencySelector{Metric: "p99.9", Operation: "worst"},
			MaxLatency: 5 * time.Millisecond, MinMiBps: 800}},
	}
	if !reflect.DeepEqual(d.Objectives, want) {
		t.Errorf("objectives\n got %+v\nwant %+v", d.Objectives, want)
	}
	for _, o := range d.Objectives {
		if err := analysis.ValidateObjective(o); err != nil {
			t.Errorf("objective %s does not validate: %v", o.Name, err)
		}
	}
	if d := mustRun(t, newBench()); d.Objectives != nil {
		t.Errorf("objectives %v without slo", d.Objectives)
	}
}

func TestOfVolumeAndPrecondition(t *testing.T) {
	fill := func(v *bool) func(*v1alpha1.StorageBenchmark) {
		return func(b *v1alpha1.StorageBenchmark) { b.Spec.Precondition.Fill = v }
	}
	tests := []struct {
		name        string
		b           *v1alpha1.StorageBenchmark
		wantVolume  protocol.Volume
		wantPrecond bool
	}{
		{"filesystem per client", newBench(build.Clients(2)), protocol.Volume{Path: protocol.DataMountPath}, true},
		{"filesystem shared", newBench(build.Clients(2), build.Sharing(v1alpha1.SharingShared)),
			protocol.Volume{Path: protocol.DataMountPath, Shared: true}, true},
		{"block per client", newBench(build.VolumeMode(corev1.PersistentVolumeBlock)),
			protocol.Volume{Path: protocol.DevicePath, Block: true}, true},
		{"block shared", newBench(build.Clients(2), build.Sharing(v1alpha1.SharingShared), build.VolumeMode(corev1.PersistentVolumeBlock)),
			protocol.Volume{Path: protocol.DevicePath, Block: true, Shared: true}, true},
		{"existing claim shared: only its own directory, emptied afterwards", newBench(build.Clients(2), build.Sharing(v1alpha1.SharingShared), build.ExistingClaim("mine")),
			protocol.Volume{Path: protocol.DataMountPath, Shared: true, Subdir: "storagebench-bench-", RemoveWhenDone: true}, true},
		{"existing block claim: the whole device", newBench(build.Clients(1), build.VolumeMode(corev1.PersistentVolumeBlock), build.ExistingClaim("lun")),
			protocol.Volume{Path: protocol.DevicePath, Block: true}, true},
		{"precondition explicit true", newBench(fill(ptr.To(true))), protocol.Volume{Path: protocol.DataMountPath}, true},
		{"precondition explicit false", newBench(fill(ptr.To(false))), protocol.Volume{Path: protocol.DataMountPath}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustRun(t, tt.b)
			if d.Volume != tt.wantVolume {
				t.Errorf("volume %+v, want %+v", d.Volume, tt.wantVolume)
			}
			if d.Precond != tt.wantPrecond {
				t.Errorf("precondition %v, want %v", d.Precond, tt.wantPrecond)
			}
		})
	}
}

// Of's errors end the run with InvalidSpec (those admission cannot catch:
// admission_test.go) or the schedule's template with InvalidTemplate: the
// message must name the spec field to change.
func TestOfErrors(t *testing.T) {
	oltpTopo := plan.Topology{Clients: 10, JobsPerClient: 4}
	minOLTP := plan.MinimumRate(plan.IOPS, oltpTopo, profileSpec(t, "oltp"))
	if minOLTP <= 1 {
		t.Fatalf("MinimumRate = %d; the test needs a minimum above 1", minOLTP)
	}
	big := func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count, b.Spec.Clients.JobsPerClient = 10, 4 }
	tests := []struct {
		name      string
		mods      []build.Option
		wantField string
		wantIn    string
	}{
		{"working set below one block per job", []build.Option{build.JobsPerClient(4),
			build.Workload(v1alpha1.WorkloadSpec{Profile: "rand-read", WorkingSetPerClient: qty("16Ki")})},
			"workload.workingSetPerClient", "per fio job"},
		{"working set one block short per job", []build.Option{build.JobsPerClient(64),
			build.Workload(v1alpha1.WorkloadSpec{BlockSize: qty("16Mi"), WorkingSetPerClient: qty("1008Mi")})},
			"workload.workingSetPerClient", "per fio job"},
		{"working set not a multiple of the profile's block", []build.Option{
			build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: qty("10G")})},
			"workload.workingSetPerClient", "multiple"},
		{"working set below one block", []build.Option{
			build.Workload(v1alpha1.WorkloadSpec{BlockSize: qty("2Mi"), WorkingSetPerClient: qty("1Mi")})},
			"workload.workingSetPerClient", "at least one block"},
		{"rate step below the minimum", []build.Option{big, build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp"}),
			build.Load(func(l *v1alpha1.LoadSpec) {
				l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{minOLTP - 1, 10 * minOLTP}}
			})},
			"load.rate.steps[0]", "must be at least " + strconv.FormatInt(minOLTP, 10) + " IOPS"},
		{"rate steps far below the minimum", []build.Option{big,
			build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp"}),
			build.Load(func(l *v1alpha1.LoadSpec) { l.Rate = &v1alpha1.RateSteps{Steps: []int64{1, 2}} })},
			"load.rate.steps[0]", "40 fio jobs"},
		{"generated rate start below the minimum", []build.Option{big, build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp"}),
			build.Load(func(l *v1alpha1.LoadSpec) {
				l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Start: ptr.To(minOLTP - 1), Increment: ptr.To[int64](1000), Max: ptr.To[int64](5000)}
			})},
			"load.rate.start", "must be at least"},
		{"MiBps step below one block per second per job", []build.Option{build.Clients(100), build.JobsPerClient(64),
			build.Workload(v1alpha1.WorkloadSpec{BlockSize: qty("16Mi")}),
			build.Load(func(l *v1alpha1.LoadSpec) { l.Rate = &v1alpha1.RateSteps{Unit: "MiBps", Steps: []int64{1000}} })},
			"load.rate.steps[0]", "must be at least 102400 MiBps"},
		{"blockSize named as in the spec", []build.Option{build.Workload(v1alpha1.WorkloadSpec{BlockSize: qty("3000")})},
			"workload.blockSize", "power of two"},
		{"buffered libaio", []build.Option{build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp", Direct: ptr.To(false)})},
			"workload.direct", "libaio"},
		{"synchronous engine with the profile's depth", []build.Option{
			build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp", IOEngine: "psync"})},
			"workload.ioDepth", "must be 1"},
		{"queue depth with a synchronous engine", []build.Option{
			build.Workload(v1alpha1.WorkloadSpec{IOEngine: "sync", IODepth: ptr.To[int32](1)}),
			build.Load(func(l *v1alpha1.LoadSpec) { l.QueueDepth = &v1alpha1.QueueDepthSteps{Steps: []int32{1, 2}} })},
			"workload.ioEngine", "queue-depth"},
		{"read stop rule on a write-only profile", []build.Option{build.Workload(v1alpha1.WorkloadSpec{Profile: "rand-write"}),
			func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Load.Stop = &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
					LatencySelector: v1alpha1.LatencySelector{Metric: "p99", Operation: "read"}, Limit: metav1.Duration{Duration: time.Millisecond}}}
			}},
			"load.stop.latency.operation", "does no reads"},
		{"unknown profile", []build.Option{build.Workload(v1alpha1.WorkloadSpec{Profile: "four-corners"})},
			"workload.profile", "must be one of"},
		// factorPercent generates steps admission cannot count.
		{"repeated runs beyond 100 steps", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Start: ptr.To[int64](1000), FactorPercent: ptr.To[int32](101), Max: ptr.To[int64](1200)}
			l.Repeat = 10
		})}, "load.repeat", "20 planned steps × 10 runs each = 200 runs"},
		{"extended steps too short to judge", []build.Option{build.Load(func(l *v1alpha1.LoadSpec) {
			l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{1000}}
			l.StepDuration, l.RampTime = metav1.Duration{Duration: 6 * time.Second}, &metav1.Duration{Duration: time.Second}
			l.ExtendUntilSteady = &v1alpha1.ExtendUntilSteady{MaxRuns: 2}
		}), func(b *v1alpha1.StorageBenchmark) { b.Spec.Analysis.SteadyState.Rounds = 8 }}, "load.extendUntilSteady",
			"with steps of 6s (load.stepDuration) is not allowed: must have steps that measure at least 8 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Of(newBench(tt.mods...))
			if err == nil {
				t.Fatalf("Of() succeeded, want an error on %s", tt.wantField)
			}
			var fe *workload.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Fatalf("Of() error %q, want a field error on %s", err, tt.wantField)
			}
			if !strings.HasPrefix(err.Error(), tt.wantField+": ") || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("message %q: want it to start with %q and contain %q", err, tt.wantField, tt.wantIn)
			}
		})
	}
}

// The boundaries of the checks above: exactly the minimum passes.
func TestOfAtTheLimits(t *testing.T) {
	topo := plan.Topology{Clients: 10, JobsPerClient: 4}
	minOLTP := plan.MinimumRate(plan.IOPS, topo, profileSpec(t, "oltp"))
	tests := []struct {
		name string
		mods []build.Option
	}{
		{"rate at the minimum", []build.Option{build.Clients(10), build.JobsPerClient(4),
			build.Workload(v1alpha1.WorkloadSpec{Profile: "oltp"}),
			build.Load(func(l *v1alpha1.LoadSpec) { l.Rate = &v1alpha1.RateSteps{Unit: "IOPS", Steps: []int64{minOLTP}} })}},
		{"working set of exactly one block per job", []build.Option{build.JobsPerClient(4),
			build.Workload(v1alpha1.WorkloadSpec{Profile: "rand-read", WorkingSetPerClient: qty("32Ki")})}},
		{"working set of one block per job and a partial block", []build.Option{build.JobsPerClient(64),
			build.Workload(v1alpha1.WorkloadSpec{BlockSize: qty("16Mi"), WorkingSetPerClient: qty("1040Mi")})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustRun(t, newBench(tt.mods...))
		})
	}
}

func TestOfInvalidObjectiveNamesIt(t *testing.T) {
	b := newBench(func(b *v1alpha1.StorageBenchmark) {
		b.Spec.SLO = &v1alpha1.SLOSpec{Objectives: []v1alpha1.Objective{
			{Name: "fine", PeakIOPS: ptr.To[int64](10)},
			{Name: "fast-reads", LatencyAtLoad: &v1alpha1.LatencyAtLoad{MinIOPS: 100}},
		}}
	})
	_, err := Of(b)
	if err == nil || !strings.HasPrefix(err.Error(), "slo.objectives[fast-reads]: ") || !errors.Is(err, analysis.ErrInvalidThreshold) {
		t.Errorf("Of() error %v, want slo.objectives[fast-reads]: … invalid threshold", err)
	}
}

func TestOfRampTimeUnset(t *testing.T) {
	d := mustRun(t, newBench(func(b *v1alpha1.StorageBenchmark) { b.Spec.Load.RampTime = nil }))
	if d.Load.RampTime != 0 || d.Load.StepDuration != time.Minute {
		t.Errorf("ramp %s step %s, want 0s and 1m0s", d.Load.RampTime, d.Load.StepDuration)
	}
	d = mustRun(t, newBench(func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Load.RampTime = &metav1.Duration{Duration: 15 * time.Second}
	}))
	if d.Load.RampTime != 15*time.Second {
		t.Errorf("ramp %s, want 15s", d.Load.RampTime)
	}
}

// The profile's default working set is checked against the volume too.
func TestOfWorkingSetMustFit(t *testing.T) {
	tests := []struct {
		name    string
		mods    []build.Option
		size    string
		wantErr string
	}{
		{"shared: clients × default 1Gi over 2Gi", []build.Option{build.Clients(3), build.Sharing(v1alpha1.SharingShared)}, "2Gi", "3 clients × workingSetPerClient = 3221225472 bytes must fit in storage.size"},
		{"shared: fits", []build.Option{build.Clients(3), build.Sharing(v1alpha1.SharingShared)}, "3Gi", ""},
		{"per client: default 1Gi over 512Mi", []build.Option{build.Clients(3), build.Sharing(v1alpha1.SharingPerClient)}, "512Mi", "workingSetPerClient = 1073741824 bytes must fit"},
		{"per client: fits", []build.Option{build.Clients(3), build.Sharing(v1alpha1.SharingPerClient)}, "1Gi", ""},
		{"existing claim: not checked", []build.Option{build.Clients(3), build.Sharing(v1alpha1.SharingShared), build.ExistingClaim("mine")}, "1Mi", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(tt.mods...)
			b.Spec.Workload = v1alpha1.WorkloadSpec{Profile: "oltp"}
			b.Spec.Storage.Size = resource.MustParse(tt.size)
			_, err := Of(b)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Of() = %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Of() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestObjectiveOfMaxStall(t *testing.T) {
	o := objectiveOf(v1alpha1.Objective{Name: "failover", MaxStall: &metav1.Duration{Duration: 30 * time.Second}})
	if o.Name != "failover" || o.MaxStall == nil || *o.MaxStall != 30*time.Second {
		t.Fatalf("objectiveOf = %+v", o)
	}
	if err := analysis.ValidateObjective(o); err != nil {
		t.Fatal(err)
	}
}
