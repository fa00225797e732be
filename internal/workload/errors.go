package workload

import "fmt"

// FieldError reports one spec field whose value is not allowed. It is shared
// by the packages that validate benchmark specs so that every message has the
// same shape:
//
//	workload.blockSizeBytes: 3000 is not allowed: must be a power of two between 512 B and 16 MiB
type FieldError struct {
	// Field is the JSON-style path of the field, e.g. "workload.blockSizeBytes"
	// or "load.rate.steps[2]".
	Field string
	// Value is the rejected value as the user would write it (strings quoted).
	Value string
	// Allowed says what the field must be, starting with "must", and why when
	// the reason is not obvious.
	Allowed string
}

// Error implements error.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s is not allowed: %s", e.Field, e.Value, e.Allowed)
}

func fieldErr(field, value, allowed string) *FieldError {
	return &FieldError{Field: field, Value: value, Allowed: allowed}
}
