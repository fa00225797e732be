package trident

import (
	"slices"
	"strings"
	"testing"
)

// reasonsByOp turns notes into operation → reasons, in note order.
func reasonsByOp(notes []Note) map[string][]string {
	m := map[string][]string{}
	for _, n := range notes {
		for _, op := range n.Operations {
			m[op] = append(m[op], n.Reason)
		}
	}
	return m
}

func TestOperationNotesByDriverAndOperation(t *testing.T) {
	controller := []string{ReasonSerialController, ReasonSidecarQueue}
	with := func(extra ...string) []string { return append(slices.Clone(controller), extra...) }
	for _, tc := range []struct {
		driver Driver
		// want is each operation's reasons, in order; every operation is
		// asked for.
		want map[string][]string
	}{
		{OntapNAS, map[string][]string{
			OpProvision: controller, OpAttach: controller, OpSnapshot: controller,
			OpCloneFromSnapshot: with(ReasonFlexClone), OpCloneFromVolume: with(ReasonFlexClone),
			OpExpand: controller, OpDelete: controller,
		}},
		{OntapSAN, map[string][]string{
			OpProvision: controller, OpAttach: controller, OpSnapshot: controller,
			OpCloneFromSnapshot: with(ReasonFlexClone), OpCloneFromVolume: with(ReasonFlexClone),
			OpExpand: controller, OpDelete: controller,
		}},
		{OntapNASEconomy, map[string][]string{
			OpProvision:         with(ReasonSharedFlexVol),
			OpAttach:            controller,
			OpSnapshot:          with(ReasonSnapshotOfSharedFlexVol),
			OpCloneFromSnapshot: with(ReasonSnapshotOfSharedFlexVol, ReasonCloneUnsupported),
			OpCloneFromVolume:   with(ReasonCloneUnsupported),
			OpExpand:            with(ReasonQuotaResizeDeferred),
			OpDelete:            with(ReasonQtreeDeleteInBackground),
		}},
		{OntapSANEconomy, map[string][]string{
			OpProvision:         with(ReasonSharedFlexVol, ReasonFlexVolDeletedWithLastLUN),
			OpAttach:            controller,
			OpSnapshot:          with(ReasonLUNClone),
			OpCloneFromSnapshot: with(ReasonLUNClone),
			OpCloneFromVolume:   with(ReasonLUNClone),
			OpExpand:            controller,
			OpDelete:            with(ReasonFlexVolDeletedWithLastLUN),
		}},
		{OntapNASFlexGroup, map[string][]string{
			OpProvision: with(ReasonOneFlexGroupAtATime), OpAttach: controller, OpSnapshot: controller,
			OpCloneFromSnapshot: controller, OpCloneFromVolume: controller, OpExpand: controller, OpDelete: controller,
		}},
		{GCNV, map[string][]string{
			OpProvision:         with(ReasonServiceVolumeCreate, ReasonMinimumSize),
			OpAttach:            with(ReasonMinimumSize),
			OpSnapshot:          controller,
			OpCloneFromSnapshot: with(ReasonServiceVolumeCreate, ReasonCloneIsNewVolume, ReasonMinimumSize, ReasonRestoreSize),
			OpCloneFromVolume:   with(ReasonServiceVolumeCreate, ReasonCloneIsNewVolume, ReasonMinimumSize),
			OpExpand:            with(ReasonMinimumSize),
			OpDelete:            with(ReasonMinimumSize),
		}},
		{GCNVSAN, map[string][]string{
			OpProvision:         with(ReasonServiceVolumeCreate, ReasonMinimumSize),
			OpAttach:            with(ReasonMinimumSize),
			OpSnapshot:          controller,
			OpCloneFromSnapshot: with(ReasonServiceVolumeCreate, ReasonCloneIsNewVolume, ReasonMinimumSize, ReasonRestoreSize),
			OpCloneFromVolume:   with(ReasonServiceVolumeCreate, ReasonCloneIsNewVolume, ReasonMinimumSize),
			OpExpand:            with(ReasonMinimumSize),
			OpDelete:            with(ReasonMinimumSize),
		}},
		{AzureNetAppFiles, map[string][]string{
			OpProvision: controller, OpAttach: controller, OpSnapshot: controller, OpCloneFromSnapshot: controller,
			OpCloneFromVolume: controller, OpExpand: controller, OpDelete: controller,
		}},
		{SolidFireSAN, map[string][]string{
			OpProvision: controller, OpAttach: controller, OpSnapshot: controller, OpCloneFromSnapshot: controller,
			OpCloneFromVolume: controller, OpExpand: controller, OpDelete: controller,
		}},
	} {
		t.Run(string(tc.driver), func(t *testing.T) {
			params := map[string]string{"backendType": string(tc.driver)}
			// All operations at once.
			got := reasonsByOp(OperationNotes(Provisioner, params, allOps))
			for _, op := range allOps {
				if !slices.Equal(got[op], tc.want[op]) {
					t.Errorf("%s: reasons %v, want %v", op, got[op], tc.want[op])
				}
			}
			// Each operation alone: the same reasons, and every note
			// concerns exactly that operation.
			for _, op := range allOps {
				notes := OperationNotes(Provisioner, params, []string{op})
				var reasons []string
				for _, n := range notes {
					reasons = append(reasons, n.Reason)
					if !slices.Equal(n.Operations, []string{op}) {
						t.Errorf("%s alone: note %s concerns %v", op, n.Reason, n.Operations)
					}
				}
				if !slices.Equal(reasons, tc.want[op]) {
					t.Errorf("%s alone: reasons %v, want %v", op, reasons, tc.want[op])
				}
			}
		})
	}
}

