package trident

import "testing"

func TestDriverOf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		provisioner string
		params      map[string]string
		want        Driver
		wantTrident bool
	}{
		{"ontap-nas", Provisioner, map[string]string{"backendType": "ontap-nas"}, OntapNAS, true},
		{"gcnv san", Provisioner, map[string]string{"backendType": "google-cloud-netapp-volumes-san"}, GCNVSAN, true},
		{"case and space", Provisioner, map[string]string{"backendType": " ONTAP-SAN "}, OntapSAN, true},
		{"fsx storageDriverName", Provisioner, map[string]string{"storageDriverName": "ontap-nas"}, OntapNAS, true},
		{"backendType wins", Provisioner, map[string]string{"backendType": "ontap-san", "storageDriverName": "ontap-nas"}, OntapSAN, true},
		{"prefixed backendType", Provisioner, map[string]string{"trident.netapp.io/backendType": "ontap-san"}, OntapSAN, true},
		{"plain key wins over prefixed", Provisioner, map[string]string{"backendType": "ontap-nas", "trident.netapp.io/backendType": "ontap-san"}, OntapNAS, true},
		{"trident without driver", Provisioner, map[string]string{"selector": "performance=gold"}, "", true},
		{"trident nil params", Provisioner, nil, "", true},
		{"unknown trident driver", Provisioner, map[string]string{"backendType": "ontap-nvme-future"}, "ontap-nvme-future", true},
		{"other provisioner", "ebs.csi.aws.com", map[string]string{"backendType": "ontap-nas"}, "", false},
		{"legacy trident name", "netapp.io/trident", map[string]string{"backendType": "ontap-nas"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, trident := DriverOf(tc.provisioner, tc.params)
			if got != tc.want || trident != tc.wantTrident {
				t.Errorf("DriverOf() = %q, %v; want %q, %v", got, trident, tc.want, tc.wantTrident)
			}
		})
	}
}

func TestDriverCapabilities(t *testing.T) {
	for _, tc := range []struct {
		d                   Driver
		known, san, economy bool
	}{
		{OntapNAS, true, false, false},
		{OntapNASEconomy, true, false, true},
		{OntapNASFlexGroup, true, false, false},
		{OntapSAN, true, true, false},
		{OntapSANEconomy, true, true, true},
		{GCNV, true, false, false},
		{GCNVSAN, true, true, false},
		{AzureNetAppFiles, true, false, false},
		{SolidFireSAN, true, true, false},
		{"something-else", false, false, false},
		{"", false, false, false},
	} {
		if tc.d.Known() != tc.known || tc.d.SAN() != tc.san || tc.d.Economy() != tc.economy {
			t.Errorf("%q: Known/SAN/Economy = %v/%v/%v, want %v/%v/%v", tc.d,
				tc.d.Known(), tc.d.SAN(), tc.d.Economy(), tc.known, tc.san, tc.economy)
		}
	}
}
