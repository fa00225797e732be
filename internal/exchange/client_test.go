package exchange

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
	"github.com/storagebench/storagebench/internal/workload"
)

const ns = "tenant"

var (
	cmResource = schema.GroupResource{Resource: "configmaps"}
	fastRetry  = wait.Backoff{Duration: time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 100, Cap: 5 * time.Millisecond}
)

func planCM(t *testing.T, uid types.UID, order *protocol.StepOrder) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PlanName("b"), Namespace: ns, UID: uid},
		Data: map[string]string{KeyPlan: encode(t, protocol.ClientPlan{Benchmark: "b",
			Topology: plan.Topology{Clients: 1, JobsPerClient: 1}, Workload: workload.BaseSpec()})}}
	if order != nil {
		cm.Data[KeyOrder] = encode(t, order)
	}
	return cm
}

// failing makes the first n calls of verb on ConfigMaps fail with err.
func failing(cs *fake.Clientset, verb string, n int, err error) *int {
	calls := 0
	cs.PrependReactor(verb, "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= n {
			return true, nil, err
		}
		return false, nil, nil
	})
	return &calls
}

func TestLoadPlan(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd leader change")
	cases := []struct {
		name    string
		objects []runtime.Object
		fail    error
		failN   int
		timeout time.Duration
		wantErr string
	}{
		{"present", []runtime.Object{planCM(t, "u1", nil)}, nil, 0, time.Minute, ""},
		{"appears after a while", []runtime.Object{planCM(t, "u1", nil)}, apierrors.NewNotFound(cmResource, "b-plan"), 5, time.Minute, ""},
		{"transient errors", []runtime.Object{planCM(t, "u1", nil)}, unavailable, 5, time.Minute, ""},
		{"never appears", nil, nil, 0, 50 * time.Millisecond, "no plan ConfigMap b-plan after 50ms"},
		{"forbidden is final", nil, apierrors.NewForbidden(cmResource, "b-plan", errors.New("RBAC")), 1, time.Hour, "reading the plan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset(c.objects...)
			if c.fail != nil {
				failing(cs, "get", c.failN, c.fail)
			}
			x := &Client{Clientset: cs, Namespace: ns, Benchmark: "b", Index: 4, Backoff: fastRetry, PlanTimeout: c.timeout}
			p, err := x.LoadPlan(context.Background())
			if wantErr(t, err, c.wantErr) {
				return
			}
			if p.Client != 4 || x.planUID != "u1" {
				t.Fatalf("plan %+v, uid %q", p, x.planUID)
			}
		})
	}
}

// TestWaitOrderEndsWhenThePlanGoes drives WaitOrder with a fake watch and
// checks it returns the order, or stops when the plan ConfigMap goes away.
func TestWaitOrderEndsWhenThePlanGoes(t *testing.T) {
	step1 := &protocol.StepOrder{Index: 1, StartAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cases := []struct {
		name     string
		initial  *corev1.ConfigMap // nil: the plan is already gone
		getFails error
		events   func(w *watch.FakeWatcher)
		wantStep int
		wantErr  error
		wantText string
	}{
		{"order arrives", planCM(t, "u1", nil), nil, func(w *watch.FakeWatcher) {
			other := planCM(t, "u9", step1)
			other.Name = "b-client-000" // another object's event is ignored
			w.Modify(other)
			w.Modify(planCM(t, "u1", &protocol.StepOrder{Index: 0}))
			w.Modify(planCM(t, "u1", step1))
		}, 1, nil, ""},
		{"order already there", planCM(t, "u1", step1), nil, nil, 1, nil, ""},
		{"watch ends, order read again", planCM(t, "u1", nil), nil, func(w *watch.FakeWatcher) { w.Stop() }, -1, nil, ""},
		{"plan deleted during the watch", planCM(t, "u1", nil), nil, func(w *watch.FakeWatcher) { w.Delete(planCM(t, "u1", nil)) },
			0, ErrPlanGone, "plan ConfigMap b-plan was deleted: the benchmark is gone or was tampered with"},
		{"plan already deleted", nil, nil, nil, 0, ErrPlanGone, "was deleted"},
		{"plan replaced", planCM(t, "u2", step1), nil, nil, 0, ErrPlanGone, "plan ConfigMap b-plan was replaced"},
		{"plan replaced during the watch", planCM(t, "u1", nil), nil, func(w *watch.FakeWatcher) { w.Modify(planCM(t, "u2", step1)) },
			0, ErrPlanGone, "was replaced"},
		{"transient read errors", planCM(t, "u1", step1), apierrors.NewTooManyRequests("slow down", 0), nil, 1, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var objects []runtime.Object
			if c.initial != nil {
				objects = append(objects, c.initial)
			}
			cs := fake.NewClientset(objects...)
			if c.getFails != nil {
				failing(cs, "get", 3, c.getFails)
			}
			watches := 0
			cs.PrependWatchReactor("configmaps", func(k8stesting.Action) (bool, watch.Interface, error) {
				watches++
				w := watch.NewFakeWithChanSize(10, false)
				if watches == 1 && c.events != nil {
					c.events(w)
				}
				if watches == 2 && c.wantStep == -1 {
					// After the first watch ended, the order is written.
					if err := cs.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, planCM(t, "u1", step1), ns); err != nil {
						t.Error(err)
					}
					w.Modify(planCM(t, "u1", step1))
				}
				return true, w, nil
			})
			x := &Client{Clientset: cs, Namespace: ns, Benchmark: "b", Backoff: fastRetry, planUID: "u1"}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			o, err := x.WaitOrder(ctx, 1)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.wantText) {
					t.Fatalf("got %v, want %v containing %q", err, c.wantErr, c.wantText)
				}
				return
			}
			if err != nil || o.Index != 1 {
				t.Fatalf("order %+v, %v", o, err)
			}
		})
	}
}

