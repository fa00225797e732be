package soak

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/benchmarkschedule"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/harness"
)

// The manager's settings, on the simulated clock: generous enough that
// real latencies (a reconcile, an API call, a restart), multiplied by the
// factor, always fit.
const (
	startLead        = 30 * time.Second
	nextStepLead     = 30 * time.Second
	resultGrace      = 6 * time.Hour
	readyTimeout     = 48 * time.Hour
	claimBindTimeout = 48 * time.Hour
)

// The workload's namespaces, class and sizes.
const (
	class     = "soak"
	nsQuiet   = "quiet"
	nsOther   = "tenant-b"
	nsNoisy   = "noisy"
	nsHostile = "hostile"
	// victim is the hostile tenant's own schedule.
	victim = "victim"
	// longQuiet and longOther are the two 100-step benchmarks.
	longQuiet = "long-quiet"
	longOther = "long-b"
	longSteps = 100

	noisyBenchmarks = 20
	noisyClients    = 10
	noisySteps      = 6
	noisyStep       = 30 * time.Minute

	// Kinds of the hostile tenant's benchmarks.
	kindForgedFuture = "forged run (scheduled 2099)"
	kindForgedPast   = "forged run (scheduled 2001)"
	kindSquatForged  = "squatter (a forged run under an upcoming run's name)"
	kindSquatPlain   = "squatter (a plain benchmark under an upcoming run's name)"
	kindTarget       = "record target"
	// replacements is how often the hostile tenant replaces a target's
	// step record; recordBytes is the size of its forged record.
	replacements = 6
	recordBytes  = 900 * 1000
)

var teams = []string{"team-a", "team-b", "team-c", "team-d"}

// spec is a small benchmark: clients × 2 fio jobs on one shared volume,
// rate steps of step each after ramp.
func spec(clients int32, steps []int64, step, ramp time.Duration) v1alpha1.StorageBenchmarkSpec {
	return v1alpha1.StorageBenchmarkSpec{
		Storage: v1alpha1.StorageSpec{StorageClassName: ptr.To(class), Size: resource.MustParse("1Gi"),
			Sharing: v1alpha1.SharingShared, AccessMode: corev1.ReadWriteMany},
		Clients:  v1alpha1.ClientsSpec{Count: clients, JobsPerClient: 2},
		Workload: v1alpha1.WorkloadSpec{Profile: "oltp", WorkingSetPerClient: ptr.To(resource.MustParse("8Mi"))},
		Load: v1alpha1.LoadSpec{Rate: &v1alpha1.RateSteps{Steps: steps},
			StepDuration: metav1.Duration{Duration: step}, RampTime: &metav1.Duration{Duration: ramp}},
	}
}

// schedules are the soak's schedules: in each team's namespace one every
// 10 minutes and four hourly, on the hour, with
// small templates of 1–2 clients and 1–3 steps, a few comparing with
// their 3 previous runs; and the hostile tenant's own, hourly.
func schedules() []*v1alpha1.StorageBenchmarkSchedule {
	var out []*v1alpha1.StorageBenchmarkSchedule
	for i, ns := range teams {
		for j := range 5 {
			name, cron := fmt.Sprintf("%s-hourly-%d", ns, j), "0 * * * *"
			steps := []int64{500, 1000, 1500}[:1+(i+j)%3]
			step := []time.Duration{time.Minute, 2 * time.Minute, 90 * time.Second}[(i+2*j)%3]
			if j == 0 {
				name, cron = ns+"-every10m", "*/10 * * * *"
				steps, step = []int64{500, 1000}[:1+i%2], time.Minute
			}
			ramp := time.Duration((i+j)%2) * 5 * time.Second
			clients := int32(1)
			if (i+j)%4 == 0 {
				clients = 2
			}
			b := spec(clients, steps, step, ramp)
			if (i+j)%3 == 0 {
				b.Regression = &v1alpha1.RegressionSpec{Baseline: v1alpha1.RegressionBaseline{PreviousRun: &v1alpha1.PreviousRunBaseline{Runs: 3}}}
			}
			limits := [][2]int32{{3, 1}, {2, 1}, {5, 2}}[(i+j)%3]
			out = append(out, &v1alpha1.StorageBenchmarkSchedule{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: cron,
					SuccessfulRunsHistoryLimit: ptr.To(limits[0]), FailedRunsHistoryLimit: ptr.To(limits[1]),
					Template: v1alpha1.StorageBenchmarkTemplate{
						Metadata: v1alpha1.TemplateMetadata{Labels: map[string]string{"team": ns}},
						Spec:     b}},
			})
		}
	}
	out = append(out, &v1alpha1.StorageBenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsHostile, Name: victim},
		Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 * * * *",
			SuccessfulRunsHistoryLimit: ptr.To(int32(2)), FailedRunsHistoryLimit: ptr.To(int32(1)),
			Template: v1alpha1.StorageBenchmarkTemplate{Spec: spec(1, []int64{500}, time.Minute, 0)}},
	})
	return out
}

