package controllers

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/test/build"
)

const (
	testName      = "bench"
	testNamespace = "perf"
	testImage     = "registry.example/storagebench/runner:v1"
)

// newBench is a benchmark as the API server stores it: the CRD's defaults
// filled in (unit tests see no defaulting), then mods applied.
func newBench(mods ...build.Option) *v1alpha1.StorageBenchmark {
	return build.Stored(testNamespace, testName, mods...)
}

func wantLabels(role string) map[string]string {
	return map[string]string{
		exchange.LabelManagedBy: exchange.ManagedBy,
		exchange.LabelBenchmark: testName,
		exchange.LabelRole:      role,
	}
}

func TestClaimNames(t *testing.T) {
	tests := []struct {
		name string
		b    *v1alpha1.StorageBenchmark
		want []string
	}{
		{"shared, one client", newBench(build.Sharing(v1alpha1.SharingShared)), []string{"bench-data"}},
		{"shared, three clients", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(3)),
			[]string{"bench-data", "bench-data", "bench-data"}},
		{"per client, one client", newBench(), []string{"bench-data-000"}},
		{"per client, three clients", newBench(build.Clients(3)), []string{"bench-data-000", "bench-data-001", "bench-data-002"}},
		{"existing claim, shared", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(3), build.ExistingClaim("mine")),
			[]string{"mine", "mine", "mine"}},
		{"existing claim, single per-client", newBench(build.ExistingClaim("mine")), []string{"mine"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimNames(tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("claimNames() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClaimNamesPerClientIsZeroPadded(t *testing.T) {
	names := claimNames(newBench(build.Clients(1000)))
	if len(names) != 1000 || names[0] != "bench-data-000" || names[999] != "bench-data-999" {
		t.Fatalf("claimNames() for 1000 clients: %d names, first %q, last %q", len(names), names[0], names[len(names)-1])
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Fatalf("claim %s named twice", n)
		}
		seen[n] = true
	}
}

func TestAccessModeOf(t *testing.T) {
	tests := []struct {
		name string
		b    *v1alpha1.StorageBenchmark
		want corev1.PersistentVolumeAccessMode
	}{
		{"shared, several clients", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(4)), corev1.ReadWriteMany},
		{"shared, one client", newBench(build.Sharing(v1alpha1.SharingShared)), corev1.ReadWriteOnce},
		{"per client, several clients", newBench(build.Clients(4)), corev1.ReadWriteOnce},
		{"per client, one client", newBench(), corev1.ReadWriteOnce},
		{"explicit wins over RWX default", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(1), build.AccessMode(corev1.ReadWriteOncePod)),
			corev1.ReadWriteOncePod},
		{"explicit RWX on per-client", newBench(build.Clients(4), build.AccessMode(corev1.ReadWriteMany)), corev1.ReadWriteMany},
		{"explicit RWO on shared single", newBench(build.Sharing(v1alpha1.SharingShared), build.AccessMode(corev1.ReadWriteOnce)), corev1.ReadWriteOnce},
		{"explicit RWX on shared several", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(2), build.AccessMode(corev1.ReadWriteMany)),
			corev1.ReadWriteMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := accessModeOf(tt.b); got != tt.want {
				t.Errorf("accessModeOf() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBuildClaims(t *testing.T) {
	tests := []struct {
		name      string
		b         *v1alpha1.StorageBenchmark
		wantNames []string
		wantMode  corev1.PersistentVolumeAccessMode
		wantVM    corev1.PersistentVolumeMode
	}{
		{"shared dedups to one claim", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(5)),
			[]string{"bench-data"}, corev1.ReadWriteMany, corev1.PersistentVolumeFilesystem},
		{"shared single client", newBench(build.Sharing(v1alpha1.SharingShared)),
			[]string{"bench-data"}, corev1.ReadWriteOnce, corev1.PersistentVolumeFilesystem},
		{"per client", newBench(build.Clients(3)),
			[]string{"bench-data-000", "bench-data-001", "bench-data-002"}, corev1.ReadWriteOnce, corev1.PersistentVolumeFilesystem},
		{"per client block", newBench(build.Clients(2), build.VolumeMode(corev1.PersistentVolumeBlock)),
			[]string{"bench-data-000", "bench-data-001"}, corev1.ReadWriteOnce, corev1.PersistentVolumeBlock},
		{"shared block, explicit mode", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(2), build.VolumeMode(corev1.PersistentVolumeBlock),
			build.AccessMode(corev1.ReadWriteMany)), []string{"bench-data"}, corev1.ReadWriteMany, corev1.PersistentVolumeBlock},
		{"existing claim builds none", newBench(build.Sharing(v1alpha1.SharingShared), build.Clients(3), build.ExistingClaim("mine")), nil, "", ""},
		{"existing claim single client builds none", newBench(build.ExistingClaim("mine")), nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := buildClaims(tt.b)
			var names []string
			for _, c := range claims {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tt.wantNames) {
				t.Fatalf("claims %v, want %v", names, tt.wantNames)
			}
			for _, c := range claims {
				if c.Namespace != testNamespace {
					t.Errorf("%s: namespace %q, want %q", c.Name, c.Namespace, testNamespace)
				}
				if !reflect.DeepEqual(c.Labels, wantLabels(exchange.RoleData)) {
					t.Errorf("%s: labels %v, want %v", c.Name, c.Labels, wantLabels(exchange.RoleData))
				}
				if !slices.Equal(c.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{tt.wantMode}) {
					t.Errorf("%s: access modes %v, want [%s]", c.Name, c.Spec.AccessModes, tt.wantMode)
				}
				if c.Spec.VolumeMode == nil || *c.Spec.VolumeMode != tt.wantVM {
					t.Errorf("%s: volume mode %v, want %s", c.Name, c.Spec.VolumeMode, tt.wantVM)
				}
				if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "fast" {
					t.Errorf("%s: storage class %v, want fast", c.Name, c.Spec.StorageClassName)
				}
				got := c.Spec.Resources.Requests[corev1.ResourceStorage]
				if len(c.Spec.Resources.Requests) != 1 || got.Cmp(resource.MustParse("10Gi")) != 0 {
					t.Errorf("%s: requests %v, want storage 10Gi only", c.Name, c.Spec.Resources.Requests)
				}
			}
		})
	}
}

