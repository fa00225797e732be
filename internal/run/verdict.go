package run

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// A condition status, as Kubernetes conditions spell it.
const (
	True    = "True"
	False   = "False"
	Unknown = "Unknown"
)

// Verdict is one judgement of a run, in the shape of the condition it
// becomes: the condition type, its status, reason and message, and the
// instant it was made. A verdict that depends on more than the run's own
// steps (the baseline a comparison read, the nodes the clients landed on)
// is recorded once, with the order that made it due, and projected from
// that record on every pass: the same record gives the same status,
// however the world changed since. Detail holds the verdict's own
// figures (a comparison's tests), for the fields of status it fills
// beside the condition.
type Verdict struct {
	Condition string          `json:"condition"`
	Status    string          `json:"status"`
	Reason    string          `json:"reason"`
	Message   string          `json:"message,omitempty"`
	At        time.Time       `json:"at"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

// reasonPattern is a condition reason as the API accepts it (CamelCase,
// at most maxReason bytes).
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

const maxReason = 64

// Valid says whether v can stand as a condition: a status of True, False
// or Unknown and a reason the API accepts. A record somebody else changed
// may hold anything; a verdict that is not valid is not shown.
func (v Verdict) Valid() bool {
	return (v.Status == True || v.Status == False || v.Status == Unknown) && len(v.Reason) <= maxReason && reasonPattern.MatchString(v.Reason)
}

// Judged is a verdict of condition, True or False by ok.
func Judged(condition string, ok bool, reason, message string, at time.Time) Verdict {
	status := False
	if ok {
		status = True
	}
	return Verdict{Condition: condition, Status: status, Reason: reason, Message: message, At: at}
}

// Verdicts are a run's recorded verdicts, at most one per condition.
type Verdicts []Verdict

// Find is the verdict recorded for condition.
func (vs Verdicts) Find(condition string) (Verdict, bool) {
	i := slices.IndexFunc(vs, func(v Verdict) bool { return v.Condition == condition })
	if i < 0 {
		return Verdict{}, false
	}
	return vs[i], true
}

// With is vs with v recorded: a verdict for the same condition is
// replaced, the others keep their order.
func (vs Verdicts) With(v Verdict) Verdicts {
	out := slices.Clone(vs)
	if i := slices.IndexFunc(out, func(x Verdict) bool { return x.Condition == v.Condition }); i >= 0 {
		out[i] = v
		return out
	}
	return append(out, v)
}

// verdictsVersion is the version of the recorded verdicts' JSON: once
// written, a verdict stands for good, so its encoding is versioned.
const verdictsVersion = 1

type verdictsDoc struct {
	Version  int      `json:"version"`
	Verdicts Verdicts `json:"verdicts"`
}

// Encode is the verdicts' record, at most limit bytes. A verdict whose
// detail does not fit is kept without it, the newest first, and its
// message says so: a verdict is never lost for its figures, and the run
// must end.
func (vs Verdicts) Encode(limit int) string {
	vs = slices.Clone(vs)
	for i := len(vs); ; i-- {
		doc, err := json.Marshal(verdictsDoc{Version: verdictsVersion, Verdicts: vs})
		if err == nil && len(doc) <= limit {
			return string(doc)
		}
		if i == 0 { // no detail left to drop: the bare verdicts, whatever their size
			return string(doc) // strings and times: Marshal cannot fail
		}
		v := &vs[i-1]
		if len(v.Detail) > 0 {
			v.Message += fmt.Sprintf(" (its detail, %d bytes, was not recorded: the verdicts may take %d bytes)", len(v.Detail), limit)
			v.Detail = nil
		}
	}
}

// DecodeVerdicts reads Encode's record. An empty record holds none.
func DecodeVerdicts(s string) (Verdicts, error) {
	if s == "" {
		return nil, nil
	}
	var doc verdictsDoc
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		return nil, err
	}
	if doc.Version != verdictsVersion {
		return nil, fmt.Errorf("verdicts of version %d, this manager reads version %d", doc.Version, verdictsVersion)
	}
	return doc.Verdicts, nil
}
