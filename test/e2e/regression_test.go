package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
)

// The regression verdict on the real cluster: a schedule runs every minute
// on a capped raw block volume (hack/blkcap: 1,500 IOPS, as an ONTAP QoS
// policy would set), each run judged against the previous runs of the
// same volume; then the volumes' cap is lowered by 15 % (1,275 IOPS), as a
// QoS policy changed behind the team's back would.
const (
	loweredIOPS = qosIOPSPerPV * 85 / 100
	// rateLoad offers half the cap and 120 % of it: the lower cap affects
	// the second step only (its IOPS fall by 15 %); 750 IOPS stay below it.
	rateLoad = `rate: {unit: IOPS, steps: [750, 1800]}`
	// curveLoad finds the volume's maximum, then offers 50 and 90 % of
	// it: a lower cap lowers every step's IOPS by 15 %.
	curveLoad = `curve: {percents: [50, 90], clientBoundCheck: false}`
)

var _ = Describe("A scheduled benchmark compared with its previous runs", func() {
	It("does not regress on an unchanged capped volume, and regresses at the step a 15 % lower cap affects", func() {
		ctx := context.Background()
		ns := newNamespace("regress")
		stop := keepVolumesFree(classQoS)
		defer stop()
		s := regressionSchedule(ns, "regress", rateLoad, 3)
		defer deleteSchedule(s)

		// One without a baseline, then 1, 2 and 3 baseline runs. The run
		// under the lowered cap has 4 runs before it and takes 3: the
		// window's bound.
		const unchanged = 4
		runs := waitRuns(s, unchanged, time.Time{})
		for k, b := range runs {
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionRegressed)
			Expect(c).NotTo(BeNil(), b.Name)
			AddReportEntry(fmt.Sprintf("unchanged volume, run %d", k+1), fmt.Sprintf("%s: %s", c.Reason, c.Message))
			if k == 0 {
				Expect(c.Reason).To(Equal(controllers.ReasonNoBaseline))
				continue
			}
			Expect(c.Reason).To(Equal(controllers.ReasonNotRegressed), "run %s on the same volume: %s", b.Name, c.Message)
			Expect(b.Status.Regression.BaselineRuns).To(BeEquivalentTo(min(k, 3)))
			Expect(c.Message).To(ContainSubstring(fmt.Sprintf("against %d baseline run", min(k, 3))))
			tests := testsOf(&b)
			Expect(tests["0/iops"].Verdict).To(Equal(v1alpha1.RegressionNotRegressed))
			Expect(tests["1/iops"].Verdict).To(Equal(v1alpha1.RegressionNotRegressed))
			// The saturated step's latency is closed-loop: never judged.
			Expect(tests["1/p99"].Verdict).To(Equal(v1alpha1.RegressionNotJudged), tests["1/p99"].Message)
			if k < 3 {
				Expect(tests["0/p99"].Verdict).To(Equal(v1alpha1.RegressionNotJudged), "p99 needs 3 baseline runs: %s", tests["0/p99"].Message)
			} else {
				Expect(tests["0/p99"].Verdict).To(Equal(v1alpha1.RegressionNotRegressed), tests["0/p99"].Message)
			}
		}

		By("the cap lowered by 15 %: the next run regresses in IOPS at the step above it, and not below it")
		lowered := lowerCap(classQoS, loweredIOPS)
		defer lowerCap(classQoS, qosIOPSPerPV)
		throttled := waitRuns(s, 1, lowered)[0]
		c := meta.FindStatusCondition(throttled.Status.Conditions, v1alpha1.ConditionRegressed)
		Expect(c).NotTo(BeNil())
		AddReportEntry("15 % lower cap", fmt.Sprintf("%s: %s", c.Reason, c.Message))
		Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		tests := testsOf(&throttled)
		Expect(tests["1/iops"].Verdict).To(Equal(v1alpha1.RegressionRegressed), tests["1/iops"].Message)
		Expect(float64(tests["1/iops"].CurrentMedian)).To(BeNumerically("~", loweredIOPS, 0.05*loweredIOPS), "held at the lower cap")
		Expect(tests["0/iops"].Verdict).To(Equal(v1alpha1.RegressionNotRegressed), "750 IOPS is below both caps: %s", tests["0/iops"].Message)
		Expect(throttled.Status.Regression.BaselineRuns).To(BeEquivalentTo(3), "the last 3 of the %d runs before it", unchanged)
		Expect(throttled.Status.Regression.Baseline).To(HavePrefix("StorageBenchmarkSchedule/regress (StorageBenchmark/regress-"))

		By("the schedule's history and series carry the verdict, and the alert fires")
		Eventually(func(g Gomega) {
			var cur v1alpha1.StorageBenchmarkSchedule
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
			var row *v1alpha1.ScheduledRun
			for i := range cur.Status.History {
				if cur.Status.History[i].Name == throttled.Name {
					row = &cur.Status.History[i]
				}
			}
			g.Expect(row).NotTo(BeNil())
			g.Expect(row.Regression).To(Equal(controllers.ReasonRegressed))
			g.Expect(row.RegressedMetrics).To(ContainElement("iops"))
		}, time.Minute, time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			v, err := prom.query(fmt.Sprintf(`storagebench_regressed{namespace=%q,benchmark=%q,metric="iops"}`, ns, throttled.Name))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(HaveLen(1))
			g.Expect(float64(v[0].Value)).To(Equal(1.0))
			firing, err := prom.firing("StorageBenchRegressed")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(slices.ContainsFunc(firing, func(ls model.LabelSet) bool {
				return hasLabels(ls, map[string]string{"namespace": ns, "benchmark": throttled.Name, "metric": "iops"})
			})).To(BeTrue(), "firing: %s", joinLabels(firing))
		}, 2*time.Minute, 5*time.Second).Should(Succeed())
	})
})

