package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/test/k8stest"
)

// The hostile-input suite: what a careless or hostile tenant can put in
// front of the operator, and what the operator must do then — touch
// nothing it did not create, end every run with a specific reason, and
// stay up for everybody else. docs/security.md maps each spec to the
// threat it answers.
var _ = Describe("Hostile input", func() {
	ctx := context.Background()

	Describe("objects the benchmark does not own", func() {
		// Each entry puts somebody else's object under one of the names
		// the benchmark's children get; the run must fail with
		// NameConflict naming it, and the object must be exactly as it
		// was after the benchmark failed and was deleted.
		DescribeTable("fails with NameConflict and leaves the object alone",
			func(mutate func(*v1alpha1.StorageBenchmark), build func(ns, name string) client.Object, kind string) {
				ns := newNamespace()
				b := benchmark(ns, "victim", mutate)
				obj := build(ns, b.Name)
				Expect(k8s.Create(ctx, obj)).To(Succeed())
				rv := settled(obj)
				Expect(k8s.Create(ctx, b)).To(Succeed())
				waitFailed(b, 30*time.Second, controllers.ReasonNameConflict, fmt.Sprintf("%s %q already exists", kind, obj.GetName()))
				Expect(jobsOf(b)).To(BeEmpty(), "no client may start")
				deleteBenchmark(b)
				expectUntouched(obj, rv)
			},
			Entry("a PVC under the shared claim's name", nil, claimNamed("%s-data"), "PersistentVolumeClaim"),
			Entry("a PVC under a per-client claim's name", perClient, claimNamed("%s-data-001"), "PersistentVolumeClaim"),
			Entry("a PVC under the claim's name carrying the operator's labels", nil,
				labelled(claimNamed("%s-data")), "PersistentVolumeClaim"),
			Entry("a ServiceAccount under a client runner's name (its token would run the client)", nil,
				func(ns, name string) client.Object {
					return &corev1.ServiceAccount{ObjectMeta: meta2(ns, name+"-client-001")}
				}, "ServiceAccount"),
			Entry("a ServiceAccount under a client runner's name carrying the operator's labels", nil,
				labelled(func(ns, name string) client.Object {
					return &corev1.ServiceAccount{ObjectMeta: meta2(ns, name+"-client-000")}
				}), "ServiceAccount"),
			Entry("a Role under a client runner's name", nil, func(ns, name string) client.Object {
				return &rbacv1.Role{ObjectMeta: meta2(ns, name+"-client-002")}
			}, "Role"),
			Entry("a RoleBinding under a client runner's name", nil, func(ns, name string) client.Object {
				return &rbacv1.RoleBinding{ObjectMeta: meta2(ns, name+"-client-000"),
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "app"}}
			}, "RoleBinding"),
			Entry("a ConfigMap under the plan's name", nil, configMapNamed("%s-plan"), "ConfigMap"),
			Entry("a ConfigMap under a client's name", nil, configMapNamed("%s-client-002"), "ConfigMap"),
			Entry("a ConfigMap under a later step's name (found before any I/O)", nil, configMapNamed("%s-step-001"), "ConfigMap"),
			Entry("a Job under a client's name", nil, func(ns, name string) client.Object {
				return foreignJob(ns, name+"-client-000")
			}, "Job"),
		)

		It("does not delete an application's claim when the benchmark fails before creating anything", func() {
			ns := newNamespace()
			app := claimNamed("%s-data")(ns, "postgres")
			Expect(k8s.Create(ctx, app)).To(Succeed())
			rv := settled(app)
			b := benchmark(ns, "postgres", func(b *v1alpha1.StorageBenchmark) { b.Spec.Storage.StorageClassName = ptr.To("does-not-exist") })
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonStorageClassNotFound, "does-not-exist")
			Consistently(func() string { return currentRV(app) }, 3*time.Second).Should(Equal(rv))
			deleteBenchmark(b)
			expectUntouched(app, rv)
		})

		It("re-created under the same name at once, waits for the old one's children to go instead of calling them a conflict", func() {
			ns := newNamespace()
			old := benchmark(ns, "again", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			Expect(k8s.Create(ctx, old)).To(Succeed())
			Eventually(func() int { return len(jobsOf(old)) }, 30*time.Second).Should(Equal(1))
			Expect(k8s.Delete(ctx, old, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			b := benchmark(ns, "again", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			Eventually(func() error { return k8s.Create(ctx, b) }, 30*time.Second).Should(Succeed())
			Expect(waitComplete(b, 2*time.Minute).Status.Steps).To(HaveLen(1))
		})

		It("leaves alone a Job that only carries its labels, through a complete run and its cleanup", func() {
			ns := newNamespace()
			b := benchmark(ns, "labels", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			job := foreignJob(ns, "not-a-client")
			job.Labels = map[string]string{exchange.LabelManagedBy: exchange.ManagedBy, exchange.LabelBenchmark: b.Name,
				exchange.LabelRole: exchange.RoleClient, exchange.LabelClient: "0"}
			Expect(k8s.Create(ctx, job)).To(Succeed())
			rv := settled(job)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitComplete(b, 2*time.Minute)
			Eventually(func() []corev1.PersistentVolumeClaim { return claimsOf(b) }, 30*time.Second).Should(BeEmpty())
			deleteBenchmark(b)
			expectUntouched(job, rv)
		})

		It("ignores a labelled ConfigMap that claims to be a failed client", func() {
			ns := newNamespace()
			b := benchmark(ns, "forged", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged-client",
				Labels: map[string]string{exchange.LabelManagedBy: exchange.ManagedBy, exchange.LabelBenchmark: b.Name,
					exchange.LabelRole: exchange.RoleClient, exchange.LabelClient: "0"},
				Annotations: map[string]string{exchange.AnnotationReady: "error"}},
				Data: map[string]string{exchange.KeyReady: `{"client":0,"error":"forged"}`}}
			Expect(k8s.Create(ctx, forged)).To(Succeed())
			rv := settled(forged)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			cur := waitComplete(b, 2*time.Minute)
			Expect(cur.Status.Steps).To(HaveLen(1))
			deleteBenchmark(b)
			expectUntouched(forged, rv)
		})

		It("keeps working while a namespace holds large ConfigMaps carrying its labels", func() {
			ns := newNamespace()
			big := strings.Repeat("x", 900<<10)
			for i := range 20 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ballast-%02d", i),
					Labels: map[string]string{exchange.LabelManagedBy: exchange.ManagedBy, exchange.LabelBenchmark: "ballast", exchange.LabelRole: exchange.RoleClient}},
					Data: map[string]string{"ballast": big}}
				Expect(k8s.Create(ctx, cm)).To(Succeed())
			}
			b := benchmark(ns, "ballast", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Expect(waitComplete(b, 2*time.Minute).Status.Steps).To(HaveLen(1))
		})
	})

	Describe("an existing claim", func() {
		It("is refused without its owner's consent, and nothing is created", func() {
			ns := newNamespace()
			pvc := boundClaim(ns, "app-data", corev1.PersistentVolumeFilesystem, nil)
			rv := settled(pvc)
			b := onExistingClaim(ns, "noconsent", pvc.Name, corev1.PersistentVolumeFilesystem)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonClaimNotConsented, controllers.AnnotationAllowBenchmark+"=files")
			Expect(jobsOf(b)).To(BeEmpty())
			deleteBenchmark(b)
			expectUntouched(pvc, rv)
		})

		DescribeTable("is refused when the consent is for the other volume mode",
			func(mode corev1.PersistentVolumeMode, consent, want string) {
				ns := newNamespace()
				pvc := pendingClaim(ns, "app-data", mode, map[string]string{controllers.AnnotationAllowBenchmark: consent})
				rv := settled(pvc)
				b := onExistingClaim(ns, "wrongconsent", pvc.Name, mode)
				Expect(k8s.Create(ctx, b)).To(Succeed())
				waitFailed(b, 30*time.Second, controllers.ReasonClaimNotConsented, "needs "+controllers.AnnotationAllowBenchmark+"="+want)
				Expect(jobsOf(b)).To(BeEmpty())
				expectUntouched(pvc, rv)
			},
			Entry("raw block overwrite allowed, but the benchmark writes files", corev1.PersistentVolumeFilesystem, controllers.ConsentBlockOverwrite, controllers.ConsentFiles),
			Entry("files allowed, but the benchmark overwrites the raw device", corev1.PersistentVolumeBlock, controllers.ConsentFiles, controllers.ConsentBlockOverwrite),
		)

		It("goes ahead on a raw block claim whose owner consented to overwrite", func() {
			ns := newNamespace()
			pvc := pendingClaim(ns, "lun", corev1.PersistentVolumeBlock, map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentBlockOverwrite})
			rv := settled(pvc)
			b := onExistingClaim(ns, "blockok", pvc.Name, corev1.PersistentVolumeBlock)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(1))
			Expect(meta.IsStatusConditionTrue(get(b).Status.Conditions, v1alpha1.ConditionFailed)).To(BeFalse())
			deleteBenchmark(b)
			expectUntouched(pvc, rv)
		})

		It("with consent to files, writes only in its own directory, re-owns nothing, and removes what it wrote", func() {
			ns := newNamespace()
			pvc := boundClaim(ns, "app-data", corev1.PersistentVolumeFilesystem, map[string]string{controllers.AnnotationAllowBenchmark: controllers.ConsentFiles})
			rv := settled(pvc)
			root := volumeDir(pvc)
			appFile := filepath.Join(root, "PG_VERSION")
			Expect(os.WriteFile(appFile, []byte("16\n"), 0o600)).To(Succeed())
			before, err := os.Stat(appFile)
			Expect(err).NotTo(HaveOccurred())
			b := onExistingClaim(ns, "consented", pvc.Name, corev1.PersistentVolumeFilesystem)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(1))
			pod := jobsOf(b)[0].Spec.Template.Spec
			Expect(pod.SecurityContext.FSGroup).To(BeNil(), "an fsGroup would re-own every file on the volume")
			Expect(pod.SecurityContext.FSGroupChangePolicy).To(BeNil())
			cur := waitComplete(b, 2*time.Minute)
			Expect(cur.Status.Steps).To(HaveLen(1))
			after, err := os.Stat(appFile)
			Expect(err).NotTo(HaveOccurred())
			Expect(after.ModTime()).To(Equal(before.ModTime()))
			Expect(os.ReadFile(appFile)).To(Equal([]byte("16\n")))
			Eventually(func() []string { return entries(root) }, 30*time.Second).Should(Equal([]string{"PG_VERSION"}),
				"the benchmark's directory is removed once the run is done")
			deleteBenchmark(b)
			expectUntouched(pvc, rv)
		})
	})

	Describe("pod-shaped fields under the operator's policy", func() {
		DescribeTable("refuses, before any pod, what the policy does not allow",
			func(mutate func(*v1alpha1.StorageBenchmark), msgPart string) {
				ns := newNamespace()
				b := benchmark(ns, "policy", mutate)
				Expect(k8s.Create(ctx, b)).To(Succeed())
				waitFailed(b, 30*time.Second, controllers.ReasonForbiddenByPolicy, msgPart)
				Expect(jobsOf(b)).To(BeEmpty())
				Expect(claimsOf(b)).To(BeEmpty())
			},
			Entry("a client image other than the configured runner", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Image = "registry.example/other-tenant/private:latest"
			}, "spec.clients.image"),
			Entry("a toleration key nobody allowed", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Tolerations = []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}
			}, "spec.clients.tolerations"),
			Entry("a node selector key nobody allowed", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.NodeSelector = map[string]string{"dedicated": "payments"}
			}, "spec.clients.nodeSelector"),
			Entry("a memory limit above the policy's bound", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Ti")}}
			}, "spec.clients.resources.limits.memory 1Ti is above the operator's policy"),
		)

		It("bounds every client pod: a memory limit, a deadline, and no service account of anybody else", func() {
			ns := newNamespace()
			b := benchmark(ns, "bounded", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 1; b.Spec.Load.Rate.Steps = []int64{100} })
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(1))
			job := jobsOf(b)[0]
			spec := job.Spec.Template.Spec
			Expect(spec.Containers[0].Resources.Limits).To(HaveKey(corev1.ResourceMemory))
			Expect(job.Spec.ActiveDeadlineSeconds).NotTo(BeNil())
			Expect(*job.Spec.ActiveDeadlineSeconds).To(BeNumerically(">", 0))
			var sa corev1.ServiceAccount
			Expect(k8s.Get(ctx, keyOf(ns, spec.ServiceAccountName), &sa)).To(Succeed())
			Expect(metav1.IsControlledBy(&sa, get(b))).To(BeTrue())
			waitComplete(b, 2*time.Minute)
		})
	})

	Describe("creates the API server refuses for good", func() {
		It("fails at once with the quota's message when claims are over quota", func() {
			ns := newNamespace()
			quota(ns, corev1.ResourcePersistentVolumeClaims, "0")
			b := benchmark(ns, "noquota", nil)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonCreateRefused, "exceeded quota")
			Expect(jobsOf(b)).To(BeEmpty())
		})

		It("fails, removing the claims it made, when its ConfigMaps are over quota", func() {
			ns := newNamespace()
			quota(ns, corev1.ResourceConfigMaps, "1") // the namespace's kube-root-ca.crt
			b := benchmark(ns, "cmquota", nil)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonCreateRefused, "exceeded quota")
			Eventually(func() []corev1.PersistentVolumeClaim { return claimsOf(b) }, 30*time.Second).Should(BeEmpty())
			Expect(jobsOf(b)).To(BeEmpty())
		})
	})

	Describe("what clients report", func() {
		// Both clients' results for step 1 are replaced before the runners
		// publish theirs, so the operator collects the forged ones.
		DescribeTable("fails with InvalidResult, never retrying forever",
			func(result func(client int) string, msgPart string) {
				b := runningTwoClients("forgery")
				for i := range 2 {
					publish(b, i, map[string]string{exchange.KeyResult: result(i)}, map[string]string{exchange.AnnotationResultStep: "0"})
				}
				waitFailed(b, 30*time.Second, controllers.ReasonInvalidResult, msgPart)
				noPodsRunning(b, time.Minute)
			},
			Entry("a result larger than the cap", func(i int) string {
				return fmt.Sprintf(`{"client":%d,"step":0,"jobs":1,"error":"%s"}`, i, strings.Repeat("e", 600<<10))
			}, "bytes exceed the 262144-byte cap"),
			Entry("a result that is not JSON (NaN)", func(i int) string {
				return fmt.Sprintf(`{"client":%d,"step":0,"jobs":1,"read":{"iops":NaN}}`, i)
			}, "invalid character 'N'"),
			Entry("a negative rate", func(i int) string {
				return fmt.Sprintf(`{"client":%d,"step":0,"jobs":1,"read":{"ios":10,"bytes":81920,"iops":-100,"bytesPerSec":-819200}}`, i)
			}, "iops -100 is outside"),
			Entry("rates so large their sum overflows", func(i int) string {
				return fmt.Sprintf(`{"client":%d,"step":0,"jobs":1,"read":{"ios":10,"bytes":81920,"iops":1e308,"bytesPerSec":1e308}}`, i)
			}, "iops 1e+308 is outside"),
		)

		It("fails with InvalidResult on a wire result of a version it does not read", func() {
			b := runningTwoClients("wirev9")
			for i := range 2 {
				patchClient(b, i, "binaryData", map[string][]byte{exchange.KeyResultWire: []byte("SBR\x09 a result from the future")},
					map[string]string{exchange.AnnotationResultStep: "0"})
			}
			waitFailed(b, 30*time.Second, controllers.ReasonInvalidResult, fmt.Sprintf("unknown result encoding version 9 (this build reads %v)", results.WireVersions))
			noPodsRunning(b, time.Minute)
		})

		It("bounds a client's 100 KiB error text in status", func() {
			b := runningTwoClients("longerror")
			huge := strings.Repeat("fio: ", 20<<10)
			for i := range 2 {
				res, err := json.Marshal(map[string]any{"client": i, "step": 0, "jobs": 1, "error": huge})
				Expect(err).NotTo(HaveOccurred())
				publish(b, i, map[string]string{exchange.KeyResult: string(res)}, map[string]string{exchange.AnnotationResultStep: "0"})
			}
			cur := waitFailed(b, 30*time.Second, controllers.ReasonClientFailed, "fio: fio: ")
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
			Expect(len(c.Message)).To(BeNumerically("<=", 4096))
		})

		It("bounds a client's 100 KiB preparation error in status", func() {
			ns := newNamespace()
			b := benchmark(ns, "readyerror", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Storage.StorageClassName = ptr.To(classNobody) // clients never start on their own
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			Eventually(func() int { return len(jobsOf(b)) }, 30*time.Second).Should(Equal(3))
			ready, err := json.Marshal(map[string]any{"client": 1, "error": strings.Repeat("x", 100<<10)})
			Expect(err).NotTo(HaveOccurred())
			publish(b, 1, map[string]string{exchange.KeyReady: string(ready)}, map[string]string{exchange.AnnotationReady: "error"})
			cur := waitFailed(b, 30*time.Second, controllers.ReasonClientFailed, "client 1 could not prepare")
			Expect(len(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed).Message)).To(BeNumerically("<=", 4096))
		})
	})

	Describe("exchange objects deleted mid-run", func() {
		DescribeTable("fails with ExchangeObjectLost and the runners end",
			func(name func(b *v1alpha1.StorageBenchmark) string) {
				b := runningTwoClients("lost")
				Expect(k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: meta2(b.Namespace, name(b))})).To(Succeed())
				waitFailed(b, 30*time.Second, controllers.ReasonExchangeLost, name(b))
				noPodsRunning(b, time.Minute)
			},
			Entry("the plan", func(b *v1alpha1.StorageBenchmark) string { return exchange.PlanName(b.Name) }),
			Entry("a client's ConfigMap", func(b *v1alpha1.StorageBenchmark) string { return exchange.ClientName(b.Name, 1) }),
		)
		It("fails with ExchangeObjectLost when a finished step's record is deleted: status is built from it", func() {
			b := benchmark(newNamespace(), "lost-step", func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.Count = 2
				b.Spec.Load.Rate.Steps = []int64{100, 200, 300}
				b.Spec.Load.StepDuration = metav1.Duration{Duration: 15 * time.Second}
			})
			Expect(k8s.Create(ctx, b)).To(Succeed())
			waitFor(b, 2*time.Minute, "in step 1", k8stest.StepRunning(1))
			Expect(k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: meta2(b.Namespace, exchange.StepName(b.Name, 0))})).To(Succeed())
			waitFailed(b, 30*time.Second, controllers.ReasonExchangeLost, "the step ConfigMaps record 0 steps")
			noPodsRunning(b, time.Minute)
		})
	})

	Describe("clients' clocks", func() {
		It("fails when a client's clock is further off than the start lead", func() {
			offsetClient(1, "5s")
			ns := newNamespace()
			b := benchmark(ns, "skewed", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 2 })
			Expect(k8s.Create(ctx, b)).To(Succeed())
			cur := waitFailed(b, time.Minute, controllers.ReasonClockOffsetTooLarge, "from the API server's")
			Expect(cur.Status.Clock).NotTo(BeNil())
			Expect(cur.Status.Clock.MaxOffset.Duration).To(BeNumerically("~", 5*time.Second, time.Second))
			Expect(cur.Status.Steps).To(BeEmpty())
		})

		It("warns about a small offset, corrects for it, and completes", func() {
			offsetClient(1, "400ms")
			ns := newNamespace()
			b := benchmark(ns, "drift", func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Count = 2; b.Spec.Load.Rate.Steps = []int64{100} })
			Expect(k8s.Create(ctx, b)).To(Succeed())
			cur := waitComplete(b, 2*time.Minute)
			Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionClockSkew)).To(BeTrue())
			Expect(cur.Status.Clock.Spread.Duration).To(BeNumerically("~", 400*time.Millisecond, 300*time.Millisecond))
			// Corrected: the clients started together although one clock
			// is 400 ms ahead.
			Expect(cur.Status.Steps[0].StartSkew.Duration).To(BeNumerically("<", 250*time.Millisecond))
		})
	})
})