func TestBuildClaimsDefaultClassAndSize(t *testing.T) {
	b := newBench(func(b *v1alpha1.StorageBenchmark) {
		b.Spec.Storage.StorageClassName = nil
		b.Spec.Storage.Size = resource.MustParse("1Ti")
	})
	claims := buildClaims(b)
	if len(claims) != 1 {
		t.Fatalf("%d claims, want 1", len(claims))
	}
	if claims[0].Spec.StorageClassName != nil {
		t.Errorf("storage class %q, want unset (the cluster default)", *claims[0].Spec.StorageClassName)
	}
	got := claims[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if got.Cmp(resource.MustParse("1Ti")) != 0 {
		t.Errorf("request %s, want 1Ti", got.String())
	}
}

func TestBuildClientConfigMap(t *testing.T) {
	cm := buildClientConfigMap(newBench(build.Clients(3)), 2)
	if cm.Name != "bench-client-002" || cm.Namespace != testNamespace {
		t.Errorf("name %s/%s, want %s/bench-client-002", cm.Namespace, cm.Name, testNamespace)
	}
	want := wantLabels(exchange.RoleClient)
	want[exchange.LabelClient] = "2"
	if !reflect.DeepEqual(cm.Labels, want) {
		t.Errorf("labels %v, want %v", cm.Labels, want)
	}
	if len(cm.Data) != 0 {
		t.Errorf("data %v, want none (the runner writes it)", cm.Data)
	}
}

func job(t *testing.T, b *v1alpha1.StorageBenchmark, i int, opts JobOptions) (*corev1.PodSpec, *corev1.Container) {
	t.Helper()
	j := buildJob(b, i, claimNames(b)[i], opts)
	if len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(j.Spec.Template.Spec.Containers))
	}
	return &j.Spec.Template.Spec, &j.Spec.Template.Spec.Containers[0]
}

