package controllers

import (
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

func controllerRef(kind, apiVersion, uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: kind, APIVersion: apiVersion, Name: "x", UID: k8stypes.UID("u-" + uid), Controller: ptr.To(true)}}
}

func TestOwnedBy(t *testing.T) {
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "bench", UID: "u-1"},
		Spec: v1alpha1.StorageBenchmarkSpec{Cleanup: v1alpha1.CleanupSpec{Volumes: v1alpha1.VolumesRetain}}}
	deleting := b.DeepCopy()
	deleting.Spec.Cleanup.Volumes = v1alpha1.VolumesDelete
	sb := v1alpha1.GroupVersion.String()
	claimMeta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCreatedBy: "u-1"}}}
	if ownedBy(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCreatedBy: "u-1"}}}, deleting) {
		t.Fatal("a benchmark that deletes its claims creates them with a controller reference: the annotation alone is not its")
	}
	tests := []struct {
		name string
		obj  metav1.Object
		want bool
	}{
		{"controlled by this benchmark", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{OwnerReferences: controllerRef("StorageBenchmark", sb, "1")}}, true},
		{"controlled by another benchmark of the same name", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{OwnerReferences: controllerRef("StorageBenchmark", sb, "2")}}, false},
		{"no controller, only our labels", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/managed-by": "storagebench"}}}, false},
		{"a retained claim this benchmark created", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCreatedBy: "u-1"}}}, true},
		{"a retained claim, read as metadata", claimMeta, true},
		{"a claim created by another benchmark", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCreatedBy: "u-2"}}}, false},
		{"a claim annotated as ours but controlled by something else", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{AnnotationCreatedBy: "u-1"}, OwnerReferences: controllerRef("StatefulSet", "apps/v1", "9")}}, false},
		{"the annotation does not make a ServiceAccount ours", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCreatedBy: "u-1"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownedBy(tt.obj, b); got != tt.want {
				t.Fatalf("ownedBy = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRefusedTellsPermanentFromTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "persistentvolumeclaims"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"quota (forbidden)", apierrors.NewForbidden(gr, "x", errors.New("exceeded quota: tight")), true},
		{"quota not counted yet", apierrors.NewForbidden(gr, "x", errors.New("status unknown for quota: tight, resource: persistentvolumeclaims")), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "PersistentVolumeClaim"}, "x", nil), true},
		{"bad request", apierrors.NewBadRequest("no"), true},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("again")), false},
		{"server timeout", apierrors.NewServerTimeout(gr, "create", 1), false},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), false},
		{"internal", apierrors.NewInternalError(errors.New("etcd")), false},
		{"no API status (network)", errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := refused(tt.err); got != tt.want {
				t.Fatalf("refused = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConflictNamesTheObjectAndItsController(t *testing.T) {
	obj := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "postgres-data", OwnerReferences: controllerRef("StatefulSet", "apps/v1", "7")}}
	msg := conflict(obj, "PersistentVolumeClaim").Error()
	for _, part := range []string{`PersistentVolumeClaim "postgres-data" already exists`, "controlled by StatefulSet x", "was not changed"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	if msg := conflict(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gitlab-runner"}}, "ServiceAccount").Error(); !strings.Contains(msg, "it has no controller") {
		t.Errorf("message %q", msg)
	}
}

func TestConsentMissing(t *testing.T) {
	fs := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: v1alpha1.StorageBenchmarkSpec{Storage: v1alpha1.StorageSpec{VolumeMode: corev1.PersistentVolumeFilesystem}}}
	block := fs.DeepCopy()
	block.Spec.Storage.VolumeMode = corev1.PersistentVolumeBlock
	claim := func(v *string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}}
		if v != nil {
			c.Annotations = map[string]string{AnnotationAllowBenchmark: *v}
		}
		return c
	}
	tests := []struct {
		name    string
		b       *v1alpha1.StorageBenchmark
		consent *string
		want    string // "" = allowed
	}{
		{"filesystem, no annotation", fs, nil, "has no storagebench.io/allow-benchmark annotation"},
		{"filesystem, files", fs, ptr.To(ConsentFiles), ""},
		{"filesystem, block-overwrite is not files", fs, ptr.To(ConsentBlockOverwrite), "needs storagebench.io/allow-benchmark=files"},
		{"block, no annotation", block, nil, "=block-overwrite"},
		{"block, files is not an overwrite", block, ptr.To(ConsentFiles), "needs storagebench.io/allow-benchmark=block-overwrite"},
		{"block, block-overwrite", block, ptr.To(ConsentBlockOverwrite), ""},
		{"a long hostile value is bounded", fs, ptr.To(strings.Repeat("y", 10000)), "… (truncated, 10000 bytes)"},
		{"case matters", fs, ptr.To("Files"), "needs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := consentMissing(tt.b, claim(tt.consent))
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("consentMissing = %q, want %q", got, tt.want)
			}
			if len(got) > 512 {
				t.Fatalf("message of %d bytes", len(got))
			}
		})
	}
}

