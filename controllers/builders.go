package controllers

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/spec"
)

// The runner's user and group: non-root, as the restricted Pod Security
// profile requires; fsGroup makes the volume writable for it.
const runnerUID = 65532

// Builders are pure: they construct the desired children of a benchmark
// with deterministic names. Owner references are set by the reconciler.

func labels(b *v1alpha1.StorageBenchmark, role string) map[string]string {
	return map[string]string{
		exchange.LabelManagedBy: exchange.ManagedBy,
		exchange.LabelBenchmark: b.Name,
		exchange.LabelRole:      role,
	}
}

func objectMeta(b *v1alpha1.StorageBenchmark, name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: b.Namespace, Labels: labels(b, role)}
}

// claimNames lists the claims the clients mount, client by client: one
// shared claim, one per client, or the user's existing claim.
func claimNames(b *v1alpha1.StorageBenchmark) []string {
	n := int(b.Spec.Clients.Count)
	names := make([]string, n)
	for i := range names {
		switch {
		case b.Spec.Storage.ExistingClaim != nil:
			names[i] = *b.Spec.Storage.ExistingClaim
		case b.Spec.Storage.Sharing == v1alpha1.SharingShared:
			names[i] = exchange.SharedClaimName(b.Name)
		default:
			names[i] = exchange.ClientClaimName(b.Name, i)
		}
	}
	return names
}

// accessModeOf is the claims' access mode: the spec's, else ReadWriteMany
// for a volume shared by several clients and ReadWriteOnce otherwise.
func accessModeOf(b *v1alpha1.StorageBenchmark) corev1.PersistentVolumeAccessMode {
	if m := b.Spec.Storage.AccessMode; m != "" {
		return m
	}
	if b.Spec.Storage.Sharing == v1alpha1.SharingShared && b.Spec.Clients.Count > 1 {
		return corev1.ReadWriteMany
	}
	return corev1.ReadWriteOnce
}

// buildClaims returns the claims to provision (none for an existing claim).
func buildClaims(b *v1alpha1.StorageBenchmark) []*corev1.PersistentVolumeClaim {
	if b.Spec.Storage.ExistingClaim != nil {
		return nil
	}
	var out []*corev1.PersistentVolumeClaim
	seen := map[string]bool{}
	mode := b.Spec.Storage.VolumeMode
	for _, name := range claimNames(b) {
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, &corev1.PersistentVolumeClaim{
			ObjectMeta: objectMeta(b, name, exchange.RoleData),
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: b.Spec.Storage.StorageClassName,
				AccessModes:      []corev1.PersistentVolumeAccessMode{accessModeOf(b)},
				VolumeMode:       &mode,
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: b.Spec.Storage.Size},
				},
			},
		})
	}
	return out
}

// buildClientRBAC returns client i's identity: a ServiceAccount of its
// own, and a Role allowing exactly what its runner does: read the plan
// ConfigMap (get, and watch by name) and patch its own client ConfigMap.
// One identity per client, so that no client can write another's result:
// the API server refuses it (docs/security.md).
func buildClientRBAC(b *v1alpha1.StorageBenchmark, i int) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := exchange.ClientName(b.Name, i)
	meta := func() metav1.ObjectMeta {
		m := objectMeta(b, name, exchange.RoleRunner)
		m.Labels[exchange.LabelClient] = strconv.Itoa(i)
		return m
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta(), AutomountServiceAccountToken: ptr.To(true)}
	role := &rbacv1.Role{
		ObjectMeta: meta(),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"},
				ResourceNames: []string{exchange.PlanName(b.Name)}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "patch"},
				ResourceNames: []string{name}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: b.Namespace}},
	}
	return sa, role, binding
}

// buildClientConfigMap is client i's ConfigMap, empty until its runner
// writes to it.
func buildClientConfigMap(b *v1alpha1.StorageBenchmark, i int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta(b, exchange.ClientName(b.Name, i), exchange.RoleClient)}
	cm.Labels[exchange.LabelClient] = strconv.Itoa(i)
	return cm
}

// buildPlanConfigMap is the plan ConfigMap: the plan every client reads
// (spec.ClientPlan), before any order.
func buildPlanConfigMap(b *v1alpha1.StorageBenchmark, d *spec.Run) (*corev1.ConfigMap, error) {
	value, err := exchange.Encode(spec.ClientPlan(b, d))
	return &corev1.ConfigMap{ObjectMeta: objectMeta(b, exchange.PlanName(b.Name), exchange.RolePlan),
		Data: map[string]string{exchange.KeyPlan: value}}, err
}

