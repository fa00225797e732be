package trident

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Group and version of Trident's custom resources; TridentVolume and
// TridentBackend live in Trident's namespace (usually "trident").
const (
	Group              = "trident.netapp.io"
	Version            = "v1"
	KindTridentVolume  = "TridentVolume"
	KindTridentBackend = "TridentBackend"
)

// AttributesOf reads the CSI volume attributes of a Trident PV
// (spec.csi.volumeAttributes): Trident sets backendUUID, name (the PV and
// TridentVolume name), internalName (the volume's name on the storage
// system) and protocol ("file" or "block"). Missing keys give "".
func AttributesOf(volumeAttributes map[string]string) (backendUUID, internalName, protocol string) {
	return volumeAttributes["backendUUID"], volumeAttributes["internalName"], volumeAttributes["protocol"]
}

// Volume is what a TridentVolume says about a volume. The resource is named
// after the PV; its config is Trident's volume configuration ("Trident Volume
// objects" in "Kubernetes and Trident objects").
type Volume struct {
	// Name is the TridentVolume's (and PV's) name.
	Name string
	// InternalName is the volume's name on the storage system (FlexVol,
	// qtree, LUN, GCNV volume).
	InternalName string
	// BackendUUID joins the TridentBackend.
	BackendUUID string
	// Pool is the storage pool the volume was placed in (for ONTAP an
	// aggregate, or a virtual pool).
	Pool string
	// Protocol is "file" or "block".
	Protocol string
	// State is Trident's volume state ("online", "deleting", …).
	State string
	// Orphaned: the backend no longer tracks the volume.
	Orphaned bool
	// Size is config.size as Trident wrote it (bytes, in decimal), and
	// SizeBytes its value, or 0 when it is not a plain byte count.
	Size      string
	SizeBytes int64
	// StorageClass, AccessMode, VolumeMode and FileSystem as provisioned.
	StorageClass string
	AccessMode   string
	VolumeMode   string
	FileSystem   string
	// ServiceLevel of the pool (GCNV: Flex, Standard, Premium, Extreme;
	// Azure NetApp Files: Standard, Premium, Ultra); empty for ONTAP.
	ServiceLevel string
	// QoSPolicy and AdaptiveQoSPolicy are the ONTAP QoS policy groups.
	QoSPolicy         string
	AdaptiveQoSPolicy string
	// SnapshotReserve is the percentage of the volume reserved for snapshots.
	SnapshotReserve string
	SnapshotPolicy  string
	// SpaceReserve is ONTAP's space reservation ("none" = thin, "volume" =
	// thick).
	SpaceReserve string
	// TieringPolicy is the FabricPool / GCNV auto-tiering policy when
	// Trident records one on the volume.
	TieringPolicy string
	// Encryption as requested ("true"/"false").
	Encryption string
}

// VolumeFrom reads a TridentVolume from the content of an unstructured
// object. Missing or mistyped fields give zero values.
func VolumeFrom(obj map[string]any) Volume {
	cfg := mapAt(obj, "config")
	v := Volume{
		Name:              str(mapAt(obj, "metadata"), "name"),
		InternalName:      str(cfg, "internalName"),
		BackendUUID:       str(obj, "backendUUID"),
		Pool:              str(obj, "pool"),
		Protocol:          str(cfg, "protocol"),
		State:             str(obj, "state"),
		Orphaned:          boolean(obj, "orphaned"),
		Size:              sizeString(cfg["size"]),
		StorageClass:      str(cfg, "storageClass"),
		AccessMode:        str(cfg, "accessMode"),
		VolumeMode:        str(cfg, "volumeMode"),
		FileSystem:        str(cfg, "fileSystem"),
		ServiceLevel:      str(cfg, "serviceLevel"),
		QoSPolicy:         str(cfg, "qosPolicy"),
		AdaptiveQoSPolicy: str(cfg, "adaptiveQosPolicy"),
		SnapshotReserve:   str(cfg, "snapshotReserve"),
		SnapshotPolicy:    str(cfg, "snapshotPolicy"),
		SpaceReserve:      str(cfg, "spaceReserve"),
		TieringPolicy:     str(cfg, "tieringPolicy"),
		Encryption:        str(cfg, "encryption"),
	}
	if v.Name == "" {
		v.Name = str(cfg, "name")
	}
	if n, err := strconv.ParseInt(v.Size, 10, 64); err == nil && n > 0 {
		v.SizeBytes = n
	}
	return v
}

