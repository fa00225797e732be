package volumeoperations

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// A tenant can label its own pods as the step's: only the benchmark's
// own pod under the index's name counts, and the others neither start nor
// end a timing (nor crash the manager with an index out of range).
func TestTimerInformerTakesOnlyTheStepsOwnObjects(t *testing.T) {
	b := &v1alpha1.VolumeOperationsBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ops", UID: "b-uid"},
		Spec: v1alpha1.VolumeOperationsBenchmarkSpec{Operations: []v1alpha1.VolumeOperation{v1alpha1.OperationAttach}, Concurrency: []int32{2}}}
	ph, _ := phaseOf(b, 0)
	clk := testingclock.NewFakeClock(t0)
	tm := newTimer(timerKey{}, ph.op, 2, time.Minute, clk, nil)
	tm.request(0)
	tm.request(1)

	fw := watch.NewFake()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
	}
	inf := tm.informer(b, ph, lw, &corev1.Pod{}, tm.pod)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	ready := func(name, index string, owner types.UID) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "2",
			Labels: labelsOf(b, ph, 0)}}
		p.Labels[LabelIndex] = index
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "storagebench.io/v1alpha1", Kind: "VolumeOperationsBenchmark", Name: "ops", UID: owner, Controller: new(bool)}}
			*p.OwnerReferences[0].Controller = true
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}}
		return p
	}
	clk.Step(time.Second)
	for _, p := range []*corev1.Pod{
		ready("tenant-1000", "1000", b.UID),             // an index out of range
		ready("tenant-neg", "-1", b.UID),                // a negative one
		ready(timedName(b, ph, 0), "0", "someone-else"), // our name, not ours
		ready("tenant-0", "0", b.UID),                   // ours by reference, not by name
	} {
		fw.Add(p)
	}
	clk.Step(time.Second)
	fw.Add(ready(timedName(b, ph, 1), "1", b.UID)) // the step's own pod 1
	deadline := time.Now().Add(5 * time.Second)
	for {
		tm.mu.Lock()
		done := !tm.end[1].IsZero()
		tm.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if !tm.start[0].IsZero() || !tm.end[0].IsZero() {
		t.Errorf("object 0 timed by others' pods: start %v, end %v", tm.start[0], tm.end[0])
	}
	if want := t0.Add(2 * time.Second); !tm.end[1].Equal(want) {
		t.Errorf("object 1 ended at %v, want %v", tm.end[1], want)
	}
	for _, o := range inf.GetStore().List() {
		if p := o.(*corev1.Pod); p.Name != timedName(b, ph, 1) && (len(p.Labels) > 0 || len(p.Status.Conditions) > 0) {
			t.Errorf("the informer keeps more than the name of %s: %+v", p.Name, p)
		}
	}
}