// setUp creates the namespaces, the class and the schedules.
func (s *soak) setUp(ctx context.Context) error {
	for _, ns := range append(append([]string{}, teams...), nsQuiet, nsOther, nsNoisy, nsHostile) {
		if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	immediate := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: harness.ProvisionerName,
		VolumeBindingMode: &immediate, ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete)}
	if err := s.k8s.Create(ctx, sc); err != nil {
		return err
	}
	for _, sch := range schedules() {
		if err := s.k8s.Create(ctx, sch); err != nil {
			return fmt.Errorf("creating schedule %s/%s: %w", sch.Namespace, sch.Name, err)
		}
	}
	return nil
}

// event is something the soak does at a simulated instant.
type event struct {
	at   time.Time
	what string
	do   func(ctx context.Context) error
}

// timetable is what the soak does when: the manager's restarts (every
// simulated day; a single day restarts at 8 h and 16 h), the second build
// from the middle on, the two 100-step benchmarks, the noisy tenant's
// periods and the hostile tenant's forgeries, squats and record targets.
func (s *soak) timetable() []event {
	day := 24 * time.Hour
	days := s.cfg.days
	at := func(d time.Duration) time.Time { return s.start.Add(d) }
	var ev []event
	// Restarts, and the build switch.
	var restarts []time.Duration
	switchAt := 0
	if days == 1 {
		restarts, switchAt = []time.Duration{8 * time.Hour, 16 * time.Hour}, 1
	} else {
		for k := 1; k < days; k++ {
			restarts = append(restarts, time.Duration(k)*day)
		}
		switchAt = (days+1)/2 - 1
	}
	for i, d := range restarts {
		build := 0
		if i >= switchAt {
			build = 1
		}
		isSwitch := i == switchAt
		ev = append(ev, event{at(d), fmt.Sprintf("restart the manager (%s)", builds[build]), func(ctx context.Context) error {
			return s.restart(build, isSwitch)
		}})
	}
	// The 100-step benchmarks: the quiet tenant's from the first half
	// hour, the other from half a day before the build switch.
	otherAt := 12 * time.Hour
	if days > 1 {
		otherAt = restarts[switchAt] - 12*time.Hour
	}
	ev = append(ev,
		event{at(30 * time.Minute), "start " + longQuiet, func(ctx context.Context) error { return s.startLong(ctx, nsQuiet, longQuiet, 2, true) }},
		event{at(otherAt), "start " + longOther, func(ctx context.Context) error { return s.startLong(ctx, nsOther, longOther, 3, false) }},
	)
	// The noisy tenant: 20 benchmarks × 10 clients at 3 h and 13 h of
	// every other day (a single day: at 3 h only).
	n := 0
	hours := []time.Duration{3 * time.Hour, 13 * time.Hour}
	if days == 1 {
		hours = hours[:1]
	}
	for d := 0; d < days; d += 2 {
		for _, h := range hours {
			if t := time.Duration(d)*day + h; t+4*time.Hour <= time.Duration(days)*day {
				period := n
				ev = append(ev, event{at(t), fmt.Sprintf("noisy period %d", period), func(ctx context.Context) error { return s.noisyPeriod(ctx, period) }})
				n++
			}
		}
	}
	// The hostile tenant, throughout: forged runs and squats every 2
	// hours, a record target every 4 hours.
	for h, k := time.Hour, 0; h < time.Duration(days)*day; h, k = h+2*time.Hour, k+1 {
		k := k
		ev = append(ev, event{at(h), fmt.Sprintf("hostile forgeries %d", k), func(ctx context.Context) error { return s.forge(ctx, k) }})
		if k%2 == 1 {
			ev = append(ev, event{at(h + 5*time.Minute), fmt.Sprintf("hostile record target %d", k/2), func(ctx context.Context) error {
				return s.target(ctx, k/2)
			}})
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at.Before(ev[j].at) })
	return ev
}