func TestOperationNotesNone(t *testing.T) {
	for _, tc := range []struct {
		name        string
		provisioner string
		params      map[string]string
		ops         []string
	}{
		{"not Trident", "ebs.csi.aws.com", map[string]string{"type": "gp3"}, allOps},
		{"not Trident though it names an ONTAP driver", "example.com/csi", map[string]string{"backendType": "ontap-nas-economy"}, allOps},
		{"Trident, no driver yet", Provisioner, map[string]string{"selector": "performance=premium"}, allOps},
		{"Trident, nil parameters", Provisioner, nil, allOps},
		{"Trident, unknown driver", Provisioner, map[string]string{"backendType": "ontap-nas-fancy"}, allOps},
		{"no operations", Provisioner, map[string]string{"backendType": "ontap-nas"}, nil},
		{"operations the notes do not know", Provisioner, map[string]string{"backendType": "ontap-nas"}, []string{"resize", "Provision"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if notes := OperationNotes(tc.provisioner, tc.params, tc.ops); len(notes) != 0 {
				t.Errorf("got %d notes, want none: %+v", len(notes), notes)
			}
		})
	}
}

func TestOperationNotesOnlyConcernedOperations(t *testing.T) {
	params := map[string]string{"backendType": "ontap-nas"}
	notes := OperationNotes(Provisioner, params, []string{OpDelete, OpCloneFromVolume, OpProvision, OpDelete})
	want := []Note{
		{Reason: ReasonSerialController, Operations: []string{OpDelete, OpCloneFromVolume, OpProvision}},
		{Reason: ReasonSidecarQueue, Operations: []string{OpDelete, OpCloneFromVolume, OpProvision}},
		// FlexClone names only the clone operation asked for, not
		// cloneFromSnapshot.
		{Reason: ReasonFlexClone, Operations: []string{OpCloneFromVolume}},
	}
	if len(notes) != len(want) {
		t.Fatalf("got %d notes %+v, want %d", len(notes), notes, len(want))
	}
	for i, w := range want {
		if notes[i].Reason != w.Reason || !slices.Equal(notes[i].Operations, w.Operations) {
			t.Errorf("note %d: %s %v, want %s %v", i, notes[i].Reason, notes[i].Operations, w.Reason, w.Operations)
		}
	}
}

func TestOperationNotesDriverSpelling(t *testing.T) {
	// The driver is read as DriverOf reads it: storageDriverName, Trident's
	// prefix, any case.
	for _, params := range []map[string]string{
		{"storageDriverName": "ontap-san-economy"},
		{"trident.netapp.io/backendType": "ONTAP-SAN-ECONOMY"},
		{"backendType": " ontap-san-economy "},
	} {
		notes := OperationNotes(Provisioner, params, []string{OpSnapshot})
		if got := reasonsByOp(notes)[OpSnapshot]; !slices.Contains(got, ReasonLUNClone) {
			t.Errorf("%v: reasons %v, want %s", params, got, ReasonLUNClone)
		}
	}
}

