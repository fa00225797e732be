package harness_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/internal/testenv"
	"github.com/storagebench/storagebench/test/harness"
)

const (
	classFS      = "harness-local" // provisioned by the harness, capacity rounded up to GiB
	classOther   = "someone-else"  // a provisioner nobody runs: claims stay Pending
	kubectlPath  = "/usr/local/bin/kubectl"
	timeout      = 90 * time.Second
	mountData    = "/storagebench/data"
	mountWork    = "/storagebench/work"
	blockDevPath = "/dev/storagebench"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	assets, err := testenv.AssetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, statErr := os.Stat("/storagebench")
	hadMountRoot := statErr == nil
	var log logr.Logger
	if testing.Verbose() {
		log = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	began := time.Now()
	cluster, err = harness.Start(harness.Options{
		Executables: map[string]string{kubectlPath: filepath.Join(assets, "kubectl")},
		Capacity: func(_ *storagev1.StorageClass, request resource.Quantity) resource.Quantity {
			const gi = 1 << 30
			return *resource.NewQuantity((request.Value()+gi-1)/gi*gi, resource.BinarySI)
		},
		Logger: log,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "cluster started in %s\n", time.Since(began).Round(time.Millisecond))
	workDir := cluster.WorkDir
	code := runWithCluster(m)
	// Nothing may outlive the cluster: loop devices, mount points.
	if out, _ := exec.Command("losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE").Output(); strings.Contains(string(out), workDir) {
		fmt.Fprintf(os.Stderr, "loop devices left attached:\n%s", out)
		code = 1
	}
	if _, err := os.Stat("/storagebench"); err == nil && !hadMountRoot && noOtherKubelet() {
		fmt.Fprintln(os.Stderr, "mount point /storagebench left on the host")
		code = 1
	}
	return code
}

// runWithCluster runs the tests and stops the cluster, whatever happens.
func runWithCluster(m *testing.M) (code int) {
	defer func() {
		began := time.Now()
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
			code = 1
		}
		fmt.Fprintf(os.Stderr, "cluster stopped in %s\n", time.Since(began).Round(time.Millisecond))
	}()
	if err := createClasses(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// noOtherKubelet reports whether no harness Kubelet of another process runs
// (one would keep the shared mount points), by the lock they share.
func noOtherKubelet() bool {
	f, err := os.Open("/run/storagebench-harness/alive")
	if err != nil {
		return true
	}
	defer func() { _ = f.Close() }()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

func createClasses() error {
	ctx := context.Background()
	for name, provisioner := range map[string]string{classFS: harness.ProvisionerName, classOther: "example.com/nobody"} {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
		if err := cluster.Client.Create(ctx, sc); err != nil {
			return err
		}
	}
	return nil
}

// A Job writes to its claim and its termination message and completes; the
// data is in the volume's host directory and a second pod of the claim sees
// it; deleting the claim deletes the volume.
func TestJobWritesSharedVolume(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	claim := newClaim(ns, "data", classFS, corev1.PersistentVolumeFilesystem, "100Mi")
	must(t, cluster.Client.Create(ctx, claim))

	began := time.Now()
	writer := newJob(ns, "writer", "/bin/sh", "-c",
		`echo "hello from $(POD_NAME)" > `+mountData+`/greeting && touch `+mountWork+`/scratch && printf written > /dev/termination-log`)
	writer.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	mountClaim(writer, "data")
	must(t, cluster.Client.Create(ctx, writer))
	waitJob(t, writer, batchv1.JobComplete)
	t.Logf("Job round-trip (claim provisioned and bound, pod scheduled, run, Job complete): %s", time.Since(began).Round(time.Millisecond))

	pod := onlyPod(t, writer)
	term := terminated(t, pod)
	if pod.Status.Phase != corev1.PodSucceeded || term.ExitCode != 0 || term.Message != "written" || term.Reason != "Completed" {
		t.Errorf("writer pod: phase %s, terminated %+v; want Succeeded, exit 0, message %q", pod.Status.Phase, term, "written")
	}
	if pod.Spec.NodeName != cluster.Kubelet.NodeName() || pod.Status.StartTime == nil || pod.Status.PodIP == "" {
		t.Errorf("writer pod not scheduled and started like a kubelet's: node %q, startTime %v, podIP %q", pod.Spec.NodeName, pod.Status.StartTime, pod.Status.PodIP)
	}

	dir, err := cluster.VolumePath(ctx, ns, "data")
	must(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "greeting"))
	if want := "hello from " + pod.Name + "\n"; err != nil || string(data) != want {
		t.Errorf("greeting in the volume's host dir %s: %q, %v; want %q", dir, data, err, want)
	}
	must(t, cluster.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	if got := claim.Status.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("claim capacity %s, want 1Gi (the class's rounding)", got.String())
	}

	reader := newJob(ns, "reader", "/bin/sh", "-c", `cat `+mountData+`/greeting > /dev/termination-log; test ! -e `+mountWork+`/scratch`)
	mountClaim(reader, "data")
	must(t, cluster.Client.Create(ctx, reader))
	waitJob(t, reader, batchv1.JobComplete)
	if msg := terminated(t, onlyPod(t, reader)).Message; msg != string(data) {
		t.Errorf("reader saw %q, want %q", msg, data)
	}

	// The claim is free once both Jobs' pods are gone; its volume goes too.
	for _, j := range []*batchv1.Job{writer, reader} {
		must(t, cluster.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	}
	pvName := claim.Spec.VolumeName
	must(t, cluster.Client.Delete(ctx, claim))
	eventually(t, "volume "+pvName+" deleted", func() bool {
		err := cluster.Client.Get(ctx, types.NamespacedName{Name: pvName}, &corev1.PersistentVolume{})
		return apierrors.IsNotFound(err)
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("volume directory %s still there: %v", dir, err)
	}
}

// A failing command fails the Job; the pod's termination message is the end
// of its log (FallbackToLogsOnError).
func TestJobFailsWithTerminationMessage(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := newJob(ns, "fails", "/bin/sh", "-c", `echo "starting"; echo "disk on fire" >&2; exit 3`)
	job.Spec.Template.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	must(t, cluster.Client.Create(context.Background(), job))
	waitJob(t, job, batchv1.JobFailed)
	pod := onlyPod(t, job)
	term := terminated(t, pod)
	if pod.Status.Phase != corev1.PodFailed || term.ExitCode != 3 || term.Message != "starting\ndisk on fire\n" {
		t.Errorf("pod: phase %s, terminated %+v; want Failed, exit 3, the log as message", pod.Status.Phase, term)
	}
	logs, err := cluster.Kubelet.Logs(ns, pod.Name)
	if err != nil || !strings.Contains(logs, "disk on fire") {
		t.Errorf("Kubelet.Logs = %q, %v", logs, err)
	}
}

// A process in a pod reaches the API server with in-cluster config as the
// pod's ServiceAccount, and RBAC applies: allowed with a Role, forbidden
// without.
func TestInClusterClientUsesServiceAccount(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	for _, name := range []string{"reader", "nobody"} {
		must(t, cluster.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	}
	must(t, cluster.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}))
	must(t, cluster.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "reader"}},
	}))
	allowed := newJob(ns, "allowed", kubectlPath, "get", "configmaps", "-o", "name")
	allowed.Spec.Template.Spec.ServiceAccountName = "reader"
	denied := newJob(ns, "denied", kubectlPath, "get", "configmaps", "-o", "name")
	denied.Spec.Template.Spec.ServiceAccountName = "nobody"
	must(t, cluster.Client.Create(ctx, allowed))
	must(t, cluster.Client.Create(ctx, denied))

	waitJob(t, allowed, batchv1.JobComplete)
	if logs, err := cluster.Kubelet.Logs(ns, onlyPod(t, allowed).Name); err != nil || !strings.Contains(logs, "configmap/kube-root-ca.crt") {
		t.Errorf("allowed: kubectl printed %q, %v; want configmap/kube-root-ca.crt", logs, err)
	}
	waitJob(t, denied, batchv1.JobFailed)
	want := fmt.Sprintf(`User "system:serviceaccount:%s:nobody" cannot list resource "configmaps"`, ns)
	if logs, err := cluster.Kubelet.Logs(ns, onlyPod(t, denied).Name); err != nil || !strings.Contains(logs, want) {
		t.Errorf("denied: kubectl printed %q, %v; want %q", logs, err, want)
	}
}

