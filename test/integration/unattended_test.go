package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/test/k8stest"
)

// What a manager left alone for months meets: its own history, tenants
// who replace what it wrote, applications' volumes, clients that write
// what they should not, and garbage. Each spec answers a finding of the
// unattended-operation review (docs/security.md maps them); each failed on
// the manager before it.
var _ = Describe("Left alone on a shared cluster", func() {
	ctx := context.Background()

	Describe("the manager's memory", func() {
		It("ends a running run whose step record is replaced, and holds no record of it afterwards however often it is replaced", func() {
			b := benchmark(newNamespace(), "replaced", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = 2
				b.Spec.Load.Rate.Steps = []int64{100, 200, 300}
				b.Spec.Load.StepDuration = metav1.Duration{Duration: 10 * time.Second}
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFor(b, 2*time.Minute, "in step 2", k8stest.StepRunning(1))
			Expect(stepRecordsHeld()).To(BeNumerically(">=", 1), "the running run's record is held")
			// The record as it was, created again under its name by
			// somebody who may create ConfigMaps: same data, the
			// benchmark as controller. Again and again.
			name := exchange.StepName(b.Name, 0)
			for range 20 {
				var rec corev1.ConfigMap
				Expect(k8s.Get(ctx, keyOf(b.Namespace, name), &rec)).To(Succeed())
				Expect(k8s.Delete(ctx, &rec, client.Preconditions{UID: &rec.UID})).To(Succeed())
				forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: name,
					Labels: rec.Labels, OwnerReferences: rec.OwnerReferences}, Data: rec.Data}
				Expect(k8s.Create(ctx, forged)).To(Succeed())
			}
			waitFailed(b, 30*time.Second, controllers.ReasonExchangeLost, "record")
			noPodsRunning(b, time.Minute)
			Eventually(stepRecordsHeld, 30*time.Second).Should(BeZero(), "an ended run's records are not held")
		})

		It("keeps an ended run's status as it is across a restart, without reading its records again", func() {
			b := benchmark(newNamespace(), "ended", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = 1
				b.Spec.Load.Rate.Steps = []int64{100}
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitComplete(b, 2*time.Minute)
			// Complete is written before the ended passes join the
			// backend's samples: the status is final once that is known.
			before := waitFor(b, time.Minute, "the backend's samples joined", func(b *v1alpha1.StorageBenchmark) bool {
				c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionBackendMetrics)
				return c != nil && c.Status != metav1.ConditionUnknown
			}).Status
			Expect(before.Steps).To(HaveLen(1))
			// The record edited after the end: a manager that rebuilt the
			// ended status from it at every start would now show other
			// figures (and would have kept every ended run's records).
			mgr.Stop()
			var rec corev1.ConfigMap
			Expect(k8s.Get(ctx, keyOf(b.Namespace, exchange.StepName(b.Name, 0)), &rec)).To(Succeed())
			_, agg, err := exchange.Step(&rec, 0)
			Expect(err).NotTo(HaveOccurred())
			agg.Total.IOPS *= 2
			value, err := exchange.Encode(agg)
			Expect(err).NotTo(HaveOccurred())
			rec.Data[exchange.KeyAggregate] = value
			Expect(k8s.Update(ctx, &rec)).To(Succeed())
			mgr = startManager()
			poke(b)
			Consistently(func() v1alpha1.StorageBenchmarkStatus { return get(b).Status }, 5*time.Second, 250*time.Millisecond).Should(Equal(before))
			Expect(stepRecordsHeld()).To(BeZero())
		})
	})

	Describe("an existing claim", func() {
		It("refuses a working set beyond the claim's capacity less its application's reserve, before any pod", func() {
			ns := newNamespace()
			pvc := boundClaim(ns, "app-data", corev1.PersistentVolumeFilesystem, map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentFiles})
			rv := settled(pvc)
			b := onExistingClaim(ns, "toobig", pvc.Name, corev1.PersistentVolumeFilesystem)
			b.Spec.Clients.Count = 2
			b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse("512Mi")) // 1 GiB of a 1 GiB claim
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonClaimTooSmall, "more than 90 % of its capacity")
			Expect(jobsOf(b)).To(BeEmpty())
			Expect(entries(volumeDir(pvc))).To(BeEmpty())
			deleteBenchmark(b)
			expectUntouched(pvc, rv)
		})

		It("refuses, in the runner, a working set beyond the free space it sees, and writes nothing", func() {
			ns := newNamespace()
			// A claim of 1 GiB on a file system with 16 MiB: the claim's
			// capacity says it fits, the file system does not.
			dir, pvc := smallFileSystemClaim(ns, "16m", "1Gi")
			b := onExistingClaim(ns, "nospace", pvc.Name, corev1.PersistentVolumeFilesystem)
			b.Spec.Workload.WorkingSetPerClient = ptr.To(resource.MustParse("64Mi"))
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, time.Minute, controllers.ReasonClientFailed, "not enough free space")
			Eventually(func() []string { return entries(dir) }, 30*time.Second).Should(BeEmpty(), "nothing written, the benchmark's directory removed")
			Expect(usedBytes(dir)).To(BeNumerically("<", 1<<20))
		})

		It("removes what a killed runner left, and says so in status", func() {
			ns := newNamespace()
			pvc := boundClaim(ns, "app-data", corev1.PersistentVolumeFilesystem, map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentFiles})
			root := volumeDir(pvc)
			Expect(os.WriteFile(filepath.Join(root, "PG_VERSION"), []byte("16\n"), 0o600)).To(Succeed())
			b := onExistingClaim(ns, "killed", pvc.Name, corev1.PersistentVolumeFilesystem)
			b.Spec.Load.Rate.Steps = []int64{100, 200}
			b.Spec.Load.StepDuration = metav1.Duration{Duration: 20 * time.Second}
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFor(b, 2*time.Minute, "in step 1", k8stest.StepRunning(0))
			Expect(entries(root)).To(ContainElement(HavePrefix("storagebench-killed-")), "the runner writes in its own directory")
			var pods corev1.PodList
			Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{exchange.LabelRole: exchange.RoleClient})).To(Succeed())
			Expect(pods.Items).To(HaveLen(1))
			// SIGKILL, as the OOM killer does: the runner removes nothing.
			Expect(cluster.Kubelet.KillPod(ns, pods.Items[0].Name)).To(Succeed())
			waitFailed(b, time.Minute, controllers.ReasonClientFailed, "signal 9")
			cur := waitFor(b, 2*time.Minute, "cleaned up", func(c *v1alpha1.StorageBenchmark) bool {
				return c.Status.Cleanup != nil && c.Status.Cleanup.State != v1alpha1.CleanupPending
			})
			Expect(cur.Status.Cleanup.State).To(Equal(v1alpha1.CleanupRemoved), cur.Status.Cleanup.Message)
			Expect(entries(root)).To(Equal([]string{"PG_VERSION"}), "only the application's file is left")
			Expect(os.ReadFile(filepath.Join(root, "PG_VERSION"))).To(Equal([]byte("16\n")))
			By("the cleanup Job goes once its outcome is recorded")
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, keyOf(ns, controllers.CleanupName(b.Name)), &batchv1.Job{}))
			}, time.Minute).Should(BeTrue())
		})
	})

	Describe("client identity", func() {
		It("lets a client write only its own result", func() {
			b := runningTwoClients("identity")
			job := jobsOf(b)[0]
			Expect(job.Labels[exchange.LabelClient]).To(Equal("0"))
			c0 := clientAs(b.Namespace, job.Spec.Template.Spec.ServiceAccountName)
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+exchange.AnnotationResultStep+`":"0"}}}`))
			other := &corev1.ConfigMap{ObjectMeta: meta2(b.Namespace, exchange.ClientName(b.Name, 1))}
			err := c0.Patch(ctx, other, patch, client.DryRunAll)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "client 0 writing client 1's result: %v", err)
			own := &corev1.ConfigMap{ObjectMeta: meta2(b.Namespace, exchange.ClientName(b.Name, 0))}
			Expect(c0.Patch(ctx, own, patch, client.DryRunAll)).To(Succeed(), "client 0 writing its own")
			// The run itself needs not go on: its 30 s steps prove nothing
			// more here.
			deleteBenchmark(b)
		})

		It("never merges a client ConfigMap marked as holding a result but holding none", func() {
			b := runningTwoClients("noresult")
			for i := range 2 {
				publish(b, i, map[string]string{}, map[string]string{exchange.AnnotationResultStep: "0"})
			}
			waitFailed(b, 30*time.Second, controllers.ReasonInvalidResult, "holds none")
			Expect(get(b).Status.Steps).To(BeEmpty(), "nothing of it recorded")
			noPodsRunning(b, time.Minute)
		})
	})

	Describe("smaller findings", func() {
		It("says a clock it could not measure is unknown, not agreeing", func() {
			ns := newNamespace()
			b := benchmark(ns, "unmeasured", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To(classNobody) // clients never start on their own
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(3))
			for i := range 3 {
				ready, err := json.Marshal(protocol.Ready{Client: i, ClockOffsetError: "GET /version: no Date header"})
				Expect(err).NotTo(HaveOccurred())
				publish(b, i, map[string]string{exchange.KeyReady: string(ready)}, map[string]string{exchange.AnnotationReady: "true"})
			}
			cur := waitFor(b, 30*time.Second, "clocks judged", func(c *v1alpha1.StorageBenchmark) bool {
				return meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionClockSkew) != nil
			})
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionClockSkew)
			Expect(c.Status).To(Equal(metav1.ConditionUnknown), c.Message)
			Expect(c.Reason).To(Equal(controllers.ReasonClocksNotMeasured))
			Expect(c.Message).To(ContainSubstring("3 of 3 clients could not measure"))
			deleteBenchmark(b)
		})

		It("ends a run whose order was garbled, and deletes it after its TTL", func() {
			ns := newNamespace()
			b := benchmark(ns, "garbled", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = 1
				b.Spec.Load.StepDuration = metav1.Duration{Duration: 30 * time.Second}
				b.Spec.Cleanup.TTLSecondsAfterFinished = ptr.To[int32](5)
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFor(b, 2*time.Minute, "step 1 ordered", func(c *v1alpha1.StorageBenchmark) bool { return c.Status.CurrentStep != nil })
			garble := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"storagebench.io/order":"{not an order"}}}`))
			Expect(k8s.Patch(ctx, &corev1.ConfigMap{ObjectMeta: meta2(ns, exchange.PlanName(b.Name))}, garble)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonExchangeLost, "cannot be read")
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.StorageBenchmark{}))
			}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "the TTL fires: the run ended")
		})
	})
})

// stepRecordsHeld reads storagebench_manager_step_records from the
// in-process manager's registry.
func stepRecordsHeld() float64 {
	GinkgoHelper()
	families, err := crmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() == "storagebench_manager_step_records" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	Fail("storagebench_manager_step_records is not exported")
	return 0
}

// poke touches b so that it is reconciled.
func poke(b *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test/poke":"`+time.Now().Format(time.RFC3339Nano)+`"}}}`))
	Expect(k8s.Patch(context.Background(), b.DeepCopy(), patch)).To(Succeed())
}