func TestOperationNotesMessages(t *testing.T) {
	for _, tc := range []struct {
		driver Driver
		op     string
		reason string
		wantIn []string
		notIn  []string
	}{
		{OntapNAS, OpProvision, ReasonSerialController,
			[]string{"one at a time", "enableConcurrency", "off by default)", "perOperation"}, []string{"does not start"}},
		{OntapNASFlexGroup, OpProvision, ReasonSerialController,
			[]string{"enableConcurrency", "does not start with it while any ontap-nas-flexgroup backend exists"}, nil},
		{GCNVSAN, OpDelete, ReasonSerialController,
			[]string{"while any google-cloud-netapp-volumes-san backend exists"}, nil},
		{SolidFireSAN, OpAttach, ReasonSidecarQueue, []string{"25 requests", "10 s", "5 min"}, nil},
		{OntapNASEconomy, OpProvision, ReasonSharedFlexVol,
			[]string{"ontap-nas-economy", "qtree", "qtreesPerFlexvol", "default 200", "new FlexVol"}, []string{"LUN"}},
		{OntapSANEconomy, OpProvision, ReasonSharedFlexVol,
			[]string{"ontap-san-economy", "LUN", "lunsPerFlexvol", "default 100"}, []string{"qtree"}},
		{OntapNASEconomy, OpSnapshot, ReasonSnapshotOfSharedFlexVol,
			[]string{"Trident driver ontap-nas-economy is not among the snapshot drivers", "whole shared FlexVol", "snapshotDir", "never becomes ready"}, nil},
		{OntapNASEconomy, OpCloneFromVolume, ReasonCloneUnsupported,
			[]string{"read-only clones", "trident.netapp.io/readOnlyClone", "Pending"}, nil},
		{OntapNASEconomy, OpDelete, ReasonQtreeDeleteInBackground, []string{"renaming", "background", "kept"}, nil},
		{OntapNASEconomy, OpExpand, ReasonQuotaResizeDeferred, []string{"quota", "every minute"}, nil},
		{OntapSANEconomy, OpDelete, ReasonFlexVolDeletedWithLastLUN, []string{"last LUN"}, nil},
		{OntapSANEconomy, OpCloneFromSnapshot, ReasonLUNClone, []string{"LUN clone", "one at a time"}, nil},
		{OntapSAN, OpCloneFromSnapshot, ReasonFlexClone,
			[]string{"ontap-san", "FlexClone", "splitOnClone", "background"}, nil},
		{OntapNASFlexGroup, OpProvision, ReasonOneFlexGroupAtATime,
			[]string{"Trident driver ontap-nas-flexgroup:", "one FlexGroup at a time"}, nil},
		{GCNV, OpProvision, ReasonServiceVolumeCreate, []string{"10 s", "20 s", "back-off"}, nil},
		{GCNV, OpCloneFromVolume, ReasonCloneIsNewVolume, []string{"new Google Cloud NetApp Volumes volume", "source's size"}, nil},
		{GCNV, OpExpand, ReasonMinimumSize, []string{"100 GiB", "Flex: 1 GiB", "expandTo"}, nil},
		{GCNVSAN, OpExpand, ReasonMinimumSize, []string{"plus 1 GiB", "expandTo"}, []string{"100 GiB"}},
		{GCNV, OpCloneFromSnapshot, ReasonRestoreSize, []string{"restoreSize", "below 100 GiB"}, nil},
		{GCNVSAN, OpCloneFromSnapshot, ReasonRestoreSize, []string{"restoreSize", "1 GiB or more", "storage.size"}, nil},
	} {
		t.Run(string(tc.driver)+"/"+tc.reason, func(t *testing.T) {
			notes := OperationNotes(Provisioner, map[string]string{"backendType": string(tc.driver)}, []string{tc.op})
			var msg string
			for _, n := range notes {
				if n.Reason == tc.reason {
					msg = n.Message
				}
			}
			if msg == "" {
				t.Fatalf("no %s note among %+v", tc.reason, notes)
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			for _, s := range tc.notIn {
				if strings.Contains(msg, s) {
					t.Errorf("message %q has %q", msg, s)
				}
			}
		})
	}
}

// Every message is one well-formed sentence for every driver it is given
// for: no formatting residue, no stray period inside.
func TestOperationNotesMessagesWellFormed(t *testing.T) {
	for _, d := range knownDrivers() {
		if !d.Known() {
			t.Errorf("knownDrivers lists %s, which Known denies", d)
		}
		for _, n := range OperationNotes(Provisioner, map[string]string{"backendType": string(d)}, allOps) {
			if strings.Contains(n.Message, "%") || strings.Contains(n.Message, "!(") {
				t.Errorf("%s %s: formatting residue in %q", d, n.Reason, n.Message)
			}
			if strings.Contains(n.Message, ". ") || strings.HasSuffix(n.Message, ".") {
				t.Errorf("%s %s: not one sentence without a final period: %q", d, n.Reason, n.Message)
			}
			if n.Reason == "" || len(n.Operations) == 0 {
				t.Errorf("%s: empty note %+v", d, n)
			}
		}
	}
	// knownDrivers covers the drivers table.
	for d := range drivers {
		if !slices.Contains(knownDrivers(), d) {
			t.Errorf("driver %s is known but not in knownDrivers", d)
		}
	}
}
