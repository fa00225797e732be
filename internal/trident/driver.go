package trident

import "strings"

// Provisioner is the CSI provisioner of Trident storage classes
// ("Kubernetes and Trident objects": provisioner: csi.trident.netapp.io).
const Provisioner = "csi.trident.netapp.io"

// Driver is a Trident storage driver name, as in a backend's
// storageDriverName and a class's backendType parameter.
type Driver string

// Trident drivers this package knows. Any other name is handled generically:
// no refusal, no warning.
const (
	// ONTAP and Cloud Volumes ONTAP, NFS: one FlexVol per volume.
	OntapNAS Driver = "ontap-nas"
	// ONTAP, NFS: one qtree per volume, many qtrees per FlexVol.
	OntapNASEconomy Driver = "ontap-nas-economy"
	// ONTAP, NFS: one FlexGroup per volume.
	OntapNASFlexGroup Driver = "ontap-nas-flexgroup"
	// ONTAP, iSCSI / FC / NVMe-TCP: one LUN in its own FlexVol per volume.
	OntapSAN Driver = "ontap-san"
	// ONTAP, iSCSI: one LUN per volume, many LUNs per FlexVol.
	OntapSANEconomy Driver = "ontap-san-economy"
	// Google Cloud NetApp Volumes, NFS / SMB.
	GCNV Driver = "google-cloud-netapp-volumes"
	// Google Cloud NetApp Volumes, iSCSI LUNs in Flex Unified pools.
	GCNVSAN Driver = "google-cloud-netapp-volumes-san"
	// Azure NetApp Files, NFS / SMB.
	AzureNetAppFiles Driver = "azure-netapp-files"
	// NetApp HCI / SolidFire (Element), iSCSI.
	SolidFireSAN Driver = "solidfire-san"
)

// driverInfo is what Preflight needs to know about a driver.
type driverInfo struct {
	// san: the driver provisions LUNs (Block, or a filesystem on a LUN);
	// otherwise it provisions NAS shares (Filesystem only).
	san bool
	// nasAlternative is a driver that shares a filesystem between nodes (for
	// SAN drivers); blockAlternative one that serves volumeMode Block (for
	// NAS drivers).
	nasAlternative, blockAlternative string
	// protocol names the NAS protocols, for messages.
	protocol string
	// economy describes how an economy driver packs volumes into shared
	// FlexVols; empty for the others.
	economy string
}

// drivers holds the known drivers' capabilities. Sources: "ONTAP drivers" and
// "ONTAP SAN driver overview" (ontap-nas*: Filesystem, RWO/ROX/RWX/RWOP;
// ontap-san*: Block with any access mode, Filesystem with RWO/RWOP only: "ROX
// and RWX are not available in Filesystem volume mode"); "Configure a Google
// Cloud NetApp Volumes backend" (google-cloud-netapp-volumes: NFS/SMB,
// Filesystem, RWO/ROX/RWX/RWOP); "Configure Google Cloud NetApp Volumes for
// SAN workloads" (google-cloud-netapp-volumes-san: RWX "supported only when
// volumeMode: Block"; the NAS driver "cannot be used for SAN workloads");
// "Configure a NetApp HCI or SolidFire backend" (solidfire-san: Block any
// mode, Filesystem RWO/RWOP); "Configure an Azure NetApp Files backend"
// (NFS/SMB volumes). Economy limits: qtreesPerFlexvol defaults to 200 and
// lunsPerFlexvol to 100 ("ONTAP NAS/SAN configuration options").
var drivers = map[Driver]driverInfo{
	OntapNAS:          {protocol: "NFS/SMB", blockAlternative: string(OntapSAN)},
	OntapNASFlexGroup: {protocol: "NFS/SMB", blockAlternative: string(OntapSAN)},
	OntapNASEconomy: {
		protocol: "NFS/SMB", blockAlternative: string(OntapSAN),
		economy: "as a qtree in a FlexVol holding up to 200 qtrees by default (backend option qtreesPerFlexvol)",
	},
	OntapSAN: {san: true, nasAlternative: string(OntapNAS)},
	OntapSANEconomy: {
		san: true, nasAlternative: string(OntapNAS),
		economy: "as a LUN in a FlexVol holding up to 100 LUNs by default (backend option lunsPerFlexvol)",
	},
	GCNV:             {protocol: "NFS/SMB", blockAlternative: string(GCNVSAN)},
	GCNVSAN:          {san: true, nasAlternative: string(GCNV)},
	AzureNetAppFiles: {protocol: "NFS/SMB", blockAlternative: "a SAN driver such as " + string(OntapSAN)},
	SolidFireSAN:     {san: true, nasAlternative: "an NFS driver such as " + string(OntapNAS)},
}

// Known reports whether this package knows the driver's capabilities.
func (d Driver) Known() bool {
	_, ok := drivers[d]
	return ok
}

// SAN reports whether the driver provisions LUNs (iSCSI, FC, NVMe) rather
// than NAS shares. Unknown drivers report false.
func (d Driver) SAN() bool { return drivers[d].san }

// Economy reports whether the driver packs many volumes into one FlexVol
// (ontap-nas-economy, ontap-san-economy).
func (d Driver) Economy() bool { return drivers[d].economy != "" }

// DriverOf tells whether a StorageClass is a Trident class and, if so, which
// driver it provisions with. Trident classes name the driver in the parameter
// backendType ("Kubernetes and Trident objects"); classes that let Trident
// configure the backend itself (FSx for ONTAP) name it in storageDriverName.
// Either may carry Trident's prefix (trident.netapp.io/backendType). A
// Trident class without either returns ("", true): Trident, driver unknown
// until a volume is bound (the TridentBackend then says, see BackendFrom).
// Values are trimmed and lower-cased. Non-Trident classes return ("", false).
func DriverOf(provisioner string, params map[string]string) (Driver, bool) {
	if provisioner != Provisioner {
		return "", false
	}
	return driverParam(params), true
}

// driverParam returns the driver a class's parameters name, or "".
func driverParam(params map[string]string) Driver {
	for _, key := range []string{"backendType", "storageDriverName"} {
		if v := strings.ToLower(Param(params, key)); v != "" {
			return Driver(v)
		}
	}
	return ""
}