func TestBuildJobVolumes(t *testing.T) {
	tests := []struct {
		name      string
		b         *v1alpha1.StorageBenchmark
		client    int
		wantClaim string
		block     bool
	}{
		{"filesystem per client", newBench(build.Clients(3)), 1, "bench-data-001", false},
		{"filesystem shared", newBench(build.Clients(3), build.Sharing(v1alpha1.SharingShared)), 2, "bench-data", false},
		{"block per client", newBench(build.Clients(2), build.VolumeMode(corev1.PersistentVolumeBlock)), 1, "bench-data-001", true},
		{"block shared", newBench(build.Clients(2), build.Sharing(v1alpha1.SharingShared), build.VolumeMode(corev1.PersistentVolumeBlock)), 0, "bench-data", true},
		{"existing claim", newBench(build.ExistingClaim("mine")), 0, "mine", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, c := job(t, tt.b, tt.client, JobOptions{Image: testImage})
			vols := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				vols[v.Name] = v
			}
			if len(vols) != 2 {
				t.Fatalf("volumes %v, want data and work", pod.Volumes)
			}
			if pvc := vols["data"].PersistentVolumeClaim; pvc == nil || pvc.ClaimName != tt.wantClaim || pvc.ReadOnly {
				t.Errorf("data volume %+v, want writable claim %s", vols["data"].VolumeSource, tt.wantClaim)
			}
			if ed := vols["work"].EmptyDir; ed == nil || ed.SizeLimit == nil || ed.SizeLimit.Cmp(resource.MustParse("256Mi")) != 0 {
				t.Errorf("work volume %+v, want an emptyDir of 256Mi", vols["work"].VolumeSource)
			}
			mounts := map[string]string{}
			for _, m := range c.VolumeMounts {
				mounts[m.Name] = m.MountPath
			}
			if mounts["work"] != exchange.WorkMountPath {
				t.Errorf("work mounted at %q, want %q", mounts["work"], exchange.WorkMountPath)
			}
			if tt.block {
				if !reflect.DeepEqual(c.VolumeDevices, []corev1.VolumeDevice{{Name: "data", DevicePath: exchange.DevicePath}}) {
					t.Errorf("volumeDevices %v, want data at %s", c.VolumeDevices, exchange.DevicePath)
				}
				if p, ok := mounts["data"]; ok {
					t.Errorf("block volume also mounted at %s", p)
				}
				if len(c.VolumeMounts) != 1 {
					t.Errorf("mounts %v, want only work", c.VolumeMounts)
				}
			} else {
				if len(c.VolumeDevices) != 0 {
					t.Errorf("volumeDevices %v on a filesystem volume", c.VolumeDevices)
				}
				if mounts["data"] != exchange.DataMountPath {
					t.Errorf("data mounted at %q, want %q", mounts["data"], exchange.DataMountPath)
				}
				if len(c.VolumeMounts) != 2 {
					t.Errorf("mounts %v, want data and work", c.VolumeMounts)
				}
			}
		})
	}
}

