package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/trident"
)

func TestGroupMountsGroupsClients(t *testing.T) {
	nfs := &protocol.Mount{FSType: "nfs4", Options: "rw,vers=4.1,nconnect=4"}
	other := &protocol.Mount{FSType: "nfs", Options: "rw,vers=3"}
	got := groupMounts([]protocol.Ready{{Mount: nfs}, {Mount: nfs}, {Mount: other},
		{}, // a raw block client reports no mount
	})
	want := []v1alpha1.ObservedMount{{FSType: "nfs4", Options: "rw,vers=4.1,nconnect=4", Clients: 2}, {FSType: "nfs", Options: "rw,vers=3", Clients: 1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("groupMounts = %+v, want %+v", got, want)
	}
}

func TestGroupMountsKeepsAtMostFourAndBoundsText(t *testing.T) {
	var reports []protocol.Ready
	for _, o := range []string{"a", "b", strings.Repeat("c", 4096), "d", "e", "a"} {
		reports = append(reports, protocol.Ready{Mount: &protocol.Mount{FSType: "ext4", Options: o}})
	}
	got := groupMounts(reports)
	if len(got) != 4 || got[0].Clients != 2 {
		t.Fatalf("groupMounts = %+v, want 4 mounts, the first seen twice", got)
	}
	if len(got[2].Options) > 512 {
		t.Fatalf("a client's mount options reached status whole: %d bytes", len(got[2].Options))
	}
}

func TestEntitlementPercentsAndSaturationNote(t *testing.T) {
	e := trident.EntitlementOf(trident.ServiceLevelPremium, 100<<30) // 6.25 MiB/s
	b := &v1alpha1.StorageBenchmark{Status: v1alpha1.StorageBenchmarkStatus{
		Storage: &v1alpha1.StorageStatus{Entitlement: &v1alpha1.EntitlementStatus{ServiceLevel: string(e.ServiceLevel), ThroughputBytesPerSecond: e.ThroughputBytesPerSecond}},
		Steps: []v1alpha1.StepStatus{
			{Index: 0, AchievedBytesPerSecond: 2 << 20},
			{Index: 1, AchievedBytesPerSecond: 6 << 20, Saturated: true},
		},
	}}
	entitlementPercents(b)
	if p := b.Status.Steps[0].EntitlementPercent; p != 32 {
		t.Errorf("step 0 at %d %%, want 32", p)
	}
	if p := b.Status.Steps[1].EntitlementPercent; p != 96 {
		t.Errorf("step 1 at %d %%, want 96", p)
	}
	got := b.Status.Storage.Entitlement
	if got.PeakPercent != 96 || got.SaturationNote != "step 2 saturated at 96 % of the volume's 6.25 MiB/s entitlement" {
		t.Errorf("entitlement = %+v", got)
	}
	// Without an entitlement nothing is set.
	b2 := &v1alpha1.StorageBenchmark{Status: v1alpha1.StorageBenchmarkStatus{Storage: &v1alpha1.StorageStatus{},
		Steps: []v1alpha1.StepStatus{{AchievedBytesPerSecond: 1 << 20}}}}
	entitlementPercents(b2)
	if b2.Status.Steps[0].EntitlementPercent != 0 {
		t.Error("a step got an entitlement percentage without an entitlement")
	}
}

func TestStorageWarningCondition(t *testing.T) {
	b := &v1alpha1.StorageBenchmark{}
	setStorageWarning(b, []trident.Finding{{Reason: "SharedFlexVol", Message: "economy"}, {Reason: "NoReadWriteMany", Message: "rwo"}})
	c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionStorageWarning)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "SharedFlexVolAndNoReadWriteMany" || !strings.Contains(c.Message, "economy; rwo") {
		t.Fatalf("condition = %+v", c)
	}
	setStorageWarning(b, nil)
	if meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionStorageWarning) != nil {
		t.Fatal("the warning stayed without findings")
	}
}

func TestPinnedNode(t *testing.T) {
	term := func(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: exprs}
	}
	host := func(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: op, Values: values}
	}
	for _, tc := range []struct {
		name  string
		terms []corev1.NodeSelectorTerm
		want  string
	}{
		{"a local volume's one node", []corev1.NodeSelectorTerm{term(host(corev1.NodeSelectorOpIn, "worker-2"))}, "worker-2"},
		{"no affinity", nil, ""},
		{"two nodes", []corev1.NodeSelectorTerm{term(host(corev1.NodeSelectorOpIn, "a", "b"))}, ""},
		{"alternative terms", []corev1.NodeSelectorTerm{term(host(corev1.NodeSelectorOpIn, "a")), term(host(corev1.NodeSelectorOpIn, "b"))}, ""},
		{"every node but one", []corev1.NodeSelectorTerm{term(host(corev1.NodeSelectorOpNotIn, "a"))}, ""},
		{"a zone, not a node", []corev1.NodeSelectorTerm{term(corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}})}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv := &corev1.PersistentVolume{}
			if tc.terms != nil {
				pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: tc.terms}}
			}
			if got := pinnedNode(pv); got != tc.want {
				t.Errorf("pinnedNode() = %q, want %q", got, tc.want)
			}
		})
	}
}
