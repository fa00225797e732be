package controllers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Ownership follows Kubernetes' own controllers (the ControllerRefManager
// rule): an object under a child's name is the benchmark's only when its
// controller reference carries the benchmark's UID. Anything else found
// under that name belongs to somebody else: the run fails with
// NameConflict, naming it, and the object is never changed or deleted.
// Every delete carries the UID the operator observed as a precondition,
// so an object re-created under the same name in between is never hit.

// AnnotationCreatedBy holds, on a claim kept after the run
// (cleanup.volumes: Retain, so without an owner reference that would let the
// garbage collector delete it), the UID of the benchmark that created it.
const AnnotationCreatedBy = "storagebench.io/created-by"

// ownedBy reports whether obj is b's child: controlled by b, or a retained
// claim b created.
func ownedBy(obj metav1.Object, b *v1alpha1.StorageBenchmark) bool {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return ref.UID == b.UID
	}
	// Only a benchmark that retains its claims creates them without a
	// controller reference.
	return b.Spec.Cleanup.Volumes == v1alpha1.VolumesRetain && isClaim(obj) && b.UID != "" &&
		obj.GetAnnotations()[AnnotationCreatedBy] == string(b.UID)
}

func isClaim(obj metav1.Object) bool {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		return true
	case *metav1.PartialObjectMetadata:
		return o.Kind == "PersistentVolumeClaim"
	}
	return false
}

// ConflictError says an object under one of the benchmark's child names is
// not the benchmark's.
type ConflictError struct {
	Kind, Name string
	// Holder describes who controls the object, if anyone.
	Holder string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q already exists and is not this benchmark's (%s): the benchmark's objects are named after it, so rename the benchmark; the existing object was not changed",
		e.Kind, e.Name, e.Holder)
}

func conflict(obj client.Object, kind string) *ConflictError {
	holder := "it has no controller"
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		holder = fmt.Sprintf("controlled by %s %s", ref.Kind, clip(ref.Name, 80))
	}
	return &ConflictError{Kind: kind, Name: obj.GetName(), Holder: holder}
}

// RefusedError is a create the API server refused for good (quota,
// admission, validation, authorization): retrying cannot help.
type RefusedError struct {
	Kind, Name string
	Err        error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("creating %s %q was refused: %s", e.Kind, e.Name, clip(e.Err.Error(), MaxMessage/2))
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refused tells permanent API errors from those worth a retry. Quota
// admission's "status unknown" (the quota controller has not counted yet)
// passes.
func refused(err error) bool {
	if strings.Contains(err.Error(), "status unknown for quota") {
		return false
	}
	switch apierrors.ReasonForError(err) {
	case metav1.StatusReasonForbidden, metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest,
		metav1.StatusReasonRequestEntityTooLarge, metav1.StatusReasonMethodNotAllowed, metav1.StatusReasonUnauthorized:
		return true
	}
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == http.StatusUnprocessableEntity
}

// kindOf names obj's kind for messages.
func (r *Reconciler) kindOf(obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, r.Scheme()); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}

// ensure creates obj as b's child unless b already has it (see examine
// and create).
func (r *Reconciler) ensure(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object, owned bool) error {
	if exists, err := r.examine(ctx, b, obj); exists || err != nil {
		return err
	}
	return r.create(ctx, b, obj, owned)
}