func perClient(b *v1alpha1.StorageBenchmark) {
	b.Spec.Storage.Sharing, b.Spec.Storage.AccessMode = v1alpha1.SharingPerClient, ""
}

func meta2(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func claimNamed(format string) func(ns, name string) client.Object {
	return func(ns, name string) client.Object {
		return &corev1.PersistentVolumeClaim{ObjectMeta: meta2(ns, fmt.Sprintf(format, name)),
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(classNobody),
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	}
}

func configMapNamed(format string) func(ns, name string) client.Object {
	return func(ns, name string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: meta2(ns, fmt.Sprintf(format, name)), Data: map[string]string{"app": "config"}}
	}
}

// labelled puts the operator's labels on the object build makes, as
// anybody may.
func labelled(build func(ns, name string) client.Object) func(ns, name string) client.Object {
	return func(ns, name string) client.Object {
		o := build(ns, name)
		o.SetLabels(map[string]string{exchange.LabelManagedBy: exchange.ManagedBy, exchange.LabelBenchmark: name, exchange.LabelRole: exchange.RoleData})
		return o
	}
}

// foreignJob is an application's suspended Job (it never runs).
func foreignJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: meta2(ns, name), Spec: batchv1.JobSpec{Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}}}
}

// settled waits until Kubernetes' own controllers are done with a new
// object (the volume binder annotates claims, the Job controller writes a
// Job's status) and returns its resourceVersion then: from there on, any
// change is the operator's.
func settled(obj client.Object) string {
	GinkgoHelper()
	rv := currentRV(obj)
	Eventually(func() bool {
		was := rv
		time.Sleep(1500 * time.Millisecond)
		rv = currentRV(obj)
		return rv == was
	}, 30*time.Second).Should(BeTrue(), "%s keeps changing", obj.GetName())
	return rv
}

