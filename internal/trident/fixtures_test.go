package trident

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

const testdata = "../../test/integration/testdata/trident"

// readObjects reads a multi-document YAML file into generic objects, as the
// API server would hand them out as unstructured content.
func readObjects(t *testing.T, name string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(obj) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

func TestFixtureCRDs(t *testing.T) {
	objs := readObjects(t, "crds.yaml")
	want := map[string]string{
		"tridentvolumes.trident.netapp.io":  KindTridentVolume,
		"tridentbackends.trident.netapp.io": KindTridentBackend,
	}
	if len(objs) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(objs), len(want))
	}
	for _, o := range objs {
		name := str(mapAt(o, "metadata"), "name")
		spec := mapAt(o, "spec")
		if o["kind"] != "CustomResourceDefinition" || o["apiVersion"] != "apiextensions.k8s.io/v1" {
			t.Errorf("%s: kind %v apiVersion %v", name, o["kind"], o["apiVersion"])
		}
		if str(spec, "group") != Group || str(spec, "scope") != "Namespaced" || str(mapAt(spec, "names"), "kind") != want[name] {
			t.Errorf("%s: spec %v", name, spec)
		}
		versions, _ := spec["versions"].([]any)
		if len(versions) != 1 {
			t.Fatalf("%s: versions %v", name, versions)
		}
		v, _ := versions[0].(map[string]any)
		schema := mapAt(mapAt(v, "schema"), "openAPIV3Schema")
		if str(v, "name") != Version || v["served"] != true || v["storage"] != true ||
			schema["x-kubernetes-preserve-unknown-fields"] != true {
			t.Errorf("%s: version %v", name, v)
		}
	}
}

// The fixtures the integration tests load parse to what the operator records.
func TestFixtureObjects(t *testing.T) {
	objs := readObjects(t, "objects.yaml")
	backends := map[string]Backend{}
	volumes := map[string]Volume{}
	for _, o := range objs {
		if o["apiVersion"] != Group+"/"+Version || str(mapAt(o, "metadata"), "namespace") != "trident" {
			t.Errorf("object %v: apiVersion/namespace", o["metadata"])
		}
		switch o["kind"] {
		case KindTridentBackend:
			b := BackendFrom(o)
			backends[b.UUID] = b
		case KindTridentVolume:
			v := VolumeFrom(o)
			volumes[v.Name] = v
		default:
			t.Errorf("unexpected kind %v", o["kind"])
		}
	}

	nas := backends["5b1f0b7e-2c5d-4c1e-9a43-6e0f7d3a9c21"]
	if want := (Backend{Name: "cvo-nas", UUID: "5b1f0b7e-2c5d-4c1e-9a43-6e0f7d3a9c21", Driver: OntapNAS, Version: "1",
		State: "online", Online: true, SVM: "svm_cvo_bench", Protocol: "nfs", TieringPolicy: "none"}); nas != want {
		t.Errorf("ontap-nas backend = %+v, want %+v", nas, want)
	}
	gcnv := backends["0c9e4b3a-7f21-4e8d-b5a6-2d1c8e7f6a54"]
	if want := (Backend{Name: "gcnv-europe-west6", UUID: "0c9e4b3a-7f21-4e8d-b5a6-2d1c8e7f6a54", Driver: GCNV, Version: "1",
		State: "online", Online: true, ServiceLevel: "premium", Location: "europe-west6", Protocol: "nfs", VirtualPools: 2}); gcnv != want {
		t.Errorf("gcnv backend = %+v, want %+v", gcnv, want)
	}

	ontapVol := volumes["pvc-8d3c2a61-5e4f-4b7a-9c10-3f2e1d0c9b8a"]
	if ontapVol.InternalName != "trident_pvc_8d3c2a61_5e4f_4b7a_9c10_3f2e1d0c9b8a" || ontapVol.Pool != "aggr1" ||
		ontapVol.Protocol != "file" || ontapVol.SizeBytes != 20<<30 || ontapVol.QoSPolicy != "bench-qos" ||
		ontapVol.SpaceReserve != "none" || ontapVol.State != "online" || ontapVol.ServiceLevel != "" {
		t.Errorf("ontap-nas volume = %+v", ontapVol)
	}
	if _, ok := backends[ontapVol.BackendUUID]; !ok {
		t.Errorf("ontap-nas volume's backend %q missing", ontapVol.BackendUUID)
	}
	if _, ok := ServiceLevelOf(map[string]string{"backendType": string(backends[ontapVol.BackendUUID].Driver)}, ontapVol); ok {
		t.Error("ontap-nas volume has a GCNV service level")
	}

	gcnvVol := volumes["pvc-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"]
	b, ok := backends[gcnvVol.BackendUUID]
	if !ok || b.Driver != GCNV {
		t.Fatalf("gcnv volume's backend = %+v", b)
	}
	level, ok := ServiceLevelOf(map[string]string{"backendType": string(b.Driver)}, gcnvVol)
	if !ok || level != ServiceLevelPremium {
		t.Fatalf("ServiceLevelOf(gcnv volume) = %q, %v", level, ok)
	}
	e := EntitlementOf(level, gcnvVol.SizeBytes)
	if e.ThroughputBytesPerSecond != 6_553_600 {
		t.Errorf("gcnv entitlement = %+v", e)
	}
}