func TestClip(t *testing.T) {
	if got := clip("short", 10); got != "short" {
		t.Fatalf("clip changed a short string: %q", got)
	}
	long := strings.Repeat("é", 1000) // 2 bytes each
	got := clip(long, 101)
	if len(got) > 101 || !strings.HasSuffix(got, "… (truncated, 2000 bytes)") || !strings.HasPrefix(got, "éé") {
		t.Fatalf("clip = %q (%d bytes)", got, len(got))
	}
	for _, r := range strings.TrimSuffix(got, "… (truncated, 2000 bytes)") {
		if r == '\uFFFD' {
			t.Fatal("clip cut a rune in half")
		}
	}
}

func TestClockStatusAndVerdicts(t *testing.T) {
	ready := func(off, unc time.Duration, failed string) protocol.Ready {
		return protocol.Ready{ClockOffset: off, ClockOffsetUncertainty: unc, ClockOffsetError: failed}
	}
	tests := []struct {
		name        string
		reports     []protocol.Ready
		max, spread time.Duration
		unmeasured  int32
		skew        metav1.ConditionStatus
		fail        bool
	}{
		{"in sync", []protocol.Ready{ready(2*time.Millisecond, time.Millisecond, ""), ready(-3*time.Millisecond, 2*time.Millisecond, "")}, 3 * time.Millisecond, 5 * time.Millisecond, 0, metav1.ConditionFalse, false},
		{"one node drifting", []protocol.Ready{ready(0, time.Millisecond, ""), ready(400*time.Millisecond, time.Millisecond, "")}, 400 * time.Millisecond, 400 * time.Millisecond, 0, metav1.ConditionTrue, false},
		{"one node far behind", []protocol.Ready{ready(time.Millisecond, 0, ""), ready(-5*time.Second, 0, "")}, 5 * time.Second, 5*time.Second + time.Millisecond, 0, metav1.ConditionTrue, true},
		{"unmeasured is counted, not trusted", []protocol.Ready{ready(0, 0, "no Date header"), ready(time.Millisecond, 0, "")}, time.Millisecond, 0, 1, metav1.ConditionUnknown, false},
		{"none measured: nothing agrees", []protocol.Ready{ready(0, 0, "no Date header"), ready(0, 0, "timeout")}, 0, 0, 2, metav1.ConditionUnknown, false},
		{"a measured clock far off is skew whatever the others", []protocol.Ready{ready(0, 0, "no Date header"), ready(time.Second, 0, "")}, time.Second, 0, 1, metav1.ConditionTrue, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &v1alpha1.StorageBenchmark{}
			b.Status.ClientsTotal = int32(len(tt.reports))
			b.Status.Clock = clockStatus(tt.reports)
			c := b.Status.Clock
			if c.MaxOffset.Duration != tt.max || c.Spread.Duration != tt.spread || c.Unmeasured != tt.unmeasured {
				t.Fatalf("clock = %+v", c)
			}
			setClockCondition(b, time.Unix(1e9, 0))
			if got := b.Status.Conditions[0]; got.Status != tt.skew {
				t.Fatalf("ClockSkew = %s (%s: %s), want %s", got.Status, got.Reason, got.Message, tt.skew)
			}
			o := observationOf(b, &observed{})
			if v, _ := run.Failure(o, timeouts{StartLead: 3 * time.Second}, time.Unix(1e9, 0), nil); (v != nil && v.Reason == ReasonClockOffsetTooLarge) != tt.fail {
				t.Fatalf("failure = %v, want ClockOffsetTooLarge %v", v, tt.fail)
			}
		})
	}
	if clockStatus(nil) != nil {
		t.Fatal("a status without reports")
	}
}

