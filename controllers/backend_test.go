package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/backend"
)

// constantSource answers every query with one series per volume of value
// by metric (samples for count_over_time), or with err.
type constantSource struct {
	volumes []string
	svm     string
	value   map[string]float64
	err     error
	queries []string
	// answer, when set, answers instead (a class's own queries).
	answer func(q string) model.Value
}

func (c *constantSource) Query(_ context.Context, q string, _ time.Time, _ ...promv1.Option) (model.Value, promv1.Warnings, error) {
	c.queries = append(c.queries, q)
	if c.err != nil {
		return nil, nil, c.err
	}
	if c.answer != nil {
		return c.answer(q), nil, nil
	}
	metric := "samples"
	if !strings.HasPrefix(q, "count_over_time") {
		metric = q[len("avg_over_time("):strings.IndexByte(q, '{')]
	}
	var vec model.Vector
	for _, v := range c.volumes {
		vec = append(vec, &model.Sample{Metric: model.Metric{"volume": model.LabelValue(v), "svm": model.LabelValue(c.svm)}, Value: model.SampleValue(c.value[metric])})
	}
	return vec, nil, nil
}

func TestJoinBackend(t *testing.T) {
	start := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	res := 10 * time.Second
	// Two 30 s steps, 40 s apart, after a 5 s ramp each.
	bench := func(driver string) *v1alpha1.StorageBenchmark {
		b := &v1alpha1.StorageBenchmark{}
		b.Status.CompletionTime = &metav1.Time{Time: start.Add(76 * time.Second)}
		b.Spec.Load.StepDuration = metav1.Duration{Duration: 30 * time.Second}
		b.Spec.Load.RampTime = &metav1.Duration{Duration: 5 * time.Second}
		b.Status.Storage = &v1alpha1.StorageStatus{StorageClassName: "cls", Driver: driver,
			Backend: &v1alpha1.BackendStatus{SVM: "svm1"},
			Volumes: []v1alpha1.VolumeStatus{{PersistentVolume: "pv-1", InternalName: "trident_pvc_1"}}}
		for i := range 2 {
			b.Status.Steps = append(b.Status.Steps, v1alpha1.StepStatus{Index: int32(i),
				StartTime: metav1.Time{Time: start.Add(time.Duration(i) * 40 * time.Second)},
				Latency:   &v1alpha1.LatencyStatus{Mean: metav1.Duration{Duration: 900 * time.Microsecond}}})
		}
		return b
	}
	lastEnd := start.Add(40*time.Second + 35*time.Second)
	ok := &constantSource{volumes: []string{"trident_pvc_1"}, svm: "svm1", value: map[string]float64{
		backend.ReadOps: 750, backend.WriteOps: 250, backend.ReadData: 750 * 8192, backend.WriteData: 250 * 8192,
		backend.ReadLatency: 400, backend.WriteLatency: 800, "samples": 2}}
	// A class's own queries: each names its figure and the volume's path.
	own, err := backend.ParseClasses([]byte(`classes:
- storageClassName: own
  resolution: 10s
  readOps: r{path="{{.Path}}"}
  writeOps: w{path="{{.Path}}"}
  readBytes: rb{path="{{.Path}}"}
  writeBytes: wb{path="{{.Path}}"}
  readLatency: rl{path="{{.Path}}"}
  samples: n{path="{{.Path}}"}
- storageClassName: slow
  resolution: 20s
  readOps: r
  writeOps: w
  readBytes: rb
  writeBytes: wb
  samples: n
`))
	if err != nil {
		t.Fatal(err)
	}
	classFigures := map[string]float64{"r": 600, "w": 0, "rb": 600 * 4096, "wb": 0, "(\nrl": 0.0003 * 1e6, "n": 3}
	answers := func(series int) func(q string) model.Value {
		return func(q string) model.Value {
			var vec model.Vector
			for range series {
				vec = append(vec, &model.Sample{Metric: model.Metric{"device": "loop7"}, Value: model.SampleValue(classFigures[q[:strings.IndexByte(q, '{')]])})
			}
			return vec
		}
	}
	withPath := func(class string) *v1alpha1.StorageBenchmark {
		b := bench("")
		b.Status.Storage.StorageClassName = class
		b.Status.Storage.Volumes[0].Path = "/dev/loop7"
		return b
	}
	class := func(annotations map[string]string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "cls", Annotations: annotations}, Provisioner: "x"}
	}
	for _, tc := range []struct {
		name       string
		b          *v1alpha1.StorageBenchmark
		class      *storagev1.StorageClass
		src        *constantSource
		now        time.Time
		wantStatus metav1.ConditionStatus
		wantReason string
		wantAgain  bool
		check      func(t *testing.T, b *v1alpha1.StorageBenchmark, src *constantSource)
	}{
		{
			name: "waits for the last step's samples", b: bench("ontap-nas"), src: ok, now: lastEnd.Add(res),
			wantStatus: metav1.ConditionUnknown, wantReason: ReasonBackendWaiting, wantAgain: true,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, src *constantSource) {
				if len(src.queries) != 0 || b.Status.Steps[0].Backend != nil {
					t.Errorf("queried before the samples were due: %v", src.queries)
				}
			},
		},
		{
			name: "joins an ONTAP volume by internalName and SVM", b: bench("ontap-nas"), src: ok, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionTrue, wantReason: ReasonBackendJoined,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, src *constantSource) {
				got := b.Status.Steps[1].Backend
				want := v1alpha1.StepBackendStatus{Resolution: metav1.Duration{Duration: res}, Samples: 2, IOPS: 1000, ReadIOPS: 750, WriteIOPS: 250,
					BytesPerSecond: 1000 * 8192, Latency: &metav1.Duration{Duration: 500 * time.Microsecond},
					ReadLatency: &metav1.Duration{Duration: 400 * time.Microsecond}, WriteLatency: &metav1.Duration{Duration: 800 * time.Microsecond},
					LatencyGap: &metav1.Duration{Duration: 400 * time.Microsecond}}
				if got == nil || got.IOPS != want.IOPS || *got.Latency != *want.Latency || *got.LatencyGap != *want.LatencyGap || got.Samples != 2 {
					t.Errorf("step 1 backend = %+v, want %+v", got, want)
				}
				if !strings.Contains(src.queries[0], `volume=~"trident_pvc_1",svm="svm1"`) || !strings.Contains(src.queries[0], "[20000ms]") {
					t.Errorf("query %s: want the internalName, the SVM and the measured window less one resolution", src.queries[0])
				}
			},
		},
		{
			name: "a class that names volumes by PV", b: bench(""), class: class(map[string]string{AnnotationBackendVolumeNames: "persistentVolume"}),
			src: &constantSource{volumes: []string{"pv-1"}, value: ok.value}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionTrue, wantReason: ReasonBackendJoined,
			check: func(t *testing.T, _ *v1alpha1.StorageBenchmark, src *constantSource) {
				if !strings.Contains(src.queries[0], `volume=~"pv-1"}`) {
					t.Errorf("query %s: want the PV's name and no svm", src.queries[0])
				}
			},
		},
		{
			name: "an economy volume shares its FlexVol", b: bench("ontap-nas-economy"), src: ok, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendNoSource,
		},
		{
			name: "storage no source reports", b: bench(""), class: class(nil), src: ok, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendNoSource,
		},
		{
			name: "an unreachable source is tried again", b: bench("ontap-san"), src: &constantSource{err: errors.New("connection refused")}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionUnknown, wantReason: ReasonBackendUnavailable, wantAgain: true,
		},
		{
			name: "and given up on", b: bench("ontap-san"), src: &constantSource{err: errors.New("connection refused")}, now: lastEnd.Add(10 * time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendUnavailable,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, _ *constantSource) {
				if b.Status.Steps[0].Backend != nil {
					t.Error("a step kept figures of a join that failed")
				}
			},
		},
		{
			name: "a source without the volume", b: bench("ontap-nas"), src: &constantSource{value: ok.value}, now: lastEnd.Add(10 * time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendNoSeries,
		},
		{
			name: "steps shorter than two resolutions", b: func() *v1alpha1.StorageBenchmark {
				b := bench("ontap-nas")
				b.Spec.Load.StepDuration = metav1.Duration{Duration: 15 * time.Second}
				return b
			}(), src: ok, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendTooShort,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, src *constantSource) {
				if len(src.queries) != 0 || b.Status.Steps[0].Backend == nil || !b.Status.Steps[0].Backend.TooShort {
					t.Errorf("step 0 backend = %+v after %d queries; want tooShort and none", b.Status.Steps[0].Backend, len(src.queries))
				}
			},
		},
		{
			name: "a class read through its own queries", b: withPath("own"), src: &constantSource{answer: answers(1)}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionTrue, wantReason: ReasonBackendJoined,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, src *constantSource) {
				got := b.Status.Steps[0].Backend
				if got == nil || got.IOPS != 600 || got.BytesPerSecond != 600*4096 || got.Samples != 3 || got.ReadLatency == nil || got.ReadLatency.Duration != 300*time.Microsecond {
					t.Errorf("step 0 backend = %+v, want 600 IOPS of 4 KiB, 3 samples, 300 µs reads", got)
				}
				if len(src.queries) != 2*6 || !slices.Contains(src.queries, "(\nrl{path=\"/dev/loop7\"}\n) * 1e6") {
					t.Errorf("queries %q: want 6 a step, the volume's path rendered, seconds scaled to µs", src.queries)
				}
			},
		},
		{
			name: "a class's query that reaches two series", b: withPath("own"), src: &constantSource{answer: answers(2)}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionUnknown, wantReason: ReasonBackendUnavailable, wantAgain: true,
		},
		{
			name: "a class's query the source rejects is not asked again", b: withPath("own"),
			src: &constantSource{err: &promv1.Error{Type: promv1.ErrBadData, Msg: "parse error"}}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendBadQuery,
		},
		{
			name: "a class whose source is slower than its steps", b: withPath("slow"), src: &constantSource{answer: answers(1)}, now: lastEnd.Add(time.Minute),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonBackendTooShort,
			check: func(t *testing.T, b *v1alpha1.StorageBenchmark, _ *constantSource) {
				if st := b.Status.Steps[1].Backend; st == nil || !st.TooShort || st.Resolution.Duration != 20*time.Second {
					t.Errorf("step 1 backend = %+v, want tooShort at the class's 20s", st)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := fake.NewClientBuilder().WithScheme(Scheme())
			if tc.class != nil {
				cb = cb.WithObjects(tc.class)
			}
			r := &Reconciler{Client: cb.Build(), Backend: &BackendMetrics{Resolution: res, Timeout: time.Second, GiveUp: 5 * time.Minute, Retry: 30 * time.Second, Classes: own, api: tc.src}}
			tc.src.queries = nil
			again := r.joinBackend(context.Background(), tc.b, tc.now)
			c := meta.FindStatusCondition(tc.b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason {
				t.Fatalf("condition = %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
			// The verdict's time is when it could first be reached, so a
			// rebuilt status is the same: the end, or when samples were due.
			want := tc.b.Status.CompletionTime.Time
			if c.Reason != ReasonBackendWaiting && c.Reason != ReasonBackendNoSource && c.Reason != ReasonBackendTooShort {
				want = lastEnd.Add(2*res + 5*time.Second)
			}
			if !c.LastTransitionTime.Time.Equal(want) {
				t.Errorf("condition at %v, want %v", c.LastTransitionTime.Time, want)
			}
			if (again > 0) != tc.wantAgain {
				t.Errorf("look again after %v; want again: %v", again, tc.wantAgain)
			}
			if tc.check != nil {
				tc.check(t, tc.b, tc.src)
			}
			if c.Status != metav1.ConditionUnknown && r.joinBackend(context.Background(), tc.b, tc.now.Add(time.Hour)) != 0 {
				t.Error("a final condition was worked on again")
			}
		})
	}
}