// restrictedViolations checks a pod against the Pod Security Standards'
// "restricted" profile (latest), baseline rules included, the way the
// pod-security-admission checks read the fields (that module is not a
// dependency, so the rules are restated here).
func restrictedViolations(pod *corev1.PodSpec) []string {
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		bad("host namespaces")
	}
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		bad("pod runAsUser 0")
	}
	if psc.SELinuxOptions != nil && (psc.SELinuxOptions.User != "" || psc.SELinuxOptions.Role != "") {
		bad("pod seLinuxOptions user/role")
	}
	if len(psc.Sysctls) > 0 {
		bad("pod sysctls %v", psc.Sysctls)
	}
	if psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		bad("pod seccomp Unconfined")
	}
	allowedVolumes := func(vs corev1.VolumeSource) bool {
		return vs.ConfigMap != nil || vs.CSI != nil || vs.DownwardAPI != nil || vs.EmptyDir != nil || vs.Ephemeral != nil ||
			vs.PersistentVolumeClaim != nil || vs.Projected != nil || vs.Secret != nil
	}
	for _, vol := range pod.Volumes {
		if !allowedVolumes(vol.VolumeSource) || vol.HostPath != nil {
			bad("volume %s has a type the restricted profile forbids", vol.Name)
		}
	}
	containers := append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			bad("container %s has no securityContext", c.Name)
			continue
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad("container %s privileged", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("container %s: allowPrivilegeEscalation must be false", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			bad("container %s: capabilities must drop ALL", c.Name)
		}
		if sc.Capabilities != nil {
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					bad("container %s adds capability %s", c.Name, a)
				}
			}
		}
		nonRoot := psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
		if !nonRoot {
			bad("container %s: runAsNonRoot must be true", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad("container %s runAsUser 0", c.Name)
		}
		seccomp := psc.SeccompProfile
		if sc.SeccompProfile != nil {
			seccomp = sc.SeccompProfile
		}
		if seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
			bad("container %s: seccomp must be RuntimeDefault or Localhost", c.Name)
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			bad("container %s procMount %s", c.Name, *sc.ProcMount)
		}
		if sc.SELinuxOptions != nil && (sc.SELinuxOptions.User != "" || sc.SELinuxOptions.Role != "") {
			bad("container %s seLinuxOptions user/role", c.Name)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				bad("container %s hostPort %d", c.Name, p.HostPort)
			}
		}
	}
	return v
}

func TestRestrictedViolationsCatchesViolations(t *testing.T) {
	// The checker itself must be able to fail.
	pod, _ := job(t, newBench(), 0, JobOptions{Image: testImage})
	bad := pod.DeepCopy()
	bad.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	bad.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
	bad.SecurityContext.SeccompProfile = nil
	bad.Volumes = append(bad.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
	if got := restrictedViolations(bad); len(got) != 4 {
		t.Errorf("restrictedViolations() = %q, want 4 violations", got)
	}
}

func TestBuildJobPodSecurityRestricted(t *testing.T) {
	for _, b := range []*v1alpha1.StorageBenchmark{
		newBench(),
		newBench(build.VolumeMode(corev1.PersistentVolumeBlock)),
		newBench(build.Clients(3), build.Sharing(v1alpha1.SharingShared), func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.SpreadAcrossNodes = true }),
	} {
		t.Run(string(b.Spec.Storage.VolumeMode)+"/"+string(b.Spec.Storage.Sharing), func(t *testing.T) {
			pod, c := job(t, b, 0, JobOptions{Image: testImage})
			if v := restrictedViolations(pod); len(v) > 0 {
				t.Errorf("pod violates the restricted profile: %q", v)
			}
			psc := pod.SecurityContext
			if psc == nil {
				t.Fatal("no pod securityContext")
			}
			wantPod := corev1.PodSecurityContext{
				RunAsNonRoot:        ptr.To(true),
				RunAsUser:           ptr.To[int64](65532),
				RunAsGroup:          ptr.To[int64](65532),
				FSGroup:             ptr.To[int64](65532),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
				SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}
			if !reflect.DeepEqual(*psc, wantPod) {
				t.Errorf("pod securityContext %+v, want %+v", *psc, wantPod)
			}
			wantC := corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				ReadOnlyRootFilesystem:   ptr.To(true),
				RunAsNonRoot:             ptr.To(true),
			}
			if c.SecurityContext == nil || !reflect.DeepEqual(*c.SecurityContext, wantC) {
				t.Errorf("container securityContext %+v, want %+v", c.SecurityContext, wantC)
			}
			if pod.HostNetwork || pod.HostPID || pod.HostIPC || len(pod.InitContainers) > 0 || len(c.Ports) > 0 {
				t.Errorf("pod uses host namespaces, init containers or ports")
			}
		})
	}
}

