package volops

import (
	"fmt"
	"strings"
)

// Operation is one timed volume operation. The transitions each one times
// are in the package documentation.
type Operation string

// The operations, in the order Operations returns them.
const (
	Provision         Operation = "provision"
	Attach            Operation = "attach"
	Snapshot          Operation = "snapshot"
	CloneFromSnapshot Operation = "cloneFromSnapshot"
	CloneFromVolume   Operation = "cloneFromVolume"
	Expand            Operation = "expand"
	Delete            Operation = "delete"
)

// objectCount is what one operation of a step keeps alive: perObject
// objects for each timed object, plus shared source objects made once per
// step and not timed.
type objectCount struct {
	perObject, shared int
}

// operations is the one table of operations: their order, and the objects
// each one creates (see Plan.Objects).
var operations = []struct {
	op Operation
	objectCount
}{
	{Provision, objectCount{perObject: 1}},                    // the claim
	{Attach, objectCount{perObject: 2}},                       // the claim and its client pod
	{Snapshot, objectCount{perObject: 2}},                     // the snapshot and the claim it is of
	{CloneFromSnapshot, objectCount{perObject: 1, shared: 2}}, // the clone; one source claim and one snapshot per step
	{CloneFromVolume, objectCount{perObject: 1, shared: 1}},   // the clone; one source claim per step
	{Expand, objectCount{perObject: 1}},                       // the claim
	{Delete, objectCount{perObject: 1}},                       // the claim
}

// Operations returns every operation in the fixed order: provision, attach,
// snapshot, cloneFromSnapshot, cloneFromVolume, expand, delete.
func Operations() []Operation {
	ops := make([]Operation, len(operations))
	for i, o := range operations {
		ops[i] = o.op
	}
	return ops
}

// ParseOperation returns the operation named s (names are case-sensitive),
// or an error naming s and the allowed names.
func ParseOperation(s string) (Operation, error) {
	if _, ok := lookup(Operation(s)); ok {
		return Operation(s), nil
	}
	return "", fmt.Errorf("%w %q: must be one of %s", ErrUnknownOperation, s, allowed())
}

// order is op's position in Operations, or -1 when op is unknown.
func (op Operation) order() int {
	for i, o := range operations {
		if o.op == op {
			return i
		}
	}
	return -1
}

func lookup(op Operation) (objectCount, bool) {
	if i := op.order(); i >= 0 {
		return operations[i].objectCount, true
	}
	return objectCount{}, false
}

func allowed() string {
	names := make([]string, len(operations))
	for i, o := range operations {
		names[i] = string(o.op)
	}
	return strings.Join(names, ", ")
}