// runTimetable does the events in order, each at its instant: the clock
// stops there (the governor's item) until it is done.
func (s *soak) runTimetable(ctx context.Context, events []event) error {
	for _, e := range events {
		s.gov.set("timetable", e.at, "next: "+e.what)
		if err := s.clock.WaitUntil(ctx, e.at); err != nil {
			return err
		}
		s.gov.working("timetable", e.what)
		began := time.Now()
		if err := e.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", e.what, err)
		}
		if d := time.Since(began); d > 5*time.Second {
			s.logf("%s took %s", e.what, d.Round(time.Millisecond))
		}
	}
	s.gov.remove("timetable")
	return nil
}

// restart stops the manager and starts build; the clock stands still
// meanwhile (the timetable's item is working).
func (s *soak) restart(build int, isSwitch bool) error {
	began := time.Now()
	if err := s.stopManager(); err != nil {
		return err
	}
	if err := s.startManager(build); err != nil {
		return err
	}
	s.mu.Lock()
	s.restarts = append(s.restarts, restartInfo{Sim: s.clock.Now(), Build: builds[build], Took: time.Since(began)})
	s.mu.Unlock()
	if isSwitch {
		sw := &switchInfo{Sim: s.clock.Now(), From: builds[0], To: builds[build]}
		for _, l := range []struct{ ns, name string }{{nsQuiet, longQuiet}, {nsOther, longOther}} {
			var b v1alpha1.StorageBenchmark
			if err := s.k8s.Get(context.Background(), client.ObjectKey{Namespace: l.ns, Name: l.name}, &b); err != nil {
				continue
			}
			if v1alpha1.RunStateOf(&b) == v1alpha1.RunRunning {
				sw.Running = append(sw.Running, fmt.Sprintf("%s/%s in step %d of %d", l.ns, l.name, s.steps.currentStep(l.ns, l.name)+1, longSteps))
			}
		}
		s.mu.Lock()
		s.buildSwitch = sw
		s.mu.Unlock()
		s.logf("build switch to %s; running: %v", builds[build], sw.Running)
	}
	return nil
}

// startLong creates a 100-step benchmark of 1-hour steps: with stop
// rules it is conducted step after step (each order follows the record of
// the step before: its step overhead is measured), without them its
// orders are written ahead.
func (s *soak) startLong(ctx context.Context, ns, name string, clients int32, lockstep bool) error {
	steps := make([]int64, longSteps)
	for k := range steps {
		steps[k] = int64(k+1) * 200
	}
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: spec(clients, steps, time.Hour, 0)}
	if lockstep {
		// A latency limit no step reaches: a stop rule, so no order is
		// written ahead.
		b.Spec.Load.Stop = &v1alpha1.StopRules{Latency: &v1alpha1.LatencyStop{
			LatencySelector: v1alpha1.LatencySelector{Metric: "p99", Operation: "read"}, Limit: metav1.Duration{Duration: time.Hour}}}
		s.steps.measure(ns, name)
	}
	return s.k8s.Create(ctx, b)
}

