package analysis

import (
	"errors"
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
		{"another version", `{"version":2,"fingerprint":"x","steps":[{"planned":0,"index":0,"iops":[1],"p99Ns":[1]}]}`, "version 2, want 1"},
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
