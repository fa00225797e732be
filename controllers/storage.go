package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/trident"
)

// maxVolumes bounds the volumes described in status.
const maxVolumes = 8

// DefaultTridentNamespace is where Trident keeps its custom resources.
const DefaultTridentNamespace = "trident"

// Trident's resources are read through the dynamic client by their fixed
// resource names: no discovery, so a cluster without Trident simply answers
// "not found", and CRDs installed later are seen at once.
var (
	tridentVolumes  = schema.GroupVersionResource{Group: "trident.netapp.io", Version: "v1", Resource: "tridentvolumes"}
	tridentBackends = schema.GroupVersionResource{Group: "trident.netapp.io", Version: "v1", Resource: "tridentbackends"}
)

// +kubebuilder:rbac:groups=trident.netapp.io,resources=tridentvolumes,verbs=get
// +kubebuilder:rbac:groups=trident.netapp.io,resources=tridentbackends,verbs=list

// preflight refuses what the class's driver cannot serve (before anything
// is created) and returns warnings about results that are hard to compare.
func preflight(b *v1alpha1.StorageBenchmark, sc *storagev1.StorageClass) (*trident.Finding, []trident.Finding) {
	if sc == nil {
		return nil, nil
	}
	return trident.Preflight(sc.Provisioner, sc.Parameters, requestOf(b))
}

// requestOf is what b asks of its storage.
func requestOf(b *v1alpha1.StorageBenchmark) trident.Request {
	return trident.Request{VolumeMode: string(b.Spec.Storage.VolumeMode), AccessMode: string(accessModeOf(b)),
		Shared: b.Spec.Storage.Sharing == v1alpha1.SharingShared, Clients: b.Spec.Clients.Count}
}