// Backend is what a TridentBackend says about a backend. Its config holds
// one driver configuration under a key such as ontap_config or gcnv_config.
type Backend struct {
	// Name is the backend's name (backendName, else the resource's name).
	Name string
	// UUID is backendUUID, which volumes refer to.
	UUID string
	// Driver is the configuration's storageDriverName.
	Driver Driver
	// Version is the resource's version field.
	Version string
	// State is Trident's backend state ("online", "offline", "failed", …).
	State  string
	Online bool
	// SVM is the ONTAP storage VM.
	SVM string
	// ServiceLevel is the backend-wide service level (GCNV, Azure NetApp
	// Files); virtual pools may override it.
	ServiceLevel string
	// Location is the cloud region (GCNV, Azure NetApp Files).
	Location string
	// QtreesPerFlexvol and LUNsPerFlexvol are the economy drivers' packing
	// limits when set (defaults 200 and 100).
	QtreesPerFlexvol string
	LUNsPerFlexvol   string
	// Protocol is what the backend serves its volumes with: its sanType
	// (iscsi, nvme, fcp) for a SAN driver, its nasType (nfs, smb) for a
	// NAS one, each defaulted as Trident defaults it (iscsi, nfs); as
	// written for a driver this package does not know.
	Protocol string
	// TieringPolicy is the FabricPool tiering policy the backend gives
	// its volumes (config.defaults.tieringPolicy). The ONTAP drivers keep
	// it there, not on the TridentVolume; empty when the backend sets
	// none.
	TieringPolicy string
	// VirtualPools is how many virtual pools the backend defines
	// (config.storage); each may set defaults of its own.
	VirtualPools int
}

// BackendFrom reads a TridentBackend from the content of an unstructured
// object. Missing or mistyped fields give zero values; no credential is read.
func BackendFrom(obj map[string]any) Backend {
	b := Backend{
		Name:    str(obj, "backendName"),
		UUID:    str(obj, "backendUUID"),
		Version: str(obj, "version"),
		State:   str(obj, "state"),
		Online:  boolean(obj, "online"),
	}
	if b.Name == "" {
		b.Name = str(mapAt(obj, "metadata"), "name")
	}
	dc := driverConfig(mapAt(obj, "config"))
	b.Driver = Driver(str(dc, "storageDriverName"))
	b.SVM = str(dc, "svm")
	b.ServiceLevel = str(dc, "serviceLevel")
	b.Location = str(dc, "location")
	b.QtreesPerFlexvol = str(dc, "qtreesPerFlexvol")
	b.LUNsPerFlexvol = str(dc, "lunsPerFlexvol")
	b.TieringPolicy = str(mapAt(dc, "defaults"), "tieringPolicy")
	if pools, ok := dc["storage"].([]any); ok {
		b.VirtualPools = len(pools)
	}
	b.Protocol = protocolOf(b.Driver, strings.ToLower(str(dc, "sanType")), strings.ToLower(str(dc, "nasType")))
	return b
}

// protocolOf is the protocol a backend of driver serves, from its sanType
// or nasType, defaulted as Trident defaults them ("ONTAP SAN/NAS
// configuration options": sanType iscsi, nasType nfs). The GCNV SAN driver
// and SolidFire serve iSCSI only.
func protocolOf(driver Driver, sanType, nasType string) string {
	info, known := drivers[driver]
	switch {
	case !known && sanType != "":
		return sanType
	case !known:
		return nasType
	case driver == GCNVSAN || driver == SolidFireSAN:
		return "iscsi"
	case info.san && sanType != "":
		return sanType
	case info.san:
		return "iscsi"
	case nasType != "":
		return nasType
	}
	return "nfs"
}

// driverConfig returns the driver configuration inside a TridentBackend's
// config: the first (by key) map that names a storageDriverName, nil if none.
func driverConfig(cfg map[string]any) map[string]any {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if m, ok := cfg[k].(map[string]any); ok && str(m, "storageDriverName") != "" {
			return m
		}
	}
	return nil
}

// mapAt returns m[key] if it is a map, else nil (reading a nil map is safe).
func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

// str returns m[key] if it is a string, else "".
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return strings.TrimSpace(s)
}

// boolean returns m[key] if it is a bool, else false.
func boolean(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// sizeString renders config.size: Trident writes a decimal string; a whole
// JSON number is accepted too (decoders give float64 or int64).
func sizeString(v any) string {
	switch n := v.(type) {
	case string:
		return strings.TrimSpace(n)
	case int64:
		return strconv.FormatInt(n, 10)
	case int:
		return strconv.Itoa(n)
	case float64:
		if n >= 0 && n < math.MaxInt64 && n == math.Trunc(n) {
			return strconv.FormatInt(int64(n), 10)
		}
	}
	return ""
}