func TestBuildJobSpec(t *testing.T) {
	b := newBench(build.Clients(12))
	j := buildJob(b, 11, "bench-data-011", JobOptions{Image: testImage})
	if j.Name != "bench-client-011" || j.Namespace != testNamespace {
		t.Errorf("job %s/%s, want %s/bench-client-011", j.Namespace, j.Name, testNamespace)
	}
	want := wantLabels(exchange.RoleClient)
	want[exchange.LabelClient] = "11"
	if !reflect.DeepEqual(j.Labels, want) {
		t.Errorf("job labels %v, want %v", j.Labels, want)
	}
	if !reflect.DeepEqual(j.Spec.Template.Labels, want) {
		t.Errorf("pod labels %v, want %v", j.Spec.Template.Labels, want)
	}
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v, want 0", j.Spec.BackoffLimit)
	}
	if j.Spec.Completions == nil || *j.Spec.Completions != 1 || j.Spec.Parallelism == nil || *j.Spec.Parallelism != 1 {
		t.Errorf("completions %v parallelism %v, want 1 and 1", j.Spec.Completions, j.Spec.Parallelism)
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		t.Error("job created suspended")
	}
	pod := &j.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s, want Never", pod.RestartPolicy)
	}
	if pod.ServiceAccountName != "bench-client-011" {
		t.Errorf("serviceAccountName %q, want bench-client-011 (the client's own)", pod.ServiceAccountName)
	}
	c := &pod.Containers[0]
	if !slices.Equal(c.Command, []string{exchange.RunnerCommand}) {
		t.Errorf("command %v", c.Command)
	}
	wantArgs := []string{"client", "--kube", "--workdir=" + exchange.WorkMountPath, "--termination-log=" + exchange.TerminationLog}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %v, want %v", c.Args, wantArgs)
	}
	if c.TerminationMessagePath != exchange.TerminationLog || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("termination message %s %s", c.TerminationMessagePath, c.TerminationMessagePolicy)
	}
	wantEnv := []corev1.EnvVar{
		{Name: exchange.EnvNamespace, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: exchange.EnvBenchmark, Value: testName},
		{Name: exchange.EnvClient, Value: "11"},
		{Name: exchange.EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	if !reflect.DeepEqual(c.Env, wantEnv) {
		t.Errorf("env %+v, want %+v", c.Env, wantEnv)
	}
	for _, e := range c.Env {
		if e.Name == exchange.EnvNamespace && e.Value != "" {
			t.Errorf("namespace env has a literal value %q besides the fieldRef", e.Value)
		}
	}
}

func TestBuildJobClientIndexEverywhere(t *testing.T) {
	b := newBench(build.Clients(3))
	for i := range 3 {
		pod, c := job(t, b, i, JobOptions{Image: testImage})
		var env string
		for _, e := range c.Env {
			if e.Name == exchange.EnvClient {
				env = e.Value
			}
		}
		if env != strconv.Itoa(i) {
			t.Errorf("client %d: %s=%q", i, exchange.EnvClient, env)
		}
		if got := pod.Volumes[0].PersistentVolumeClaim.ClaimName; got != exchange.ClientClaimName(testName, i) {
			t.Errorf("client %d mounts %s", i, got)
		}
	}
}

func TestBuildJobImageAndResources(t *testing.T) {
	custom := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
	tests := []struct {
		name          string
		b             *v1alpha1.StorageBenchmark
		opts          JobOptions
		wantImage     string
		wantPull      corev1.PullPolicy
		wantResources corev1.ResourceRequirements
	}{
		{"defaults", newBench(), JobOptions{Image: testImage}, testImage, corev1.PullIfNotPresent,
			corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}},
		{"image override", newBench(func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Image = "mine/runner:dev" }),
			JobOptions{Image: testImage, ImagePullPolicy: corev1.PullAlways}, "mine/runner:dev", corev1.PullAlways,
			corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}},
		{"resources override", newBench(func(b *v1alpha1.StorageBenchmark) { b.Spec.Clients.Resources = custom.DeepCopy() }),
			JobOptions{Image: testImage, ImagePullPolicy: corev1.PullNever}, testImage, corev1.PullNever, custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := job(t, tt.b, 0, tt.opts)
			if c.Image != tt.wantImage || c.ImagePullPolicy != tt.wantPull {
				t.Errorf("image %s pull %s, want %s %s", c.Image, c.ImagePullPolicy, tt.wantImage, tt.wantPull)
			}
			if !equalResources(c.Resources, tt.wantResources) {
				t.Errorf("resources %v, want %v", c.Resources, tt.wantResources)
			}
		})
	}
}

