package soak

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/schedule"
)

// runName matches a schedule's run name: <schedule>-<Unix minutes>.
var runName = regexp.MustCompile(`^(.+)-([0-9]{8,})$`)

// schedInfo is a schedule as the soak tracks it.
type schedInfo struct {
	ns, name string
	uid      types.UID
	cron     *schedule.Schedule
	created  time.Time
	// successful and failed are its history limits.
	successful, failed int
	// runs: scheduled time (Unix minutes) → the UIDs of the benchmarks
	// the manager created under that run's name.
	runs map[int64][]types.UID
	// last is the latest scheduled time a run was created for.
	last time.Time
	// squatted: times whose run name the hostile tenant took first.
	squatted map[int64]bool
	// over: the runs beyond a history limit at the last check.
	over map[string]bool
	// active: its runs that are running (not being deleted).
	active map[types.UID]string
}

func (si *schedInfo) key() string { return si.ns + "/" + si.name }

// runInfo is a run the manager created, as the informer last saw it,
// while it exists.
type runInfo struct {
	sched    *schedInfo
	name     string
	uid      types.UID
	state    v1alpha1.RunState
	deleting bool
}

// benchInfo is any benchmark, with its runners.
type benchInfo struct {
	ns, name string
	uid      types.UID
	clients  int
	known    bool // seen by the informer
	finished bool
	started  int // runners started
	exited   int // runners that returned
	first    int // runners that got their first order
	created  time.Time
}

// failure is a benchmark that failed.
type failure struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Expected  bool   `json:"expected"`
}

// observer watches the cluster for the checks and the governor.
type observer struct {
	s *soak

	mu        sync.Mutex
	schedules map[string]*schedInfo // ns/name
	byUID     map[types.UID]*schedInfo
	// runs are the runs that exist.
	runs     map[types.UID]*runInfo
	benches  map[string]*benchInfo // ns/name
	failures []failure
	failed   map[types.UID]bool
	// violations by check.
	violations map[string][]string
	// hostile: names the hostile tenant created (ns/name → kind), and
	// the ones it deleted itself; targets whose step record it replaced.
	hostile        map[string]string
	hostileDeleted map[string]bool
	replaced       map[string]int
	madeSim        map[string]time.Time
	// noisy: unfinished noisy benchmarks, and the real-time spans in
	// which there were any.
	noisyActive int
	noisySince  time.Time
	noisySpans  [][2]time.Time
	// historyChecks counts the checks of the history limits.
	historyChecks int
	// created counts the runs created.
	created int
}

// Check names.
const (
	checkOneRun      = "every scheduled time produced exactly one run"
	checkNoFailure   = "no run failed that should not"
	checkHistory     = "history within its limits"
	checkForged      = "forged and squatted benchmarks never taken for runs"
	checkSettled     = "every due time's run created before the end"
	checkNoAnomaly   = "no runner error, nothing stuck"
	checkBuildSwitch = "the build switch happened while a 100-step benchmark ran"
)

func newObserver(s *soak) *observer {
	return &observer{s: s, schedules: map[string]*schedInfo{}, byUID: map[types.UID]*schedInfo{}, runs: map[types.UID]*runInfo{},
		benches: map[string]*benchInfo{}, failed: map[types.UID]bool{}, violations: map[string][]string{},
		hostile: map[string]string{}, hostileDeleted: map[string]bool{}, replaced: map[string]int{},
		madeSim: map[string]time.Time{}}
}

func (o *observer) violate(check, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.violations[check] = append(o.violations[check], msg)
	o.s.logf("VIOLATION (%s): %s", check, msg)
}

