package trident

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		selector string
		want     []Requirement
		err      string
	}{
		{"performance=gold", []Requirement{{"performance", OpEquals, []string{"gold"}}}, ""},
		{"performance == gold ; cost=4", []Requirement{{"performance", OpEquals, []string{"gold"}}, {"cost", OpEquals, []string{"4"}}}, ""},
		{"performance!=standard", []Requirement{{"performance", OpNotEquals, []string{"standard"}}}, ""},
		{"performance in (premium, extreme)", []Requirement{{"performance", OpIn, []string{"premium", "extreme"}}}, ""},
		{"zone notin (a,b); protection", []Requirement{{"zone", OpNotIn, []string{"a", "b"}}, {"protection", OpExists, nil}}, ""},
		{"!cold", []Requirement{{"cold", OpNotExists, nil}}, ""},
		{"app.kubernetes.io-tier=fast-ssd", []Requirement{{"app.kubernetes.io-tier", OpEquals, []string{"fast-ssd"}}}, ""},
		{"performance=premium,cost=4", nil, `term "performance=premium,cost=4"`},
		{"performance=premium;", nil, `term ""`},
		{"performance in premium", nil, "term"},
		{"  ", nil, "empty"},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			got, err := ParseSelector(tc.selector)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseSelector = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseSelector = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	premium := map[string]string{"performance": "premium", "cloud": "gcp"}
	for _, tc := range []struct {
		selector string
		labels   map[string]string
		want     bool
	}{
		{"performance=premium", premium, true},
		{"performance=premium; cloud=aws", premium, false},
		{"performance!=standard", premium, true},
		{"performance!=premium", premium, false},
		{"tier!=gold", premium, false}, // "!=" needs the label
		{"performance in (extreme, premium)", premium, true},
		{"performance notin (extreme, premium)", premium, false},
		{"tier notin (gold)", premium, true}, // "notin" holds without the label
		{"cloud", premium, true},
		{"!cloud", premium, false},
		{"!tier", premium, true},
		{"performance=premium,cloud=gcp", premium, false}, // not a selector Trident takes
	} {
		if got := SelectorMatches(tc.selector, tc.labels); got != tc.want {
			t.Errorf("SelectorMatches(%q) = %v, want %v", tc.selector, got, tc.want)
		}
	}
}

func TestSelectorLevel(t *testing.T) {
	for _, tc := range []struct {
		selector string
		want     ServiceLevel
	}{
		{"performance=extreme", ServiceLevelExtreme},
		{"cloud=gcp; performance = Premium", ServiceLevelPremium},
		{"performance in (standard)", ServiceLevelStandard},
		{"performance!=standard", ""},              // names the level it is not
		{"performance notin (standard, flex)", ""}, // likewise
		{"performance in (premium, extreme)", ""},  // either of two
		{"performance=premium; fallback=extreme", ""},
		{"performance=premium,zone=a", ""}, // Trident refuses the class
		{"performance=gold", ""},
	} {
		got, ok := selectorLevel(tc.selector)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("selectorLevel(%q) = %q, %v; want %q", tc.selector, got, ok, tc.want)
		}
	}
}