// The false-positive rate and the power of the verdict on the real
// cluster, as a storage team would use it (`make regression-fp`, outside
// `make test`: about 15 minutes): a rate and a curve schedule, side by
// side, each on a capped volume of its own, judged against their previous
// 5 runs; 10 reruns of the unchanged volumes must give no Regressed, and
// then 2 runs under a cap 15 % lower must be found at every step it
// affects. The figures go to the report and to _work/regression-fp.json.
var _ = Describe("The regression verdict's error rates", Label("fp"), func() {
	It("gives no Regressed in 10 reruns of unchanged volumes, rate and curve, and finds a 15 % lower cap at every step it affects", func() {
		ns := newNamespace("fp")
		stop := keepVolumesFree(classQoS)
		defer stop()
		const reruns, loweredRuns, baselineRuns = 10, 2, 5
		loads := map[string]string{"rate": rateLoad, "curve": curveLoad}
		schedules := map[string]*v1alpha1.StorageBenchmarkSchedule{}
		for name, load := range loads {
			schedules[name] = regressionSchedule(ns, "fp-"+name, load, baselineRuns)
			defer deleteSchedule(schedules[name])
		}
		type figures struct {
			Reruns, Regressed int
			// FalsePositiveRate is Regressed / Reruns.
			FalsePositiveRate float64
			// BaselineRuns is how many baseline runs each rerun had.
			BaselineRuns []int
			// Affected and Found count the lowered-cap runs' tests at the
			// steps the lower cap affects, and those judged Regressed.
			Affected, Found int
			Power           float64
			LoweredBaseline []int
			Verdicts        []string
		}
		out := map[string]*figures{}
		for name, s := range schedules {
			f := &figures{}
			out[name] = f
			for k, b := range waitRuns(s, reruns+1, time.Time{}) {
				c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionRegressed)
				Expect(c).NotTo(BeNil(), b.Name)
				f.Verdicts = append(f.Verdicts, fmt.Sprintf("%s: %s", c.Reason, c.Message))
				if k == 0 {
					continue
				}
				f.Reruns++
				f.BaselineRuns = append(f.BaselineRuns, int(b.Status.Regression.BaselineRuns))
				if c.Status == metav1.ConditionTrue {
					f.Regressed++
				}
			}
			f.FalsePositiveRate = float64(f.Regressed) / float64(f.Reruns)
		}
		lowered := lowerCap(classQoS, loweredIOPS)
		defer lowerCap(classQoS, qosIOPSPerPV)
		for name, s := range schedules {
			f := out[name]
			for _, b := range waitRuns(s, loweredRuns, lowered) {
				f.LoweredBaseline = append(f.LoweredBaseline, int(b.Status.Regression.BaselineRuns))
				c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionRegressed)
				f.Verdicts = append(f.Verdicts, fmt.Sprintf("lowered cap: %s: %s", c.Reason, c.Message))
				for key, t := range testsOf(&b) {
					// Affected: every IOPS test of a curve (it offers shares
					// of its own maximum), the step above the lower cap of
					// the rate load.
					if !strings.HasSuffix(key, "/iops") || (name == "rate" && key != "1/iops") {
						continue
					}
					f.Affected++
					if t.Verdict == v1alpha1.RegressionRegressed {
						f.Found++
					}
				}
			}
			f.Power = float64(f.Found) / float64(f.Affected)
		}
		doc, err := json.MarshalIndent(out, "", "  ")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(filepath.Join(root, "_work"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(root, "_work", "regression-fp.json"), doc, 0o644)).To(Succeed())
		for name, f := range out {
			AddReportEntry("regression "+name, fmt.Sprintf("false positives %d of %d reruns (baseline runs %v); lower cap found at %d of %d affected tests (baseline runs %v)",
				f.Regressed, f.Reruns, f.BaselineRuns, f.Found, f.Affected, f.LoweredBaseline))
			GinkgoWriter.Printf("%s\n%s\n", name, strings.Join(f.Verdicts, "\n"))
			Expect(f.Regressed).To(BeZero(), "%s: reruns of unchanged volumes regressed", name)
			Expect(f.Found).To(Equal(f.Affected), "%s: the lower cap was missed at some affected step", name)
		}
	})
})

