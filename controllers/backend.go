package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/backend"
	"github.com/storagebench/storagebench/internal/spec"
	"github.com/storagebench/storagebench/internal/trident"
)

// AnnotationBackendVolumeNames on a StorageClass says how the metrics
// source names its volumes when they are not Trident ONTAP volumes:
// "persistentVolume" labels each with its PersistentVolume's name (the
// local test bed's exporter does). Without it, only a Trident ONTAP
// volume has series, under its internalName.
const AnnotationBackendVolumeNames = "storagebench.io/backend-volume-names"

// joinPassTimeout bounds one pass over a run's steps: a source slow to
// answer each of up to (steps × volumes × 7) queries must not hold a worker
// for longer; the pass is tried again like any failed one.
const joinPassTimeout = 2 * time.Minute

// Reasons of the BackendMetrics condition.
const (
	ReasonBackendJoined      = "Joined"
	ReasonBackendWaiting     = "WaitingForSamples"
	ReasonBackendNoSource    = "NoSource"
	ReasonBackendTooShort    = "StepsTooShort"
	ReasonBackendUnavailable = "SourceUnavailable"
	ReasonBackendNoSeries    = "NoSeries"
	ReasonBackendBadQuery    = "InvalidQuery"
)

// BackendMetrics is the Prometheus the manager reads what the storage
// reported from (--backend-metrics-url).
type BackendMetrics struct {
	// Resolution is the source's sample interval (Harvest polls ONTAP's
	// performance counters every minute by default).
	Resolution time.Duration
	// Timeout bounds each query.
	Timeout time.Duration
	// GiveUp is how long after the last samples are due an unavailable
	// source is retried before the condition says it failed.
	GiveUp time.Duration
	// Retry is how long after a failed query the join is tried again.
	Retry time.Duration
	// Classes are the storage classes read through their own queries
	// (--backend-metrics-classes), by name.
	Classes map[string]*backend.Template
	api     querier
}

// backendSource is where a run's figures are read: the volumes as the
// source names them, at the source's resolution, through Harvest's series
// or a class's own queries.
type backendSource struct {
	target     backend.Target
	resolution time.Duration
	// template, when set, is queried once per volume, for volumes[i]
	// named target.Volumes[i].
	template *backend.Template
	volumes  []backend.Volume
}

// querier is Prometheus' instant query (promv1.API's).
type querier interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error)
}

// NewBackendMetrics reads from the Prometheus at url.
func NewBackendMetrics(url string, resolution, timeout time.Duration) (*BackendMetrics, error) {
	c, err := promapi.NewClient(promapi.Config{Address: url, Client: &http.Client{Timeout: timeout}})
	if err != nil {
		return nil, fmt.Errorf("backend metrics URL %q: %w", url, err)
	}
	if resolution <= 0 || timeout <= 0 {
		return nil, fmt.Errorf("backend metrics: resolution (%v) and timeout (%v) must be positive", resolution, timeout)
	}
	return &BackendMetrics{Resolution: resolution, Timeout: timeout, GiveUp: 5 * time.Minute, Retry: 30 * time.Second, api: promv1.NewAPI(c)}, nil
}

// joinBackend gives an ended run's steps what the storage reported over
// them, once the source has stored the last step's samples: it returns
// how long until it should look again (0: nothing left to do). Whatever
// happens, the run's outcome stays as it is; the BackendMetrics condition
// says what became of the figures.
func (r *Reconciler) joinBackend(ctx context.Context, b *v1alpha1.StorageBenchmark, now time.Time) time.Duration {
	m := r.Backend
	steps := b.Status.Steps
	if m == nil || len(steps) == 0 {
		return 0
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics); c != nil && c.Status != metav1.ConditionUnknown {
		return 0
	}
	// A verdict carries the time it could first be reached, not when this
	// pass reached it, so a status rebuilt after a wipe is the same: the
	// run's end, or when the samples were due.
	ended := now
	if t := b.Status.CompletionTime; t != nil {
		ended = t.Time
	}
	at := ended
	set := func(s metav1.ConditionStatus, reason, msg string) {
		setConditionStatus(b, v1alpha1.ConditionBackendMetrics, s, reason, at, msg)
	}
	src, why := r.backendSource(ctx, b)
	if why != "" {
		set(metav1.ConditionFalse, ReasonBackendNoSource, why)
		return 0
	}
	windows, joinable, due := stepWindows(b, src.resolution)
	if now.Before(due) {
		set(metav1.ConditionUnknown, ReasonBackendWaiting, fmt.Sprintf("the source's samples of the last step are stored by %s", due.UTC().Format(time.RFC3339)))
		return due.Sub(now)
	}
	if due.After(at) { // the samples came after the end
		at = due
	}
	pass, cancel := context.WithTimeout(ctx, joinPassTimeout)
	joined, short, err := m.joinSteps(pass, src, steps, windows, joinable)
	cancel()
	if err != nil {
		reason := ReasonBackendUnavailable
		var perr *promv1.Error
		switch {
		case errors.Is(err, backend.ErrNoSeries):
			reason = ReasonBackendNoSeries
		case errors.As(err, &perr) && perr.Type == promv1.ErrBadData:
			// The query itself is wrong: asking again cannot help.
			set(metav1.ConditionFalse, ReasonBackendBadQuery, err.Error())
			return 0
		}
		if now.Before(due.Add(m.GiveUp)) {
			set(metav1.ConditionUnknown, reason, err.Error()+"; trying again")
			return m.Retry
		}
		set(metav1.ConditionFalse, reason, err.Error())
		return 0
	}
	if joined == 0 {
		set(metav1.ConditionFalse, ReasonBackendTooShort, fmt.Sprintf("every step measured less than twice the source's resolution (%v): no sample lies wholly inside one", src.resolution))
		return 0
	}
	msg := fmt.Sprintf("%d step(s) joined with the series of %d volume(s) at the source's resolution of %v", joined, len(src.target.Volumes), src.resolution)
	if short > 0 {
		msg += fmt.Sprintf("; %d step(s) too short to join (tooShort)", short)
	}
	set(metav1.ConditionTrue, ReasonBackendJoined, msg)
	return 0
}

