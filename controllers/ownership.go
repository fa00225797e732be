package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
	return isClaim(obj) && b.UID != "" && obj.GetAnnotations()[AnnotationCreatedBy] == string(b.UID)
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
	return fmt.Sprintf("creating %s %q was refused: %s", e.Kind, e.Name, clip(e.Err.Error(), maxMessage/2))
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refused tells permanent API errors from those worth a retry.
func refused(err error) bool {
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

// ensure creates obj as b's child unless b already has it. owned objects
// get b as controller (the garbage collector deletes them with b); a claim
// to be retained gets AnnotationCreatedBy instead. An object under the
// name that is not b's is a *ConflictError; a refused create a
// *RefusedError.
func (r *Reconciler) ensure(ctx context.Context, b *v1alpha1.StorageBenchmark, obj client.Object, owned bool) error {
	kind := r.kindOf(obj)
	cur, err := r.lookup(ctx, obj)
	if err == nil {
		if ownedBy(cur, b) {
			return nil
		}
		return conflict(cur, kind)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	if owned {
		if err := controllerutil.SetControllerReference(b, obj, r.Scheme()); err != nil {
			return err
		}
	} else {
		obj.SetAnnotations(mergeMap(obj.GetAnnotations(), map[string]string{AnnotationCreatedBy: string(b.UID)}))
	}
	err = r.Create(ctx, obj)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Created", "kind", kind, "name", obj.GetName())
		return nil
	case apierrors.IsAlreadyExists(err):
		if cur, err = r.lookup(ctx, obj); err != nil {
			return err
		}
		if ownedBy(cur, b) {
			return nil
		}
		return conflict(cur, kind)
	case refused(err):
		return &RefusedError{Kind: kind, Name: obj.GetName(), Err: err}
	}
	return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
}

// lookup reads what exists under typed's name: from the cache, which holds
// labelled objects (ConfigMaps as metadata), and when the cache does not
// have it, the metadata from the API server, which also sees objects
// without the label.
func (r *Reconciler) lookup(ctx context.Context, typed client.Object) (client.Object, error) {
	key := client.ObjectKeyFromObject(typed)
	gvk, err := apiutil.GVKForObject(typed, r.Scheme())
	if err != nil {
		return nil, err
	}
	cached := typed.DeepCopyObject().(client.Object)
	if _, isCM := typed.(*corev1.ConfigMap); isCM {
		cached = metadataOf(gvk)
	}
	err = r.Get(ctx, key, cached)
	if !apierrors.IsNotFound(err) {
		return cached, err
	}
	live := metadataOf(gvk)
	return live, r.APIReader.Get(ctx, key, live)
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

func mergeMap(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