// preflightBackends checks a Trident class that names no driver against
// the TridentBackends it can select (trident.PreflightOffers), once, on
// the pass that admits the benchmark before its children exist (status
// has no storage yet): a claim of such a class that no backend can serve
// would stay Pending until the bind timeout. Later passes, and a failed or
// refused read of the backends, leave it to Trident.
func (r *Reconciler) preflightBackends(ctx context.Context, b *v1alpha1.StorageBenchmark, sc *storagev1.StorageClass) *trident.Finding {
	if sc == nil || r.Dynamic == nil || b.Status.Storage != nil {
		return nil
	}
	if driver, isTrident := trident.DriverOf(sc.Provisioner, sc.Parameters); !isTrident || driver != "" {
		return nil
	}
	list, err := r.Dynamic.Resource(tridentBackends).Namespace(r.tridentNamespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	offers := make([]trident.Offer, len(list.Items))
	for i, item := range list.Items {
		offers[i] = trident.OfferFrom(item.Object)
	}
	return trident.PreflightOffers(trident.ClassParameters(sc.Parameters, sc.Annotations), offers, requestOf(b))
}

// setStorageWarning records the warnings as one condition (absent without).
func setStorageWarning(b *v1alpha1.StorageBenchmark, warnings []trident.Finding) {
	if len(warnings) == 0 {
		meta.RemoveStatusCondition(&b.Status.Conditions, v1alpha1.ConditionStorageWarning)
		return
	}
	reasons := make([]string, len(warnings))
	msgs := make([]string, len(warnings))
	for i, w := range warnings {
		reasons[i], msgs[i] = w.Reason, w.Message
	}
	setCondition(b, v1alpha1.ConditionStorageWarning, true, strings.Join(reasons, "And"), b.CreationTimestamp.Time, strings.Join(msgs, "; "))
}

// describeStorage records the class and, once, the bound volumes with
// their Trident metadata and how long the benchmark's own claims took to
// bind (provisioning, from the PVs it reads anyway; keepStorageTimes
// keeps it from then on). Everything Trident-specific is optional:
// without Trident's CRDs, or on other classes, those fields stay empty.
func (r *Reconciler) describeStorage(ctx context.Context, b *v1alpha1.StorageBenchmark, sc *storagev1.StorageClass, obs *observed, s *v1alpha1.StorageStatus) error {
	if sc != nil {
		s.Parameters = trident.AllowedParameters(sc.Parameters)
		s.MountOptions = sc.MountOptions
		if d, ok := trident.DriverOf(sc.Provisioner, sc.Parameters); ok {
			s.Driver = string(d)
		}
	}
	if old := b.Status.Storage; old != nil && len(old.Volumes) > 0 {
		// Described once; copied, as status is compared with its old self.
		c := old.DeepCopy()
		s.Volumes, s.VolumesOmitted, s.Backend, s.Entitlement = c.Volumes, c.VolumesOmitted, c.Backend, c.Entitlement
		driverFromBackend(sc, s)
		return nil
	}
	if obs.bound < len(obs.claims) || obs.bound == 0 {
		return nil
	}
	names := make([]string, 0, len(obs.claims))
	for name := range obs.claims {
		names = append(names, name)
	}
	sort.Strings(names)
	var tvs []trident.Volume
	var capacity int64
	var be trident.Backend
	bindTimes := make([]time.Duration, 0, len(names))
	for i, name := range names {
		pvc := obs.claims[name]
		var pv corev1.PersistentVolume
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
			// Not described until every volume can be: a partial list
			// would be kept as if complete.
			s.Volumes, s.VolumesOmitted, s.Backend = nil, 0, nil
			return client.IgnoreNotFound(err)
		}
		c := pv.Spec.Capacity[corev1.ResourceStorage]
		capacity += c.Value()
		if ownedBy(pvc, b) { // not an existing claim: it is the application's
			bindTimes = append(bindTimes, boundAfter(pvc, &pv))
		}
		if i >= maxVolumes {
			s.VolumesOmitted++
			continue
		}
		v := volumeStatusOf(name, &pv)
		if v.CSIDriver == trident.Provisioner {
			t, found, err := r.describeTridentVolume(ctx, s, &v, &be)
			if err != nil {
				return err
			}
			if found {
				tvs = append(tvs, t)
			}
		}
		s.Volumes = append(s.Volumes, v)
	}
	if len(bindTimes) == len(names) {
		s.Provisioning = controlPlaneTiming(bindTimes)
	}
	describeEntitlement(sc, tvs, capacity, s)
	driverFromBackend(sc, s)
	return nil
}

// describeEntitlement records the throughput the class's service level
// grants capacity bytes (tvs: the volumes' Trident metadata, the first
// one's service level read), if it names one.
func describeEntitlement(sc *storagev1.StorageClass, tvs []trident.Volume, capacity int64, s *v1alpha1.StorageStatus) {
	if sc == nil {
		return
	}
	var first trident.Volume
	if len(tvs) > 0 {
		first = tvs[0]
	}
	if level, ok := trident.ServiceLevelOf(sc.Parameters, first); ok {
		e := trident.EntitlementOf(level, capacity)
		s.Entitlement = &v1alpha1.EntitlementStatus{ServiceLevel: string(e.ServiceLevel),
			ThroughputBytesPerSecond: e.ThroughputBytesPerSecond, PoolShared: e.PoolShared, Message: e.Message}
	}
}

// driverFromBackend records, for a Trident class that names no driver,
// the driver of the backend its volume was placed on.
func driverFromBackend(sc *storagev1.StorageClass, s *v1alpha1.StorageStatus) {
	if s.Driver == "" && s.Backend != nil && sc != nil && sc.Provisioner == trident.Provisioner {
		s.Driver = s.Backend.Driver
	}
}