// joinSteps gives every joinable step its figures and marks the others
// too short; on an error no step keeps figures (a half-joined run would
// read as a whole).
func (m *BackendMetrics) joinSteps(ctx context.Context, src backendSource, steps []v1alpha1.StepStatus, windows []backend.Window, joinable []bool) (joined, short int, err error) {
	for i := range steps {
		if !joinable[i] {
			steps[i].Backend = &v1alpha1.StepBackendStatus{Resolution: metav1.Duration{Duration: src.resolution}, TooShort: true}
			short++
			continue
		}
		f, err := m.figures(ctx, src, windows[i])
		if err != nil {
			for j := range steps {
				steps[j].Backend = nil
			}
			return 0, 0, fmt.Errorf("step %d: %w", i, err)
		}
		steps[i].Backend = backendStatus(f, src.resolution, steps[i].Latency)
		joined++
	}
	return joined, short, nil
}

// stepWindows is each step's window in a source of the given resolution,
// whether it can be joined, and when the last joinable one's samples are
// stored.
func stepWindows(b *v1alpha1.StorageBenchmark, resolution time.Duration) (windows []backend.Window, joinable []bool, due time.Time) {
	measured, ramp := spec.StepTiming(&b.Spec.Load)
	windows, joinable = make([]backend.Window, len(b.Status.Steps)), make([]bool, len(b.Status.Steps))
	for i, st := range b.Status.Steps {
		windows[i], joinable[i] = backend.WindowOf(st.StartTime.Time, ramp, measured, resolution)
		if d := backend.Due(windows[i], resolution); joinable[i] && d.After(due) {
			due = d
		}
	}
	return windows, joinable, due
}

// backendSource is where the figures of b's volumes are read, or why
// there are none: a class with its own queries reads each volume through
// them; otherwise a Trident ONTAP volume (not an economy one, whose
// FlexVol other volumes share) is Harvest's series under its internalName
// and its backend's SVM, and any volume is under its PV's name when its
// class says the source names them so.
func (r *Reconciler) backendSource(ctx context.Context, b *v1alpha1.StorageBenchmark) (backendSource, string) {
	m, s := r.Backend, b.Status.Storage
	if s == nil || len(s.Volumes) == 0 {
		return backendSource{}, "the run recorded no bound volume"
	}
	if s.VolumesOmitted > 0 {
		return backendSource{}, fmt.Sprintf("the run used %d volumes; status names %d, and a sum over some would be wrong", len(s.Volumes)+int(s.VolumesOmitted), len(s.Volumes))
	}
	if tmpl := m.Classes[s.StorageClassName]; tmpl != nil { // ParseClasses names no class ""
		src := backendSource{resolution: tmpl.Resolution, template: tmpl}
		for _, v := range s.Volumes {
			src.target.Volumes = append(src.target.Volumes, v.PersistentVolume)
			src.volumes = append(src.volumes, backend.Volume{PersistentVolume: v.PersistentVolume, Claim: v.Claim, Namespace: b.Namespace,
				StorageClass: s.StorageClassName, InternalName: v.InternalName, VolumeHandle: v.VolumeHandle, Path: v.Path, Node: v.Node})
		}
		return src, ""
	}
	byPV := false
	if s.StorageClassName != "" {
		var sc storagev1.StorageClass
		if err := r.Get(ctx, client.ObjectKey{Name: s.StorageClassName}, &sc); err == nil {
			byPV = sc.Annotations[AnnotationBackendVolumeNames] == "persistentVolume"
		}
	}
	src := backendSource{resolution: m.Resolution}
	if s.Backend != nil {
		src.target.SVM = s.Backend.SVM
	}
	driver := trident.Driver(s.Driver)
	switch {
	case byPV:
		src.target.SVM = ""
	case driver.Economy():
		return src, fmt.Sprintf("%s volumes share a FlexVol with others: Harvest's volume series would count their I/O too", driver)
	case !slices.Contains([]trident.Driver{trident.OntapNAS, trident.OntapSAN, trident.OntapNASFlexGroup}, driver):
		return src, fmt.Sprintf("storage class %q is not served by a Trident ONTAP driver (ontap-nas, ontap-san, ontap-nas-flexgroup), whose volumes Harvest reports, has no queries of its own in --backend-metrics-classes, and does not carry the %s annotation", s.StorageClassName, AnnotationBackendVolumeNames)
	}
	for _, v := range s.Volumes {
		name := v.InternalName
		if byPV {
			name = v.PersistentVolume
		}
		if name == "" {
			return backendSource{}, fmt.Sprintf("volume %s has no internalName in its CSI attributes", v.PersistentVolume)
		}
		src.target.Volumes = append(src.target.Volumes, name)
	}
	return src, ""
}

