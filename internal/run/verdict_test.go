package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestVerdictsRecord(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	detail := func(n int) json.RawMessage { return json.RawMessage(`"` + strings.Repeat("x", n) + `"`) }
	spread := Judged("ClientsSpread", true, "OnDistinctNodes", "3 clients on 3 distinct nodes", at)
	regressed := Verdict{Condition: "Regressed", Status: True, Reason: "Regressed", Message: "1 of 2 tests regressed", At: at, Detail: detail(100)}
	for _, tc := range []struct {
		name       string
		vs         Verdicts
		limit      int    // -1: one byte short of what all of them take
		details    []int  // each verdict's detail length once decoded
		lostDetail string // the verdict whose message says its detail was dropped
	}{
		{name: "none", limit: 1 << 10},
		{name: "both fit", vs: Verdicts{spread, regressed}, limit: 1 << 10, details: []int{0, 102}},
		{name: "the newest detail is dropped first", vs: Verdicts{{Condition: "A", Status: Unknown, Reason: "R", At: at, Detail: detail(300)}, regressed},
			limit: -1, details: []int{302, 0}, lostDetail: "Regressed"},
		{name: "every detail, and then the bare verdicts whatever their size", vs: Verdicts{spread, regressed}, limit: 10, details: []int{0, 0},
			lostDetail: "Regressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit < 0 { // one byte short of the whole
				limit = len(tc.vs.Encode(1<<20)) - 1
			}
			got, err := DecodeVerdicts(tc.vs.Encode(limit))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.vs) {
				t.Fatalf("%d verdicts, want %d", len(got), len(tc.vs))
			}
			for i, v := range got {
				want := tc.vs[i]
				if v.Condition != want.Condition || v.Status != want.Status || v.Reason != want.Reason || !v.At.Equal(want.At) {
					t.Errorf("verdict %d: %+v, want %+v", i, v, want)
				}
				if len(v.Detail) != tc.details[i] {
					t.Errorf("verdict %d: detail of %d bytes, want %d", i, len(v.Detail), tc.details[i])
				}
				if lost := strings.Contains(v.Message, "was not recorded"); lost != (v.Condition == tc.lostDetail) {
					t.Errorf("verdict %d: message %q", i, v.Message)
				}
			}
			if tc.vs != nil && tc.vs[len(tc.vs)-1].Detail == nil {
				t.Error("Encode changed the verdicts it was given")
			}
		})
	}
}

func TestVerdictsWithAndFind(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	a, b := Judged("A", true, "Yes", "", at), Judged("B", false, "No", "", at)
	vs := Verdicts{a}.With(b).With(Judged("A", false, "NoLonger", "", at))
	if len(vs) != 2 || vs[0].Reason != "NoLonger" || vs[1].Reason != "No" {
		t.Fatalf("With: %+v", vs)
	}
	if v, ok := vs.Find("B"); !ok || v.Status != False {
		t.Errorf("Find(B) = %+v, %v", v, ok)
	}
	if _, ok := vs.Find("C"); ok {
		t.Error("Find(C) found a verdict never recorded")
	}
	if vs0 := (Verdicts{a}); len(vs0.With(b)) != 2 || len(vs0) != 1 {
		t.Error("With changed the verdicts it was given")
	}
}

func TestDecodeVerdictsRefuses(t *testing.T) {
	for _, s := range []string{`{`, `{"version":2,"verdicts":[]}`, `{"verdicts":[]}`} {
		if _, err := DecodeVerdicts(s); err == nil {
			t.Errorf("DecodeVerdicts(%q) read it", s)
		}
	}
	if vs, err := DecodeVerdicts(""); err != nil || vs != nil {
		t.Errorf("DecodeVerdicts(\"\") = %v, %v", vs, err)
	}
}

func TestVerdictValid(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    Verdict
		want bool
	}{
		{Judged("A", true, "OnDistinctNodes", "", at), true},
		{Verdict{Status: Unknown, Reason: "NotCompared"}, true},
		{Verdict{Status: "Yes", Reason: "Fine"}, false},
		{Verdict{Status: True}, false},
		{Verdict{Status: True, Reason: "has spaces"}, false},
		{Verdict{Status: True, Reason: "A" + strings.Repeat("b", 64)}, false},
	} {
		if got := tc.v.Valid(); got != tc.want {
			t.Errorf("%+v: Valid() = %v, want %v", tc.v, got, tc.want)
		}
	}
}