// describeTridentVolume adds to v what Trident's own volume says of it
// (pool, QoS, service level, reserves, tiering), and to s its backend
// once; be keeps that backend for the next volumes. A volume's tiering
// policy is its own when Trident records one (the NetApp Volumes driver),
// else its backend's default (the ONTAP drivers keep it there), unless the
// backend has virtual pools, whose own defaults may differ and are not
// read: then it stays unknown.
func (r *Reconciler) describeTridentVolume(ctx context.Context, s *v1alpha1.StorageStatus, v *v1alpha1.VolumeStatus, be *trident.Backend) (trident.Volume, bool, error) {
	tv, found, err := r.tridentVolume(ctx, v.PersistentVolume)
	if err != nil {
		return trident.Volume{}, false, err
	}
	var t trident.Volume
	if found {
		t = trident.VolumeFrom(tv)
		v.Pool, v.QoSPolicy, v.ServiceLevel = t.Pool, t.QoSPolicy, t.ServiceLevel
		v.SnapshotReserve, v.TieringPolicy, v.SpaceReserve = t.SnapshotReserve, t.TieringPolicy, t.SpaceReserve
	}
	if s.Backend == nil && v.BackendUUID != "" {
		if *be, err = r.tridentBackend(ctx, v.BackendUUID); err != nil {
			return trident.Volume{}, false, err
		}
		if be.UUID != "" {
			s.Backend = &v1alpha1.BackendStatus{Name: be.Name, UUID: be.UUID, Driver: string(be.Driver), Protocol: be.Protocol, SVM: be.SVM,
				Version: be.Version, State: be.State}
		}
	}
	if v.TieringPolicy == "" && v.BackendUUID != "" && v.BackendUUID == be.UUID && be.VirtualPools == 0 {
		v.TieringPolicy = be.TieringPolicy
	}
	return t, found, nil
}

// tridentVolume reads the TridentVolume named after a PV; found is false
// when it, or Trident's CRDs, do not exist (or may not be read).
func (r *Reconciler) tridentVolume(ctx context.Context, name string) (map[string]any, bool, error) {
	if r.Dynamic == nil {
		return nil, false, nil
	}
	u, err := r.Dynamic.Resource(tridentVolumes).Namespace(r.tridentNamespace()).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return u.Object, true, nil
	case absent(err):
		return nil, false, nil
	}
	return nil, false, err
}

// tridentBackend finds the TridentBackend with the volume's backendUUID
// (zero when none has it).
func (r *Reconciler) tridentBackend(ctx context.Context, uuid string) (trident.Backend, error) {
	if r.Dynamic == nil {
		return trident.Backend{}, nil
	}
	list, err := r.Dynamic.Resource(tridentBackends).Namespace(r.tridentNamespace()).List(ctx, metav1.ListOptions{})
	if absent(err) {
		return trident.Backend{}, nil
	}
	if err != nil {
		return trident.Backend{}, err
	}
	for _, item := range list.Items {
		if be := trident.BackendFrom(item.Object); be.UUID == uuid {
			return be, nil
		}
	}
	return trident.Backend{}, nil
}

// absent: the object or its resource type does not exist, or may not be
// read (Trident's resources are optional).
func absent(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || apierrors.IsForbidden(err)
}

func (r *Reconciler) tridentNamespace() string {
	if r.TridentNamespace != "" {
		return r.TridentNamespace
	}
	return DefaultTridentNamespace
}

// readReadyReports reads the ready clients' reports: the volume's mounts
// as the clients see them, and their clock offsets.
func (r *Reconciler) readReadyReports(ctx context.Context, b *v1alpha1.StorageBenchmark, obs *observed, s *v1alpha1.StorageStatus, judged time.Time) error {
	ready := func(k int) bool {
		return obs.clients[k] != nil && exchange.ReadinessOf(obs.clients[k]) == exchange.Ready
	}
	seen := r.now()
	var reports []protocol.Ready
	err := r.eachClientData(ctx, b, ready, func(_ int, cm *corev1.ConfigMap) error {
		rep, _, err := exchange.ReadyReport(cm)
		reports = append(reports, rep)
		return err
	})
	if err != nil {
		return err
	}
	s.Mounts = groupMounts(reports)
	if !obs.ordered && len(obs.steps) == 0 {
		obs.firstLead = protocol.FirstStepLead(reports, seen, r.timeouts().StartLead)
	}
	b.Status.Clock = clockStatus(reports)
	setClockCondition(b, judged)
	return nil
}

