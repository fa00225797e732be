package analysis

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeBaseline(t *testing.T) {
	good := Baseline{Version: BaselineVersion, Source: "prod/oltp-1", Fingerprint: "workload=1;clients=2;load=3",
		Steps: []StepSamples{{Planned: 0, Index: 0, Label: "1000 IOPS offered", IOPS: []float64{1000, 1001}, P99Ns: []float64{2e5, 2.1e5}}}}
	data, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBaseline(data)
	if err != nil {
		t.Fatalf("a baseline Encode wrote: %v", err)
	}
	if got.Source != good.Source || len(got.Steps) != 1 || got.Steps[0].IOPS[1] != 1001 || got.Steps[0].P99Ns[0] != 2e5 {
		t.Errorf("round trip: %+v", got)
	}
	many := `[` + strings.Repeat(`1,`, maxBaselineSamples) + `1]` // one too many
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{`, "unexpected EOF"},
		{"unknown field", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}],"secret":"y"}`, "unknown field"},
		{"two documents", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]} {}`, "data after the baseline"},
		{"another version", `{"version":3,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`, "version 3, want 1 or 2"},
		{"no version", `{"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`, "version 0, want 1 or 2"},
		// A version 1 document marked version 2 names the version its
		// steps want.
		{"steps in version 2", `{"version":2,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`, `version 2, want 1 for a baseline of "steps" (version 2 pins "runs")`},
		{"empty steps in version 2", `{"version":2,"fingerprint":"x","steps":[],"runs":[{"steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}]}`, "version 2, want 1"},
		{"runs in version 1", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}],"runs":[]}`, `version 1, want 2 for a baseline of "runs" (version 1 pins one run's "steps")`},
		{"no fingerprint", `{"version":1,"steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`, "no fingerprint"},
		{"no steps", `{"version":1,"fingerprint":"x","steps":[]}`, "0 steps"},
		{"steps out of order", `{"version":1,"fingerprint":"x","steps":[{"planned":1,"index":0,"iops":[1],"p99Ns":[1]}]}`, "step 0 is numbered 1"},
		{"a negative sample", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[-1],"p99Ns":[1]}]}`, "a sample -1"},
		{"too many samples", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":` + many + `,"p99Ns":[1]}]}`, "samples, want at most 4096"},
		{"a sample of a lifetime", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1.7e308]}]}`, "a sample 1.7e+308"},
		{"an offered load beyond any spec", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"offered":1e20,"iops":[1],"p99Ns":[1]}]}`, "offered 1e+20"},
		{"a long label", `{"version":1,"fingerprint":"x","steps":[{"planned":0,"index":0,"label":"` + strings.Repeat("x", 129) + `","iops":[1],"p99Ns":[1]}]}`, "label of 129 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBaseline([]byte(tc.data))
			if !errors.Is(err, ErrInvalidBaseline) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrInvalidBaseline with %q", err, tc.want)
			}
		})
	}
}

// v2 builds a version 2 document of the runs (JSON).
func v2(runs ...string) string {
	return `{"version":2,"source":"golden","fingerprint":"x","runs":[` + strings.Join(runs, ",") + `]}`
}

// run1 is a run of one good step (JSON), with the source and step fields.
func run1(source, step string) string {
	return `{"source":"` + source + `","steps":[{"planned":0,"index":0,` + step + `"iops":[1],"p99Ns":[1]}]}`
}

