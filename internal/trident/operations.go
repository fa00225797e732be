package trident

import (
	"fmt"
	"slices"
)

// Operations of a VolumeOperationsBenchmark, spelled as its spec spells them
// (api/v1alpha1 VolumeOperation; this package does not import the API).
const (
	OpProvision         = "provision"
	OpAttach            = "attach"
	OpSnapshot          = "snapshot"
	OpCloneFromSnapshot = "cloneFromSnapshot"
	OpCloneFromVolume   = "cloneFromVolume"
	OpExpand            = "expand"
	OpDelete            = "delete"
)

// allOps are every operation, for notes about the whole control path.
var allOps = []string{OpProvision, OpAttach, OpSnapshot, OpCloneFromSnapshot, OpCloneFromVolume, OpExpand, OpDelete}

// Reasons of operation Notes (ReasonSharedFlexVol is shared with Preflight).
const (
	// ReasonSerialController: Trident's controller runs one operation at a
	// time unless installed with enableConcurrency.
	ReasonSerialController = "SerialController"
	// ReasonSidecarQueue: Trident's CSI sidecars take 25 requests at once and
	// retry after 10 s.
	ReasonSidecarQueue = "SidecarQueue"
	// ReasonQtreeDeleteInBackground: ontap-nas-economy hands a deleted qtree
	// to ONTAP's background delete.
	ReasonQtreeDeleteInBackground = "QtreeDeleteInBackground"
	// ReasonFlexVolDeletedWithLastLUN: ontap-san-economy deletes a FlexVol
	// with its last LUN.
	ReasonFlexVolDeletedWithLastLUN = "FlexVolDeletedWithLastLUN"
	// ReasonQuotaResizeDeferred: ontap-nas-economy's new qtree limit takes
	// effect at Trident's next quota resize.
	ReasonQuotaResizeDeferred = "QuotaResizeDeferred"
	// ReasonSnapshotOfSharedFlexVol: an ontap-nas-economy snapshot is one of
	// the whole shared FlexVol, and needs snapshotDir.
	ReasonSnapshotOfSharedFlexVol = "SnapshotOfSharedFlexVol"
	// ReasonCloneUnsupported: the driver cannot make a writable clone.
	ReasonCloneUnsupported = "CloneUnsupported"
	// ReasonLUNClone: ontap-san-economy snapshots and clones are LUN clones
	// inside the source's FlexVol.
	ReasonLUNClone = "LUNClone"
	// ReasonFlexClone: ontap-nas / ontap-san clones are FlexClones.
	ReasonFlexClone = "FlexClone"
	// ReasonOneFlexGroupAtATime: ONTAP provisions one FlexGroup at a time.
	ReasonOneFlexGroupAtATime = "OneFlexGroupAtATime"
	// ReasonServiceVolumeCreate: a Google Cloud NetApp Volumes volume is
	// created by the service; Trident waits 10 s, then the CSI provisioner
	// retries.
	ReasonServiceVolumeCreate = "ServiceVolumeCreate"
	// ReasonCloneIsNewVolume: a Google Cloud NetApp Volumes clone is a new
	// volume created from a snapshot.
	ReasonCloneIsNewVolume = "CloneIsNewVolume"
	// ReasonMinimumSize: Google Cloud NetApp Volumes volumes are larger than
	// a small request, and the claim shows it.
	ReasonMinimumSize = "MinimumSize"
	// ReasonRestoreSize: the snapshot's restoreSize exceeds the benchmark's
	// claims, which Kubernetes then refuses to restore into.
	ReasonRestoreSize = "RestoreSize"
)

// Note is a fact about the storage that a reader of an operations curve
// must know, for the benchmark's status.notes and an event.
type Note struct {
	// Reason is a CamelCase machine-readable cause (Reason* constants).
	Reason string
	// Operations are the benchmark's operations the note concerns, in the
	// order they were asked for.
	Operations []string
	// Message is one sentence.
	Message string
}

// opRule is one note: the drivers it holds for, the operations it
// concerns, and its message (%s: the driver).
type opRule struct {
	reason  string
	drivers []Driver
	ops     []string
	message string
}