// groupMounts groups the clients' mounts by file system and options, at
// most four groups.
func groupMounts(reports []protocol.Ready) []v1alpha1.ObservedMount {
	var out []v1alpha1.ObservedMount
	for _, rep := range reports {
		if rep.Mount == nil {
			continue
		}
		m := v1alpha1.ObservedMount{FSType: clip(rep.Mount.FSType, 64), Options: clip(rep.Mount.Options, 512), Clients: 1}
		i := 0
		for i < len(out) && (out[i].FSType != m.FSType || out[i].Options != m.Options) {
			i++
		}
		switch {
		case i < len(out):
			out[i].Clients++
		case len(out) < 4:
			out = append(out, m)
		}
	}
	return out
}

// readyError reads why client i could not prepare.
func (r *Reconciler) readyError(ctx context.Context, b *v1alpha1.StorageBenchmark, i int) string {
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: exchange.ClientName(b.Name, i)}, &cm); err != nil || !ownedBy(&cm, b) {
		return "its report could not be read"
	}
	rep, _, err := exchange.ReadyReport(&cm)
	if err != nil {
		return clip(err.Error(), MaxMessage/2)
	}
	return clip(rep.Error, MaxMessage/2)
}

// entitlementPercents fills each step's share of the entitlement and the
// peak's, and notes a step that saturated near the ceiling.
func entitlementPercents(b *v1alpha1.StorageBenchmark) {
	s := b.Status.Storage
	if s == nil || s.Entitlement == nil || s.Entitlement.ThroughputBytesPerSecond == 0 {
		return
	}
	e := trident.Entitlement{ServiceLevel: trident.ServiceLevel(s.Entitlement.ServiceLevel), ThroughputBytesPerSecond: s.Entitlement.ThroughputBytesPerSecond}
	var peak int32
	note := ""
	for i := range b.Status.Steps {
		st := &b.Status.Steps[i]
		st.EntitlementPercent = trident.PercentOfEntitlement(e, st.AchievedBytesPerSecond)
		if st.Superseded || len(st.Errors) > 0 {
			continue // not evidence: the peak and the note are of the steps that stand
		}
		peak = max(peak, st.EntitlementPercent)
		if n := trident.SaturationNote(e, st.AchievedBytesPerSecond, st.Saturated); n != "" {
			note = fmt.Sprintf("step %d %s", st.Index+1, n)
		}
	}
	s.Entitlement.PeakPercent = peak
	s.Entitlement.SaturationNote = note
}

// volumeStatusOf is what the PV says of claim's volume: where it lives
// and, for a CSI volume, its handle and Trident's attributes.
func volumeStatusOf(claim string, pv *corev1.PersistentVolume) v1alpha1.VolumeStatus {
	c := pv.Spec.Capacity[corev1.ResourceStorage]
	v := v1alpha1.VolumeStatus{Claim: claim, PersistentVolume: pv.Name, Capacity: &c, Node: pinnedNode(pv)}
	switch src := pv.Spec.PersistentVolumeSource; {
	case src.Local != nil:
		v.Path = src.Local.Path
	case src.HostPath != nil:
		v.Path = src.HostPath.Path
	}
	if csi := pv.Spec.CSI; csi != nil {
		v.CSIDriver, v.VolumeHandle = csi.Driver, csi.VolumeHandle
		v.BackendUUID, v.InternalName, v.Protocol = trident.AttributesOf(csi.VolumeAttributes)
	}
	return v
}

// pinnedNode is the one node pv's affinity allows (local volumes are
// pinned so, by hostname), or "".
func pinnedNode(pv *corev1.PersistentVolume) string {
	a := pv.Spec.NodeAffinity
	if a == nil || a.Required == nil || len(a.Required.NodeSelectorTerms) != 1 {
		return ""
	}
	node := ""
	for _, e := range a.Required.NodeSelectorTerms[0].MatchExpressions {
		if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
			node = e.Values[0]
		}
	}
	return node
}
