package fio

import (
	"strings"
	"testing"
)

const miniDoc = `{
  "fio version" : "fio-3.33",
  "timestamp_ms" : 1,
  "jobs" : [ { "jobname" : "j0", "error" : %ERR%, "job_runtime" : 1000,
    "read" : { "io_bytes" : 8192, "bw_bytes" : 8192, "iops" : 2.0, "runtime" : 1000, "total_ios" : 2,
      "clat_ns" : { "min" : 1000, "max" : 2000, "mean" : 1500.0, "stddev" : 707.1, "N" : %N%,
        "percentile" : { "50.000000" : 1032 }, "bins" : { "1032" : 1, "%BIN%" : 1 } } },
    "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0, "runtime" : 0, "total_ios" : 0,
      "clat_ns" : { "min" : 0, "max" : 0, "mean" : 0, "stddev" : 0, "N" : 0 } } } ] }`

func doc(errno, n, bin string) string {
	r := strings.NewReplacer("%ERR%", errno, "%N%", n, "%BIN%", bin)
	return r.Replace(miniDoc)
}

func TestParse(t *testing.T) {
	cases := []struct {
		name     string
		input    string
		wantErr  string
		preamble string
	}{
		{"plain", doc("0", "2", "2008"), "", ""},
		{"text before json", "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n" + doc("0", "2", "2008"), "", "note: both iodepth"},
		{"no json", "fio: failed parsing directory=/x\n", "no JSON document: fio: failed parsing", "fio: failed parsing"},
		{"empty", "", "no output", ""},
		{"truncated", doc("0", "2", "2008")[:200], "decoding fio json+ output", ""},
		{"bins do not add up", doc("0", "5", "2008"), "bins hold 2 samples but N is 5", ""},
		{"foreign bin", doc("0", "2", "2001"), "not a fio 3.x histogram bin", ""},
		{"bad bin key", doc("0", "2", "x"), "not an integer", ""},
		{"no jobs", `{"fio version":"fio-3.33","jobs":[]}`, "no jobs", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, pre, err := Parse([]byte(c.input))
			switch {
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want error %q, got %v", c.wantErr, err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				r := out.Jobs[0].Read
				if r.IOs != 2 || r.Latency.Count != 2 || r.Latency.Hist.Total() != 2 || r.Latency.MeanNs != 1500 || out.Version != "fio-3.33" {
					t.Fatalf("parsed %+v", out.Jobs[0])
				}
			}
			if !strings.HasPrefix(pre, c.preamble) {
				t.Fatalf("preamble %q, want prefix %q", pre, c.preamble)
			}
		})
	}
}

func TestJobErrors(t *testing.T) {
	out, _, err := Parse([]byte(doc("28", "2", "2008")))
	if err != nil {
		t.Fatal(err)
	}
	jerr := out.JobErrors("fio: io_u error on file /d/job0.dat: No space left on device: write offset=1048576\nJobs: 1 (f=1)\n")
	if jerr == nil {
		t.Fatal("errno 28 not reported")
	}
	for _, want := range []string{"job j0: errno 28", "no space left on device", "io_u error on file"} {
		if !strings.Contains(jerr.Error(), want) {
			t.Errorf("%q missing from %q", want, jerr)
		}
	}
	if strings.Contains(jerr.Error(), "Jobs:") {
		t.Errorf("progress line kept: %q", jerr)
	}
	ok, _, _ := Parse([]byte(doc("0", "2", "2008")))
	if ok.JobErrors("") != nil {
		t.Fatal("error reported for a clean run")
	}
}
