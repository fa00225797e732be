// Package trident knows the facts about NetApp Trident storage that shape a
// benchmark (METHODOLOGY §4): which driver a StorageClass provisions with,
// which volume mode / access mode combinations that driver can serve, which
// class parameters are worth recording, how a Trident PersistentVolume joins
// its TridentVolume and TridentBackend custom resources, and what throughput
// a Google Cloud NetApp Volumes (GCNV) volume is entitled to.
//
// It is pure: no Kubernetes client, no I/O. Custom resources are read from
// plain map[string]any (the content of an unstructured object) and every
// reader tolerates missing fields and wrong types: it yields empty values and
// never panics.
//
// # Sources
//
// The facts come from Trident's documentation (docs.netapp.com/us-en/trident,
// source NetAppDocs/trident) and Google's NetApp Volumes documentation; each
// is cited where it is used. In short:
//
//   - "Kubernetes and Trident objects" (trident-reference/objects): the
//     provisioner csi.trident.netapp.io, the StorageClass attributes
//     (backendType, media, provisioningType, snapshots, clones, encryption,
//     IOPS, storagePools, additionalStoragePools, excludeStoragePools, fsType)
//     and the Trident volume attributes (size in bytes, protocol "file" or
//     "block", internalName, snapshotReserve, …).
//   - "ONTAP drivers", "ONTAP SAN driver overview", "Configure a NetApp HCI
//     or SolidFire backend", "Configure a Google Cloud NetApp Volumes
//     backend", "Configure Google Cloud NetApp Volumes for SAN workloads":
//     the volume modes and access modes each driver supports.
//   - "ONTAP NAS/SAN configuration options and examples": qtreesPerFlexvol
//     (default 200) and lunsPerFlexvol (default 100) of the economy drivers.
//   - "Google Cloud NetApp Volumes backend configuration options and
//     examples": service levels flex/standard/premium/extreme, virtual pools
//     told apart by labels selected with the class parameter selector, and
//     the 100 GiB minimum volume size on Standard, Premium and Extreme (1 GiB
//     on Flex).
//   - Google Cloud "Storage pools overview" and "Performance considerations":
//     16/64/128 KiB/s per GiB of volume capacity on Standard/Premium/Extreme
//     (that is MiB/s per TiB); Flex throughput belongs to the pool and is
//     shared by its volumes.
//
// The layout of the TridentVolume and TridentBackend resources (config,
// backendUUID, pool, state; backendName, backendUUID, version, online,
// config.<driver>_config.storageDriverName) and of a Trident PV's CSI volume
// attributes (backendUUID, name, internalName, protocol) is not documented as
// an API; it follows Trident's published source (persistent_store/crd/apis/
// netapp/v1, storage.VolumeConfig, frontend/csi), read for understanding.
package trident