func TestDecodeBaselineRuns(t *testing.T) {
	step := func(planned int, iops float64, closed bool) StepSamples {
		return StepSamples{Planned: planned, Index: planned, Label: "1000 IOPS offered", Offered: 1000, ClosedLoop: closed,
			IOPS: []float64{iops, iops + 1}, P99Ns: []float64{2e5, 2.1e5}}
	}
	good := Baseline{Version: BaselineVersionRuns, Source: "prod/oltp golden week", Fingerprint: "workload=1;clients=2;load=3",
		Runs: []BaselineRun{
			{Source: "prod/oltp-1", Steps: []StepSamples{step(0, 1000, false), step(1, 2000, true)}},
			{Source: "prod/oltp-2", Steps: []StepSamples{step(0, 1010, false)}},
			{Source: "prod/oltp-3", Steps: []StepSamples{step(0, 990, false), step(1, 1990, false)}},
		}}
	data, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"steps":null`) || strings.Contains(string(data), `"closedLoop":false`) {
		t.Errorf("encoded with empty fields: %s", data)
	}
	got, err := DecodeBaseline(data)
	if err != nil {
		t.Fatalf("a baseline Encode wrote: %v", err)
	}
	if !reflect.DeepEqual(got, good) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, good)
	}
	if runs := got.PinnedRuns(); len(runs) != 3 || runs[2].Source != "prod/oltp-3" || !runs[0].Steps[1].ClosedLoop || runs[1].Steps[0].IOPS[0] != 1010 {
		t.Errorf("PinnedRuns() = %+v", runs)
	}

	// Version 1 reads back as it was written, and PinnedRuns gives its run.
	one := Baseline{Version: BaselineVersion, Source: "prod/oltp-1", Fingerprint: "f", Steps: []StepSamples{step(0, 1000, true)}}
	data, err = one.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err = DecodeBaseline(data)
	if err != nil || !reflect.DeepEqual(got, one) {
		t.Fatalf("version 1 round trip: %+v, %v", got, err)
	}
	if runs := got.PinnedRuns(); len(runs) != 1 || runs[0].Source != "prod/oltp-1" || len(runs[0].Steps) != 1 || !runs[0].Steps[0].ClosedLoop {
		t.Errorf("PinnedRuns() of version 1 = %+v", runs)
	}
	if runs := (Baseline{}).PinnedRuns(); runs != nil {
		t.Errorf("PinnedRuns() of nothing = %+v", runs)
	}

	if _, err := DecodeBaseline([]byte(v2(run1("a", ``), run1("b", `"closedLoop":true,`)))); err != nil {
		t.Errorf("two runs: %v", err)
	}
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = run1("r", ``)
	}
	if b, err := DecodeBaseline([]byte(v2(twenty...))); err != nil || len(b.Runs) != 20 {
		t.Errorf("twenty runs: %d, %v", len(b.Runs), err)
	}
	many := `[` + strings.Repeat(`1,`, maxBaselineSamples) + `1]`
	for _, tc := range []struct{ name, data, want string }{
		{"no runs", v2(), "0 runs, want 1..20"},
		{"runs null", `{"version":2,"fingerprint":"x","runs":null}`, "0 runs, want 1..20"},
		{"twenty-one runs", v2(append(twenty, run1("r", ``))...), "21 runs, want 1..20"},
		{"no fingerprint", `{"version":2,"runs":[` + run1("a", ``) + `]}`, "no fingerprint"},
		{"a run without steps", v2(run1("a", ``), `{"source":"b","steps":[]}`), "run 1: 0 steps, want 1..100"},
		{"a run's steps out of order", v2(`{"steps":[{"planned":1,"index":0,"iops":[1],"p99Ns":[1]}]}`), "run 0: step 0 is numbered 1"},
		{"a negative sample", v2(run1("a", ``), `{"steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[-1]}]}`), "run 1: step 0 has a sample -1"},
		{"too many samples", v2(`{"steps":[{"planned":0,"index":0,"iops":` + many + `,"p99Ns":[1]}]}`), "run 0: step 0 has 4097 samples, want at most 4096"},
		{"an offered load beyond any spec", v2(run1("a", `"offered":1e20,`)), "run 0: step 0 offered 1e+20"},
		{"a long label", v2(run1("a", `"label":"`+strings.Repeat("x", 129)+`",`)), "run 0: step 0 has a label of 129 bytes"},
		{"a long run source", v2(run1(strings.Repeat("s", 513), ``)), "run 0 has a source of 513 bytes, want at most 512"},
		{"a long source", `{"version":2,"source":"` + strings.Repeat("s", 513) + `","fingerprint":"x","runs":[` + run1("a", ``) + `]}`, "a source of 513 bytes"},
		{"an unknown field in a run", v2(`{"source":"a","secret":1,"steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`), "unknown field"},
		{"closedLoop not a bool", v2(run1("a", `"closedLoop":"yes",`)), "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBaseline([]byte(tc.data))
			if !errors.Is(err, ErrInvalidBaseline) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrInvalidBaseline with %q", err, tc.want)
			}
		})
	}
}
