package trident

import "fmt"

// Volume modes and access modes of a Request (the Kubernetes spellings).
const (
	VolumeModeFilesystem = "Filesystem"
	VolumeModeBlock      = "Block"

	ReadWriteOnce    = "ReadWriteOnce"
	ReadWriteMany    = "ReadWriteMany"
	ReadWriteOncePod = "ReadWriteOncePod"
)

// Reasons of Findings.
const (
	// ReasonUnsupportedByDriver: the driver cannot serve the requested
	// volume mode / access mode; a refusal.
	ReasonUnsupportedByDriver = "UnsupportedByDriver"
	// ReasonSharedFlexVol: an economy driver shares the FlexVol (and its
	// performance) with other volumes; a warning.
	ReasonSharedFlexVol = "SharedFlexVol"
	// ReasonNoReadWriteMany: several clients share a volume whose
	// provisioner serves one node at a time; a warning.
	ReasonNoReadWriteMany = "NoReadWriteMany"
)

// Request is what a benchmark asks of its storage.
type Request struct {
	// VolumeMode is Filesystem (the default when empty) or Block.
	VolumeMode string
	// AccessMode is ReadWriteOnce, ReadWriteMany or ReadWriteOncePod.
	AccessMode string
	// Shared: all clients use one volume (otherwise one volume each).
	Shared bool
	// Clients is the number of client pods.
	Clients int32
}

// Finding is a refusal or a warning, for a condition or an event.
type Finding struct {
	// Reason is a CamelCase machine-readable cause (Reason* constants).
	Reason string
	// Message says what is wrong and what to use instead.
	Message string
}

// multiNode reports whether the request needs one volume on several nodes:
// ReadWriteMany asked, or a shared volume with more than one client.
func (r Request) multiNode() bool {
	return r.AccessMode == ReadWriteMany || (r.Shared && r.Clients > 1)
}

func (r Request) block() bool { return r.VolumeMode == VolumeModeBlock }

// Preflight checks a request against the class's provisioner and parameters
// before anything is created. It returns a refusal when the class's Trident
// driver cannot serve the request, and warnings about results that would be
// misleading. Classes of unknown provisioners, and Trident classes whose
// driver is unknown (no backendType), get neither: generic classes keep
// working. Once a volume is bound, the caller may check again with the
// backend's driver: Preflight(Provisioner, map[string]string{"backendType":
// string(backend.Driver)}, req).
func Preflight(provisioner string, params map[string]string, req Request) (refusal *Finding, warnings []Finding) {
	driver, isTrident := DriverOf(provisioner, params)
	if !isTrident {
		if w := noRWX(provisioner, req); w != nil {
			warnings = append(warnings, *w)
		}
		return nil, warnings
	}
	info, known := drivers[driver]
	if !known {
		return nil, nil
	}
	refusal = unsupported(driver, info, req)
	if info.economy != "" {
		warnings = append(warnings, Finding{
			Reason: ReasonSharedFlexVol,
			Message: fmt.Sprintf("Trident driver %s places each volume %s: the FlexVol's performance and QoS "+
				"are shared with its other volumes, so results are not isolated from those neighbours",
				driver, info.economy),
		})
	}
	return refusal, warnings
}

// unsupported returns the refusal of a combination the driver cannot serve.
func unsupported(driver Driver, info driverInfo, req Request) *Finding {
	switch {
	case !info.san && req.block():
		return &Finding{
			Reason: ReasonUnsupportedByDriver,
			Message: fmt.Sprintf("Trident driver %s serves only Filesystem volumes (%s), not volumeMode Block; "+
				"use %s for a block volume", driver, info.protocol, info.blockAlternative),
		}
	case info.san && !req.block() && req.multiNode():
		what := "ReadWriteMany"
		if req.AccessMode != ReadWriteMany {
			what = fmt.Sprintf("one volume shared by %d clients", req.Clients)
		}
		return &Finding{
			Reason: ReasonUnsupportedByDriver,
			Message: fmt.Sprintf("Trident driver %s cannot serve %s with volumeMode Filesystem (RWX only in Block "+
				"mode: a filesystem on a LUN mounts on one node); use %s for a shared NFS volume, or volumeMode "+
				"Block with ReadWriteMany", driver, what, info.nasAlternative),
		}
	}
	return nil
}

// rwoOnly lists well-known provisioners whose volumes attach to one node at a
// time. nodeLocal: the volume lives on a node's disk, whatever the mode;
// otherwise a cloud disk, shareable only in Block mode on special disk types
// (EBS io1/io2 Multi-Attach, Azure shared disks, GCE multi-writer disks), so
// a Filesystem volume is the unsupported case. The Kubernetes CSI driver list
// gives ebs.csi.aws.com, pd.csi.storage.gke.io and disk.csi.azure.com as
// "Read/Write Single Pod"; local-path and no-provisioner (local PVs) are
// node-local by design. Unknown provisioners are not listed: they stay
// silent.
var rwoOnly = map[string]struct{ nodeLocal bool }{
	"ebs.csi.aws.com":              {},
	"kubernetes.io/aws-ebs":        {},
	"pd.csi.storage.gke.io":        {},
	"kubernetes.io/gce-pd":         {},
	"disk.csi.azure.com":           {},
	"kubernetes.io/azure-disk":     {},
	"rancher.io/local-path":        {nodeLocal: true},
	"kubernetes.io/no-provisioner": {nodeLocal: true},
}

// noRWX warns when several nodes would share a volume of a provisioner that
// serves one node at a time.
func noRWX(provisioner string, req Request) *Finding {
	p, listed := rwoOnly[provisioner]
	if !listed || !req.multiNode() || (!p.nodeLocal && req.block()) {
		return nil
	}
	what := "a ReadWriteMany volume"
	if req.AccessMode != ReadWriteMany {
		what = fmt.Sprintf("one volume shared by %d clients", req.Clients)
	}
	kind := "attaches its volumes to one node at a time"
	if p.nodeLocal {
		kind = "provisions node-local volumes"
	}
	return &Finding{
		Reason: ReasonNoReadWriteMany,
		Message: fmt.Sprintf("provisioner %s %s and does not support ReadWriteMany: %s can only be used by "+
			"clients on the same node; use a class whose provisioner supports ReadWriteMany (an NFS class such "+
			"as Trident ontap-nas or google-cloud-netapp-volumes), or one volume per client", provisioner, kind, what),
	}
}
