package integration

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/controllers/benchmarkschedule"
	"github.com/storagebench/storagebench/internal/schedule"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The schedule controller's clock is scheduleClock, which these specs move;
// after each move they touch the schedule so that it is reconciled (a
// fake clock does not wake a requeue).
var _ = Describe("A StorageBenchmarkSchedule", func() {
	ctx := context.Background()
	// Waits long enough for a loaded machine; the specs never wait for a
	// scheduled time itself, only for the controller.
	const wait = 30 * time.Second

	// newSchedule creates an hourly schedule whose runs use class (a
	// missing class fails a run at once; classNobody keeps it preparing
	// until the claim-bind timeout), and returns it with its first two
	// scheduled times.
	newSchedule := func(name, class string, mutate func(*v1alpha1.StorageBenchmarkSchedule)) (*v1alpha1.StorageBenchmarkSchedule, time.Time, time.Time) {
		GinkgoHelper()
		ns := newNamespace()
		tmpl := benchmark(ns, "x", func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.StorageClassName = ptr.To(class) })
		s := &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.StorageBenchmarkScheduleSpec{Schedule: "0 * * * *",
				Template: v1alpha1.StorageBenchmarkTemplate{Metadata: v1alpha1.TemplateMetadata{Labels: map[string]string{"team": "storage"}}, Spec: tmpl.Spec}}}
		if mutate != nil {
			mutate(s)
		}
		scheduleClock.SetTime(time.Now())
		Expect(k8s.Create(ctx, s)).To(Succeed())
		sched, err := schedule.Parse(s.Spec.Schedule, "")
		Expect(err).NotTo(HaveOccurred())
		first := sched.Next(s.CreationTimestamp.Time)
		return s, first, sched.Next(first)
	}
	poke := func(s *v1alpha1.StorageBenchmarkSchedule) {
		GinkgoHelper()
		patch := client.RawPatch("application/merge-patch+json",
			[]byte(fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":%q}}}`, time.Now().Format(time.RFC3339Nano))))
		Expect(k8s.Patch(ctx, s.DeepCopy(), patch)).To(Succeed())
	}
	at := func(s *v1alpha1.StorageBenchmarkSchedule, t time.Time) {
		GinkgoHelper()
		scheduleClock.SetTime(t)
		poke(s)
	}
	runs := func(s *v1alpha1.StorageBenchmarkSchedule) []v1alpha1.StorageBenchmark {
		GinkgoHelper()
		var l v1alpha1.StorageBenchmarkList
		Expect(k8s.List(ctx, &l, client.InNamespace(s.Namespace))).To(Succeed())
		var out []v1alpha1.StorageBenchmark
		for _, b := range l.Items {
			if b.DeletionTimestamp.IsZero() {
				out = append(out, b)
			}
		}
		return out
	}
	names := func(s *v1alpha1.StorageBenchmarkSchedule) func() []string {
		return func() []string {
			var n []string
			for _, b := range runs(s) {
				n = append(n, b.Name)
			}
			return n
		}
	}
	status := func(s *v1alpha1.StorageBenchmarkSchedule) v1alpha1.StorageBenchmarkScheduleStatus {
		var cur v1alpha1.StorageBenchmarkSchedule
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
		return cur.Status
	}

	It("creates a run at each scheduled time, named after it and owned, and none between or twice", func() {
		s, first, second := newSchedule("hourly", "absent", nil)
		at(s, first.Add(-time.Minute))
		Eventually(func() *metav1.Time { return status(s).NextScheduleTime }, wait).Should(HaveValue(
			WithTransform(func(t metav1.Time) time.Time { return t.Time }, BeTemporally("==", first))))
		Consistently(names(s), 2*time.Second).Should(BeEmpty())

		at(s, first.Add(time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
		b := runs(s)[0]
		Expect(metav1.GetControllerOf(&b)).NotTo(BeNil())
		Expect(metav1.GetControllerOf(&b).UID).To(Equal(s.UID))
		Expect(b.Labels).To(HaveKeyWithValue(controllers.LabelSchedule, s.Name))
		Expect(b.Labels).To(HaveKeyWithValue("team", "storage"))
		Expect(b.Annotations).To(HaveKeyWithValue(controllers.AnnotationScheduledTime, first.UTC().Format(time.RFC3339)))
		Eventually(func() *metav1.Time { return status(s).LastScheduleTime }, wait).ShouldNot(BeNil())
		Expect(status(s).LastScheduleTime.Time).To(BeTemporally("==", first))
		var cur v1alpha1.StorageBenchmarkSchedule
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
		Expect(kstatusOf(&cur, "StorageBenchmarkSchedule")).To(Equal(kstatus.CurrentStatus), "kstatus (Flux) reads a running schedule as Current")
		Expect(argoHealth(&cur, "StorageBenchmarkSchedule")).To(HavePrefix("Healthy: next run at"))

		poke(s)
		Consistently(names(s), 2*time.Second).Should(HaveLen(1))
		at(s, second.Add(time.Second))
		Eventually(names(s), wait).Should(ContainElement(benchmarkschedule.RunName(s.Name, second)))
	})

	It("Forbid: a run due while one is running starts when it ends", func() {
		s, first, second := newSchedule("forbid", classNobody, nil)
		at(s, first.Add(time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
		Eventually(func() *v1alpha1.ScheduledRunRef { return status(s).Active }, wait).ShouldNot(BeNil())
		at(s, second.Add(time.Second))
		Consistently(names(s), 3*time.Second).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
		By("the running one fails at the claim-bind timeout; the due run then starts")
		Eventually(names(s), testBindWait+time.Minute).Should(ConsistOf(
			benchmarkschedule.RunName(s.Name, first), benchmarkschedule.RunName(s.Name, second)))
	})

	It("Replace: a run due while one is running replaces it", func() {
		s, first, second := newSchedule("replace", classNobody, func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.ConcurrencyPolicy = v1alpha1.ConcurrencyReplace
		})
		at(s, first.Add(time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
		at(s, second.Add(time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, second)))
	})

	It("drops a scheduled time that could not start within startingDeadlineSeconds", func() {
		s, first, second := newSchedule("deadline", "absent", func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
		})
		at(s, first.Add(2*time.Minute))
		Eventually(func() *metav1.Time { return status(s).NextScheduleTime }, wait).Should(HaveValue(
			WithTransform(func(t metav1.Time) time.Time { return t.Time }, BeTemporally("==", second))))
		Consistently(names(s), 2*time.Second).Should(BeEmpty())
		at(s, second.Add(30*time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, second)))
	})

	It("keeps failedRunsHistoryLimit failed runs, the newest, with a row each", func() {
		s, first, _ := newSchedule("history", "absent", func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.FailedRunsHistoryLimit = ptr.To[int32](1)
		})
		t := first
		for range 3 {
			at(s, t.Add(time.Second))
			name := benchmarkschedule.RunName(s.Name, t)
			Eventually(func() []v1alpha1.ScheduledRun { return status(s).History }, wait).Should(ContainElement(
				And(HaveField("Name", name), HaveField("State", v1alpha1.RunFailed))))
			t = t.Add(time.Hour)
		}
		last := benchmarkschedule.RunName(s.Name, t.Add(-time.Hour))
		Eventually(names(s), wait).Should(ConsistOf(last))
		run := runs(s)[0]
		Expect(kstatusOf(&run, "StorageBenchmark")).To(Equal(kstatus.FailedStatus), "kstatus reads a failed run as Failed")
		Expect(argoHealth(&run, "StorageBenchmark")).To(HavePrefix("Degraded: StorageClassNotFound: "))
		st := status(s)
		Expect(st.History).To(HaveLen(1))
		Expect(st.History[0].Reason).To(Equal(controllers.ReasonStorageClassNotFound))
		Expect(st.LastScheduleTime.Time).To(BeTemporally("==", t.Add(-time.Hour)))
	})

	It("compares each run with the previous successful run, and carries the verdict into its history", func() {
		s, first, second := newSchedule("regress", classLocal, func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.Template.Spec.Regression = &v1alpha1.RegressionSpec{Baseline: v1alpha1.RegressionBaseline{PreviousRun: &v1alpha1.PreviousRunBaseline{}}}
		})
		regression := func(name string) func() *metav1.Condition {
			return func() *metav1.Condition {
				var b v1alpha1.StorageBenchmark
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &b); err != nil {
					return nil
				}
				return meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionRegressed)
			}
		}
		By("the first run has no earlier one")
		at(s, first.Add(time.Second))
		one := benchmarkschedule.RunName(s.Name, first)
		Eventually(regression(one), 2*time.Minute).Should(And(Not(BeNil()),
			HaveField("Reason", controllers.ReasonNoBaseline), HaveField("Status", metav1.ConditionUnknown)))

		By("the second is compared with the first")
		at(s, second.Add(time.Second))
		two := benchmarkschedule.RunName(s.Name, second)
		Eventually(regression(two), 2*time.Minute).Should(And(Not(BeNil()),
			HaveField("Reason", BeElementOf(controllers.ReasonRegressed, controllers.ReasonNotRegressed)),
			HaveField("Message", ContainSubstring("against 1 baseline run of StorageBenchmarkSchedule/"+s.Name+" (StorageBenchmark/"+one+")"))))
		poke(s)
		Eventually(func() []v1alpha1.ScheduledRun { return status(s).History }, wait).Should(HaveExactElements(
			And(HaveField("Name", two), HaveField("Regression", BeElementOf(controllers.ReasonRegressed, controllers.ReasonNotRegressed))),
			And(HaveField("Name", one), HaveField("Regression", controllers.ReasonNoBaseline))))

		By("admission: the previous run as baseline needs a successful run kept")
		bad := s.DeepCopy()
		bad.ObjectMeta = metav1.ObjectMeta{Namespace: s.Namespace, Name: "keeps-none"}
		bad.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](0)
		err := k8s.Create(ctx, bad)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("previousRun needs successfulRunsHistoryLimit of at least 1"))
	})

	It("loses and doubles no run across a manager restart", func() {
		s, first, second := newSchedule("restart", "absent", func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.FailedRunsHistoryLimit = ptr.To[int32](10) // keep every failed run: they are counted
		})
		at(s, first.Add(time.Second))
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
		Eventually(func() *metav1.Time { return status(s).LastScheduleTime }, wait).ShouldNot(BeNil())

		By("restarted between two scheduled times: nothing new")
		mgr.Stop()
		mgr = startManager()
		poke(s)
		Consistently(names(s), 3*time.Second).Should(HaveLen(1))

		By("down across the second time: it runs once after the restart")
		mgr.Stop()
		scheduleClock.SetTime(second.Add(10 * time.Minute))
		mgr = startManager()
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first), benchmarkschedule.RunName(s.Name, second)))
		poke(s)
		Consistently(names(s), 3*time.Second).Should(HaveLen(2))
	})

	It("creates nothing while suspended, and the missed time after", func() {
		s, first, _ := newSchedule("suspend", "absent", func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.Suspend = ptr.To(true)
		})
		at(s, first.Add(time.Second))
		Eventually(func() string {
			c := meta.FindStatusCondition(status(s).Conditions, v1alpha1.ConditionReady)
			if c == nil {
				return ""
			}
			return c.Reason
		}, wait).Should(Equal(controllers.ReasonSuspended))
		Consistently(names(s), 2*time.Second).Should(BeEmpty())
		Expect(status(s).NextScheduleTime).To(BeNil())

		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`))
		Expect(k8s.Patch(ctx, s.DeepCopy(), patch)).To(Succeed())
		Eventually(names(s), wait).Should(ConsistOf(benchmarkschedule.RunName(s.Name, first)))
	})

	It("never adopts nor deletes a benchmark of somebody else's that holds a run's name", func() {
		s, first, _ := newSchedule("taken", "absent", nil)
		squatter := benchmark(s.Namespace, benchmarkschedule.RunName(s.Name, first), func(b *v1alpha1.StorageBenchmark) {
			b.Labels = map[string]string{controllers.LabelSchedule: s.Name}
			b.Spec.Storage.StorageClassName = ptr.To(classNobody)
		})
		Expect(k8s.Create(ctx, squatter)).To(Succeed())
		at(s, first.Add(time.Second))
		Consistently(func() []metav1.OwnerReference {
			var cur v1alpha1.StorageBenchmark
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(squatter), &cur)).To(Succeed())
			Expect(cur.DeletionTimestamp.IsZero()).To(BeTrue())
			return cur.OwnerReferences
		}, 3*time.Second).Should(BeEmpty())
		Expect(status(s).History).To(BeEmpty(), "a labelled benchmark the schedule does not control is not its run")
		Expect(status(s).LastScheduleTime).To(BeNil())
	})

	It("acts only on runs it created: forged runs are never counted, trimmed, adopted, a baseline, or a time", func() {
		s, first, second := newSchedule("guarded", classLocal, func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](2)
			s.Spec.Template.Spec.Clients.Count = 1
			s.Spec.Template.Spec.Load.Rate.Steps = []int64{100}
			s.Spec.Template.Spec.Regression = &v1alpha1.RegressionSpec{Baseline: v1alpha1.RegressionBaseline{PreviousRun: &v1alpha1.PreviousRunBaseline{Runs: 1}}}
		})
		third := second.Add(time.Hour)
		complete := func(name string) {
			GinkgoHelper()
			k8stest.WaitComplete(k8s, &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name}}, 2*time.Minute)
		}
		at(s, first.Add(time.Second))
		genuine := benchmarkschedule.RunName(s.Name, first)
		Eventually(names(s), wait).Should(ConsistOf(genuine))
		complete(genuine)

		By("a tenant who may create benchmarks forges runs: the schedule's label, its controller reference, any time")
		forge := func(name string, at time.Time) *v1alpha1.StorageBenchmark {
			b := benchmark(s.Namespace, name, nil)
			b.Spec = *s.Spec.Template.Spec.DeepCopy()
			b.Labels = map[string]string{controllers.LabelSchedule: s.Name}
			b.Annotations = map[string]string{controllers.AnnotationScheduledTime: at.UTC().Format(time.RFC3339)}
			b.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageBenchmarkSchedule",
				Name: s.Name, UID: s.UID, Controller: ptr.To(true)}}
			Expect(k8s.Create(ctx, b)).To(Succeed())
			return b
		}
		forged := []*v1alpha1.StorageBenchmark{
			forge("forged-future", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)),
			forge("forged-earlier", first.Add(-30*time.Minute)),
			forge("forged-baseline", first.Add(90*time.Minute)), // between the second and third times
		}
		// The next run's name, taken before its time.
		forge(benchmarkschedule.RunName(s.Name, second), second)
		for _, f := range forged {
			complete(f.Name)
		}
		poke(s)
		Consistently(func() error {
			st := status(s)
			if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(first) {
				return fmt.Errorf("lastScheduleTime %v, want %s", st.LastScheduleTime, first)
			}
			for _, row := range st.History {
				if row.Name != genuine {
					return fmt.Errorf("history lists %s", row.Name)
				}
			}
			return nil
		}, 3*time.Second).Should(Succeed())
		Expect(names(s)()).To(ContainElements(genuine, "forged-future", "forged-earlier", "forged-baseline"),
			"the genuine run is not trimmed for forged ones, and forged ones are not touched")

		By("the name of the second run is taken: never adopted, the time waits")
		at(s, second.Add(time.Second))
		Eventually(func() *metav1.Time { return status(s).PendingScheduleTime }, wait).Should(HaveValue(
			WithTransform(func(t metav1.Time) time.Time { return t.Time }, BeTemporally("==", second))))
		Expect(status(s).Active).To(BeNil(), "the squatter is not the schedule's run")

		By("the third run's baseline is the genuine run, never a forged one scheduled in between")
		at(s, third.Add(time.Second))
		three := benchmarkschedule.RunName(s.Name, third)
		Eventually(names(s), wait).Should(ContainElement(three))
		complete(three)
		var run v1alpha1.StorageBenchmark
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: three}, &run)).To(Succeed())
		Expect(run.Status.Regression).NotTo(BeNil())
		Expect(run.Status.Regression.Baseline).To(Equal("StorageBenchmarkSchedule/" + s.Name + " (StorageBenchmark/" + genuine + ")"))
		rows := func() []string {
			var out []string
			for _, r := range status(s).History {
				out = append(out, r.Name)
			}
			return out
		}
		poke(s)
		Eventually(rows, wait).Should(Equal([]string{three, genuine}))

		By("a wiped status loses nothing the schedule needs: its signed runs carry it")
		var cur v1alpha1.StorageBenchmarkSchedule
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
		cur.Status = v1alpha1.StorageBenchmarkScheduleStatus{}
		Expect(k8s.Status().Update(ctx, &cur)).To(Succeed())
		poke(s)
		Eventually(rows, wait).Should(Equal([]string{three, genuine}))
		Expect(status(s).LastScheduleTime.Time).To(BeTemporally("==", third), "not 2099, not the squatted time")
	})

	It("refuses an invalid schedule or template with a condition, not a run", func() {
		s, first, _ := newSchedule("badtz", "absent", func(s *v1alpha1.StorageBenchmarkSchedule) {
			s.Spec.TimeZone = ptr.To("Mars/Olympus_Mons")
		})
		at(s, first.Add(time.Second))
		Eventually(func() string {
			c := meta.FindStatusCondition(status(s).Conditions, v1alpha1.ConditionStalled)
			if c == nil || c.Status != metav1.ConditionTrue {
				return ""
			}
			return c.Reason + ": " + c.Message
		}, wait).Should(And(HavePrefix(controllers.ReasonInvalidSchedule), ContainSubstring("Mars/Olympus_Mons")))
		Consistently(names(s), 2*time.Second).Should(BeEmpty())
		var cur v1alpha1.StorageBenchmarkSchedule
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
		Expect(kstatusOf(&cur, "StorageBenchmarkSchedule")).To(Equal(kstatus.FailedStatus), "kstatus (Flux) reads a schedule that cannot run as Failed")
		Expect(argoHealth(&cur, "StorageBenchmarkSchedule")).To(HavePrefix("Degraded: InvalidSchedule: "))
	})
})