func currentRV(obj client.Object) string {
	cur := obj.DeepCopyObject().(client.Object)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), cur); err != nil {
		return "error: " + err.Error()
	}
	return cur.GetResourceVersion()
}

// expectUntouched checks obj is still there, unchanged (resourceVersion)
// and not being deleted.
func expectUntouched(obj client.Object, rv string) {
	GinkgoHelper()
	cur := obj.DeepCopyObject().(client.Object)
	Consistently(func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), cur); err != nil {
			return err
		}
		if cur.GetResourceVersion() != rv || cur.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s changed: resourceVersion %s → %s, deletion %v", obj.GetName(), rv, cur.GetResourceVersion(), cur.GetDeletionTimestamp())
		}
		return nil
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
}

// deleteBenchmark deletes b and waits until it and its owned children are
// gone.
func deleteBenchmark(b *v1alpha1.StorageBenchmark) {
	GinkgoHelper()
	Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), b, client.PropagationPolicy(metav1.DeletePropagationForeground)))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(context.Background(), client.ObjectKeyFromObject(b), &v1alpha1.StorageBenchmark{}))
	}, time.Minute, 250*time.Millisecond).Should(BeTrue())
}

func onExistingClaim(ns, name, claim string, mode corev1.PersistentVolumeMode) *v1alpha1.StorageBenchmark {
	return benchmark(ns, name, func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Clients.Count = 1
		b.Spec.Storage = v1alpha1.StorageSpec{ExistingClaim: ptr.To(claim), Sharing: v1alpha1.SharingShared, VolumeMode: mode, Size: resource.MustParse("1Gi")}
		b.Spec.Load.Rate.Steps = []int64{100}
	})
}