func equalResources(a, b corev1.ResourceRequirements) bool {
	eq := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || v.Cmp(w) != 0 {
				return false
			}
		}
		return true
	}
	return eq(a.Requests, b.Requests) && eq(a.Limits, b.Limits)
}

// A Job's resources must not alias the package default: decoding the API
// server's answer into a created object writes into its maps, and one job
// must never change the next.
func TestBuildJobDoesNotAliasDefaultResources(t *testing.T) {
	b := newBench(build.Clients(2))
	first := buildJob(b, 0, "bench-data-000", JobOptions{Image: testImage})
	first.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("7")
	second := buildJob(b, 1, "bench-data-001", JobOptions{Image: testImage})
	got := second.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	if got.Cmp(resource.MustParse("100m")) != 0 {
		t.Errorf("second job requests cpu %s after the first job's requests were changed, want 100m", got.String())
	}
}

func TestBuildJobPlacement(t *testing.T) {
	selector := map[string]string{"node.example/storage-client": "true"}
	tolerations := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}}
	tests := []struct {
		name   string
		spread bool
	}{{"no spread", false}, {"spread", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(build.Clients(4), func(b *v1alpha1.StorageBenchmark) {
				b.Spec.Clients.NodeSelector = selector
				b.Spec.Clients.Tolerations = tolerations
				b.Spec.Clients.SpreadAcrossNodes = tt.spread
			})
			pod, _ := job(t, b, 3, JobOptions{Image: testImage})
			if !reflect.DeepEqual(pod.NodeSelector, selector) {
				t.Errorf("nodeSelector %v, want %v", pod.NodeSelector, selector)
			}
			if !reflect.DeepEqual(pod.Tolerations, tolerations) {
				t.Errorf("tolerations %v, want %v", pod.Tolerations, tolerations)
			}
			if pod.Affinity != nil {
				t.Errorf("affinity %+v, want none", pod.Affinity)
			}
			if !tt.spread {
				if len(pod.TopologySpreadConstraints) != 0 {
					t.Errorf("topology spread %v without spreadAcrossNodes", pod.TopologySpreadConstraints)
				}
				return
			}
			want := []corev1.TopologySpreadConstraint{{
				MaxSkew:           1,
				TopologyKey:       corev1.LabelHostname,
				WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					exchange.LabelBenchmark: testName, exchange.LabelRole: exchange.RoleClient}},
			}}
			if !reflect.DeepEqual(pod.TopologySpreadConstraints, want) {
				t.Errorf("topology spread %+v, want %+v", pod.TopologySpreadConstraints, want)
			}
			// The selector must match every client pod of this benchmark.
			podLabels := buildJob(b, 0, "x", JobOptions{}).Spec.Template.Labels
			for k, v := range want[0].LabelSelector.MatchLabels {
				if podLabels[k] != v {
					t.Errorf("spread selector %s=%s does not match the pod labels %v", k, v, podLabels)
				}
			}
		})
	}
}