// start starts the informers: benchmarks, schedules and the client Jobs
// (whose runners it starts).
func (o *observer) start(ctx context.Context) error {
	c, err := cache.New(o.s.cluster.Config, cache.Options{Scheme: controllers.Scheme(), ByObject: map[client.Object]cache.ByObject{
		&batchv1.Job{}: {Label: labels.SelectorFromSet(labels.Set{exchange.LabelRole: exchange.RoleClient})},
	}})
	if err != nil {
		return err
	}
	o.s.informers = c
	handlers := []struct {
		obj client.Object
		h   toolscache.ResourceEventHandlerFuncs
	}{
		{&v1alpha1.StorageBenchmarkSchedule{}, toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.schedule(obj.(*v1alpha1.StorageBenchmarkSchedule)) },
			UpdateFunc: func(_, obj any) { o.schedule(obj.(*v1alpha1.StorageBenchmarkSchedule)) },
		}},
		{&v1alpha1.StorageBenchmark{}, toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.benchmark(obj.(*v1alpha1.StorageBenchmark), false) },
			UpdateFunc: func(_, obj any) { o.benchmark(obj.(*v1alpha1.StorageBenchmark), false) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if b, ok := obj.(*v1alpha1.StorageBenchmark); ok {
					o.benchmark(b, true)
				}
			},
		}},
		{&batchv1.Job{}, toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { o.s.startRunner(obj.(*batchv1.Job)) },
		}},
	}
	for _, h := range handlers {
		inf, err := c.GetInformer(ctx, h.obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(h.h); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the soak's informers did not sync")
	}
	return nil
}

// schedule registers a schedule and checks its status: history within
// the limits, and no benchmark of the hostile tenant's in it.
func (o *observer) schedule(s *v1alpha1.StorageBenchmarkSchedule) {
	o.mu.Lock()
	defer o.mu.Unlock()
	si := o.schedules[s.Namespace+"/"+s.Name]
	if si == nil {
		cron, err := schedule.Parse(s.Spec.Schedule, ptr.Deref(s.Spec.TimeZone, ""))
		if err != nil {
			o.s.anomaly("schedule %s/%s: %v", s.Namespace, s.Name, err)
			return
		}
		si = &schedInfo{ns: s.Namespace, name: s.Name, uid: s.UID, cron: cron, created: s.CreationTimestamp.Time,
			successful: int(ptr.Deref(s.Spec.SuccessfulRunsHistoryLimit, 3)), failed: int(ptr.Deref(s.Spec.FailedRunsHistoryLimit, 1)),
			runs: map[int64][]types.UID{}, squatted: map[int64]bool{}, over: map[string]bool{}, active: map[types.UID]string{}}
		si.last = si.created
		o.schedules[si.key()] = si
		o.byUID[s.UID] = si
		o.updateScheduleItemLocked(si)
	}
	o.historyChecks++
	if n, limit := len(s.Status.History), si.successful+si.failed+1; n > limit {
		o.violate(checkHistory, "schedule %s: status.history has %d rows, more than its limits allow (%d)", si.key(), n, limit)
	}
	for _, row := range s.Status.History {
		if kind := o.hostile[s.Namespace+"/"+row.Name]; kind != "" {
			o.violate(checkForged, "schedule %s: status.history lists %s, a %s benchmark of the hostile tenant", si.key(), row.Name, kind)
		}
	}
	if a := s.Status.Active; a != nil && o.hostile[s.Namespace+"/"+a.Name] != "" {
		o.violate(checkForged, "schedule %s: status.active is %s, a benchmark of the hostile tenant", si.key(), a.Name)
	}
	if t := s.Status.LastScheduleTime; t != nil && (t.Year() > 2090 || t.Time.Before(si.created)) {
		o.violate(checkForged, "schedule %s: lastScheduleTime %s comes from a forged run", si.key(), t.UTC().Format(time.RFC3339))
	}
}

