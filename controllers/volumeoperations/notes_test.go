package volumeoperations

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

func TestNotesOf(t *testing.T) {
	trident := func(driver string) *storagev1.StorageClass {
		return &storagev1.StorageClass{Provisioner: "csi.trident.netapp.io", Parameters: map[string]string{"backendType": driver}}
	}
	reasons := func(ns []v1alpha1.OperationNote) map[string][]v1alpha1.VolumeOperation {
		out := map[string][]v1alpha1.VolumeOperation{}
		for _, n := range ns {
			if n.Message == "" {
				t.Errorf("note %s without a message", n.Reason)
			}
			out[n.Reason] = n.Operations
		}
		return out
	}
	ops := []v1alpha1.VolumeOperation{v1alpha1.OperationProvision, v1alpha1.OperationCloneFromSnapshot}

	if got := notesOf(&storagev1.StorageClass{Provisioner: "csi.storagebench.test"}, ops); got != nil {
		t.Errorf("notes for a class not Trident's: %+v", got)
	}
	nas := reasons(notesOf(trident("ontap-nas"), ops))
	if got := nas["FlexClone"]; len(got) != 1 || got[0] != v1alpha1.OperationCloneFromSnapshot {
		t.Errorf("ontap-nas: FlexClone concerns %v, want the clone only (notes %v)", got, nas)
	}
	if _, ok := nas["SharedFlexVol"]; ok {
		t.Errorf("ontap-nas: an economy driver's note: %v", nas)
	}
	eco := reasons(notesOf(trident("ontap-nas-economy"), ops))
	if got := eco["SharedFlexVol"]; len(got) != 1 || got[0] != v1alpha1.OperationProvision {
		t.Errorf("ontap-nas-economy: SharedFlexVol concerns %v, want provision (notes %v)", got, eco)
	}
	if _, ok := eco["FlexClone"]; ok {
		t.Errorf("ontap-nas-economy: FlexClone, which it does not make: %v", eco)
	}
	if got := notesOf(trident("ontap-nas"), []v1alpha1.VolumeOperation{v1alpha1.OperationProvision}); len(reasons(got)["FlexClone"]) != 0 {
		t.Errorf("a clone's note on a run without clones: %+v", got)
	}
}
