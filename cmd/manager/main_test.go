package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/storagebench/storagebench/internal/policy"
)

func TestPolicyOf(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		images, tolKeys, nsKeys string
		want                    policy.Policy
	}{
		{name: "empty flags: the safe default", want: policy.Policy{}},
		{
			name:    "lists",
			images:  "registry.example/runner:1,registry.example/runner:2",
			tolKeys: "dedicated, gpu",
			nsKeys:  ",pool,,",
			want: policy.Policy{
				AllowedImages:           []string{"registry.example/runner:1", "registry.example/runner:2"},
				AllowedTolerationKeys:   []string{"dedicated", "gpu"},
				AllowedNodeSelectorKeys: []string{"pool"},
			},
		},
		{
			name:    "any key",
			tolKeys: "*",
			nsKeys:  "*",
			want:    policy.Policy{AllowedTolerationKeys: []string{"*"}, AllowedNodeSelectorKeys: []string{"*"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policyOf(tc.images, tc.tolKeys, tc.nsKeys, "8Gi")
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

// TestPolicyOfRefusesImageWildcards: "*" is no image reference; reading it
// as "any image" would open what the flag exists to close.
func TestPolicyOfRefusesImageWildcards(t *testing.T) {
	for _, images := range []string{"*", "registry.example/runner:1,registry.example/*"} {
		_, err := policyOf(images, "", "", "8Gi")
		if err == nil || !strings.Contains(err.Error(), "--allowed-runner-images") {
			t.Errorf("%q: got %v, want an error naming --allowed-runner-images", images, err)
		}
	}
}

// TestPolicyOfMaxClientMemory: --max-client-memory is a positive quantity.
func TestPolicyOfMaxClientMemory(t *testing.T) {
	p, err := policyOf("", "", "", "16Gi")
	if max := p.MaxMemory(); err != nil || max.String() != "16Gi" {
		t.Fatalf("16Gi: %v, %v", p.MaxClientMemory, err)
	}
	for _, bad := range []string{"", "lots", "0", "-1Gi"} {
		if _, err := policyOf("", "", "", bad); err == nil || !strings.Contains(err.Error(), "--max-client-memory") {
			t.Errorf("%q: got %v, want an error naming --max-client-memory", bad, err)
		}
	}
}
