package volops

import "fmt"

// Plan is what a volume-operations benchmark will run, as the spec checks
// need it: the operations, the concurrency of each step, and the most
// objects the benchmark may keep alive at once.
type Plan struct {
	Operations  []Operation
	Concurrency []int
	// MaxObjects bounds Objects; 0 means no bound.
	MaxObjects int
}

// MaxConcurrency and MaxSteps bound a plan's steps: the API repeats them
// (+kubebuilder markers on VolumeOperationsBenchmarkSpec.Concurrency), and
// a test proves the two agree.
const (
	MaxConcurrency = 100
	MaxSteps       = 10
)

// Validate checks p and returns the first violated rule: at least one
// operation, each known and listed once; 1 to MaxSteps steps, each 1 to
// MaxConcurrency, strictly ascending; MaxObjects ≥ 0 and, when positive,
// Objects() ≤ MaxObjects. There is no rule between operations: each brings its own
// source objects.
func (p Plan) Validate() error {
	if len(p.Operations) == 0 {
		return fmt.Errorf("%w: choose at least one of %s", ErrNoOperations, allowed())
	}
	for i, op := range p.Operations {
		if _, err := ParseOperation(string(op)); err != nil {
			return fmt.Errorf("operations[%d]: %w", i, err)
		}
		for j, prev := range p.Operations[:i] {
			if prev == op {
				return fmt.Errorf("operations[%d]: %w: %s is also operations[%d]", i, ErrDuplicateOperation, op, j)
			}
		}
	}
	if len(p.Concurrency) == 0 {
		return fmt.Errorf("%w: give at least one concurrency", ErrNoSteps)
	}
	if len(p.Concurrency) > MaxSteps {
		return fmt.Errorf("%w: %d steps, at most %d", ErrInvalidConcurrency, len(p.Concurrency), MaxSteps)
	}
	for i, c := range p.Concurrency {
		if c < 1 || c > MaxConcurrency {
			return fmt.Errorf("concurrency[%d]: %w: %d, must be 1 to %d", i, ErrInvalidConcurrency, c, MaxConcurrency)
		}
		if i > 0 && c <= p.Concurrency[i-1] {
			return fmt.Errorf("concurrency[%d]: %w: %d follows %d", i, ErrConcurrencyOrder, c, p.Concurrency[i-1])
		}
	}
	if p.MaxObjects < 0 {
		return fmt.Errorf("%w: MaxObjects must be 0 (no bound) or positive, got %d", ErrInvalidThreshold, p.MaxObjects)
	}
	if n := p.Objects(); p.MaxObjects > 0 && n > p.MaxObjects {
		return fmt.Errorf("%w: the largest operation step keeps %d objects alive at once, more than the %d allowed", ErrTooManyObjects, n, p.MaxObjects)
	}
	return nil
}

// Objects is the most objects the plan keeps alive at once when its
// operations run one after another, in each step in turn, and each one's
// objects are deleted before the next starts: over the steps and
// operations, the largest concurrency × the objects per timed object plus
// the shared source objects (the table in the package documentation).
// Unknown operations count 0.
func (p Plan) Objects() int {
	most := 0
	for _, c := range p.Concurrency {
		for _, op := range p.Operations {
			oc, _ := lookup(op)
			most = max(most, c*oc.perObject+oc.shared)
		}
	}
	return most
}
