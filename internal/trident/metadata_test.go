package trident

import (
	"testing"
)

func TestAttributesOf(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		attrs                    map[string]string
		wantUUID, wantInt, wantP string
	}{
		{"trident pv", map[string]string{
			"backendUUID": "5b1f", "name": "pvc-1", "internalName": "trident_pvc_1", "protocol": "file",
			"storage.kubernetes.io/csiProvisionerIdentity": "123-csi.trident.netapp.io",
		}, "5b1f", "trident_pvc_1", "file"},
		{"block", map[string]string{"backendUUID": "u", "internalName": "lun", "protocol": "block"}, "u", "lun", "block"},
		{"partial", map[string]string{"internalName": "x"}, "", "x", ""},
		{"nil", nil, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, in, p := AttributesOf(tc.attrs)
			if u != tc.wantUUID || in != tc.wantInt || p != tc.wantP {
				t.Errorf("AttributesOf() = %q, %q, %q", u, in, p)
			}
		})
	}
}

func TestVolumeFrom(t *testing.T) {
	full := map[string]any{
		"metadata":    map[string]any{"name": "pvc-1", "namespace": "trident"},
		"backendUUID": "uuid-1",
		"pool":        "aggr1",
		"state":       "online",
		"orphaned":    true,
		"config": map[string]any{
			"name": "pvc-1", "internalName": "trident_pvc_1", "size": "1073741824", "protocol": "file",
			"storageClass": "gold", "accessMode": "ReadWriteMany", "volumeMode": "Filesystem", "fileSystem": "nfs",
			"serviceLevel": "Premium", "qosPolicy": "q", "adaptiveQosPolicy": "aq", "snapshotReserve": "5",
			"snapshotPolicy": "none", "spaceReserve": "none", "tieringPolicy": "auto", "encryption": "true",
		},
	}
	want := Volume{
		Name: "pvc-1", InternalName: "trident_pvc_1", BackendUUID: "uuid-1", Pool: "aggr1", Protocol: "file",
		State: "online", Orphaned: true, Size: "1073741824", SizeBytes: 1 << 30, StorageClass: "gold",
		AccessMode: "ReadWriteMany", VolumeMode: "Filesystem", FileSystem: "nfs", ServiceLevel: "Premium",
		QoSPolicy: "q", AdaptiveQoSPolicy: "aq", SnapshotReserve: "5", SnapshotPolicy: "none",
		SpaceReserve: "none", TieringPolicy: "auto", Encryption: "true",
	}
	if got := VolumeFrom(full); got != want {
		t.Errorf("VolumeFrom(full) =\n%+v\nwant\n%+v", got, want)
	}

	for _, tc := range []struct {
		name string
		obj  map[string]any
		want Volume
	}{
		{"nil", nil, Volume{}},
		{"empty", map[string]any{}, Volume{}},
		{"config not a map", map[string]any{"config": "oops", "backendUUID": "u"}, Volume{BackendUUID: "u"}},
		{"metadata not a map", map[string]any{"metadata": []any{"x"}, "config": map[string]any{"name": "pvc-2"}},
			Volume{Name: "pvc-2"}},
		{"wrong types", map[string]any{
			"metadata": map[string]any{"name": 42}, "backendUUID": 7, "pool": nil, "state": true, "orphaned": "yes",
			"config": map[string]any{"internalName": 3.5, "size": []any{1}, "protocol": map[string]any{}, "serviceLevel": false},
		}, Volume{}},
		{"numeric size", map[string]any{"config": map[string]any{"size": float64(107374182400)}},
			Volume{Size: "107374182400", SizeBytes: 107374182400}},
		{"int64 size", map[string]any{"config": map[string]any{"size": int64(5)}}, Volume{Size: "5", SizeBytes: 5}},
		{"int size", map[string]any{"config": map[string]any{"size": 6}}, Volume{Size: "6", SizeBytes: 6}},
		{"fractional size", map[string]any{"config": map[string]any{"size": 1.5}}, Volume{}},
		{"negative size", map[string]any{"config": map[string]any{"size": "-1"}}, Volume{Size: "-1"}},
		{"quantity size", map[string]any{"config": map[string]any{"size": "1Gi"}}, Volume{Size: "1Gi"}},
		{"huge size", map[string]any{"config": map[string]any{"size": "99999999999999999999"}},
			Volume{Size: "99999999999999999999"}},
		{"trimmed", map[string]any{"config": map[string]any{"internalName": "  x \n"}}, Volume{InternalName: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VolumeFrom(tc.obj); got != tc.want {
				t.Errorf("VolumeFrom() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBackendFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want Backend
	}{
		{"ontap", map[string]any{
			"metadata": map[string]any{"name": "tbe-1"}, "backendName": "cvo", "backendUUID": "u1",
			"version": "1", "online": true, "state": "online",
			"config": map[string]any{"ontap_config": map[string]any{
				"storageDriverName": "ontap-nas-economy", "svm": "svm1", "qtreesPerFlexvol": "300",
				"credentials": map[string]any{"name": "secret"},
			}},
		}, Backend{Name: "cvo", UUID: "u1", Driver: OntapNASEconomy, Version: "1", State: "online", Online: true,
			SVM: "svm1", QtreesPerFlexvol: "300", Protocol: "nfs"}},
		{"ontap tiering and SMB", map[string]any{"config": map[string]any{"ontap_config": map[string]any{
			"storageDriverName": "ontap-nas", "nasType": "SMB", "defaults": map[string]any{"tieringPolicy": "auto"},
		}}}, Backend{Driver: OntapNAS, Protocol: "smb", TieringPolicy: "auto"}},
		{"virtual pools counted", map[string]any{"config": map[string]any{"ontap_config": map[string]any{
			"storageDriverName": "ontap-nas", "storage": []any{map[string]any{}, map[string]any{}}, "defaults": map[string]any{"tieringPolicy": "none"},
		}}}, Backend{Driver: OntapNAS, Protocol: "nfs", TieringPolicy: "none", VirtualPools: 2}},
		{"ontap-san over NVMe/TCP", map[string]any{"config": map[string]any{"ontap_config": map[string]any{
			"storageDriverName": "ontap-san", "sanType": "nvme",
		}}}, Backend{Driver: OntapSAN, Protocol: "nvme"}},
		{"ontap-san over FC", map[string]any{"config": map[string]any{"ontap_config": map[string]any{
			"storageDriverName": "ontap-san", "sanType": "fcp",
		}}}, Backend{Driver: OntapSAN, Protocol: "fcp"}},
		{"gcnv san is iSCSI whatever it says", map[string]any{"config": map[string]any{"gcnv_config": map[string]any{
			"storageDriverName": "google-cloud-netapp-volumes-san", "sanType": "nvme",
		}}}, Backend{Driver: GCNVSAN, Protocol: "iscsi"}},
		{"an unknown driver as written", map[string]any{"config": map[string]any{"x_config": map[string]any{
			"storageDriverName": "ontap-future", "sanType": "fcp",
		}}}, Backend{Driver: "ontap-future", Protocol: "fcp"}},
		{"gcnv", map[string]any{
			"backendName": "g", "backendUUID": "u2", "state": "failed",
			"config": map[string]any{"gcnv_config": map[string]any{
				"storageDriverName": "google-cloud-netapp-volumes", "serviceLevel": "premium", "location": "europe-west6",
			}},
		}, Backend{Name: "g", UUID: "u2", Driver: GCNV, State: "failed", ServiceLevel: "premium", Location: "europe-west6", Protocol: "nfs"}},
		{"san economy", map[string]any{"config": map[string]any{"ontap_config": map[string]any{
			"storageDriverName": "ontap-san-economy", "lunsPerFlexvol": "150",
		}}}, Backend{Driver: OntapSANEconomy, LUNsPerFlexvol: "150", Protocol: "iscsi"}},
		{"name from metadata", map[string]any{"metadata": map[string]any{"name": "tbe-2"}}, Backend{Name: "tbe-2"}},
		{"first driver config by key", map[string]any{"config": map[string]any{
			"zz_config": map[string]any{"storageDriverName": "solidfire-san"},
			"aa_config": map[string]any{"storageDriverName": "ontap-san"},
			"fake":      "not a map",
			"empty":     map[string]any{"svm": "ignored"},
		}}, Backend{Driver: OntapSAN, Protocol: "iscsi"}},
		{"nil", nil, Backend{}},
		{"config not a map", map[string]any{"config": 1}, Backend{}},
		{"wrong types", map[string]any{
			"backendName": 1, "backendUUID": []any{}, "version": 1.0, "online": "true", "state": nil,
			"config": map[string]any{"ontap_config": map[string]any{"storageDriverName": 5, "svm": "s"}},
		}, Backend{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BackendFrom(tc.obj); got != tc.want {
				t.Errorf("BackendFrom() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
