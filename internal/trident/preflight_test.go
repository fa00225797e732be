package trident

import (
	"strings"
	"testing"
)

func TestPreflightRefusals(t *testing.T) {
	bt := func(d Driver) map[string]string { return map[string]string{"backendType": string(d)} }
	for _, tc := range []struct {
		name   string
		driver Driver
		req    Request
		// wantIn are substrings of the refusal's message; nil means no refusal.
		wantIn []string
	}{
		{"ontap-san RWX filesystem", OntapSAN,
			Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteMany, Clients: 2},
			[]string{"ontap-san", "ReadWriteMany", "use ontap-nas for a shared NFS volume", "volumeMode Block with ReadWriteMany"}},
		{"ontap-san default mode shared", OntapSAN,
			Request{AccessMode: ReadWriteOnce, Shared: true, Clients: 4},
			[]string{"ontap-san", "one volume shared by 4 clients", "use ontap-nas"}},
		{"ontap-san-economy RWX filesystem", OntapSANEconomy,
			Request{AccessMode: ReadWriteMany, Clients: 1},
			[]string{"ontap-san-economy", "use ontap-nas for a shared NFS volume"}},
		{"gcnv-san RWX filesystem", GCNVSAN,
			Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteMany, Shared: true, Clients: 3},
			[]string{"google-cloud-netapp-volumes-san", "RWX only in Block mode", "use google-cloud-netapp-volumes for a shared NFS volume"}},
		{"solidfire RWX filesystem", SolidFireSAN,
			Request{AccessMode: ReadWriteMany}, []string{"solidfire-san", "an NFS driver such as ontap-nas"}},
		{"ontap-nas block", OntapNAS,
			Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteOnce, Clients: 1},
			[]string{"ontap-nas serves only Filesystem volumes", "use ontap-san"}},
		{"ontap-nas-economy block", OntapNASEconomy,
			Request{VolumeMode: VolumeModeBlock}, []string{"ontap-nas-economy", "use ontap-san"}},
		{"ontap-nas-flexgroup block", OntapNASFlexGroup,
			Request{VolumeMode: VolumeModeBlock}, []string{"ontap-nas-flexgroup", "use ontap-san"}},
		{"gcnv block", GCNV,
			Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteMany, Shared: true, Clients: 2},
			[]string{"google-cloud-netapp-volumes serves only Filesystem", "use google-cloud-netapp-volumes-san"}},
		{"anf block", AzureNetAppFiles,
			Request{VolumeMode: VolumeModeBlock}, []string{"azure-netapp-files", "a SAN driver such as ontap-san"}},

		{"ontap-san RWX block", OntapSAN, Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteMany, Shared: true, Clients: 8}, nil},
		{"ontap-san RWO filesystem per client", OntapSAN, Request{AccessMode: ReadWriteOnce, Clients: 8}, nil},
		{"ontap-san RWOP filesystem", OntapSAN, Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteOncePod, Clients: 1}, nil},
		{"ontap-san shared one client", OntapSAN, Request{AccessMode: ReadWriteOnce, Shared: true, Clients: 1}, nil},
		{"gcnv-san RWX block", GCNVSAN, Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteMany, Shared: true, Clients: 2}, nil},
		{"ontap-nas RWX shared", OntapNAS, Request{AccessMode: ReadWriteMany, Shared: true, Clients: 16}, nil},
		{"gcnv RWX shared", GCNV, Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteMany, Shared: true, Clients: 4}, nil},
		{"gcnv RWOP", GCNV, Request{AccessMode: ReadWriteOncePod, Clients: 1}, nil},
		{"unknown driver block RWX", "some-new-driver", Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteMany}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusal, _ := Preflight(Provisioner, bt(tc.driver), tc.req)
			if tc.wantIn == nil {
				if refusal != nil {
					t.Fatalf("unexpected refusal %+v", *refusal)
				}
				return
			}
			if refusal == nil {
				t.Fatal("no refusal")
			}
			if refusal.Reason != ReasonUnsupportedByDriver {
				t.Errorf("Reason = %q", refusal.Reason)
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(refusal.Message, s) {
					t.Errorf("message %q lacks %q", refusal.Message, s)
				}
			}
		})
	}
}