// clientAs is a client with the token of ServiceAccount sa in ns, as a
// pod running under it has.
func clientAs(ns, sa string) client.Client {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// smallFileSystemClaim makes a tmpfs of fsSize and an application's claim
// of claimSize bound to it (a static PersistentVolume), whose owner
// consented to files.
func smallFileSystemClaim(ns, fsSize, claimSize string) (string, *corev1.PersistentVolumeClaim) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+fsSize, "small-"+ns, dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	DeferCleanup(func() { _ = exec.Command("umount", dir).Run() })
	Expect(os.Chmod(dir, 0o777)).To(Succeed())
	class := "small-" + ns
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner"}
	Expect(k8s.Create(context.Background(), sc)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), sc) })
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(claimSize)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
		},
	}
	Expect(k8s.Create(context.Background(), pv)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), pv) })
	pvc := claimOf(ns, "app-data", class, corev1.PersistentVolumeFilesystem, map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentFiles})
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(claimSize)
	Expect(k8s.Create(context.Background(), pvc)).To(Succeed())
	Eventually(func() corev1.PersistentVolumeClaimPhase {
		Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
		return pvc.Status.Phase
	}, testBindWait, 250*time.Millisecond).Should(Equal(corev1.ClaimBound))
	return dir, pvc
}

// usedBytes is what the file system under dir has in use.
func usedBytes(dir string) uint64 {
	GinkgoHelper()
	out, err := exec.Command("df", "--output=used", "-B1", dir).Output()
	Expect(err).NotTo(HaveOccurred())
	fields := strings.Fields(string(out))
	Expect(fields).To(HaveLen(2))
	var n uint64
	_, err = fmt.Sscan(fields[1], &n)
	Expect(err).NotTo(HaveOccurred())
	return n
}
