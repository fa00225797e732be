package volops

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestOperations(t *testing.T) {
	want := []Operation{Provision, Attach, Snapshot, CloneFromSnapshot, CloneFromVolume, Expand, Delete}
	if got := Operations(); !slices.Equal(got, want) {
		t.Errorf("Operations() = %v, want %v", got, want)
	}
	// The caller's copy is its own.
	Operations()[0] = "changed"
	if Operations()[0] != Provision {
		t.Error("Operations() shares its slice")
	}
}

func TestParseOperation(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Operation
		wantErr string
	}{
		{"provision", Provision, ""},
		{"attach", Attach, ""},
		{"snapshot", Snapshot, ""},
		{"cloneFromSnapshot", CloneFromSnapshot, ""},
		{"cloneFromVolume", CloneFromVolume, ""},
		{"expand", Expand, ""},
		{"delete", Delete, ""},
		{"Provision", "", `unknown operation "Provision": must be one of provision, attach, snapshot, cloneFromSnapshot, cloneFromVolume, expand, delete`},
		{"", "", `unknown operation ""`},
		{"resize", "", `"resize"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseOperation(tc.in)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Errorf("ParseOperation(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrUnknownOperation) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseOperation(%q) error = %v, want ErrUnknownOperation containing %q", tc.in, err, tc.wantErr)
			}
		})
	}
}