// noisyPeriod creates the noisy tenant's 20 benchmarks of 10 clients,
// which it deletes once they all ended.
func (s *soak) noisyPeriod(ctx context.Context, period int) error {
	var names []string
	for i := range noisyBenchmarks {
		steps := make([]int64, noisySteps)
		for k := range steps {
			steps[k] = int64(k+1) * 1000
		}
		b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: nsNoisy, Name: fmt.Sprintf("noisy-%d-%02d", period, i)},
			Spec: spec(noisyClients, steps, noisyStep, 0)}
		if err := s.k8s.Create(ctx, b); err != nil {
			return err
		}
		names = append(names, b.Name)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deleteWhenEnded(nsNoisy, names, nil)
	}()
	return nil
}

// deleteWhenEnded deletes the benchmarks once they all ended (polling the
// informer's view every half second), telling the observer first when
// hostile.
func (s *soak) deleteWhenEnded(ns string, names []string, before func(name string)) {
	for s.ctx.Err() == nil {
		ended := 0
		for _, name := range names {
			var b v1alpha1.StorageBenchmark
			if err := s.informers.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, &b); err != nil || v1alpha1.RunStateOf(&b) != v1alpha1.RunRunning {
				ended++
			}
		}
		if ended == len(names) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, name := range names {
		if before != nil {
			before(name)
		}
		b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := s.k8s.Delete(s.ctx, b, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) && s.ctx.Err() == nil {
			s.anomaly("deleting %s/%s: %v", ns, name, err)
		}
	}
}

// forge is the hostile tenant's round k: two forged runs of its schedule
// (its label, a controller reference to its UID, a scheduled time in
// 2099 and one in 2001, made-up token and signature), and a squat of an
// upcoming run's name (a forged run under the name, or a plain
// benchmark). It deletes its own older forgeries.
func (s *soak) forge(ctx context.Context, k int) error {
	var sched v1alpha1.StorageBenchmarkSchedule
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: nsHostile, Name: victim}, &sched); err != nil {
		return err
	}
	ref := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmarkSchedule", Name: victim,
		UID: sched.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	forged := func(name, kind string, at time.Time) *v1alpha1.StorageBenchmark {
		b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: nsHostile, Name: name,
			Labels: map[string]string{controllers.LabelSchedule: victim},
			Annotations: map[string]string{controllers.AnnotationScheduledTime: at.UTC().Format(time.RFC3339),
				controllers.AnnotationRunToken:     "bm90IGEgdG9rZW4gb2YgdGhlIG1hbmFnZXIncw",
				controllers.AnnotationRunSignature: "bm90IGEgc2lnbmF0dXJlIG9mIHRoZSBtYW5hZ2VyJ3M"},
			OwnerReferences: []metav1.OwnerReference{ref}},
			Spec: spec(1, []int64{500}, 30*time.Second, 0)}
		s.obs.hostileCreated(nsHostile, name, kind)
		return b
	}
	now := s.clock.Now()
	// An upcoming time, far enough ahead that the manager has not created
	// its run (the clock stands still while the tenant works): a forged
	// run under its run's name in even rounds, a plain benchmark in odd
	// ones.
	t := now
	if l := sched.Status.LastScheduleTime; l != nil && l.After(t) {
		t = l.Time
	}
	t = s.obs.nextOf(nsHostile, victim, t.Add(20*time.Minute))
	var squat *v1alpha1.StorageBenchmark
	if k%2 == 0 {
		squat = forged(benchmarkschedule.RunName(victim, t), kindSquatForged, t)
	} else {
		squat = &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: nsHostile, Name: benchmarkschedule.RunName(victim, t)},
			Spec: spec(1, []int64{500}, 30*time.Second, 0)}
		s.obs.hostileCreated(nsHostile, squat.Name, kindSquatPlain)
	}
	s.obs.squat(nsHostile, victim, t)
	objs := []*v1alpha1.StorageBenchmark{
		forged(fmt.Sprintf("%s-forged-%d-future", victim, k), kindForgedFuture, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)),
		forged(fmt.Sprintf("%s-forged-%d-past", victim, k), kindForgedPast, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)),
		squat,
	}
	for _, b := range objs {
		if err := s.k8s.Create(ctx, b); err != nil {
			return fmt.Errorf("the hostile tenant creating %s: %w", b.Name, err)
		}
	}
	// Its own cleanup: forgeries of two rounds before, squats an hour
	// after their time, record targets 8 hours after they were made.
	var list v1alpha1.StorageBenchmarkList
	if err := s.k8s.List(ctx, &list, client.InNamespace(nsHostile)); err != nil {
		return err
	}
	for i := range list.Items {
		b := &list.Items[i]
		kind := s.obs.hostileKind(nsHostile, b.Name)
		old := false
		switch kind {
		case kindForgedFuture, kindForgedPast:
			old = !strings.HasPrefix(b.Name, fmt.Sprintf("%s-forged-%d-", victim, k)) && !strings.HasPrefix(b.Name, fmt.Sprintf("%s-forged-%d-", victim, k-1))
		case kindSquatForged, kindSquatPlain:
			m := runName.FindStringSubmatch(b.Name)
			var minutes int64
			_, _ = fmt.Sscan(m[2], &minutes)
			old = time.Unix(minutes*60, 0).Add(time.Hour).Before(now)
		case kindTarget:
			old = s.obs.madeAt(nsHostile, b.Name).Add(8*time.Hour).Before(now) && v1alpha1.RunStateOf(b) != v1alpha1.RunRunning
		}
		if !old || kind == "" || b.DeletionTimestamp != nil {
			continue
		}
		s.obs.hostileDeleting(nsHostile, b.Name)
		if err := s.k8s.Delete(ctx, b, client.Preconditions{UID: &b.UID}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// target is the hostile tenant's record target k: a benchmark of its own
// whose first step record it replaces, once recorded, six times: deleted
// and created again with ~0.9 MB of valid JSON and a controller
// reference carrying the benchmark's UID.
func (s *soak) target(ctx context.Context, k int) error {
	name := fmt.Sprintf("target-%d", k)
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: nsHostile, Name: name},
		Spec: spec(1, []int64{500, 1000, 1500, 2000}, 20*time.Minute, 0)}
	s.obs.hostileCreated(nsHostile, name, kindTarget)
	s.obs.made(nsHostile, name, s.clock.Now())
	if err := s.k8s.Create(ctx, b); err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.replaceRecord(nsHostile, name); err != nil && s.ctx.Err() == nil {
			s.anomaly("the hostile tenant replacing %s's record: %v", name, err)
		}
	}()
	return nil
}

