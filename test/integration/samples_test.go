package integration

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
)

// Every sample passes admission, and the operator accepts every benchmark
// (it plans its steps; none is refused as invalid or unsupported).
var _ = Describe("The samples in config/samples", func() {
	It("are accepted at admission and planned by the operator", func() {
		ctx := context.Background()
		ns := newNamespace()
		files, err := filepath.Glob("../../config/samples/*.yaml")
		Expect(err).NotTo(HaveOccurred())
		// Classes first: a benchmark whose class is missing fails at once.
		sort.SliceStable(files, func(i, j int) bool {
			return strings.HasPrefix(filepath.Base(files[i]), "storageclass") && !strings.HasPrefix(filepath.Base(files[j]), "storageclass")
		})
		var benchmarks []*v1alpha1.StorageBenchmark
		var schedules []*v1alpha1.StorageBenchmarkSchedule
		var operations []*v1alpha1.VolumeOperationsBenchmark
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			for _, u := range objectsIn(f) {
				if u.GetKind() == "StorageClass" {
					Expect(k8s.Create(ctx, u)).To(Succeed(), "%s: %s", f, u.GetName())
					DeferCleanup(func() { _ = k8s.Delete(context.Background(), u) })
					continue
				}
				u.SetNamespace(ns)
				Expect(k8s.Create(ctx, u)).To(Succeed(), "%s: %s", f, u.GetName())
				if u.GetKind() == "StorageBenchmarkSchedule" {
					schedules = append(schedules, &v1alpha1.StorageBenchmarkSchedule{ObjectMeta: *objectMeta(u)})
					continue
				}
				if u.GetKind() == "VolumeOperationsBenchmark" {
					operations = append(operations, &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: *objectMeta(u)})
					continue
				}
				benchmarks = append(benchmarks, &v1alpha1.StorageBenchmark{ObjectMeta: *objectMeta(u)})
			}
		}
		Expect(len(benchmarks)).To(BeNumerically(">=", 29))
		for _, b := range benchmarks {
			cur := waitFor(b, time.Minute, "planned", func(c *v1alpha1.StorageBenchmark) bool {
				return c.Status.StepsPlanned > 0 || meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionFailed)
			})
			if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == "True" {
				// Nothing provisions the samples' Trident classes here.
				Expect(c.Reason).To(Equal(controllers.ReasonClaimNotBound), "%s: %s", b.Name, c.Message)
			}
			Expect(cur.Status.StepsPlanned).To(BeNumerically(">", 0), b.Name)
		}
		// An operations benchmark passes the operator's checks and starts
		// its first step (nothing provisions its Trident claims here, so
		// it stays there).
		Expect(operations).NotTo(BeEmpty())
		for _, o := range operations {
			Eventually(func() string {
				var cur v1alpha1.VolumeOperationsBenchmark
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(o), &cur)).To(Succeed())
				c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady)
				if c == nil || cur.Status.Current == nil {
					return ""
				}
				return c.Reason + " " + string(cur.Status.Current.Stage) + ": " + c.Message
			}, time.Minute).Should(MatchRegexp(`^Running (Preparing|Timing): `), o.Name)
		}
		// A schedule's template passes the operator's checks: Ready, Scheduled.
		Expect(schedules).NotTo(BeEmpty())
		for _, sc := range schedules {
			Eventually(func() string {
				var cur v1alpha1.StorageBenchmarkSchedule
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sc), &cur)).To(Succeed())
				c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady)
				if c == nil {
					return ""
				}
				return string(c.Status) + " " + c.Reason + ": " + c.Message
			}, time.Minute).Should(HavePrefix("True "+controllers.ReasonScheduled), sc.Name)
		}
	})
})