func TestBuildJobWithoutPlacement(t *testing.T) {
	pod, _ := job(t, newBench(), 0, JobOptions{Image: testImage})
	if pod.NodeSelector != nil || pod.Tolerations != nil || pod.TopologySpreadConstraints != nil {
		t.Errorf("placement set without a spec: %v %v %v", pod.NodeSelector, pod.Tolerations, pod.TopologySpreadConstraints)
	}
}

func TestBuildClientRBAC(t *testing.T) {
	for _, n := range []int32{1, 3, 100} {
		t.Run(fmt.Sprintf("%d clients", n), func(t *testing.T) {
			b := newBench(build.Clients(n))
			for i := range int(n) {
				name := exchange.ClientName(testName, i)
				sa, role, binding := buildClientRBAC(b, i)
				wantMeta := wantLabels(exchange.RoleRunner)
				wantMeta[exchange.LabelClient] = strconv.Itoa(i)
				for _, m := range []metav1.ObjectMeta{sa.ObjectMeta, role.ObjectMeta, binding.ObjectMeta} {
					if m.Name != name || m.Namespace != testNamespace {
						t.Errorf("object %s/%s, want %s/%s", m.Namespace, m.Name, testNamespace, name)
					}
					if !reflect.DeepEqual(m.Labels, wantMeta) {
						t.Errorf("%s labels %v", m.Name, m.Labels)
					}
				}
				if sa.AutomountServiceAccountToken == nil || !*sa.AutomountServiceAccountToken {
					t.Error("the runner needs its token mounted")
				}

				// Every (verb, name) pair the Role grants, which must be
				// exactly this client's needs: the plan, and its own
				// ConfigMap, never another client's.
				type grant struct{ verb, name string }
				got := map[grant]bool{}
				for k, r := range role.Rules {
					if !slices.Equal(r.APIGroups, []string{""}) || !slices.Equal(r.Resources, []string{"configmaps"}) {
						t.Errorf("rule %d: groups %q resources %q, want core configmaps only", k, r.APIGroups, r.Resources)
					}
					if len(r.ResourceNames) == 0 {
						t.Errorf("rule %d has no resourceNames: it grants every ConfigMap in the namespace", k)
					}
					if len(r.NonResourceURLs) > 0 {
						t.Errorf("rule %d grants non-resource URLs %v", k, r.NonResourceURLs)
					}
					for _, v := range r.Verbs {
						if v == "*" {
							t.Errorf("rule %d grants every verb", k)
						}
						for _, rn := range r.ResourceNames {
							got[grant{v, rn}] = true
						}
					}
				}
				want := map[grant]bool{}
				for _, v := range []string{"get", "list", "watch"} {
					want[grant{v, "bench-plan"}] = true
				}
				for _, v := range []string{"get", "patch"} {
					want[grant{v, name}] = true
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("client %d's role grants %v, want %v", i, got, want)
				}
				wantRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}
				if binding.RoleRef != wantRef {
					t.Errorf("roleRef %+v, want %+v", binding.RoleRef, wantRef)
				}
				wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: testNamespace}}
				if !reflect.DeepEqual(binding.Subjects, wantSubjects) {
					t.Errorf("subjects %+v, want %+v", binding.Subjects, wantSubjects)
				}
				// Client i's pod runs as client i's ServiceAccount.
				if pod, _ := job(t, b, i, JobOptions{Image: testImage}); pod.ServiceAccountName != sa.Name {
					t.Errorf("client %d's pod runs as %q, its binding names %q", i, pod.ServiceAccountName, sa.Name)
				}
			}
		})
	}
}