// regressionSchedule creates a schedule running load every minute on a
// capped raw block volume, one client, 10 s steps, each run judged against
// its previous runs (up to baselineRuns of them).
func regressionSchedule(ns, name, load string, baselineRuns int) *v1alpha1.StorageBenchmarkSchedule {
	GinkgoHelper()
	doc := fmt.Sprintf(`apiVersion: storagebench.io/v1alpha1
kind: StorageBenchmarkSchedule
metadata: {name: %s, namespace: %s}
spec:
  schedule: "* * * * *"
  successfulRunsHistoryLimit: 20
  template:
    spec:
      storage: {storageClassName: %s, size: 1Gi, volumeMode: Block, sharing: PerClient, accessMode: ReadWriteOnce}
      clients: {count: 1, jobsPerClient: 1}
      workload: {profile: rand-read, workingSetPerClient: 512Mi}
      load:
        %s
        stepDuration: 10s
        rampTime: 1s
      cleanup: {volumes: Delete}
      regression:
        baseline: {previousRun: {runs: %d}}
`, name, ns, classQoS, load, baselineRuns)
	return applySchedule(doc)
}

// applySchedule applies a schedule's manifest with kubectl and returns
// the schedule as stored.
func applySchedule(doc string) *v1alpha1.StorageBenchmarkSchedule {
	GinkgoHelper()
	var s v1alpha1.StorageBenchmarkSchedule
	Expect(yaml.UnmarshalStrict([]byte(doc), &s)).To(Succeed())
	_, stderr, err := kubectl(doc, "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), stderr)
	Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(&s), &s)).To(Succeed())
	return &s
}

func deleteSchedule(s *v1alpha1.StorageBenchmarkSchedule) {
	_, _, _ = kubectl("", "delete", "storagebenchmarkschedule", s.Name, "-n", s.Namespace, "--wait=false")
}

// keepVolumesFree makes the class's released volumes Available again while
// a spec runs, as a static provisioner would; the returned func stops it.
func keepVolumesFree(class string) func() {
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		defer GinkgoRecover()
		for ctx.Err() == nil {
			_, _ = freeVolumes(class)()
			time.Sleep(time.Second)
		}
	}()
	Eventually(freeVolumes(class), time.Minute, time.Second).Should(BeNumerically(">=", 1))
	return stop
}

// waitRuns waits for n completed runs of s created after since and
// returns them, oldest first; none of the schedule's runs may fail.
func waitRuns(s *v1alpha1.StorageBenchmarkSchedule, n int, since time.Time) []v1alpha1.StorageBenchmark {
	GinkgoHelper()
	var done []v1alpha1.StorageBenchmark
	Eventually(func(g Gomega) {
		var l v1alpha1.StorageBenchmarkList
		g.Expect(k8s.List(context.Background(), &l, client.InNamespace(s.Namespace), client.MatchingLabels{controllers.LabelSchedule: s.Name})).To(Succeed())
		done = done[:0]
		for _, b := range l.Items {
			if !b.CreationTimestamp.Time.After(since) {
				continue
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionFailed)
			g.Expect(c == nil || c.Status != metav1.ConditionTrue).To(BeTrue(), "run %s failed: %+v", b.Name, c)
			if v1alpha1.RunStateOf(&b) == v1alpha1.RunComplete {
				done = append(done, b)
			}
		}
		g.Expect(len(done)).To(BeNumerically(">=", n), "completed runs of %s", s.Name)
	}, time.Duration(2*n+3)*time.Minute, 5*time.Second).Should(Succeed())
	slices.SortFunc(done, func(a, b v1alpha1.StorageBenchmark) int { return strings.Compare(a.Name, b.Name) })
	return done[:n]
}

// testsOf indexes a run's regression tests by "step/metric".
func testsOf(b *v1alpha1.StorageBenchmark) map[string]v1alpha1.RegressionTestStatus {
	GinkgoHelper()
	Expect(b.Status.Regression).NotTo(BeNil(), b.Name)
	out := map[string]v1alpha1.RegressionTestStatus{}
	for _, t := range b.Status.Regression.Tests {
		out[fmt.Sprintf("%d/%s", t.Step, t.Metric)] = t
	}
	return out
}

// lowerCap sets every PV of class to iops (hack/blkcap caps each client
// container from its PV's annotation when it starts) and returns when
// that was: runs created after it run under the new cap.
func lowerCap(class string, iops int) time.Time {
	GinkgoHelper()
	ctx := context.Background()
	var pvs corev1.PersistentVolumeList
	Expect(k8s.List(ctx, &pvs)).To(Succeed())
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Spec.StorageClassName != class {
			continue
		}
		patch := client.MergeFrom(pv.DeepCopy())
		if pv.Annotations == nil {
			pv.Annotations = map[string]string{}
		}
		pv.Annotations["storagebench.io/max-iops"] = strconv.Itoa(iops)
		Expect(k8s.Patch(ctx, pv, patch)).To(Succeed())
	}
	return time.Now()
}
