package trident

import (
	"fmt"
	"regexp"
	"strings"
)

// A Requirement is one term of a Trident StorageClass selector: a pool's
// label Key compared by Op with Values.
type Requirement struct {
	Key    string
	Op     SelectorOp
	Values []string
}

// SelectorOp is how a Requirement compares a pool's label.
type SelectorOp string

// The operators of Trident's selectors ("Kubernetes and Trident objects",
// storage class attribute selector).
const (
	OpEquals    SelectorOp = "="     // key=value (key==value too)
	OpNotEquals SelectorOp = "!="    // key!=value
	OpIn        SelectorOp = "in"    // key in (v1, v2)
	OpNotIn     SelectorOp = "notin" // key notin (v1, v2)
	OpExists    SelectorOp = "exists"
	OpNotExists SelectorOp = "!exists" // !key
)

// The forms of a selector's terms, as Trident reads them: label keys and
// values are words: letters, digits, "_" and "-", as Trident takes them,
// and "." too (a selector Trident would refuse for it only loses its
// service level here, and is matched by no pool Trident would choose); a
// set is a parenthesised, comma-separated list.
var (
	word        = `[A-Za-z0-9_.-]+`
	termEquals  = regexp.MustCompile(`^(` + word + `)\s*==?\s*(` + word + `)$`)
	termNot     = regexp.MustCompile(`^(` + word + `)\s*!=\s*(` + word + `)$`)
	termSet     = regexp.MustCompile(`^(` + word + `)\s+(in|notin)\s+\(([\s\w.,-]+)\)$`)
	termExists  = regexp.MustCompile(`^(!?)(` + word + `)$`)
	errSelector = fmt.Errorf("invalid Trident selector")
)

// ParseSelector reads a Trident StorageClass selector: terms separated by
// ";", each "key=value" (or "=="), "key!=value", "key in (v1, v2)", "key
// notin (v1, v2)", "key" (the label exists) or "!key" (it does not). A
// pool matches when it satisfies every term. Trident refuses a class whose
// selector has a term of any other form (a "," between terms, say): so
// does ParseSelector, naming the term.
func ParseSelector(s string) ([]Requirement, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty", errSelector)
	}
	var out []Requirement
	for _, term := range strings.Split(s, ";") {
		term = strings.TrimSpace(term)
		var r Requirement
		if m := termEquals.FindStringSubmatch(term); m != nil {
			r = Requirement{Key: m[1], Op: OpEquals, Values: []string{m[2]}}
		} else if m := termNot.FindStringSubmatch(term); m != nil {
			r = Requirement{Key: m[1], Op: OpNotEquals, Values: []string{m[2]}}
		} else if m := termSet.FindStringSubmatch(term); m != nil {
			r = Requirement{Key: m[1], Op: SelectorOp(m[2])}
			for _, v := range strings.Split(m[3], ",") {
				if v = strings.TrimSpace(v); v != "" {
					r.Values = append(r.Values, v)
				}
			}
		} else if m := termExists.FindStringSubmatch(term); m != nil {
			r = Requirement{Key: m[2], Op: OpExists}
			if m[1] == "!" {
				r.Op = OpNotExists
			}
		} else {
			return nil, fmt.Errorf("%w: term %q is none of key=value, key!=value, key in (…), key notin (…), key, !key", errSelector, term)
		}
		out = append(out, r)
	}
	return out, nil
}

// Matches says whether a pool with labels satisfies r, as Trident matches
// it: "!=" needs the label present with another value; "notin" and "!key"
// hold for a pool without the label.
func (r Requirement) Matches(labels map[string]string) bool {
	v, has := labels[r.Key]
	in := false
	for _, want := range r.Values {
		in = in || (has && v == want)
	}
	switch r.Op {
	case OpEquals, OpIn:
		return in
	case OpNotEquals:
		return has && !in
	case OpNotIn:
		return !in
	case OpExists:
		return has
	case OpNotExists:
		return !has
	}
	return false
}

// SelectorMatches says whether a pool with labels satisfies every term of
// the selector; an invalid selector matches nothing (Trident gives its
// class no pool).
func SelectorMatches(selector string, labels map[string]string) bool {
	reqs, err := ParseSelector(selector)
	if err != nil {
		return false
	}
	for _, r := range reqs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// selectorLevel finds the one service level a selector pins: a term
// "key=level", or "key in (level)" with one value, whose value names a
// level. "!=" and "notin" pin none, and neither does a set of several
// levels; two terms pinning different levels, or a selector Trident
// would refuse, give none.
func selectorLevel(selector string) (ServiceLevel, bool) {
	reqs, err := ParseSelector(selector)
	if err != nil {
		return "", false
	}
	var found ServiceLevel
	for _, r := range reqs {
		if (r.Op != OpEquals && r.Op != OpIn) || len(r.Values) != 1 {
			continue
		}
		l := parseServiceLevel(r.Values[0])
		switch {
		case l == "":
		case found == "":
			found = l
		case found != l:
			return "", false
		}
	}
	return found, found != ""
}