// benchmark follows every benchmark: runs created (one per name and
// time), failures, deletions, the governor's items, the noisy tenant.
func (o *observer) benchmark(b *v1alpha1.StorageBenchmark, deleted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := b.Namespace + "/" + b.Name
	bi := o.benches[key]
	if bi == nil || bi.uid != b.UID {
		if deleted {
			o.deletedLocked(b, key)
			return
		}
		bi = &benchInfo{ns: b.Namespace, name: b.Name, uid: b.UID, clients: int(b.Spec.Clients.Count), created: time.Now()}
		if old := o.benches[key]; old != nil && old.uid == "" { // its runners came first
			bi.started, bi.exited, bi.first = old.started, old.exited, old.first
		}
		o.benches[key] = bi
		o.createdLocked(b)
	}
	bi.known = true
	finished := meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionComplete) ||
		meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionFailed)
	if finished && !bi.finished {
		bi.finished = true
		if b.Namespace == nsNoisy {
			o.noisyDoneLocked()
		}
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue && !o.failed[b.UID] {
		o.failed[b.UID] = true
		f := failure{Namespace: b.Namespace, Name: b.Name, Reason: c.Reason, Message: c.Message}
		f.Expected = o.hostile[key] == kindTarget && o.replaced[key] > 0 && c.Reason == controllers.ReasonExchangeLost
		o.failures = append(o.failures, f)
		if !f.Expected {
			o.violate(checkNoFailure, "%s failed: %s: %s", key, c.Reason, c.Message)
		}
	}
	if run := o.runs[b.UID]; run != nil && !deleted {
		run.state = v1alpha1.RunStateOf(b)
		run.deleting = b.DeletionTimestamp != nil
		o.runChangedLocked(run)
	}
	if deleted {
		o.deletedLocked(b, key)
		return
	}
	o.updateBenchItemLocked(bi)
}

// createdLocked records a benchmark's creation: a run when its name is a
// run's name, its label names its schedule, and the hostile tenant did
// not create it.
func (o *observer) createdLocked(b *v1alpha1.StorageBenchmark) {
	key := b.Namespace + "/" + b.Name
	o.s.steps.created(b.Namespace, b.Name, time.Now())
	if b.Namespace == nsNoisy {
		if o.noisyActive == 0 {
			o.noisySince = time.Now()
		}
		o.noisyActive++
	}
	if o.hostile[key] != "" {
		return
	}
	m := runName.FindStringSubmatch(b.Name)
	if m == nil {
		return
	}
	si := o.schedules[b.Namespace+"/"+m[1]]
	if si == nil || b.Labels[controllers.LabelSchedule] != si.name {
		return
	}
	minutes, _ := strconv.ParseInt(m[2], 10, 64)
	at := time.Unix(minutes*60, 0).UTC()
	o.created++
	si.runs[minutes] = append(si.runs[minutes], b.UID)
	if n := len(si.runs[minutes]); n > 1 {
		o.violate(checkOneRun, "schedule %s: %d runs created for %s (%s)", si.key(), n, at.Format(time.RFC3339), b.Name)
	}
	ref := metav1.GetControllerOf(b)
	if ref == nil || ref.UID != si.uid {
		o.violate(checkOneRun, "run %s is not controlled by its schedule", key)
	}
	if got := b.Annotations[controllers.AnnotationScheduledTime]; got != at.Format(time.RFC3339) {
		o.violate(checkOneRun, "run %s: scheduled-time annotation %q, its name says %s", key, got, at.Format(time.RFC3339))
	}
	if at.After(si.last) {
		si.last = at
	}
	run := &runInfo{sched: si, name: b.Name, uid: b.UID, state: v1alpha1.RunStateOf(b), deleting: b.DeletionTimestamp != nil}
	o.runs[b.UID] = run
	o.runChangedLocked(run)
}

// runChangedLocked keeps the schedule's running runs and its clock item
// up to date.
func (o *observer) runChangedLocked(run *runInfo) {
	si := run.sched
	_, was := si.active[run.uid]
	is := run.state == v1alpha1.RunRunning && !run.deleting && o.runs[run.uid] != nil
	if is {
		si.active[run.uid] = run.name
	} else {
		delete(si.active, run.uid)
	}
	if was != is {
		o.updateScheduleItemLocked(si)
	}
}

func (o *observer) deletedLocked(b *v1alpha1.StorageBenchmark, key string) {
	if bi := o.benches[key]; bi != nil && bi.uid == b.UID {
		delete(o.benches, key)
		o.s.gov.remove("bench/" + key)
		if b.Namespace == nsNoisy && !bi.finished {
			o.noisyDoneLocked()
		}
	}
	if kind := o.hostile[key]; kind != "" && !o.hostileDeleted[key] {
		o.violate(checkForged, "%s, a %s benchmark of the hostile tenant, was deleted, and not by the tenant", key, kind)
	}
	if run := o.runs[b.UID]; run != nil {
		delete(o.runs, b.UID)
		o.runChangedLocked(run)
	}
}

