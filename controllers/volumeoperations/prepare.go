package volumeoperations

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// prepared makes what ph's operation starts from (missing pieces only)
// and says whether all of it is ready: errNotReady (wrapped, saying what
// is missing) while not. For delete it returns the volumes to watch, by
// index.
func (r *Reconciler) prepared(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) ([]string, error) {
	switch ph.op {
	case v1alpha1.OperationProvision:
		return nil, nil
	case v1alpha1.OperationAttach, v1alpha1.OperationSnapshot, v1alpha1.OperationExpand, v1alpha1.OperationDelete:
		// Each timed object starts from its own bound claim (attach on a
		// class that binds on first use: from its claim). A snapshot of
		// its own claim each: N snapshots of one claim would time the
		// snapshot controller's updates of that one claim (its
		// source-protection finalizer, one writer at a time, retried on
		// conflicts), not the storage.
		waitBound := ph.op != v1alpha1.OperationAttach || !r.bindsOnFirstUse(ctx, b)
		pvs := make([]string, ph.concurrency)
		var missing []string
		for i := range ph.concurrency {
			c, err := r.ensureClaim(ctx, b, ph, timedName(b, ph, i), i, nil)
			if err != nil {
				return nil, err
			}
			pvs[i] = c.Spec.VolumeName
			if waitBound && c.Status.Phase != corev1.ClaimBound {
				missing = append(missing, c.Name)
				continue
			}
			if got, ok := c.Status.Capacity[corev1.ResourceStorage]; ok && ph.op == v1alpha1.OperationExpand && got.Cmp(*b.Spec.Storage.ExpandTo) >= 0 {
				// The storage rounded the claim up to expandTo or beyond:
				// there is nothing to expand, and nothing to time.
				return nil, &refusedError{fmt.Sprintf("claim %s was provisioned with %s, already at least storage.expandTo %s: choose a larger expandTo",
					c.Name, got.String(), b.Spec.Storage.ExpandTo.String())}
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: %d claims not bound (%s)", errNotReady, len(missing), firstOf(missing))
		}
		return pvs, nil
	}
	// Clones start from one source claim of the step.
	src, err := r.ensureClaim(ctx, b, ph, sourceName(b, ph), -1, nil)
	if err != nil {
		return nil, err
	}
	if src.Status.Phase != corev1.ClaimBound {
		return nil, fmt.Errorf("%w: the source claim %s is not bound", errNotReady, src.Name)
	}
	if ph.op != v1alpha1.OperationCloneFromSnapshot {
		return nil, nil
	}
	snap, err := r.ensureSnapshot(ctx, b, ph)
	if err != nil {
		return nil, err
	}
	if ready, _, _ := unstructured.NestedBool(snap.Object, "status", "readyToUse"); !ready {
		msg, _, _ := unstructured.NestedString(snap.Object, "status", "error", "message")
		return nil, fmt.Errorf("%w: the source snapshot %s is not ready to use %s", errNotReady, snap.GetName(), msg)
	}
	return nil, nil
}

// bindsOnFirstUse: the class binds claims when a pod uses them.
func (r *Reconciler) bindsOnFirstUse(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark) bool {
	var sc storagev1.StorageClass
	if err := r.Get(ctx, client.ObjectKey{Name: b.Spec.Storage.StorageClassName}, &sc); err != nil {
		return false
	}
	return sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// ensureClaim returns b's claim name, creating it when missing. A claim of
// that name that b does not control is a conflict: never touched.
func (r *Reconciler) ensureClaim(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, name string, i int, source *corev1.TypedLocalObjectReference) (*corev1.PersistentVolumeClaim, error) {
	var c corev1.PersistentVolumeClaim
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, &c)
	switch {
	case apierrors.IsNotFound(err):
		c := claimOf(b, ph, name, i, source)
		err := r.Create(ctx, c)
		if apierrors.IsAlreadyExists(err) {
			// Not in the cache, which holds labelled claims only: read it
			// from the API server, and it is ours or a conflict.
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, c); err != nil {
				return nil, err
			}
			if !metav1.IsControlledBy(c, b) {
				return nil, &conflictError{kind: "PersistentVolumeClaim", name: name}
			}
			return c, nil
		}
		return c, err
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(&c, b):
		return nil, &conflictError{kind: "PersistentVolumeClaim", name: name}
	}
	return &c, nil
}

// ensureSnapshot returns ph's source snapshot, creating it when missing.
func (r *Reconciler) ensureSnapshot(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) (*unstructured.Unstructured, error) {
	res := r.Watchers.dynamic.Resource(snapshotGVR).Namespace(b.Namespace)
	name := sourceName(b, ph)
	u, err := res.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return res.Create(ctx, snapshotOf(b, ph, name, -1, name), metav1.CreateOptions{})
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(u, b):
		return nil, &conflictError{kind: "VolumeSnapshot", name: name}
	}
	return u, nil
}

