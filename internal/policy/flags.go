package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// List splits a comma-separated flag value; spaces also separate. It is
// how the manager reads its list flags.
func List(s string) []string {
	return strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' })
}

// FromFlags is the Policy of the manager's flags FlagImages,
// FlagTolerationKeys, FlagNodeSelectorKeys and FlagMaxClientMemory, as
// given on its command line: the manager reads its policy so, and
// `kubectl storagebench plan` the same flags, to judge a benchmark as
// the manager would. Images are exact references: a "*" among them is
// refused rather than read as "any".
func FromFlags(images, tolerationKeys, nodeSelectorKeys, maxMemory string) (Policy, error) {
	p := Policy{AllowedImages: List(images), AllowedTolerationKeys: List(tolerationKeys), AllowedNodeSelectorKeys: List(nodeSelectorKeys)}
	q, err := resource.ParseQuantity(maxMemory)
	if err != nil || q.Sign() <= 0 {
		return Policy{}, fmt.Errorf("%s: %q is not a positive quantity of bytes, such as 8Gi", FlagMaxClientMemory, maxMemory)
	}
	p.MaxClientMemory = &q
	for _, img := range p.AllowedImages {
		if strings.Contains(img, Any) {
			return Policy{}, fmt.Errorf("%s: %q: list exact image references; wildcards are not supported", FlagImages, img)
		}
	}
	return p, nil
}