// Messages that differ by driver are built by messageFor.
const (
	serialMessage = "Trident's controller handles volume creates, deletes, resizes, snapshots and publishes one at a " +
		"time unless Trident is installed with enableConcurrency (off by default%s), so operations started together " +
		"finish one after another and perOperation is Trident's own time per operation"
	sharedFlexVolMessage = "Trident driver %s creates each volume as a %s in an existing FlexVol holding fewer than %s (default %d), " +
		"one at a time per FlexVol (Trident locks it), and creates a new FlexVol only when none has room, so " +
		"provisioning is serial within a FlexVol and slower where a new FlexVol is made"
)

// opRules, in the order notes are returned. Sources, read for understanding
// (NetApp/trident at v26.06.0 and main, July 2026; NetAppDocs/trident,
// the pages named):
var opRules = []opRule{
	// Docs "Controller scalability" (trident-use/controller-scalability):
	// serial mode is the default; enableConcurrency is GA in 26.06 for
	// ontap-san, ontap-nas, ontap-nas-economy, ontap-san-economy,
	// google-cloud-netapp-volumes, azure-netapp-files, solidfire-san; with
	// a backend of another driver (ontap-nas-flexgroup,
	// google-cloud-netapp-volumes-san) Trident does not start with it.
	// Serialised: volume create, delete, resize, snapshot create/delete,
	// publish/unpublish (attach).
	{ReasonSerialController, knownDrivers(), allOps, serialMessage},
	// cli/k8s_client/yaml_factory.go (GetCSIDeploymentYAML, used by both
	// tridentctl and the operator): csi-provisioner, -attacher and
	// -snapshotter run --worker-threads=25, csi-resizer --workers=25, all
	// with --retry-interval-start=10s and --retry-interval-max=300s.
	{ReasonSidecarQueue, knownDrivers(), allOps,
		"Trident's CSI sidecars (provisioner, attacher, resizer, snapshotter) each work on at most 25 requests at " +
			"once and retry a failed request after 10 s, doubling up to 5 min, so beyond 25 at once the rest wait " +
			"in the sidecar's queue and a retried operation is at least 10 s slower"},

	// storage_drivers/ontap/ontap_nas_qtree.go Create → ensureFlexvolForQtree
	// / findFlexvolForQtree: a qtree goes into a matching FlexVol with fewer
	// than qtreesPerFlexvol qtrees (defaultQtreesPerFlexvol 200, range
	// 50–300), the FlexVol's lock held from selection to the end of Create;
	// createFlexvolForQtree only when none fits. ontap_san_economy.go Create
	// → ensureFlexvolForLUN / findFlexvolForLUN: the same with LUNs and
	// lunsPerFlexvol (defaultLUNsPerFlexvol 100, range 50–200). Docs "ONTAP
	// NAS/SAN configuration options and examples" give the defaults.
	{ReasonSharedFlexVol, []Driver{OntapNASEconomy, OntapSANEconomy}, []string{OpProvision}, sharedFlexVolMessage},
	// ontap_nas_qtree.go Destroy: rename the qtree, QtreeDestroyAsync; the
	// task that would delete empty FlexVols (pruneUnusedFlexvols) is
	// commented out in Initialize, so emptied FlexVols stay.
	{ReasonQtreeDeleteInBackground, []Driver{OntapNASEconomy}, []string{OpDelete},
		"Trident driver %s deletes a volume by renaming its qtree and starting ONTAP's background delete, so delete times the " +
			"hand-over, not the freeing of space, and a FlexVol emptied by a step is kept and reused by the next"},
	// ontap_san_economy.go Destroy → deleteBucketIfEmpty: the FlexVol is
	// deleted with its last LUN (under the FlexVol's lock).
	{ReasonFlexVolDeletedWithLastLUN, []Driver{OntapSANEconomy}, []string{OpProvision, OpDelete},
		"Trident driver %s deletes a FlexVol with its last LUN, so a delete that empties a FlexVol also deletes it, and when " +
			"the benchmark's LUNs are a FlexVol's only ones each step's first provision makes a new FlexVol"},
	// ontap_nas_qtree.go Resize: grow the FlexVol, then setQuotaForQtree,
	// which only flags the FlexVol for resizeQuotas, a housekeeping task
	// run every defaultResizeQuotasPeriod (1 minute).
	{ReasonQuotaResizeDeferred, []Driver{OntapNASEconomy}, []string{OpExpand},
		"Trident driver %s grows a volume by growing its FlexVol and raising the qtree's quota rule, which ONTAP enforces only " +
			"after Trident's next quota resize (every minute by default), so expand times the request, not the new " +
			"limit taking effect"},
	// Docs "Work with snapshots" (trident-use/vol-snapshots) do not list
	// ontap-nas-economy among the snapshot drivers. ontap_nas_qtree.go
	// CanSnapshot refuses unless the volume's snapshotDir is true
	// (ontap_common.go DefaultSnapshotDir "false"); CreateSnapshot →
	// createQtreeSnapshot snapshots the qtree's FlexVol.
	{ReasonSnapshotOfSharedFlexVol, []Driver{OntapNASEconomy}, []string{OpSnapshot, OpCloneFromSnapshot},
		"Trident driver %s is not among the snapshot drivers of Trident's documentation; its source snapshots " +
			"the whole shared FlexVol, and only when the volume's snapshotDir is true (default false): otherwise " +
			"the VolumeSnapshot never becomes ready"},
	// ontap_nas_qtree.go CreateClone: "cloning is not supported" unless the
	// clone is read-only (PVC annotation trident.netapp.io/readOnlyClone,
	// frontend/csi/controller_helpers/kubernetes/config.go); docs "Configure
	// an ONTAP NAS backend" (ontap-nas-prep): only read-only clones.
	{ReasonCloneUnsupported, []Driver{OntapNASEconomy}, []string{OpCloneFromSnapshot, OpCloneFromVolume},
		"Trident driver %s makes only read-only clones (PVC annotation trident.netapp.io/readOnlyClone), which the benchmark " +
			"does not ask for, so its clone claims stay Pending and fail"},
	// ontap_san_economy.go CreateSnapshot → createLUNClone: a snapshot is a
	// "snap-LUN", a LUN clone of the source LUN in its FlexVol, made under
	// the FlexVol's lock; CreateClone → createLUNClone: a clone is a LUN
	// clone in the source's FlexVol, under the same lock. Docs "Volume
	// snapshots" (trident-concepts/snapshots): ontap-san-economy snapshots
	// are clones of the LUN that share blocks with it.
	{ReasonLUNClone, []Driver{OntapSANEconomy}, []string{OpSnapshot, OpCloneFromSnapshot, OpCloneFromVolume},
		"Trident driver %s makes a snapshot or a clone as a LUN clone sharing blocks with its source, inside the source's " +
			"FlexVol and under its lock, so the snapshots and clones of the benchmark's one source claim are made " +
			"one at a time"},

	// ontap_nas.go / ontap_san.go CreateClone → ontap_common.go
	// cloneFlexvol: take a snapshot when the clone has none (a clone of a
	// volume), VolumeCloneCreate from it, and when splitOnClone is true,
	// VolumeCloneSplitStart, which starts the split and returns. splitOnClone
	// comes from the clone's or the source's PVC annotation, else the
	// source's pool (virtual pool), else the backend (docs "Kubernetes and
	// Trident objects": annotation trident.netapp.io/splitOnClone for
	// ontap-nas and ontap-san; "ONTAP NAS/SAN configuration options":
	// backend splitOnClone, default false). Docs "Volume snapshots": a PV
	// from a snapshot is a FlexClone of the snapshot's parent volume,
	// created almost instantly and sharing blocks with its parent.
	{ReasonFlexClone, []Driver{OntapNAS, OntapSAN}, []string{OpCloneFromSnapshot, OpCloneFromVolume},
		"Trident driver %s makes a clone as a FlexClone of a snapshot of the source FlexVol (for cloneFromVolume, one it takes " +
			"first), near-instant and sharing blocks with its parent whatever the data; when the backend or its " +
			"virtual pool sets splitOnClone, Trident also starts a split that copies those blocks in the " +
			"background after the claim binds"},
	// Docs "Release notes" (trident-rn), known issues: ONTAP cannot
	// provision more than one FlexGroup at a time unless the aggregates of
	// each request differ.
	{ReasonOneFlexGroupAtATime, []Driver{OntapNASFlexGroup}, []string{OpProvision},
		"Trident driver %s: ONTAP cannot provision more than one FlexGroup at a time unless each request's " +
			"aggregates differ (a known issue in Trident's release notes), so claims started together are created " +
			"one after another"},

	// storage_drivers/gcp/gcp_gcnv.go and gcp_gcnv_san.go Create and
	// CreateClone → waitForVolumeCreate waits volumeCreateTimeout for the
	// volume to be Ready (gcp/api/gcnv.go VolumeCreateTimeout 10 s) and
	// otherwise returns VolumeCreatingError, which frontend/csi/plugin.go
	// turns into DeadlineExceeded: the CSI provisioner retries (10 s, then
	// doubling to 300 s: yaml_factory.go) and Trident resumes the create.
	{ReasonServiceVolumeCreate, []Driver{GCNV, GCNVSAN}, []string{OpProvision, OpCloneFromSnapshot, OpCloneFromVolume},
		"Trident driver %s: each volume is created by the Google Cloud NetApp Volumes service; Trident waits 10 s for it to be " +
			"ready and otherwise lets the CSI provisioner ask again 10 s later, then 20 s, 40 s …, so bind times " +
			"beyond 10 s include that back-off"},
	// gcp_gcnv.go / gcp_gcnv_san.go CreateClone: a clone is a new volume
	// (CreateVolume with SnapshotID) in the source's capacity pool, at least
	// the source's size; without a snapshot (a clone of a volume) Trident
	// first creates one (the SAN driver deletes it afterwards).
	{ReasonCloneIsNewVolume, []Driver{GCNV, GCNVSAN}, []string{OpCloneFromSnapshot, OpCloneFromVolume},
		"Trident driver %s makes a clone as a new Google Cloud NetApp Volumes volume created from a " +
			"snapshot (for cloneFromVolume, one Trident takes first) in the source's storage pool at the source's size"},
	// gcp_gcnv.go Create: MinimumGCNVVolumeSizeBytesHW 100 GiB,
	// MinimumGCNVVolumeSizeBytesSW 1 GiB for Flex, sizes rounded up to whole
	// GiB, volConfig.Size (the PV's capacity) the raised size. Docs "Google
	// Cloud NetApp Volumes backend configuration options and examples".
	{ReasonMinimumSize, []Driver{GCNV},
		[]string{OpProvision, OpAttach, OpCloneFromSnapshot, OpCloneFromVolume, OpExpand, OpDelete},
		"Trident driver %s creates volumes of at least 100 GiB on Standard, Premium and Extreme " +
			"(Flex: 1 GiB), in whole GiB, and the claim shows that size, so each step takes that much per volume from the storage pool " +
			"and expand has nothing to do unless expandTo exceeds it"},
	// gcp_gcnv_san.go Create / Resize → calculateActualSizeBytes: the
	// request rounded up to whole GiB plus 1 GiB (1 GiB minimum), reported
	// as volConfig.Size. Docs "Configure Google Cloud NetApp Volumes for SAN
	// workloads": extra GiB overprovisioning.
	{ReasonMinimumSize, []Driver{GCNVSAN},
		[]string{OpProvision, OpAttach, OpCloneFromSnapshot, OpCloneFromVolume, OpExpand, OpDelete},
		"Trident driver %s allocates each volume at its request rounded up to whole GiB plus 1 GiB, " +
			"and the claim shows that size, so each step takes that much per volume from the Flex Unified pool and expand has nothing " +
			"to do unless expandTo exceeds it"},
	// frontend/csi/controller_server.go getCSISnapshotFromTridentSnapshot:
	// a snapshot's size (restoreSize) is min(snapshot size, the volume's
	// size), the volume's size when the snapshot reports 0. gcp_gcnv.go
	// CreateSnapshot reports 0, so restoreSize is the raised volume size.
	// kubernetes-csi/external-provisioner pkg/controller/controller.go
	// refuses a claim smaller than its snapshot's restoreSize.
	{ReasonRestoreSize, []Driver{GCNV}, []string{OpCloneFromSnapshot},
		"Trident driver %s reports a snapshot's restoreSize as its volume's provisioned size, and " +
			"Kubernetes' CSI provisioner refuses a claim from a snapshot smaller than that, so on Standard, Premium and Extreme " +
			"cloneFromSnapshot claims below 100 GiB fail"},
	// gcp_gcnv_san.go CreateSnapshot reports the source volume's allocated
	// size, which is more than the claim's request (calculateActualSizeBytes).
	{ReasonRestoreSize, []Driver{GCNVSAN}, []string{OpCloneFromSnapshot},
		"Trident driver %s reports a snapshot's restoreSize as the volume's allocated size, 1 GiB or " +
			"more above the source claim's request, and Kubernetes' CSI provisioner refuses a claim from a snapshot smaller than that, so " +
			"cloneFromSnapshot claims of storage.size fail"},
}