func TestStripForCacheKeepsOnlyWhatTheReconcilerReads(t *testing.T) {
	sb := v1alpha1.GroupVersion.String()
	big := map[string]string{"blob": strings.Repeat("x", 1<<20)}
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "f", Labels: map[string]string{"a": "b", "storagebench.io/benchmark": "x"}, Annotations: big, ManagedFields: mf}, Data: big}
	out, err := stripForCache(foreign)
	if err != nil {
		t.Fatal(err)
	}
	cm := out.(*corev1.ConfigMap)
	if cm.Data != nil || cm.Annotations != nil || cm.ManagedFields != nil || cm.Name != "f" || len(cm.Labels) != 1 || cm.Labels["storagebench.io/benchmark"] != "x" {
		t.Fatalf("foreign ConfigMap kept %+v", cm.ObjectMeta)
	}
	ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o", OwnerReferences: controllerRef("StorageBenchmark", sb, "1"),
		Annotations: map[string]string{"storagebench.io/ready": "true"}, ManagedFields: mf}}
	out, _ = stripForCache(ours)
	if cm := out.(*corev1.ConfigMap); cm.Annotations["storagebench.io/ready"] != "true" || cm.ManagedFields != nil {
		t.Fatalf("a child lost what the reconciler reads: %+v", cm.ObjectMeta)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: controllerRef("Job", batchv1.SchemeGroupVersion.String(), "3")},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	out, _ = stripForCache(pod)
	if p := out.(*corev1.Pod); p.Status.Phase != corev1.PodRunning || p.Spec.NodeName != "node-a" {
		t.Fatal("a Job's pod lost its status or its node")
	}
	// Of a pod's conditions, the ones read (status.storage.attach, eviction),
	// each once, bounded; the attach ones with their status and transition
	// times only.
	at := metav1.NewTime(time.Unix(1e9, 0))
	long := strings.Repeat("m", 1<<20)
	conds := []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, Message: long},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at, LastProbeTime: at, Reason: "r", Message: long},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at, Message: long},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: long},
		{Type: "example.com/gate", Status: corev1.ConditionTrue, Message: long},
	}
	for range 100 { // repeated entries, somebody's patch
		conds = append(conds, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: long})
	}
	pod.Status.Conditions = conds
	out, _ = stripForCache(pod)
	got := out.(*corev1.Pod).Status.Conditions
	want := []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at},
	}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2].Type != corev1.DisruptionTarget || len(got[2].Message) > 1024 {
		t.Fatalf("a pod's conditions cached as %d: %+v", len(got), got[:min(len(got), 4)])
	}
	if d, ok := readyToStartAfter(out.(*corev1.Pod)); !ok || d != 0 {
		t.Fatalf("the cached pod times as %s, %v", d, ok)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: big, Annotations: big, ManagedFields: mf},
		Spec: corev1.NodeSpec{Unschedulable: true, PodCIDR: "10.0.0.0/24"},
		Status: corev1.NodeStatus{Images: make([]corev1.ContainerImage, 100), Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: strings.Repeat("m", 1<<20),
				LastHeartbeatTime: metav1.Now()}}}}
	out, _ = stripForCache(node)
	n := out.(*corev1.Node)
	if n.Name != "node-a" || !n.Spec.Unschedulable || n.Spec.PodCIDR != "" || n.Labels != nil || n.Annotations != nil || n.Status.Images != nil ||
		len(n.Status.Conditions) != 1 || nodeReady(n) != corev1.ConditionUnknown || len(n.Status.Conditions[0].Message) > 1024 ||
		!n.Status.Conditions[0].LastHeartbeatTime.IsZero() {
		t.Fatalf("a Node kept more or less than its name, unschedulable and Ready condition: %+v", n)
	}
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.PodSpec{Containers: make([]corev1.Container, 50)}}
	out, _ = stripForCache(stray)
	if len(out.(*corev1.Pod).Spec.Containers) != 0 {
		t.Fatal("a labelled stray pod was cached whole")
	}
	pom := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "m", Annotations: big}}
	out, _ = stripForCache(pom)
	if out.(*metav1.PartialObjectMetadata).Annotations != nil {
		t.Fatal("a foreign ConfigMap's annotations were cached")
	}
	// An owner reference to a benchmark is no way around it: anybody may
	// name their own benchmark as controller.
	posing := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: controllerRef("StorageBenchmark", sb, "1"),
		Labels:      map[string]string{"storagebench.io/role": "client", "team": strings.Repeat("t", 63)},
		Annotations: map[string]string{"storagebench.io/ready": strings.Repeat("r", 200<<10), "other": "x"}}}
	out, _ = stripForCache(posing)
	kept := out.(*metav1.PartialObjectMetadata)
	if len(kept.Annotations) != 1 || len(kept.Annotations["storagebench.io/ready"]) > maxCachedValue || len(kept.Labels) != 1 || len(kept.OwnerReferences) != 1 {
		t.Fatalf("kept labels %v, %d annotations of %d bytes", kept.Labels, len(kept.Annotations), len(kept.Annotations["storagebench.io/ready"]))
	}
}

