package trident

import "strings"

// allowedParameters are the StorageClass parameters recorded with results,
// lower-cased. They describe the storage, never reach a credential.
//
// Trident ("Kubernetes and Trident objects", "Configure auto-tiering for
// Google Cloud NetApp Volumes", "Google Cloud NetApp Volumes backend
// configuration options and examples"): backendType, storageDriverName,
// selector, media, provisioningType, snapshots, clones, encryption, IOPS,
// storagePools, additionalStoragePools, excludeStoragePools, fsType,
// tieringPolicy, coolingDays; and the protocol a backend serves, sanType
// and nasType. Trident reads a key with the prefix trident.netapp.io/ as
// the key without it (Param).
//
// Generic CSI: csi.storage.k8s.io/fstype, and the common performance-shaping
// parameters of cloud disk drivers (type, iops, throughput, iopsPerGB,
// skuName, replication-type, provisioned-iops-on-create,
// provisioned-throughput-on-create).
var allowedParameters = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		"backendType", "storageDriverName", "selector", "media", "provisioningType",
		"snapshots", "clones", "encryption", "IOPS", "storagePools",
		"additionalStoragePools", "excludeStoragePools", "fsType",
		"tieringPolicy", "coolingDays", "sanType", "nasType",
		"csi.storage.k8s.io/fstype",
		"type", "iops", "throughput", "iopsPerGB", "skuName", "replication-type",
		"provisioned-iops-on-create", "provisioned-throughput-on-create",
	} {
		m[strings.ToLower(k)] = true
	}
	return m
}()

// AllowedParameters returns the class parameters safe and useful to record
// with results: those on the allowlist above (matched without regard to
// case, keys kept as written). A key that mentions a secret
// (csi.storage.k8s.io/provisioner-secret-name, …) is never returned, even if
// listed. It returns nil when nothing is allowed.
func AllowedParameters(params map[string]string) map[string]string {
	var out map[string]string
	for k, v := range params {
		lk := strings.ToLower(strings.TrimPrefix(k, ParamPrefix))
		if !allowedParameters[lk] || strings.Contains(lk, "secret") {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// ParamPrefix is the prefix Trident strips from a StorageClass parameter's
// key: trident.netapp.io/backendType is backendType.
const ParamPrefix = "trident.netapp.io/"

// Param is the Trident class parameter key, written plain or with
// ParamPrefix, trimmed. A class that sets both is ambiguous (Trident's
// choice between them is arbitrary); the plain key is read.
func Param(params map[string]string, key string) string {
	if v := strings.TrimSpace(params[key]); v != "" {
		return v
	}
	return strings.TrimSpace(params[ParamPrefix+key])
}

// ClassParameters are a class's parameters as Trident reads them for pool
// selection: its annotations trident.netapp.io/selector and
// trident.netapp.io/additionalStoragePools, when set, stand for those
// parameters.
func ClassParameters(params, annotations map[string]string) map[string]string {
	out := make(map[string]string, len(params)+2)
	for k, v := range params {
		out[k] = v
	}
	for _, key := range []string{"selector", "additionalStoragePools"} {
		if v := strings.TrimSpace(annotations[ParamPrefix+key]); v != "" {
			delete(out, ParamPrefix+key)
			out[key] = v
		}
	}
	return out
}
