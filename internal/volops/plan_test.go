package volops

import (
	"errors"
	"strings"
	"testing"
)

func TestPlanObjects(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan Plan
		want int
	}{
		{"nothing", Plan{}, 0},
		{"provision", Plan{Operations: []Operation{Provision}, Concurrency: []int{1, 5, 10}}, 10},
		{"attach: a claim and a pod each", Plan{Operations: []Operation{Attach}, Concurrency: []int{10}}, 20},
		{"snapshot: a claim of its own per snapshot", Plan{Operations: []Operation{Snapshot}, Concurrency: []int{10}}, 20},
		{"clone from a snapshot: a source claim and a snapshot per step", Plan{Operations: []Operation{CloneFromSnapshot}, Concurrency: []int{10}}, 12},
		{"clone from a volume: one source claim per step", Plan{Operations: []Operation{CloneFromVolume}, Concurrency: []int{10}}, 11},
		{"expand", Plan{Operations: []Operation{Expand}, Concurrency: []int{10}}, 10},
		{"delete", Plan{Operations: []Operation{Delete}, Concurrency: []int{10}}, 10},
		{
			// At 50, one operation at a time: the most of 50, 100, 51,
			// 52, 51, 50 and 50.
			"every operation, the largest operation step counts",
			Plan{Operations: Operations(), Concurrency: []int{1, 5, 10, 25, 50}},
			100,
		},
		{"unknown operations count nothing", Plan{Operations: []Operation{"resize", Provision}, Concurrency: []int{3}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.Objects(); got != tc.want {
				t.Errorf("Objects() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPlanValidate(t *testing.T) {
	all := []int{1, 5, 10, 25, 50}
	for _, tc := range []struct {
		name string
		plan Plan
		is   error
		msg  string
	}{
		{"valid", Plan{Operations: Operations(), Concurrency: all, MaxObjects: 100}, nil, ""},
		{"no bound", Plan{Operations: Operations(), Concurrency: all}, nil, ""},
		{
			// No dependency between operations: a clone brings its own
			// snapshot.
			"clone from a snapshot alone", Plan{Operations: []Operation{CloneFromSnapshot}, Concurrency: []int{1}}, nil, "",
		},
		{"no operations", Plan{Concurrency: all}, ErrNoOperations, "no operations: choose at least one of provision, attach,"},
		{"unknown operation", Plan{Operations: []Operation{Provision, "resize"}, Concurrency: all}, ErrUnknownOperation,
			`operations[1]: unknown operation "resize"`},
		{"duplicate operation", Plan{Operations: []Operation{Provision, Attach, Provision}, Concurrency: all}, ErrDuplicateOperation,
			"operations[2]: duplicate operation: provision is also operations[0]"},
		{"no steps", Plan{Operations: []Operation{Provision}}, ErrNoSteps, "no concurrency steps"},
		{"zero concurrency", Plan{Operations: []Operation{Provision}, Concurrency: []int{0, 5}}, ErrInvalidConcurrency,
			"concurrency[0]: invalid concurrency: 0, must be 1 to 100"},
		{"repeated step", Plan{Operations: []Operation{Provision}, Concurrency: []int{1, 5, 5}}, ErrConcurrencyOrder,
			"concurrency[2]: concurrency steps not strictly ascending: 5 follows 5"},
		{"descending steps", Plan{Operations: []Operation{Provision}, Concurrency: []int{10, 5}}, ErrConcurrencyOrder, "5 follows 10"},
		{"a step over the bound", Plan{Operations: []Operation{Provision}, Concurrency: []int{1, 101}}, ErrInvalidConcurrency,
			"concurrency[1]: invalid concurrency: 101, must be 1 to 100"},
		{"too many steps", Plan{Operations: []Operation{Provision}, Concurrency: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, ErrInvalidConcurrency,
			"invalid concurrency: 11 steps, at most 10"},
		{"negative bound", Plan{Operations: []Operation{Provision}, Concurrency: all, MaxObjects: -1}, ErrInvalidThreshold,
			"MaxObjects must be 0 (no bound) or positive, got -1"},
		{"over the bound", Plan{Operations: Operations(), Concurrency: all, MaxObjects: 99}, ErrTooManyObjects,
			"too many objects: the largest operation step keeps 100 objects alive at once, more than the 99 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.plan.Validate()
			if tc.is == nil {
				if err != nil {
					t.Errorf("Validate() = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Validate() = %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
}
