package workload

import (
	"strconv"
	"strings"
)

// Resolve returns the spec of the named profile (or BaseSpec if profile is
// empty) with the overrides applied, after validating it. An unknown profile
// is reported as a *FieldError on "workload.profile" listing the allowed
// names; an invalid result as the first *FieldError Validate finds.
func Resolve(profile string, o Overrides) (Spec, error) {
	s := BaseSpec()
	if profile != "" {
		p, ok := Lookup(profile)
		if !ok {
			return Spec{}, fieldErr("workload.profile", strconv.Quote(profile),
				"must be one of "+strings.Join(ProfileNames(), ", "))
		}
		s = p.Spec
	}
	s = o.Apply(s)
	if err := Validate(s); err != nil {
		return Spec{}, err
	}
	return s, nil
}