// JobOptions are the settings of client Jobs: the manager-wide image and
// pull policy, and per run the deadline and default memory limit.
type JobOptions struct {
	// Image is the default runner image.
	Image string
	// ImagePullPolicy of the runner container (default IfNotPresent).
	ImagePullPolicy corev1.PullPolicy
	// ActiveDeadlineSeconds bounds the client pods' life: the longest the
	// whole run may take, so no pod outlives a run nobody conducts.
	ActiveDeadlineSeconds *int64
	// MemoryLimit is the runner container's memory limit when the
	// benchmark sets none.
	MemoryLimit *resource.Quantity
}

// defaultRunnerResources keep the runner schedulable everywhere; no limit,
// so fio is never CPU-throttled in the middle of a step.
var defaultRunnerResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
}

// restricted is the runner container's security context, as the restricted
// Pod Security profile wants it: no privilege escalation, no capabilities,
// a read-only root file system, not root.
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
	}
}

// buildJob is client i's Job: one pod for the whole run, never retried (a
// replacement client would lay out its files again; see docs/operator.md).
func buildJob(b *v1alpha1.StorageBenchmark, i int, claim string, opts JobOptions) *batchv1.Job {
	name := exchange.ClientName(b.Name, i)
	podLabels := labels(b, exchange.RoleClient)
	podLabels[exchange.LabelClient] = strconv.Itoa(i)
	c := &b.Spec.Clients
	container := runnerContainer(b, i, opts)
	security := podSecurity(b)
	pod := corev1.PodSpec{
		ServiceAccountName:            exchange.ClientName(b.Name, i),
		ActiveDeadlineSeconds:         opts.ActiveDeadlineSeconds,
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		NodeSelector:                  c.NodeSelector,
		Tolerations:                   c.Tolerations,
		SecurityContext:               security,
		Containers:                    []corev1.Container{container},
		Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
			{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))}}},
		},
	}
	if c.SpreadAcrossNodes {
		pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       corev1.LabelHostname,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}},
		}}
	}
	job := &batchv1.Job{
		ObjectMeta: objectMeta(b, name, exchange.RoleClient),
		Spec: batchv1.JobSpec{
			ActiveDeadlineSeconds: opts.ActiveDeadlineSeconds,
			BackoffLimit:          ptr.To[int32](0),
			Completions:           ptr.To[int32](1),
			Parallelism:           ptr.To[int32](1),
			Template:              corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod},
		},
	}
	job.Labels[exchange.LabelClient] = strconv.Itoa(i)
	return job
}

// runnerContainer is client i's runner container: the image and pull
// policy of the benchmark or the manager's default, the requested
// resources (a memory limit derived from the workload when none is set),
// the data volume mounted or attached as a device.
func runnerContainer(b *v1alpha1.StorageBenchmark, i int, opts JobOptions) corev1.Container {
	c := &b.Spec.Clients
	image := opts.Image
	if c.Image != "" {
		image = c.Image
	}
	pull := opts.ImagePullPolicy
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	// A copy: decoding the API server's answer into the created Job writes
	// into these maps, which must not be the package default's.
	resources := *defaultRunnerResources.DeepCopy()
	if c.Resources != nil {
		resources = *c.Resources.DeepCopy()
	}
	if _, set := resources.Limits[corev1.ResourceMemory]; !set && opts.MemoryLimit != nil {
		if resources.Limits == nil {
			resources.Limits = corev1.ResourceList{}
		}
		resources.Limits[corev1.ResourceMemory] = *opts.MemoryLimit
	}
	container := corev1.Container{
		Name:            "runner",
		Image:           image,
		ImagePullPolicy: pull,
		Command:         []string{exchange.RunnerCommand},
		Args: []string{"client", "--kube", "--workdir=" + exchange.WorkMountPath,
			"--termination-log=" + exchange.TerminationLog},
		Env: []corev1.EnvVar{
			{Name: exchange.EnvNamespace, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: exchange.EnvBenchmark, Value: b.Name},
			{Name: exchange.EnvClient, Value: strconv.Itoa(i)},
			{Name: exchange.EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
		Resources:                resources,
		VolumeMounts:             []corev1.VolumeMount{{Name: "work", MountPath: exchange.WorkMountPath}},
		TerminationMessagePath:   exchange.TerminationLog,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          restricted(),
	}
	if b.Spec.Storage.VolumeMode == corev1.PersistentVolumeBlock {
		container.VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: exchange.DevicePath}}
	} else {
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: exchange.DataMountPath})
	}
	return container
}

// podSecurity is the client pods' security context: the runner's own
// user, and on the operator's own volumes its group (an existing claim is
// never re-owned).
func podSecurity(b *v1alpha1.StorageBenchmark) *corev1.PodSecurityContext {
	security := &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To[int64](runnerUID),
		RunAsGroup:          ptr.To[int64](runnerUID),
		FSGroup:             ptr.To[int64](runnerUID),
		FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if b.Spec.Storage.ExistingClaim != nil {
		// Never re-own somebody else's volume: with an fsGroup the kubelet
		// would chown every file on it.
		security.FSGroup, security.FSGroupChangePolicy = nil, nil
	}
	return security
}