func (o *observer) noisyDoneLocked() {
	o.noisyActive--
	if o.noisyActive == 0 {
		o.noisySpans = append(o.noisySpans, [2]time.Time{o.noisySince, time.Now()})
	}
}

// noisyAt reports whether the noisy tenant was working at real time t.
func (o *observer) noisyAt(t time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.noisyActive > 0 && !t.Before(o.noisySince) {
		return true
	}
	for _, sp := range o.noisySpans {
		if !t.Before(sp[0]) && !t.After(sp[1]) {
			return true
		}
	}
	return false
}

// benchRunner counts a benchmark's runners started and exited.
func (s *soak) benchRunner(ns, name string, started, exited int) {
	o := s.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	key := ns + "/" + name
	bi := o.benches[key]
	if bi == nil {
		bi = &benchInfo{ns: ns, name: name}
		o.benches[key] = bi
	}
	bi.started += started
	bi.exited += exited
	o.updateBenchItemLocked(bi)
}

// firstOrder counts the clients of a benchmark that got their first order.
func (s *soak) firstOrder(ns, name string) {
	o := s.obs
	o.mu.Lock()
	bi := o.benches[ns+"/"+name]
	if bi == nil {
		o.mu.Unlock()
		return
	}
	bi.first++
	clients, first := bi.clients, bi.first
	o.mu.Unlock()
	s.steps.firstOrder(ns, name, clients, first, time.Now())
}

// updateBenchItemLocked holds the clock while a benchmark works without
// its runners: before they all started (the manager creating what the run
// needs), and once they all exited until status says the run ended.
func (o *observer) updateBenchItemLocked(bi *benchInfo) {
	key := "bench/" + bi.ns + "/" + bi.name
	switch {
	case !bi.known || bi.finished:
		o.s.gov.remove(key)
	case bi.started < bi.clients:
		o.s.gov.working(key, fmt.Sprintf("%d/%d runners started", bi.started, bi.clients))
	case bi.exited >= bi.started:
		o.s.gov.working(key, "runners done, run not ended")
	default:
		o.s.gov.remove(key)
	}
}

// updateScheduleItemLocked stops the clock at the schedule's next time
// not yet run (U, a second after it), when no run of it is going; with
// one going (concurrencyPolicy Forbid holds U until it ends), a second
// before the time after U, which would replace U.
func (o *observer) updateScheduleItemLocked(si *schedInfo) {
	u := si.cron.Next(si.last)
	for si.squatted[u.Unix()/60] {
		u = si.cron.Next(u)
	}
	active := ""
	for _, name := range si.active {
		active = name
		break
	}
	key := "schedule/" + si.key()
	if active == "" {
		o.s.gov.set(key, u.Add(time.Second), "run for "+u.Format(time.RFC3339)+" not created")
		return
	}
	o.s.gov.set(key, si.cron.Next(u).Add(-time.Second), fmt.Sprintf("run for %s waits for %s", u.Format(time.RFC3339), active))
}

// squat records that the hostile tenant took the name of si's run at t.
func (o *observer) squat(ns, name string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if si := o.schedules[ns+"/"+name]; si != nil {
		si.squatted[t.Unix()/60] = true
		o.updateScheduleItemLocked(si)
	}
}

// hostileCreated records a benchmark the hostile tenant creates (before
// it is created); hostileDeleting one it deletes.
func (o *observer) hostileCreated(ns, name, kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hostile[ns+"/"+name] = kind
}

func (o *observer) hostileDeleting(ns, name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hostileDeleted[ns+"/"+name] = true
}

// hostileKind is the kind of a benchmark the hostile tenant created ("":
// not one).
func (o *observer) hostileKind(ns, name string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hostile[ns+"/"+name]
}

// made records the simulated time a benchmark was made; madeAt returns it.
func (o *observer) made(ns, name string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.madeSim[ns+"/"+name] = at
}

func (o *observer) madeAt(ns, name string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.madeSim[ns+"/"+name]
}

// nextOf is the first time of schedule ns/name after t.
func (o *observer) nextOf(ns, name string, t time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.schedules[ns+"/"+name].cron.Next(t)
}

// scheduleCount is how many schedules the informer has seen.
func (o *observer) scheduleCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.schedules)
}