// knownDrivers lists every driver this package knows, for notes that hold
// for all of them.
func knownDrivers() []Driver {
	return []Driver{OntapNAS, OntapNASEconomy, OntapNASFlexGroup, OntapSAN, OntapSANEconomy,
		GCNV, GCNVSAN, AzureNetAppFiles, SolidFireSAN}
}

// OperationNotes says what a storage engineer must know to read a
// VolumeOperationsBenchmark's curves on a Trident StorageClass: how the
// class's driver carries out each of the operations asked for (ops, spelled
// as the spec spells them: provision, attach, snapshot, cloneFromSnapshot,
// cloneFromVolume, expand, delete), and what Trident's controller does to
// operations started together. Each Note names the operations of ops it
// concerns, in the order of ops; a note none of whose operations were asked
// for is left out. Classes of other provisioners, Trident classes without
// a driver (backendType or storageDriverName; pass the bound volume's
// backend driver as backendType once it is known) and drivers this package
// does not know get none.
//
// The notes are facts of Trident's source and documentation, not of the
// cluster: Trident's install (enableConcurrency) and the backend's options
// (splitOnClone, qtreesPerFlexvol, lunsPerFlexvol, snapshotDir, the
// service level) cannot be read from the class, so the messages say what
// depends on them.
func OperationNotes(provisioner string, params map[string]string, ops []string) []Note {
	driver, isTrident := DriverOf(provisioner, params)
	if !isTrident || !driver.Known() {
		return nil
	}
	var notes []Note
	for _, r := range opRules {
		if !slices.Contains(r.drivers, driver) {
			continue
		}
		concerned := intersect(ops, r.ops)
		if len(concerned) == 0 {
			continue
		}
		notes = append(notes, Note{Reason: r.reason, Operations: concerned, Message: messageFor(r, driver)})
	}
	return notes
}

// messageFor fills in a rule's message for the driver.
func messageFor(r opRule, driver Driver) string {
	switch r.reason {
	case ReasonSerialController:
		suffix := ""
		if driver == OntapNASFlexGroup || driver == GCNVSAN {
			suffix = fmt.Sprintf("; Trident does not start with it while any %s backend exists", driver)
		}
		return fmt.Sprintf(r.message, suffix)
	case ReasonSharedFlexVol:
		if driver == OntapSANEconomy {
			return fmt.Sprintf(r.message, driver, "LUN", "lunsPerFlexvol LUNs", 100)
		}
		return fmt.Sprintf(r.message, driver, "qtree", "qtreesPerFlexvol qtrees", 200)
	case ReasonSidecarQueue:
		return r.message
	}
	return fmt.Sprintf(r.message, driver)
}

// intersect returns the elements of ops that are in of, in the order of ops,
// each once.
func intersect(ops, of []string) []string {
	var out []string
	for _, op := range ops {
		if slices.Contains(of, op) && !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	return out
}
