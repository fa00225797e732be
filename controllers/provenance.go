package controllers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
)

// A schedule acts on its runs: counts them, trims them beyond the history
// limits, takes its times from them and offers them as baselines. A
// controller reference to the schedule does not prove that the schedule
// created a run: whoever may create StorageBenchmarks may write one, with
// the schedule's label and any scheduled time. So the manager signs the
// runs it creates with a key only it holds (a Secret in its own
// namespace), and a schedule acts only on runs whose signature holds:
//
//   - before creating a run it writes a token, an HMAC of the namespace,
//     the schedule's UID, the run's name and its scheduled time
//     (AnnotationRunToken): nobody without the key can make one for a time
//     that has not been scheduled yet;
//   - once the run exists it writes the signature, an HMAC of the same and
//     the run's UID (AnnotationRunSignature): it cannot be copied onto
//     another object, not even onto one created again under the run's
//     name after the run was deleted.
//
// A run with a valid token but no signature is the manager's own creation
// interrupted between the two writes only when its scheduled time is later
// than every run the schedule knows; it is then signed. Runs created before
// the key existed (by a manager version that did not sign) are trusted as
// they are, once: the key's creation is the line. The chart's admission
// policy also refuses, at the API, a StorageBenchmark carrying a schedule's
// controller reference or label that the manager does not create; the
// manager does not rely on it (it may be turned off).
const (
	// DefaultRunKeySecret names the Secret holding the key, in the
	// manager's namespace.
	DefaultRunKeySecret = "storagebench-run-key"
	// runKeyBytes is the key's length: HMAC-SHA256's block is 64 bytes,
	// and 32 random bytes are beyond guessing.
	runKeyBytes = 32
	runKeyData  = "key"
)

// RunKey signs and checks the runs schedules create.
type RunKey struct {
	key []byte
	// since is when the key was made: runs created before it are trusted
	// without a signature (made by a manager that did not sign).
	since time.Time
}

// NewRunKey is a key of at least 32 bytes, made at since (zero: no run
// predates it).
func NewRunKey(key []byte, since time.Time) (*RunKey, error) {
	if len(key) < runKeyBytes {
		return nil, fmt.Errorf("the run key has %d bytes, want at least %d", len(key), runKeyBytes)
	}
	return &RunKey{key: append([]byte(nil), key...), since: since}, nil
}

// EphemeralRunKey is a key of this process alone: runs it signs are not
// recognised by another process (tests without schedules, or a manager
// started without its Secret).
func EphemeralRunKey() *RunKey {
	key := make([]byte, runKeyBytes)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return &RunKey{key: key}
}

// LoadRunKey reads the key from Secret namespace/name, creating the Secret
// with a new random key when it does not exist (several replicas racing
// read the one that won). c must read the API server, not a cache.
func LoadRunKey(ctx context.Context, c client.Client, namespace, name string) (*RunKey, error) {
	var s corev1.Secret
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err := c.Get(ctx, key, &s)
	if apierrors.IsNotFound(err) {
		data := make([]byte, runKeyBytes)
		if _, err := rand.Read(data); err != nil {
			return nil, err
		}
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
				Labels: map[string]string{exchange.LabelManagedBy: exchange.ManagedBy}},
			Data: map[string][]byte{runKeyData: data},
		}
		err = c.Create(ctx, &s)
		if apierrors.IsAlreadyExists(err) {
			err = c.Get(ctx, key, &s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the run key (Secret %s/%s): %w", namespace, name, err)
	}
	k, err := NewRunKey(s.Data[runKeyData], s.CreationTimestamp.Time)
	if err != nil {
		return nil, fmt.Errorf("the run key (Secret %s/%s): %w", namespace, name, err)
	}
	return k, nil
}