// Deleting a Job lets the garbage collector delete its pod, and the kubelet
// kills the process and finishes the pod's deletion.
func TestDeletingJobKillsProcess(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	job := newJob(ns, "sleeper", "/bin/sh", "-c", "sleep 600")
	must(t, cluster.Client.Create(ctx, job))
	pid := waitRunning(t, job)
	must(t, cluster.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	eventually(t, "the Job's pod deleted", func() bool {
		pods := &corev1.PodList{}
		return cluster.Client.List(ctx, pods, client.InNamespace(ns)) == nil && len(pods.Items) == 0
	})
	if err := processGone(pid); err != nil {
		t.Error(err)
	}
}

// A node-side kill fails the pod with exit code 137, and the Job with it.
func TestKillPodFailsJob(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := newJob(ns, "victim", "/bin/sh", "-c", "sleep 600")
	must(t, cluster.Client.Create(context.Background(), job))
	pid := waitRunning(t, job)
	pod := onlyPod(t, job)
	must(t, cluster.Kubelet.KillPod(ns, pod.Name))
	waitJob(t, job, batchv1.JobFailed)
	pod = onlyPod(t, job)
	if term := terminated(t, pod); pod.Status.Phase != corev1.PodFailed || term.ExitCode != 137 {
		t.Errorf("killed pod: phase %s, terminated %+v; want Failed, exit 137", pod.Status.Phase, term)
	}
	if err := processGone(pid); err != nil {
		t.Error(err)
	}
}

// A Block claim gives the process a real block device at devicePath.
func TestBlockVolume(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	must(t, cluster.Client.Create(ctx, newClaim(ns, "raw", classFS, corev1.PersistentVolumeBlock, "64Mi")))
	job := newJob(ns, "raw-io", "/bin/sh", "-c",
		`test -b `+blockDevPath+` && dd if=/dev/zero of=`+blockDevPath+` bs=1M count=4 oflag=direct 2>/dev/null && blockdev --getsize64 `+blockDevPath+` > /dev/termination-log`)
	spec := &job.Spec.Template.Spec
	spec.Volumes = []corev1.Volume{{Name: "raw", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "raw"}}}}
	spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "raw", DevicePath: blockDevPath}}
	spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	must(t, cluster.Client.Create(ctx, job))
	waitJob(t, job, batchv1.JobComplete)
	// The claim asked 64Mi; the class rounds capacity to 1Gi; the device is
	// capped at MaxBlockSize.
	if msg := terminated(t, onlyPod(t, job)).Message; strings.TrimSpace(msg) != strconv.Itoa(harness.MaxBlockSize) {
		t.Errorf("device size seen by the pod: %q, want %d", msg, harness.MaxBlockSize)
	}
	dev, err := cluster.VolumePath(ctx, ns, "raw")
	if err != nil || !strings.HasPrefix(dev, "/dev/loop") {
		t.Errorf("block volume path %q, %v; want a loop device", dev, err)
	}
}