// boundClaim is an application's claim on the harness' class, bound.
func boundClaim(ns, name string, mode corev1.PersistentVolumeMode, annotations map[string]string) *corev1.PersistentVolumeClaim {
	GinkgoHelper()
	pvc := claimOf(ns, name, classLocal, mode, annotations)
	Expect(k8s.Create(context.Background(), pvc)).To(Succeed())
	Eventually(func() corev1.PersistentVolumeClaimPhase {
		Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
		return pvc.Status.Phase
	}, testBindWait, 250*time.Millisecond).Should(Equal(corev1.ClaimBound))
	return pvc
}

// pendingClaim is an application's claim that no provisioner serves.
func pendingClaim(ns, name string, mode corev1.PersistentVolumeMode, annotations map[string]string) *corev1.PersistentVolumeClaim {
	GinkgoHelper()
	pvc := claimOf(ns, name, classNobody, mode, annotations)
	Expect(k8s.Create(context.Background(), pvc)).To(Succeed())
	return pvc
}

func claimOf(ns, name, class string, mode corev1.PersistentVolumeMode, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeMode: &mode,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

// volumeDir is the host directory behind a bound claim of the harness.
func volumeDir(pvc *corev1.PersistentVolumeClaim) string {
	GinkgoHelper()
	var pv corev1.PersistentVolume
	Expect(k8s.Get(context.Background(), client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv)).To(Succeed())
	Expect(pv.Spec.HostPath).NotTo(BeNil())
	return pv.Spec.HostPath.Path
}

func entries(dir string) []string {
	list, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

func quota(ns string, r corev1.ResourceName, n string) {
	GinkgoHelper()
	q := &corev1.ResourceQuota{ObjectMeta: meta2(ns, "tight"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{r: resource.MustParse(n)}}}
	Expect(k8s.Create(context.Background(), q)).To(Succeed())
	// The quota admission plugin enforces once the quota's status is set.
	Eventually(func() corev1.ResourceList {
		Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(q), q)).To(Succeed())
		return q.Status.Hard
	}, 30*time.Second, 250*time.Millisecond).ShouldNot(BeEmpty())
}

