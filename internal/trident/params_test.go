package trident

import (
	"reflect"
	"strings"
	"testing"
)

func TestAllowedParameters(t *testing.T) {
	// Every parameter of a Trident class is kept as it is.
	tridentClass := map[string]string{
		"backendType":      "ontap-nas",
		"selector":         "performance=gold; cost=4",
		"media":            "ssd",
		"provisioningType": "thin",
		"snapshots":        "true",
		"clones":           "true",
		"encryption":       "false",
		"storagePools":     "cvo-nas:aggr1",
		"fsType":           "nfs",
		"tieringPolicy":    "auto",
		"coolingDays":      "31",
		"IOPS":             "5000",
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   map[string]string
	}{
		{"nil", nil, nil},
		{"nothing allowed", map[string]string{"foo": "bar"}, nil},
		{"trident class", tridentClass, tridentClass},
		{"secrets dropped", map[string]string{
			"backendType":                                      "ontap-san",
			"csi.storage.k8s.io/fstype":                        "xfs",
			"csi.storage.k8s.io/provisioner-secret-name":       "chap",
			"csi.storage.k8s.io/provisioner-secret-namespace":  "trident",
			"csi.storage.k8s.io/node-stage-secret-name":        "chap",
			"csi.storage.k8s.io/controller-expand-secret-name": "chap",
			"credentialsName":                                  "fsx-credentials",
			"fsxFilesystemID":                                  "fs-0abc",
		}, map[string]string{
			"backendType":               "ontap-san",
			"csi.storage.k8s.io/fstype": "xfs",
		}},
		{"cloud disk", map[string]string{
			"type": "gp3", "iops": "16000", "throughput": "1000", "kmsKeyId": "arn:aws:kms:…", "encrypted": "true",
		}, map[string]string{"type": "gp3", "iops": "16000", "throughput": "1000"}},
		{"trident's prefix", map[string]string{"trident.netapp.io/backendType": "ontap-san", "trident.netapp.io/sanType": "nvme",
			"trident.netapp.io/secretName": "x"},
			map[string]string{"trident.netapp.io/backendType": "ontap-san", "trident.netapp.io/sanType": "nvme"}},
		{"case-insensitive keys kept as written", map[string]string{"BackendType": "ontap-nas", "skuname": "PremiumV2_LRS"},
			map[string]string{"BackendType": "ontap-nas", "skuname": "PremiumV2_LRS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AllowedParameters(tc.params); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AllowedParameters() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAllowlistHasNoSecrets(t *testing.T) {
	for k := range allowedParameters {
		for _, bad := range []string{"secret", "password", "credential", "key"} {
			if strings.Contains(strings.ToLower(k), bad) {
				t.Errorf("allowlist holds %q", k)
			}
		}
	}
}

// Trident reads a class's annotations trident.netapp.io/selector and
// trident.netapp.io/additionalStoragePools in place of those parameters.
func TestClassParameters(t *testing.T) {
	got := ClassParameters(map[string]string{"selector": "performance=gold", "trident.netapp.io/additionalStoragePools": "a:.*", "media": "ssd"},
		map[string]string{"trident.netapp.io/selector": "performance=silver", "trident.netapp.io/additionalStoragePools": "b:.*", "other": "x"})
	want := map[string]string{"selector": "performance=silver", "additionalStoragePools": "b:.*", "media": "ssd"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ClassParameters = %v, want %v", got, want)
	}
}