// refusedError: the step cannot be prepared as the spec asks; its
// operations fail with this reason.
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return e.reason }

// conflictError: an object under one of the benchmark's names is not its.
type conflictError struct{ kind, name string }

func (e *conflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not this benchmark's: it is left alone; delete it or rename the benchmark", e.kind, e.name)
}

// deleteAll deletes what b made for ph (b's own, by UID precondition) and
// says what is left: "" when the step's claims, pods, snapshots and
// volumes are all gone.
func (r *Reconciler) deleteAll(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase) (string, error) {
	sel := client.MatchingLabels{LabelBenchmark: b.Name, LabelPhase: ph.label()}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(b.Namespace), sel); err != nil {
		return "", err
	}
	var objs []client.Object
	for i := range pods.Items {
		objs = append(objs, &pods.Items[i])
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.List(ctx, &claims, client.InNamespace(b.Namespace), sel); err != nil {
		return "", err
	}
	noted := false
	for i := range claims.Items {
		c := &claims.Items[i]
		if isStepObject(c, b, ph) && c.Spec.VolumeName != "" && !slices.Contains(b.Status.Current.Volumes, c.Spec.VolumeName) {
			b.Status.Current.Volumes = append(b.Status.Current.Volumes, c.Spec.VolumeName)
			noted = true
		}
		objs = append(objs, c)
	}
	if noted {
		// The volumes are written down before their claims go: a claim
		// deleted is a volume name forgotten.
		return "volumes to note", errVolumesNoted
	}
	left, err := r.deleteOwned(ctx, b, ph, objs)
	if err != nil {
		return "", err
	}
	snaps, err := r.deleteSnapshots(ctx, b, ph, sel)
	if err != nil {
		return "", err
	}
	if left = append(left, snaps...); len(left) > 0 {
		return firstOf(left), nil
	}
	return r.volumesLeft(ctx, b.Status.Current.Volumes)
}

// errVolumesNoted: deleteAll noted volumes in status, to be written
// before it deletes their claims.
var errVolumesNoted = errors.New("volumes noted")

// isStepObject: obj is one of the step's own, by controller and by name
// (anyone can put our labels, and a controller reference, on theirs).
func isStepObject(obj metav1.Object, b *v1alpha1.VolumeOperationsBenchmark, ph phase) bool {
	if !metav1.IsControlledBy(obj, b) {
		return false
	}
	if obj.GetName() == sourceName(b, ph) {
		return true
	}
	i, err := strconv.Atoi(obj.GetLabels()[LabelIndex])
	return err == nil && i >= 0 && i < ph.concurrency && obj.GetName() == timedName(b, ph, i)
}

// deleteOwned deletes the step's objs, by UID precondition, and names
// them: they are left until gone.
func (r *Reconciler) deleteOwned(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, objs []client.Object) ([]string, error) {
	var left []string
	for _, o := range objs {
		if !isStepObject(o, b, ph) {
			continue
		}
		left = append(left, kindOf(o)+" "+o.GetName())
		if o.GetDeletionTimestamp() == nil {
			uid := o.GetUID()
			if err := r.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
		}
	}
	return left, nil
}

// kindOf names o's kind in messages.
func kindOf(o client.Object) string {
	switch o.(type) {
	case *corev1.Pod:
		return "pod"
	case *corev1.PersistentVolumeClaim:
		return "claim"
	}
	return "object"
}

// deleteSnapshots deletes b's VolumeSnapshots of sel, by UID
// precondition, and names them.
func (r *Reconciler) deleteSnapshots(ctx context.Context, b *v1alpha1.VolumeOperationsBenchmark, ph phase, sel client.MatchingLabels) ([]string, error) {
	res := r.Watchers.dynamic.Resource(snapshotGVR).Namespace(b.Namespace)
	snaps, err := res.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set(sel)).String()})
	if apierrors.IsNotFound(err) { // no snapshot CRDs: no snapshots
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var left []string
	for i := range snaps.Items {
		s := &snaps.Items[i]
		if !isStepObject(s, b, ph) {
			continue
		}
		left = append(left, "VolumeSnapshot "+s.GetName())
		if s.GetDeletionTimestamp() == nil {
			uid := s.GetUID()
			if err := res.Delete(ctx, s.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
		}
	}
	return left, nil
}

// volumesLeft names the volumes of the step's deleted claims that the
// storage has not deleted yet: the next step must not queue behind them.
// A retained volume is nobody's to wait for.
func (r *Reconciler) volumesLeft(ctx context.Context, volumes []string) (string, error) {
	var left []string
	for _, pv := range volumes {
		var v corev1.PersistentVolume
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: pv}, &v)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return "", err
		case v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete:
			continue
		}
		left = append(left, "PersistentVolume "+pv)
	}
	return firstOf(left), nil
}

// firstOf names up to three of xs, and how many more.
func firstOf(xs []string) string {
	if len(xs) <= 3 {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:3], ", "), len(xs)-3)
}