func (s *soak) replaceRecord(ns, name string) error {
	ctx := s.ctx
	key := client.ObjectKey{Namespace: ns, Name: exchange.StepName(name, 0)}
	var rec corev1.ConfigMap
	for {
		err := s.k8s.Get(ctx, key, &rec)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		var b v1alpha1.StorageBenchmark
		if err := s.informers.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &b); err == nil && v1alpha1.RunStateOf(&b) != v1alpha1.RunRunning {
			return nil // ended before its first step was recorded
		}
		time.Sleep(20 * time.Millisecond)
	}
	size := 0
	for k, v := range rec.Data {
		size += len(k) + len(v)
	}
	pad := max(0, recordBytes-size)
	data := map[string]string{"padding.json": `{"padding":"` + strings.Repeat("x", pad) + `"}`}
	for k, v := range rec.Data {
		data[k] = v
	}
	labels, owners := rec.Labels, rec.OwnerReferences
	for range replacements {
		s.obs.recordReplaced(ns, name)
		if err := s.k8s.Delete(ctx, &rec, client.Preconditions{UID: &rec.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name, Labels: labels, OwnerReferences: owners},
			Data: data}
		err := s.k8s.Create(ctx, forged)
		switch {
		case apierrors.IsAlreadyExists(err):
			// The manager recorded the step again from the clients'
			// results in between (its order was not promoted yet):
			// replace that one next.
			if err := s.k8s.Get(ctx, key, &rec); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		case err != nil:
			return err
		default:
			rec = *forged
		}
	}
	return nil
}