// examine reads what holds obj's name. exists is false when nothing does;
// an object that is not b's is judged: a *WaitError or a *ConflictError.
// The cache answers first (it holds labelled objects, ConfigMaps as
// metadata); a miss, or an object not b's, is confirmed with the API
// server, which also sees objects without the label and whose answer alone
// counts.
func (r *Reconciler) examine(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object) (exists bool, err error) {
	cur, err := r.cached(ctx, obj)
	if err == nil && ownedBy(cur, b) {
		return true, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	if cur, err = r.live(ctx, obj); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, r.judge(cur, b, r.kindOf(obj))
}

// create makes obj as b's child. owned objects get b as controller (the
// garbage collector deletes them with b); a claim to be retained gets
// AnnotationCreatedBy instead. An object that appeared under the name
// meanwhile is judged; a refused create is a *RefusedError.
func (r *Reconciler) create(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object, owned bool) error {
	if err := r.stillCurrent(ctx, b); err != nil {
		return err
	}
	if owned {
		if err := controllerutil.SetControllerReference(b, obj, r.Scheme()); err != nil {
			return err
		}
	} else {
		annotations := maps.Clone(obj.GetAnnotations())
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationCreatedBy] = string(b.UID)
		obj.SetAnnotations(annotations)
	}
	kind := r.kindOf(obj)
	err := r.Create(ctx, obj)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Created", "kind", kind, "name", obj.GetName())
		return nil
	case apierrors.IsAlreadyExists(err):
		cur, err := r.live(ctx, obj)
		if err != nil {
			return err
		}
		return r.judge(cur, b, kind)
	case refused(err):
		return &RefusedError{Kind: kind, Name: obj.GetName(), Err: err}
	}
	return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
}

// cached reads what the cache holds under typed's name: the object, or
// for a ConfigMap its metadata.
func (r *Reconciler) cached(ctx context.Context, typed client.Object) (client.Object, error) {
	obj, reader := typed.DeepCopyObject().(client.Object), client.Reader(r.Client)
	if _, isCM := typed.(*corev1.ConfigMap); isCM {
		obj, reader = metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap")), r.metadata()
	}
	return obj, reader.Get(ctx, client.ObjectKeyFromObject(typed), obj)
}

// live reads the metadata of what exists under typed's name from the API
// server.
func (r *Reconciler) live(ctx context.Context, typed client.Object) (client.Object, error) {
	gvk, err := apiutil.GVKForObject(typed, r.Scheme())
	if err != nil {
		return nil, err
	}
	m := metadataOf(gvk)
	return m, r.APIReader.Get(ctx, client.ObjectKeyFromObject(typed), m)
}

// previousGrace is how long a benchmark waits for the children of a
// deleted benchmark of the same name to be garbage collected before it
// calls them a conflict.
const previousGrace = 2 * time.Minute

// WaitError says a child's name is still held by an object on its way
// out: a deleted benchmark's child that the garbage collector has not
// removed yet, or an object being deleted. The run waits for it.
type WaitError struct{ Kind, Name string }

func (e *WaitError) Error() string {
	return fmt.Sprintf("waiting for %s %s, left by a deleted benchmark of the same name or being deleted, to go", e.Kind, e.Name)
}

// judge decides about an object found under a child's name: b's, on its
// way out (wait, for a while), or somebody else's (a conflict).
func (r *Reconciler) judge(cur client.Object, b *v1alpha1.StorageBenchmark, kind string) error {
	if ownedBy(cur, b) {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(cur)
	previous := ref != nil && ref.Kind == "StorageBenchmark" && ref.APIVersion == v1alpha1.GroupVersion.String() &&
		ref.Name == b.Name && ref.UID != b.UID
	if (previous || cur.GetDeletionTimestamp() != nil) && r.now().Sub(b.CreationTimestamp.Time) < previousGrace {
		return &WaitError{Kind: kind, Name: cur.GetName()}
	}
	return conflict(cur, kind)
}

// stillCurrent checks with the API server, before a create, that b still
// exists: a reconcile working from a cache that has not yet seen b
// deleted must not create children the garbage collector then removes.
func (r *Reconciler) stillCurrent(ctx context.Context, b *v1alpha1.StorageBenchmark) error {
	m := metadataOf(v1alpha1.GroupVersion.WithKind("StorageBenchmark"))
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(b), m); err != nil {
		return err
	}
	if m.UID != b.UID || m.DeletionTimestamp != nil {
		return &WaitError{Kind: "StorageBenchmark", Name: b.Name}
	}
	return nil
}

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// deleteOwned deletes obj, which was observed as b's, on the condition
// that it is still the object observed (its UID).
func (r *Reconciler) deleteOwned(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object, opts ...client.DeleteOption) error {
	if !ownedBy(obj, b) {
		return nil
	}
	uid := obj.GetUID()
	opts = append(opts, client.Preconditions{UID: &uid})
	err := r.Delete(ctx, obj, opts...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another object under the name now: not ours
	}
	return err
}
