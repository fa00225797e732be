package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers/volumeoperations"
)

// The test-bed driver takes a set time per operation when its class says
// so (storagebench.test/delay-<op>), one operation of a kind at a time with
// storagebench.test/serial: the ground truth a VolumeOperationsBenchmark
// must recover through the real external-provisioner, snapshotter,
// snapshot controller and kube-controller-manager.
var _ = Describe("A VolumeOperationsBenchmark on the test-bed CSI driver", func() {
	ctx := context.Background()

	// delayClass makes a StorageClass of the driver with params, deleted
	// after the spec.
	delayClass := func(name string, params map[string]string) string {
		GinkgoHelper()
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: csiDriver, Parameters: params,
			ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate), AllowVolumeExpansion: ptr.To(true)}
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, sc))).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(context.Background(), sc) })
		return name
	}
	run := func(ns, name, class string, ops []v1alpha1.VolumeOperation, concurrency ...int32) *v1alpha1.VolumeOperationsBenchmark {
		GinkgoHelper()
		b := &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.VolumeOperationsBenchmarkSpec{
				Storage:          v1alpha1.OperationsStorage{StorageClassName: class, VolumeSnapshotClassName: ptr.To(classCSI)},
				Operations:       ops,
				Concurrency:      concurrency,
				OperationTimeout: &metav1.Duration{Duration: 2 * time.Minute},
			}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		return b
	}
	complete := func(b *v1alpha1.VolumeOperationsBenchmark, within time.Duration) *v1alpha1.VolumeOperationsBenchmark {
		GinkgoHelper()
		var cur v1alpha1.VolumeOperationsBenchmark
		Eventually(func() string {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), &cur)).To(Succeed())
			if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady); c != nil {
				return c.Reason + ": " + c.Message
			}
			return ""
		}, within, time.Second).Should(HavePrefix(volumeoperations.ReasonComplete), func() string { return cur.Status.Progress })
		return &cur
	}
	curve := func(b *v1alpha1.VolumeOperationsBenchmark, op v1alpha1.VolumeOperation) v1alpha1.OperationCurveStatus {
		GinkgoHelper()
		for _, c := range b.Status.Operations {
			if c.Operation == op {
				for _, s := range c.Steps {
					Expect(s.Succeeded).To(Equal(s.Concurrency), "%s at %d: %s", op, s.Concurrency, s.Reason)
					Expect(s.Latency).NotTo(BeNil())
					GinkgoWriter.Printf("%s %s at %d: p50 %s, max %s, %s a minute\n", b.Name, op, s.Concurrency,
						s.Latency.P50.Duration, s.Latency.Max.Duration, s.PerMinute)
				}
				return c
			}
		}
		Fail(fmt.Sprintf("%s has no curve of %s", b.Name, op))
		return v1alpha1.OperationCurveStatus{}
	}
	within := func(got, want time.Duration, fraction float64) {
		GinkgoHelper()
		Expect(got.Seconds()).To(BeNumerically("~", want.Seconds(), want.Seconds()*fraction))
	}

	It("recovers the driver's programmed times: D at every concurrency in parallel, D per operation in series", func() {
		ns := newNamespace("ops")
		// D long beside the path's own time (the provisioner, the volume
		// binder and the watch: 0.1 s here, 0.25 s on a busy machine),
		// which is in every figure; the two runs one after the other, so
		// neither waits on the other's operations.
		const d = 8 * time.Second
		parallel := run(ns, "parallel", delayClass("e2e-ops-parallel", map[string]string{"storagebench.test/delay-create": d.String()}),
			[]v1alpha1.VolumeOperation{v1alpha1.OperationProvision}, 1, 4)

		By("in parallel, every claim binds in D: p50 within 5 % of D at 1 and at 4 at once")
		p := complete(parallel, 3*time.Minute)
		for _, s := range curve(p, v1alpha1.OperationProvision).Steps {
			within(s.Latency.P50.Duration, d, 0.05)
		}

		By("in series, the k-th of N finishes at k·D: the slope of the slowest against N within 10 % of D")
		const ds = time.Second
		serial := run(ns, "serial", delayClass("e2e-ops-serial", map[string]string{"storagebench.test/serial": "true",
			"storagebench.test/delay-create": ds.String(), "storagebench.test/delay-snapshot": ds.String(), "storagebench.test/delay-clone": ds.String()}),
			[]v1alpha1.VolumeOperation{v1alpha1.OperationProvision, v1alpha1.OperationSnapshot, v1alpha1.OperationCloneFromSnapshot}, 1, 2, 4)
		sr := complete(serial, 5*time.Minute)
		for _, op := range []v1alpha1.VolumeOperation{v1alpha1.OperationProvision, v1alpha1.OperationSnapshot, v1alpha1.OperationCloneFromSnapshot} {
			c := curve(sr, op)
			Expect(c.PerOperation).NotTo(BeNil(), string(op))
			GinkgoWriter.Printf("%s: %s per operation (%s to %s over %d steps)\n", op, c.PerOperation.Value.Duration,
				c.PerOperation.Low.Duration, c.PerOperation.High.Duration, c.PerOperation.Steps)
			Expect(c.PerOperation.Steps).To(BeEquivalentTo(3))
			within(c.PerOperation.Value.Duration, ds, 0.10)
		}

		// The recording docs/images/volume-operations.png is drawn from.
		sr.ManagedFields = nil
		sr.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "VolumeOperationsBenchmark"}
		recordYAML("volume-operations-"+sr.Name+".yaml", sr)

		By("a real Prometheus has the fit and the percentiles the status has")
		prov := curve(sr, v1alpha1.OperationProvision)
		sel := fmt.Sprintf(`{namespace=%q, benchmark=%q, operation="provision"}`, ns, sr.Name)
		Eventually(func(g Gomega) {
			v, err := prom.query("storagebench_volume_operation_serial_seconds" + sel)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(HaveLen(1))
			g.Expect(float64(v[0].Value)).To(BeNumerically("~", prov.PerOperation.Value.Seconds(), 1e-9))
			v, err = prom.query(fmt.Sprintf(`storagebench_volume_operation_latency_seconds{namespace=%q, benchmark=%q, operation="provision", concurrency="4", percentile="max"}`, ns, sr.Name))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(HaveLen(1))
			g.Expect(float64(v[0].Value)).To(BeNumerically("~", prov.Steps[2].Latency.Max.Seconds(), 1e-9))
		}, time.Minute, time.Second).Should(Succeed())

		By("nothing is left: no claim, no snapshot, no volume of the namespace")
		Eventually(func() []string {
			var left []string
			var claims corev1.PersistentVolumeClaimList
			Expect(k8s.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
			for _, c := range claims.Items {
				left = append(left, "claim "+c.Name)
			}
			var pvs corev1.PersistentVolumeList
			Expect(k8s.List(ctx, &pvs)).To(Succeed())
			for _, pv := range pvs.Items {
				if ref := pv.Spec.ClaimRef; ref != nil && ref.Namespace == ns {
					left = append(left, "volume "+pv.Name)
				}
			}
			return left
		}, time.Minute, time.Second).Should(BeEmpty())
	})
})
