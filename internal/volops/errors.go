package volops

import "errors"

// The errors Summarize, ValidateObjective and Plan.Validate wrap, for
// errors.Is; the messages around them name the value that is wrong.
var (
	ErrUnknownOperation   = errors.New("unknown operation")
	ErrUnknownOutcome     = errors.New("unknown outcome")
	ErrInvalidConcurrency = errors.New("invalid concurrency")
	ErrInvalidIndex       = errors.New("index out of range")
	ErrEndBeforeStart     = errors.New("end before start")
	ErrDuplicateIndex     = errors.New("duplicate index")
	ErrStepCount          = errors.New("step sample count differs from its concurrency")
	ErrUnknownPercentile  = errors.New("unknown percentile")
	ErrInvalidThreshold   = errors.New("invalid threshold")
	ErrNoOperations       = errors.New("no operations")
	ErrDuplicateOperation = errors.New("duplicate operation")
	ErrNoSteps            = errors.New("no concurrency steps")
	ErrConcurrencyOrder   = errors.New("concurrency steps not strictly ascending")
	ErrTooManyObjects     = errors.New("too many objects")
)
