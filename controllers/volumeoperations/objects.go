package volumeoperations

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// VolumeSnapshots are read and written through the dynamic client by
// their fixed resource name: a cluster without the snapshot CRDs answers
// "not found" and the benchmark says so, and the manager needs none of
// the snapshot controller's Go types.
var (
	snapshotGVR      = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshots"}
	snapshotClassGVR = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshotclasses"}
)

// owner is b as the controller reference of what it creates: deleting b
// deletes them (the garbage collector), and an object under one of b's
// names without it is not b's.
func owner(b *v1alpha1.VolumeOperationsBenchmark) metav1.OwnerReference {
	return *metav1.NewControllerRef(b, v1alpha1.GroupVersion.WithKind("VolumeOperationsBenchmark"))
}

// claimOf is a claim of b in ph: index i ≥ 0 timed, i < 0 the source;
// source is its data source (a claim or a snapshot), nil for none.
func claimOf(b *v1alpha1.VolumeOperationsBenchmark, ph phase, name string, i int, source *corev1.TypedLocalObjectReference) *corev1.PersistentVolumeClaim {
	s := &b.Spec.Storage
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.Namespace, Labels: labelsOf(b, ph, i),
			OwnerReferences: []metav1.OwnerReference{owner(b)}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(s.StorageClassName),
			AccessModes:      []corev1.PersistentVolumeAccessMode{s.AccessMode},
			VolumeMode:       ptr.To(s.VolumeMode),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: sizeOf(b)}},
			DataSource:       source,
		},
	}
}

// DefaultSize is a claim's size when spec.storage.size is unset (the
// API's default).
var DefaultSize = resource.MustParse("1Gi")

// sizeOf is the size of b's claims.
func sizeOf(b *v1alpha1.VolumeOperationsBenchmark) resource.Quantity {
	if s := b.Spec.Storage.Size; s != nil {
		return *s
	}
	return DefaultSize
}

// snapshotOf is a VolumeSnapshot of b's claim in ph.
func snapshotOf(b *v1alpha1.VolumeOperationsBenchmark, ph phase, name string, i int, claim string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"volumeSnapshotClassName": ptr.Deref(b.Spec.Storage.VolumeSnapshotClassName, ""),
			"source":                  map[string]any{"persistentVolumeClaimName": claim},
		},
	}}
	u.SetAPIVersion(snapshotGVR.GroupVersion().String())
	u.SetKind("VolumeSnapshot")
	u.SetName(name)
	u.SetNamespace(b.Namespace)
	u.SetLabels(labelsOf(b, ph, i))
	u.SetOwnerReferences([]metav1.OwnerReference{owner(b)})
	return u
}

// runnerUID is the runner image's own user (Dockerfile.runner).
const runnerUID = 65532

// podOf is the pod that attaches b's claim in ph: the client image,
// sleeping, as restricted as a client pod. It only has to get its volume:
// the timing ends when the kubelet has mounted it and started the
// sandbox (PodReadyToStartContainers).
func podOf(b *v1alpha1.VolumeOperationsBenchmark, ph phase, name string, i int, claim string, opts Options) *corev1.Pod {
	c := corev1.Container{
		Name:            "attach",
		Image:           opts.Image,
		ImagePullPolicy: opts.ImagePullPolicy,
		// sleep as PID 1 ignores SIGTERM: the pod's short grace period
		// ends it.
		Command: []string{"sleep", "3600"},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
	}
	if b.Spec.Storage.VolumeMode == corev1.PersistentVolumeBlock {
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/storagebench"}}
	} else {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/storagebench/data"}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.Namespace, Labels: labelsOf(b, ph, i),
			OwnerReferences: []metav1.OwnerReference{owner(b)}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](runnerUID), RunAsGroup: ptr.To[int64](runnerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{c},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
}
