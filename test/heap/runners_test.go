package heap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// realResult is a client's step result from a real fio json+ report of two
// jobs (the oltp profile: 8 KiB random, 80 % reads), with its full latency
// histograms, as the runner derives it.
func realResult() (results.ClientStep, error) {
	data, err := os.ReadFile("../../internal/results/testdata/fio-oltp-2jobs.json")
	if err != nil {
		return results.ClientStep{}, err
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		return results.ClientStep{}, err
	}
	r, w, _ := results.FromFio(out)
	return results.ClientStep{Jobs: len(out.Jobs), Read: r, Write: w}, nil
}

// runners plays the runners of benchmark bench: each client starts once its
// Job exists (a real one starts once its pod runs, after the Job), and
// follows the protocol through internal/exchange.Client, as cmd/runner
// does, publishing result after each step's ramp and duration instead of
// running fio. It returns when every client saw the done order, or on the
// first error.
func runners(ctx context.Context, k8s client.Client, cfg *rest.Config, ns, bench string, clients int, result results.ClientStep) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs, err := runnerClients(cfg, clients)
	if err != nil {
		return err
	}
	errs := make(chan error, clients)
	started := make([]bool, clients)
	for n := 0; n < clients; {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns),
			client.MatchingLabels{exchange.LabelBenchmark: bench, exchange.LabelRole: exchange.RoleClient}); err != nil {
			return err
		}
		for _, j := range jobs.Items {
			i, err := strconv.Atoi(j.Labels[exchange.LabelClient])
			if err != nil || i < 0 || i >= clients || started[i] {
				continue
			}
			started[i] = true
			n++
			x := &exchange.Client{Clientset: cs[i/runnersPerConnection], Namespace: ns, Benchmark: bench, Index: i}
			go func() { errs <- fakeRunner(ctx, x, result) }()
		}
		if n < clients {
			if err := protocol.Pause(ctx, time.Second); err != nil {
				return err
			}
		}
	}
	for range clients {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// runnersPerConnection is how many stand-in runners share a clientset and
// its connection. Real runners each have their own; one connection for
// thousands would hold more watches than the API server serves on one
// HTTP/2 connection (--http2-max-streams-per-connection, 1,000 by
// default), and the runners beyond would wait for a stream.
const runnersPerConnection = 100

// runnerClients are the clientsets of n stand-in runners, one per
// runnersPerConnection of them, each with a transport of its own: a
// config with its own dialer is not shared through client-go's transport
// cache.
func runnerClients(cfg *rest.Config, n int) ([]kubernetes.Interface, error) {
	out := make([]kubernetes.Interface, (n+runnersPerConnection-1)/runnersPerConnection)
	for i := range out {
		c := rest.CopyConfig(cfg)
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			return nil, err
		}
		out[i] = cs
	}
	return out, nil
}

// fakeRunner is cmd/runner's client loop (internal/runner.Runner.Run) with
// fio replaced by a wait and a real fio result.
func fakeRunner(ctx context.Context, x *exchange.Client, result results.ClientStep) error {
	if _, err := x.LoadPlan(ctx); err != nil {
		return fmt.Errorf("client %d: %w", x.Index, err)
	}
	ready := protocol.Ready{
		Client:     x.Index,
		FioVersion: "fio-3.33",
		Mount: &protocol.Mount{Source: fmt.Sprintf("10.0.0.4:/trident_pvc_%03d", x.Index), FSType: "nfs4",
			Options: "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys"},
		ClockOffsetUncertainty: 2 * time.Millisecond,
	}
	if err := x.ReportReady(ctx, ready); err != nil {
		return fmt.Errorf("client %d: %w", x.Index, err)
	}
	for k := 0; ; k++ {
		order, err := x.WaitOrder(ctx, k)
		if err != nil {
			return fmt.Errorf("client %d waiting for step %d: %w", x.Index, k, err)
		}
		if order.Done {
			return nil
		}
		if err := protocol.Pause(ctx, time.Until(order.StartAt)); err != nil {
			return err
		}
		r := result
		r.Client, r.Step, r.PlannedStart, r.ActualStart = x.Index, order.Index, order.StartAt, time.Now()
		if err := protocol.Pause(ctx, order.Ramp+order.Duration); err != nil {
			return err
		}
		r.End = time.Now()
		if err := x.Publish(ctx, r); err != nil {
			return fmt.Errorf("client %d: %w", x.Index, err)
		}
	}
}

// bindClaims stands in for the provisioner and the persistent volume
// binder until ctx ends: every unbound claim in ns gets a CSI
// PersistentVolume of the requested size, pre-bound to it, and both are
// marked Bound.
func bindClaims(ctx context.Context, k8s client.Client, ns string) error {
	for {
		var claims corev1.PersistentVolumeClaimList
		if err := k8s.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return ignoreCanceled(ctx, err)
		}
		for i := range claims.Items {
			pvc := &claims.Items[i]
			if pvc.Status.Phase == corev1.ClaimBound || pvc.DeletionTimestamp != nil {
				continue
			}
			if err := bind(ctx, k8s, pvc); err != nil && !apierrors.IsConflict(err) {
				return ignoreCanceled(ctx, err)
			}
		}
		if err := protocol.Pause(ctx, time.Second); err != nil {
			return nil
		}
	}
}

func bind(ctx context.Context, k8s client.Client, pvc *corev1.PersistentVolumeClaim) error {
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    pvc.Spec.VolumeMode,
			StorageClassName:              ptr.Deref(pvc.Spec.StorageClassName, ""),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: provisioner, VolumeHandle: string(pvc.UID)}},
		},
	}
	if err := k8s.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
	if err := k8s.Status().Update(ctx, pv); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	if pvc.Spec.VolumeName == "" {
		pvc.Spec.VolumeName = pv.Name
		if err := k8s.Update(ctx, pvc); err != nil {
			return err
		}
	}
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: size.DeepCopy()}}
	return k8s.Status().Update(ctx, pvc)
}

// foreignConfigMaps creates n ConfigMaps of size bytes that carry the
// operator's labels for benchmark bench but are nobody's, with workers
// creating them concurrently.
func foreignConfigMaps(ctx context.Context, k8s client.Client, ns, bench string, n, size, workers int) error {
	value := strings.Repeat("x", size)
	return parallel(ctx, workers, n, func(i int) error {
		return k8s.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("foreign-%04d", i), Labels: map[string]string{
				exchange.LabelManagedBy: exchange.ManagedBy,
				exchange.LabelBenchmark: bench,
				exchange.LabelRole:      exchange.RoleClient,
			}},
			Data: map[string]string{"data": value},
		})
	})
}

// parallel runs do(0) … do(n−1) on workers goroutines and returns their
// errors joined.
func parallel(ctx context.Context, workers, n int, do func(i int) error) error {
	errs := make(chan error, n)
	workqueue.ParallelizeUntil(ctx, workers, n, func(i int) { errs <- do(i) })
	close(errs)
	var err error
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

func ignoreCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