// runningTwoClients starts a benchmark of 2 clients whose first step lasts
// long enough for a spec to act on it while it runs, and waits for it.
func runningTwoClients(name string) *v1alpha1.StorageBenchmark {
	GinkgoHelper()
	ns := newNamespace()
	b := benchmark(ns, name, func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Clients.Count = 2
		b.Spec.Load.StepDuration = metav1.Duration{Duration: 30 * time.Second}
	})
	Expect(k8s.Create(context.Background(), b)).To(Succeed())
	waitFor(b, 2*time.Minute, "step 1 ordered", func(c *v1alpha1.StorageBenchmark) bool { return c.Status.CurrentStep != nil })
	return b
}

// publish writes into client i's ConfigMap as its runner would.
func publish(b *v1alpha1.StorageBenchmark, i int, data, annotations map[string]string) {
	GinkgoHelper()
	patchClient(b, i, "data", data, annotations)
}

// patchClient merges values into field (data or binaryData) of client i's
// ConfigMap, with annotations, as a runner would.
func patchClient(b *v1alpha1.StorageBenchmark, i int, field string, values any, annotations map[string]string) {
	GinkgoHelper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}, field: values})
	Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: meta2(b.Namespace, exchange.ClientName(b.Name, i))}
	Expect(k8s.Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, body))).To(Succeed())
}

// offsetClient shifts the clock of every client i runner started during
// the spec by offset (the runner's test hook), as on a node whose clock is
// off.
func offsetClient(i int, offset string) {
	cluster.Kubelet.SetNodeEnv(func(p *corev1.Pod) []string {
		if p.Labels[exchange.LabelClient] == fmt.Sprint(i) {
			return []string{"STORAGEBENCH_TEST_CLOCK_OFFSET=" + offset}
		}
		return nil
	})
	DeferCleanup(func() { cluster.Kubelet.SetNodeEnv(nil) })
}