func TestPublishFailsWhenTheClientConfigMapIsGone(t *testing.T) {
	cases := []struct {
		name     string
		exists   bool
		fail     error
		wantErr  error
		wantText string
	}{
		{"published", true, nil, nil, ""},
		{"transient errors retried", true, apierrors.NewInternalError(errors.New("etcd")), nil, ""},
		{"deleted", false, nil, ErrClientGone, "client ConfigMap b-client-003 was deleted"},
		{"forbidden", true, apierrors.NewForbidden(cmResource, "b-client-003", errors.New("RBAC")), nil, "forbidden"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var objects []runtime.Object
			if c.exists {
				objects = append(objects, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ClientName("b", 3), Namespace: ns}})
			}
			cs := fake.NewClientset(objects...)
			if c.fail != nil {
				failing(cs, "patch", 3, c.fail)
			}
			x := &Client{Clientset: cs, Namespace: ns, Benchmark: "b", Index: 3, Backoff: fastRetry}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := x.Publish(ctx, results.ClientStep{Client: 3, Step: 2})
			switch {
			case c.wantText == "" && err != nil:
				t.Fatal(err)
			case c.wantText != "" && (err == nil || !strings.Contains(err.Error(), c.wantText)):
				t.Fatalf("got %v, want %q", err, c.wantText)
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Fatalf("got %v, want %v", err, c.wantErr)
			case err == nil:
				cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, ClientName("b", 3), metav1.GetOptions{})
				if err != nil || ResultStep(cm) != 2 {
					t.Fatalf("result not written: %v", err)
				}
			}
		})
	}
}

// TestStepOrderedAhead checks the runner's side of a step ordered ahead:
// WaitOrder takes it from next.json, and its result waits until the
// conductor has made it the current order (it recorded the step before),
// as a client holds one result at a time.
func TestStepOrderedAhead(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step0 := &protocol.StepOrder{Index: 0, StartAt: at, Duration: time.Minute}
	step1 := &protocol.StepOrder{Index: 1, StartAt: at.Add(time.Minute), Duration: time.Minute}
	plan0 := planCM(t, "u1", step0)
	plan0.Data[KeyNextOrder] = encode(t, step1)
	cs := fake.NewClientset(plan0, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ClientName("b", 0), Namespace: ns}})
	events := watch.NewFakeWithChanSize(10, false)
	cs.PrependWatchReactor("configmaps", func(k8stesting.Action) (bool, watch.Interface, error) { return true, events, nil })
	x := &Client{Clientset: cs, Namespace: ns, Benchmark: "b", Backoff: fastRetry, planUID: "u1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := x.WaitOrder(ctx, 1)
	if err != nil || o.Index != 1 || !o.StartAt.Equal(step1.StartAt) {
		t.Fatalf("order %+v, %v; want step 1 as written ahead", o, err)
	}
	published := make(chan error, 1)
	go func() { published <- x.Publish(ctx, results.ClientStep{Step: 1}) }()
	result := func() int {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, ClientName("b", 0), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ResultStep(cm)
	}
	// Step 0 is still current: the result of step 1 must not replace
	// step 0's before the conductor has read it.
	select {
	case err := <-published:
		t.Fatalf("published step 1 while step 0 was current (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if got := result(); got != -1 {
		t.Fatalf("client ConfigMap holds the result of step %d", got)
	}
	events.Modify(planCM(t, "u1", step1)) // step 0 recorded, step 1 current
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	if got := result(); got != 1 {
		t.Fatalf("client ConfigMap holds the result of step %d, want 1", got)
	}
	// A step that was current when ordered is published at once.
	if err := x.Publish(ctx, results.ClientStep{Step: 0}); err != nil {
		t.Fatal(err)
	}
}