// A claim nobody provisions keeps its pod Pending and unscheduled.
func TestUnboundClaimKeepsPodPending(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	must(t, cluster.Client.Create(ctx, newClaim(ns, "orphan", classOther, corev1.PersistentVolumeFilesystem, "1Gi")))
	job := newJob(ns, "waits", "/bin/true")
	mountClaim(job, "orphan")
	must(t, cluster.Client.Create(ctx, job))
	var pod corev1.Pod
	eventually(t, "the pod marked unschedulable", func() bool {
		pods := jobPods(t, job)
		if len(pods) != 1 {
			return false
		}
		pod = pods[0]
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "unbound") {
				return true
			}
		}
		return false
	})
	time.Sleep(2 * time.Second)
	must(t, cluster.Client.Get(ctx, client.ObjectKeyFromObject(&pod), &pod))
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		t.Errorf("pod with an unbound claim: phase %s, node %q; want Pending, unscheduled", pod.Status.Phase, pod.Spec.NodeName)
	}
	// Suspending the Job (as the operator does on failure) removes the
	// pending pod: job controller and pod garbage collector, no kubelet.
	suspend(t, job)
	waitJob(t, job, batchv1.JobSuspended)
	eventually(t, "the pending pod gone", func() bool { return len(jobPods(t, job)) == 0 })
}

