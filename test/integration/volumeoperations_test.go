package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers/volumeoperations"
)

var _ = Describe("A VolumeOperationsBenchmark", func() {
	ctx := context.Background()

	opsBenchmark := func(ns, class string, ops []v1alpha1.VolumeOperation, concurrency ...int32) *v1alpha1.VolumeOperationsBenchmark {
		return &v1alpha1.VolumeOperationsBenchmark{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec: v1alpha1.VolumeOperationsBenchmarkSpec{
				Storage:          v1alpha1.OperationsStorage{StorageClassName: class},
				Operations:       ops,
				Concurrency:      concurrency,
				OperationTimeout: &metav1.Duration{Duration: time.Minute},
				Objectives: []v1alpha1.OperationObjective{{Name: "bind-fast", Operation: v1alpha1.OperationProvision,
					Percentile: "max", MaxLatency: metav1.Duration{Duration: 30 * time.Second}}},
			},
		}
	}
	ready := func(b *v1alpha1.VolumeOperationsBenchmark) func() string {
		return func() string {
			var got v1alpha1.VolumeOperationsBenchmark
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), &got); err != nil {
				return err.Error()
			}
			*b = got
			if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); c != nil {
				return c.Reason
			}
			return ""
		}
	}

	It("times provision, attach and delete at 1 and 3 at once, and leaves nothing behind", func() {
		ns := newNamespace()
		b := opsBenchmark(ns, classLocal, []v1alpha1.VolumeOperation{v1alpha1.OperationProvision, v1alpha1.OperationAttach, v1alpha1.OperationDelete}, 1, 3)
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(ready(b), 3*time.Minute, 200*time.Millisecond).Should(Equal(volumeoperations.ReasonComplete),
			func() string { return b.Status.Progress })

		Expect(b.Status.Operations).To(HaveLen(3))
		for i, op := range b.Spec.Operations {
			c := b.Status.Operations[i]
			Expect(c.Operation).To(Equal(op))
			Expect(c.Steps).To(HaveLen(2))
			for k, s := range c.Steps {
				Expect(s.Concurrency).To(Equal(b.Spec.Concurrency[k]))
				Expect(s.Succeeded).To(Equal(s.Concurrency), "%s at %d: %s", op, s.Concurrency, s.Reason)
				Expect(s.Latency).NotTo(BeNil())
				l := s.Latency
				Expect(l.Min.Duration).To(BeNumerically(">", 0))
				Expect(l.Min.Duration).To(BeNumerically("<=", l.P50.Duration))
				Expect(l.P50.Duration).To(BeNumerically("<=", l.Max.Duration))
				Expect(l.Max.Duration).To(BeNumerically("<", time.Minute))
				Expect(s.Span.Duration).To(BeNumerically(">=", l.Max.Duration))
				Expect(s.PerMinute).NotTo(BeEmpty())
			}
			Expect(c.PerOperation).NotTo(BeNil())
			Expect(c.PerOperation.Steps).To(Equal(int32(2)))
		}
		Expect(b.Status.Objectives).To(HaveLen(1))
		Expect(b.Status.Objectives[0].Verdict).To(Equal(v1alpha1.Verdict("Met")), b.Status.Objectives[0].Message)
		Expect(meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionSLOMet)).To(BeTrue())
		Expect(b.Status.Current).To(BeNil())
		Expect(b.Status.CompletionTime).NotTo(BeNil())

		By("nothing the run made is left: claims, pods, volumes")
		var claims corev1.PersistentVolumeClaimList
		Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).To(BeEmpty())
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		Expect(pods.Items).To(BeEmpty())
		var pvs corev1.PersistentVolumeList
		Expect(k8s.List(ctx, &pvs)).To(Succeed())
		for _, pv := range pvs.Items {
			if ref := pv.Spec.ClaimRef; ref != nil {
				Expect(ref.Namespace).NotTo(Equal(ns), "volume %s of a deleted claim %s", pv.Name, ref.Name)
			}
		}
	})

	It("ends at once, with a reason, when the class or the snapshot class does not exist", func() {
		ns := newNamespace()
		b := opsBenchmark(ns, "no-such-class", []v1alpha1.VolumeOperation{v1alpha1.OperationProvision}, 1)
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(ready(b), 30*time.Second, 200*time.Millisecond).Should(Equal("StorageClassNotFound"))
		Expect(b.Status.CompletionTime).NotTo(BeNil())

		s := opsBenchmark(ns, classLocal, []v1alpha1.VolumeOperation{v1alpha1.OperationSnapshot}, 1)
		s.Name, s.Spec.Objectives = "snap", nil
		s.Spec.Storage.VolumeSnapshotClassName = ptr.To("no-such-snapshot-class")
		Expect(k8s.Create(ctx, s)).To(Succeed())
		Eventually(ready(s), 30*time.Second, 200*time.Millisecond).Should(Equal("VolumeSnapshotClassNotFound"))
		var claims corev1.PersistentVolumeClaimList
		Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).To(BeEmpty(), "a run refused at its start creates nothing")
	})

	It("waits its turn: a second run on the class is Queued until the first ends", func() {
		ns := newNamespace()
		first := opsBenchmark(ns, classLocal, []v1alpha1.VolumeOperation{v1alpha1.OperationProvision, v1alpha1.OperationDelete}, 1, 3)
		first.Name = "first"
		Expect(k8s.Create(ctx, first)).To(Succeed())
		Eventually(ready(first), 30*time.Second, 100*time.Millisecond).Should(Equal(volumeoperations.ReasonRunning))
		second := opsBenchmark(ns, classLocal, []v1alpha1.VolumeOperation{v1alpha1.OperationProvision}, 1)
		second.Name = "second"
		Expect(k8s.Create(ctx, second)).To(Succeed())
		Eventually(ready(second), 30*time.Second, 100*time.Millisecond).Should(Equal(volumeoperations.ReasonQueued))
		Expect(meta.FindStatusCondition(second.Status.Conditions, v1alpha1.ConditionReady).Message).To(HavePrefix("waiting to start: "))
		Expect(second.Status.StartTime).To(BeNil())
		Expect(second.Status.Current).To(BeNil(), "a queued run makes nothing")

		Eventually(ready(first), 3*time.Minute, 200*time.Millisecond).Should(Equal(volumeoperations.ReasonComplete))
		Eventually(ready(second), 3*time.Minute, 200*time.Millisecond).Should(Equal(volumeoperations.ReasonComplete))
		Expect(second.Status.StartTime.Time).NotTo(BeTemporally("<", first.Status.CompletionTime.Time), "the second started before the first ended")
		Expect(second.Status.Operations[0].Steps[0].Succeeded).To(Equal(int32(1)))
	})
})