func TestRunDeadlineCoversEveryAllowance(t *testing.T) {
	r := &Reconciler{ReadyTimeout: 10 * time.Minute, StartLead: 3 * time.Second, NextStepLead: time.Second, ResultGrace: time.Minute}
	d := &spec.Run{StepsPlanned: 4}
	d.Load.StepDuration, d.Load.RampTime = 20*time.Second, 2*time.Second
	got := r.runDeadline(d)
	want := 10*time.Minute + 3*time.Second + 5*(time.Second+2*time.Second+20*time.Second+time.Minute)
	if got != want {
		t.Fatalf("runDeadline = %s, want %s", got, want)
	}
}

func TestJudgeWaitsForAPreviousBenchmarksChildrenOnly(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &v1alpha1.StorageBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "bench", UID: "u-1", CreationTimestamp: metav1.Time{Time: created}}}
	sb := v1alpha1.GroupVersion.String()
	previous := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-plan", OwnerReferences: []metav1.OwnerReference{
		{Kind: "StorageBenchmark", APIVersion: sb, Name: "bench", UID: "u-0", Controller: ptr.To(true)}}}}
	otherBench := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-plan", OwnerReferences: []metav1.OwnerReference{
		{Kind: "StorageBenchmark", APIVersion: sb, Name: "other", UID: "u-9", Controller: ptr.To(true)}}}}
	going := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bench-data", DeletionTimestamp: &metav1.Time{Time: created}}}
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-plan", OwnerReferences: controllerRef("StorageBenchmark", sb, "1")}}
	tests := []struct {
		name  string
		obj   client.Object
		after time.Duration
		want  string // "", "wait", "conflict"
	}{
		{"ours", mine, 0, ""},
		{"a deleted benchmark of the same name: wait", previous, time.Minute, "wait"},
		{"… but not forever", previous, 3 * time.Minute, "conflict"},
		{"another benchmark's object", otherBench, 0, "conflict"},
		{"an object being deleted: wait", going, 0, "wait"},
		{"an application's object", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-plan"}}, 0, "conflict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{Now: func() time.Time { return created.Add(tt.after) }}
			err := r.judge(tt.obj, b, "ConfigMap")
			var wait *WaitError
			var conflict *ConflictError
			got := ""
			switch {
			case errors.As(err, &wait):
				got = "wait"
			case errors.As(err, &conflict):
				got = "conflict"
			case err != nil:
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("judge = %q, want %q", got, tt.want)
			}
		})
	}
}