func (o *observer) recordReplaced(ns, name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.replaced[ns+"/"+name]++
}

// checkHistory checks the kept runs of every schedule against its limits:
// completed ≤ successful, failed ≤ failed, running ≤ 1. A run over a limit
// is reported when it still is at the next check (the schedule trims
// right after a run ends, in the reconcile the run's end wakes).
func (o *observer) checkHistory() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.historyChecks++
	kept := map[*schedInfo]map[v1alpha1.RunState][]string{}
	for _, run := range o.runs {
		if run.deleting {
			continue
		}
		if kept[run.sched] == nil {
			kept[run.sched] = map[v1alpha1.RunState][]string{}
		}
		kept[run.sched][run.state] = append(kept[run.sched][run.state], run.name)
	}
	for _, si := range o.schedules {
		over := map[string]bool{}
		for state, limit := range map[v1alpha1.RunState]int{v1alpha1.RunComplete: si.successful, v1alpha1.RunFailed: si.failed, v1alpha1.RunRunning: 1} {
			names := kept[si][state]
			if len(names) <= limit {
				continue
			}
			sort.Strings(names) // <schedule>-<minutes>: oldest first
			again := true
			for _, n := range names[:len(names)-limit] {
				over[n] = true
				again = again && si.over[n]
			}
			if again {
				o.violate(checkHistory, "schedule %s keeps %d %s runs (limit %d) over two checks: %v", si.key(), len(names), state, limit, names)
			}
		}
		si.over = over
	}
}

// missing returns, per schedule, the scheduled times up to end that have
// no run and were not squatted, and the runs created for times that
// should have none.
func (o *observer) missing(end time.Time) (missing, unexpected []string, expected int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, si := range o.schedules {
		want := map[int64]bool{}
		for t := si.cron.Next(si.created); !t.IsZero() && !t.After(end); t = si.cron.Next(t) {
			m := t.Unix() / 60
			if si.squatted[m] {
				continue
			}
			want[m] = true
			expected++
			if len(si.runs[m]) == 0 {
				missing = append(missing, fmt.Sprintf("%s at %s", si.key(), t.Format(time.RFC3339)))
			}
		}
		for m := range si.runs {
			if !want[m] {
				unexpected = append(unexpected, fmt.Sprintf("%s: run %s-%d (%s)", si.key(), si.name, m,
					time.Unix(m*60, 0).UTC().Format(time.RFC3339)))
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(unexpected)
	return missing, unexpected, expected
}

// allCreated reports whether every schedule has its runs up to end.
func (o *observer) allCreated(end time.Time) bool {
	missing, _, _ := o.missing(end)
	return len(missing) == 0
}

// orphans counts the client pods whose Job is gone and the operator's
// ConfigMaps whose benchmark is gone: what the garbage collector has yet
// to delete. It must stay small: the manager caches the operator's
// labelled objects, and a real cluster's garbage collector keeps up.
func (s *soak) orphans(ctx context.Context) (int, error) {
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := s.k8s.List(ctx, pods, client.MatchingLabels{exchange.LabelRole: exchange.RoleClient}); err != nil {
		return 0, err
	}
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := s.k8s.List(ctx, cms, client.MatchingLabels{exchange.LabelManagedBy: exchange.ManagedBy}); err != nil {
		return 0, err
	}
	var jobs batchv1.JobList
	if err := s.informers.List(ctx, &jobs); err != nil {
		return 0, err
	}
	var benches v1alpha1.StorageBenchmarkList
	if err := s.informers.List(ctx, &benches); err != nil {
		return 0, err
	}
	alive := map[types.UID]bool{}
	for i := range jobs.Items {
		alive[jobs.Items[i].UID] = true
	}
	for i := range benches.Items {
		alive[benches.Items[i].UID] = true
	}
	n := 0
	for _, list := range [][]metav1.PartialObjectMetadata{pods.Items, cms.Items} {
		for i := range list {
			if ref := metav1.GetControllerOfNoCopy(&list[i]); ref != nil && !alive[ref.UID] && list[i].CreationTimestamp.Time.Before(time.Now().Add(-5*time.Second)) {
				n++
			}
		}
	}
	return n, nil
}