func (k *RunKey) mac(parts ...string) string {
	h := hmac.New(sha256.New, k.key)
	// Each part is length-prefixed, so no two lists of parts hash alike.
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// tokenOf is the token of run name of schedule scheduleUID in namespace,
// scheduled at (the annotation's value).
func (k *RunKey) tokenOf(namespace string, scheduleUID types.UID, name, at string) string {
	return k.mac("storagebench.io/run-token/v1", namespace, string(scheduleUID), name, at)
}

// signatureOf is tokenOf bound to the run's UID.
func (k *RunKey) signatureOf(namespace string, scheduleUID types.UID, name, at string, uid types.UID) string {
	return k.mac("storagebench.io/run-signature/v1", namespace, string(scheduleUID), name, at, string(uid))
}

// StampToken writes the token on run b, about to be created for schedule
// scheduleUID (its scheduled-time annotation set).
func (k *RunKey) StampToken(b *v1alpha1.StorageBenchmark, scheduleUID types.UID) {
	b.Annotations[AnnotationRunToken] = k.tokenOf(b.Namespace, scheduleUID, b.Name, b.Annotations[AnnotationScheduledTime])
}

// signature is the signature run b, created, should carry.
func (k *RunKey) signature(b *v1alpha1.StorageBenchmark, scheduleUID types.UID) string {
	return k.signatureOf(b.Namespace, scheduleUID, b.Name, b.Annotations[AnnotationScheduledTime], b.UID)
}

// Provenance is what the key says of a benchmark claiming to be a run of
// schedule scheduleUID.
type Provenance int

const (
	// NotCreated: the schedule did not create it.
	NotCreated Provenance = iota
	// Signed: the schedule created it (or it predates the key).
	Signed
	// Unsigned: it carries the token of a run the schedule was creating,
	// and no signature: the schedule's own creation interrupted, if its
	// time is the latest the schedule knows (see above).
	Unsigned
)

// ProvenanceOf judges b as a run of schedule scheduleUID: controlled by it,
// and signed (or made before the key).
func (k *RunKey) ProvenanceOf(b *v1alpha1.StorageBenchmark, scheduleUID types.UID) Provenance {
	ref := metav1.GetControllerOfNoCopy(b)
	if ref == nil || ref.UID != scheduleUID || !isScheduleRef(ref) {
		return NotCreated
	}
	at := b.Annotations[AnnotationScheduledTime]
	switch {
	case equalMAC(b.Annotations[AnnotationRunSignature], k.signatureOf(b.Namespace, scheduleUID, b.Name, at, b.UID)):
		return Signed
	case !k.since.IsZero() && b.CreationTimestamp.Time.Before(k.since.Truncate(time.Second)):
		return Signed // made before the key: by a manager that did not sign
	case equalMAC(b.Annotations[AnnotationRunToken], k.tokenOf(b.Namespace, scheduleUID, b.Name, at)):
		return Unsigned
	}
	return NotCreated
}

func equalMAC(got, want string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(want))
}

// isScheduleRef reports an owner reference naming a StorageBenchmarkSchedule
// of this API group.
func isScheduleRef(ref *metav1.OwnerReference) bool {
	return ref.Kind == "StorageBenchmarkSchedule" && strings.HasPrefix(ref.APIVersion, v1alpha1.GroupVersion.Group+"/")
}

// Sign writes run b's signature, on the condition that b is still the
// object observed (its UID and resourceVersion).
func (k *RunKey) Sign(ctx context.Context, c client.Client, b *v1alpha1.StorageBenchmark, scheduleUID types.UID) error {
	if b.UID == "" {
		return errors.New("signing a run that was not created")
	}
	patch := client.MergeFromWithOptions(b.DeepCopy(), client.MergeFromWithOptimisticLock{})
	b.Annotations[AnnotationRunSignature] = k.signature(b, scheduleUID)
	return c.Patch(ctx, b, patch)
}

// ScheduledTimeOf is a run's scheduled time: its annotation, else when it
// was created.
func ScheduledTimeOf(b *v1alpha1.StorageBenchmark) time.Time {
	if t, err := time.Parse(time.RFC3339, b.Annotations[AnnotationScheduledTime]); err == nil {
		return t
	}
	return b.CreationTimestamp.Time
}
