package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestFromFlags(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		images, tolKeys, nsKeys string
		want                    Policy
	}{
		{name: "empty flags: the safe default", want: Policy{}},
		{
			name:    "lists",
			images:  "registry.example/runner:1,registry.example/runner:2",
			tolKeys: "dedicated, gpu",
			nsKeys:  ",pool,,",
			want: Policy{
				AllowedImages:           []string{"registry.example/runner:1", "registry.example/runner:2"},
				AllowedTolerationKeys:   []string{"dedicated", "gpu"},
				AllowedNodeSelectorKeys: []string{"pool"},
			},
		},
		{
			name:    "any key",
			tolKeys: "*",
			nsKeys:  "*",
			want:    Policy{AllowedTolerationKeys: []string{"*"}, AllowedNodeSelectorKeys: []string{"*"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromFlags(tc.images, tc.tolKeys, tc.nsKeys, "8Gi")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.AllowedImages, tc.want.AllowedImages) ||
				!slices.Equal(got.AllowedTolerationKeys, tc.want.AllowedTolerationKeys) ||
				!slices.Equal(got.AllowedNodeSelectorKeys, tc.want.AllowedNodeSelectorKeys) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestFromFlagsRefusesImageWildcards: "*" is no image reference; reading it
// as "any image" would open what the flag exists to close.
func TestFromFlagsRefusesImageWildcards(t *testing.T) {
	for _, images := range []string{"*", "registry.example/runner:1,registry.example/*"} {
		_, err := FromFlags(images, "", "", "8Gi")
		if err == nil || !strings.Contains(err.Error(), "--allowed-runner-images") {
			t.Errorf("%q: got %v, want an error naming --allowed-runner-images", images, err)
		}
	}
}

// TestFromFlagsMaxClientMemory: --max-client-memory is a positive quantity.
func TestFromFlagsMaxClientMemory(t *testing.T) {
	p, err := FromFlags("", "", "", "16Gi")
	if max := p.MaxMemory(); err != nil || max.String() != "16Gi" {
		t.Fatalf("16Gi: %v, %v", p.MaxClientMemory, err)
	}
	for _, bad := range []string{"", "lots", "0", "-1Gi"} {
		if _, err := FromFlags("", "", "", bad); err == nil || !strings.Contains(err.Error(), "--max-client-memory") {
			t.Errorf("%q: got %v, want an error naming --max-client-memory", bad, err)
		}
	}
}
