package trident

import (
	"strings"
	"testing"
)

func backendObj(name string, driver Driver, labels map[string]any, pools ...map[string]any) map[string]any {
	dc := map[string]any{"storageDriverName": string(driver), "labels": labels}
	var storage []any
	for _, p := range pools {
		storage = append(storage, map[string]any{"labels": p})
	}
	if storage != nil {
		dc["storage"] = storage
	}
	return map[string]any{"backendName": name, "backendUUID": name + "-uuid", "config": map[string]any{"x_config": dc}}
}

func TestOfferFrom(t *testing.T) {
	o := OfferFrom(backendObj("gcnv", GCNV, map[string]any{"cloud": "gcp", "n": 1},
		map[string]any{"performance": "premium"}, map[string]any{"performance": "extreme", "cloud": "gcp-eu"}))
	if o.Backend.Name != "gcnv" || len(o.Pools) != 2 || o.Pools[0]["cloud"] != "gcp" || o.Pools[0]["performance"] != "premium" ||
		o.Pools[1]["cloud"] != "gcp-eu" || o.Pools[0]["n"] != "" {
		t.Fatalf("offer %+v", o)
	}
	if plain := OfferFrom(backendObj("nas", OntapNAS, map[string]any{"performance": "gold"})); len(plain.Pools) != 1 || plain.Pools[0]["performance"] != "gold" {
		t.Fatalf("a backend without virtual pools offers its own labels: %+v", plain)
	}
}

func TestPreflightOffers(t *testing.T) {
	nas := OfferFrom(backendObj("cvo-nas", OntapNAS, map[string]any{"performance": "gold"}))
	san := OfferFrom(backendObj("cvo-san", OntapSAN, map[string]any{"performance": "silver"}))
	gcnv := OfferFrom(backendObj("gcnv", GCNV, nil, map[string]any{"performance": "premium"}))
	future := OfferFrom(backendObj("new", "ontap-future", map[string]any{"performance": "gold"}))
	block := Request{VolumeMode: VolumeModeBlock, AccessMode: ReadWriteOnce, Clients: 1}
	shared := Request{VolumeMode: VolumeModeFilesystem, AccessMode: ReadWriteMany, Shared: true, Clients: 3}
	for _, tc := range []struct {
		name   string
		params map[string]string
		offers []Offer
		req    Request
		want   string // "" : no refusal
	}{
		{"block, only NAS backends", nil, []Offer{nas, gcnv}, block, "no backend it can select serves volumeMode Block: cvo-nas (ontap-nas), gcnv (google-cloud-netapp-volumes)"},
		{"block, a SAN backend among them", nil, []Offer{nas, san}, block, ""},
		{"block, the selector reaches only NAS", map[string]string{"selector": "performance=gold"}, []Offer{nas, san}, block, "cvo-nas (ontap-nas)"},
		{"block, the prefixed selector too", map[string]string{"trident.netapp.io/selector": "performance in (gold, premium)"}, []Offer{nas, san, gcnv}, block,
			"cvo-nas (ontap-nas), gcnv (google-cloud-netapp-volumes)"},
		{"block, the selector reaches the SAN backend", map[string]string{"selector": "performance!=gold"}, []Offer{nas, san}, block, ""},
		{"block, storagePools name only NAS", map[string]string{"storagePools": "cvo-nas:aggr1;gcnv:.*"}, []Offer{nas, san, gcnv}, block, "cvo-nas (ontap-nas), gcnv"},
		{"block, storagePools by regular expression", map[string]string{"storagePools": "cvo-.*:.*"}, []Offer{nas, san}, block, ""},
		{"shared Filesystem, only SAN", nil, []Offer{san}, shared, "a Filesystem volume on several nodes: cvo-san (ontap-san)"},
		{"shared Filesystem, NAS too", nil, []Offer{san, nas}, shared, ""},
		{"a driver this package does not know: Trident decides", nil, []Offer{nas, future}, block, ""},
		{"no backend selectable: Trident decides", map[string]string{"selector": "performance=platinum"}, []Offer{nas}, block, ""},
		{"no backend at all", nil, nil, block, ""},
		{"a pool list that cannot be read", map[string]string{"storagePools": "cvo-(nas:aggr1"}, []Offer{nas}, block, ""},
		{"additionalStoragePools adds a backend the selector leaves out", map[string]string{"selector": "performance=gold", "additionalStoragePools": "cvo-san:.*"},
			[]Offer{nas, san}, block, ""},
		{"requiredStorage, its older name, too", map[string]string{"selector": "performance=gold", "requiredStorage": "cvo-san:.*"}, []Offer{nas, san}, block, ""},
		{"additionalStoragePools naming only NAS adds nothing that serves", map[string]string{"selector": "performance=gold", "additionalStoragePools": "gcnv:.*"},
			[]Offer{nas, san, gcnv}, block, "cvo-nas (ontap-nas), gcnv (google-cloud-netapp-volumes)"},
		{"a list with an empty entry, which Trident ignores", map[string]string{"storagePools": "cvo-nas:.*;"}, []Offer{nas, san}, block, ""},
		{"an entry without pools", map[string]string{"storagePools": "cvo-nas:"}, []Offer{nas, san}, block, ""},
		{"a name anchored as Trident anchors it: ^cvo-nas|san$", map[string]string{"storagePools": "cvo-nas|san:.*"}, []Offer{nas, san}, block, ""},
		{"a selector Trident refuses", map[string]string{"selector": "performance=gold,cloud=x"}, []Offer{nas}, block, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := PreflightOffers(tc.params, tc.offers, tc.req)
			switch {
			case tc.want == "" && f != nil:
				t.Fatalf("refused: %s", f.Message)
			case tc.want != "" && (f == nil || f.Reason != ReasonUnsupportedByDriver || !strings.Contains(f.Message, tc.want)):
				t.Fatalf("finding %+v, want a refusal with %q", f, tc.want)
			}
		})
	}
}