func TestPreflightWarnings(t *testing.T) {
	for _, tc := range []struct {
		name        string
		provisioner string
		params      map[string]string
		req         Request
		wantReasons []string
		wantIn      []string
	}{
		{"nas economy", Provisioner, map[string]string{"backendType": "ontap-nas-economy"},
			Request{AccessMode: ReadWriteMany, Shared: true, Clients: 2},
			[]string{ReasonSharedFlexVol}, []string{"qtree", "200 qtrees", "qtreesPerFlexvol", "not isolated"}},
		{"san economy", Provisioner, map[string]string{"backendType": "ontap-san-economy"},
			Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteOnce, Clients: 1},
			[]string{ReasonSharedFlexVol}, []string{"LUN", "100 LUNs", "lunsPerFlexvol", "not isolated"}},
		{"ebs shared filesystem", "ebs.csi.aws.com", map[string]string{"type": "gp3"},
			Request{AccessMode: ReadWriteOnce, Shared: true, Clients: 3},
			[]string{ReasonNoReadWriteMany}, []string{"ebs.csi.aws.com", "one node at a time", "shared by 3 clients"}},
		{"pd RWX filesystem", "pd.csi.storage.gke.io", nil,
			Request{AccessMode: ReadWriteMany, Clients: 2},
			[]string{ReasonNoReadWriteMany}, []string{"pd.csi.storage.gke.io", "a ReadWriteMany volume"}},
		{"azure disk shared", "disk.csi.azure.com", nil,
			Request{Shared: true, Clients: 2}, []string{ReasonNoReadWriteMany}, []string{"disk.csi.azure.com"}},
		{"local-path shared block", "rancher.io/local-path", nil,
			Request{VolumeMode: VolumeModeBlock, Shared: true, Clients: 2},
			[]string{ReasonNoReadWriteMany}, []string{"node-local"}},
		{"local volumes shared", "kubernetes.io/no-provisioner", nil,
			Request{Shared: true, Clients: 5}, []string{ReasonNoReadWriteMany}, []string{"node-local"}},

		{"ebs shared block (multi-attach possible)", "ebs.csi.aws.com", nil,
			Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteMany, Shared: true, Clients: 2}, nil, nil},
		{"ebs per-client volumes", "ebs.csi.aws.com", nil, Request{AccessMode: ReadWriteOnce, Clients: 8}, nil, nil},
		{"ebs shared one client", "ebs.csi.aws.com", nil, Request{Shared: true, Clients: 1}, nil, nil},
		{"unknown provisioner shared", "example.com/csi", map[string]string{"foo": "bar"},
			Request{AccessMode: ReadWriteMany, Shared: true, Clients: 4}, nil, nil},
		{"efs shared", "efs.csi.aws.com", nil, Request{AccessMode: ReadWriteMany, Shared: true, Clients: 4}, nil, nil},
		{"trident without backendType", Provisioner, map[string]string{"selector": "performance=gold"},
			Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteMany, Shared: true, Clients: 4}, nil, nil},
		{"ontap-nas", Provisioner, map[string]string{"backendType": "ontap-nas"},
			Request{AccessMode: ReadWriteMany, Shared: true, Clients: 4}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusal, warnings := Preflight(tc.provisioner, tc.params, tc.req)
			if refusal != nil {
				t.Fatalf("unexpected refusal %+v", *refusal)
			}
			if len(warnings) != len(tc.wantReasons) {
				t.Fatalf("warnings = %+v, want reasons %v", warnings, tc.wantReasons)
			}
			for i, w := range warnings {
				if w.Reason != tc.wantReasons[i] {
					t.Errorf("warning %d Reason = %q, want %q", i, w.Reason, tc.wantReasons[i])
				}
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(warnings[0].Message, s) {
					t.Errorf("message %q lacks %q", warnings[0].Message, s)
				}
			}
		})
	}
}

// An economy SAN class asked for a shared filesystem gets both the refusal
// and the warning.
func TestPreflightRefusalAndWarning(t *testing.T) {
	refusal, warnings := Preflight(Provisioner, map[string]string{"backendType": "ontap-san-economy"},
		Request{AccessMode: ReadWriteMany, Shared: true, Clients: 2})
	if refusal == nil || refusal.Reason != ReasonUnsupportedByDriver {
		t.Errorf("refusal = %+v", refusal)
	}
	if len(warnings) != 1 || warnings[0].Reason != ReasonSharedFlexVol {
		t.Errorf("warnings = %+v", warnings)
	}
}