// Suspending a Job deletes its running pod: the process gets SIGTERM and,
// ignoring it, SIGKILL after the grace period.
func TestSuspendKillsStubbornProcess(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := newJob(ns, "stubborn", "/bin/sh", "-c", `trap "" TERM; while :; do sleep 0.1; done`)
	job.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	must(t, cluster.Client.Create(context.Background(), job))
	pid := waitRunning(t, job)
	began := time.Now()
	suspend(t, job)
	eventually(t, "the pod gone", func() bool { return len(jobPods(t, job)) == 0 })
	if took := time.Since(began); took < time.Second {
		t.Errorf("pod gone after %s, before its 1 s grace period", took)
	}
	if err := processGone(pid); err != nil {
		t.Error(err)
	}
	waitJob(t, job, batchv1.JobSuspended)
}

// --- helpers

func suspend(t *testing.T, job *batchv1.Job) {
	t.Helper()
	j := &batchv1.Job{}
	must(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), j))
	patch := client.MergeFrom(j.DeepCopy())
	j.Spec.Suspend = ptr.To(true)
	must(t, cluster.Client.Patch(context.Background(), j, patch))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// namespace creates a namespace for the test, deleted after it.
func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))
	if len(name) > 50 {
		name = name[:50]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	must(t, cluster.Client.Create(context.Background(), ns))
	t.Cleanup(func() {
		if t.Failed() {
			cluster.Dump(os.Stderr)
		}
		_ = cluster.Client.Delete(context.Background(), ns)
	})
	// Pods need the namespace's default ServiceAccount (admission).
	eventually(t, "the default ServiceAccount", func() bool {
		return cluster.Client.Get(context.Background(), types.NamespacedName{Namespace: name, Name: "default"}, &corev1.ServiceAccount{}) == nil
	})
	return name
}

func newClaim(ns, name, class string, mode corev1.PersistentVolumeMode, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &class,
			VolumeMode:       &mode,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// newJob is a Job like the operator's: one pod, no retries.
func newJob(ns, name string, command ...string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:                 corev1.RestartPolicyNever,
				TerminationGracePeriodSeconds: ptr.To[int64](5),
				Containers: []corev1.Container{{
					Name: "main", Image: "localhost/ignored:dev", Command: command,
				}},
			}},
		},
	}
}

// mountClaim mounts the claim at /storagebench/data and an emptyDir at
// /storagebench/work, as the operator's client pods do.
func mountClaim(job *batchv1.Job, claim string) {
	spec := &job.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
		corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: "data", MountPath: mountData},
		corev1.VolumeMount{Name: "work", MountPath: mountWork})
}

// waitJob waits for a Job condition set by the real job controller.
func waitJob(t *testing.T, job *batchv1.Job, cond batchv1.JobConditionType) {
	t.Helper()
	eventually(t, fmt.Sprintf("Job %s %s", job.Name, cond), func() bool {
		j := &batchv1.Job{}
		if cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), j) != nil {
			return false
		}
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

func jobPods(t *testing.T, job *batchv1.Job) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	must(t, cluster.Client.List(context.Background(), pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}))
	return pods.Items
}

func onlyPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	pods := jobPods(t, job)
	if len(pods) != 1 {
		t.Fatalf("Job %s has %d pods, want 1", job.Name, len(pods))
	}
	return &pods[0]
}

func terminated(t *testing.T, pod *corev1.Pod) corev1.ContainerStateTerminated {
	t.Helper()
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("pod %s: container not terminated: %+v", pod.Name, pod.Status.ContainerStatuses)
	}
	return *pod.Status.ContainerStatuses[0].State.Terminated
}

// waitRunning waits for the Job's pod to be Running and Ready and returns its
// process id, checking the process exists.
func waitRunning(t *testing.T, job *batchv1.Job) int {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "pod of "+job.Name+" running", func() bool {
		pods := jobPods(t, job)
		if len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false
		}
		pod = &pods[0]
		return true
	})
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || !cs[0].Ready || cs[0].State.Running == nil {
		t.Fatalf("running pod's container status: %+v", cs)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(cs[0].ContainerID, "harness://"))
	must(t, err)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Fatalf("process of running pod: %v", err)
	}
	return pid
}

func processGone(pid int) error {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !os.IsNotExist(err) {
		return fmt.Errorf("process %d still exists (stat: %w)", pid, err)
	}
	return nil
}