// figures reads one window's figures; every query is bounded by the
// timeout and by how many series it may return: one per volume.
func (m *BackendMetrics) figures(ctx context.Context, src backendSource, w backend.Window) (backend.Figures, error) {
	got, counts := map[string][]backend.Sample{}, []backend.Sample(nil)
	ask := func(means map[string]string, count string, limit int, volume string) error {
		for metric, q := range means {
			s, err := m.query(ctx, q, w.End, limit, volume)
			if err != nil {
				return err
			}
			got[metric] = append(got[metric], s...)
		}
		s, err := m.query(ctx, count, w.End, limit, volume)
		counts = append(counts, s...)
		return err
	}
	if src.template == nil {
		means, count := backend.Queries(src.target, w)
		if err := ask(means, count, len(src.target.Volumes), ""); err != nil {
			return backend.Figures{}, err
		}
		return backend.Join(src.target, got, counts)
	}
	for i, v := range src.volumes {
		means, count, err := src.template.Queries(v, w)
		if err == nil {
			err = ask(means, count, 1, src.target.Volumes[i])
		}
		if err != nil {
			return backend.Figures{}, err
		}
	}
	return backend.Join(src.target, got, counts)
}

// query evaluates q at ts; more than limit series is an error (the
// queries name each volume exactly, so more means another source, or a
// class's query that is too wide). Each series is the volume its labels
// say, or, when volume is set (a class's query, for one volume), that one.
func (m *BackendMetrics) query(ctx context.Context, q string, ts time.Time, limit int, volume string) ([]backend.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, m.Timeout)
	defer cancel()
	v, _, err := m.api.Query(ctx, q, ts, promv1.WithTimeout(m.Timeout), promv1.WithLimit(uint64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not a vector", q, v.Type())
	}
	if len(vec) > limit {
		return nil, fmt.Errorf("query %s: more than %d series: it reaches more than the volumes' own (two pollers or clusters export them, or a class's query selects too widely)", q, limit)
	}
	out := make([]backend.Sample, len(vec))
	for i, s := range vec {
		out[i] = backend.Sample{Volume: string(s.Metric["volume"]), SVM: string(s.Metric["svm"]), Value: float64(s.Value)}
		if volume != "" {
			out[i] = backend.Sample{Volume: volume, Value: float64(s.Value)}
		}
	}
	return out, nil
}

// backendStatus is one step's backend block; the gap is the clients'
// mean latency over all I/O minus the storage's.
func backendStatus(f backend.Figures, resolution time.Duration, client *v1alpha1.LatencyStatus) *v1alpha1.StepBackendStatus {
	dur := func(d time.Duration) *metav1.Duration {
		if d == 0 {
			return nil
		}
		return &metav1.Duration{Duration: d}
	}
	s := &v1alpha1.StepBackendStatus{
		Resolution:     metav1.Duration{Duration: resolution},
		Samples:        int32(f.Samples),
		IOPS:           roundInt64(f.IOPS()),
		ReadIOPS:       roundInt64(f.ReadIOPS),
		WriteIOPS:      roundInt64(f.WriteIOPS),
		BytesPerSecond: roundInt64(f.BytesPerSecond()),
		Latency:        dur(f.Latency),
		ReadLatency:    dur(f.ReadLatency),
		WriteLatency:   dur(f.WriteLatency),
	}
	if client != nil && f.Latency > 0 {
		s.LatencyGap = ptr.To(metav1.Duration{Duration: client.Mean.Duration - f.Latency})
	}
	return s
}
