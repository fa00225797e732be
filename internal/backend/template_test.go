package backend

import (
	"os"
	"strings"
	"testing"
	"time"
)

// minimal is a class with only what is required, the placeholder CLASS and
// QUERY replaced by a test.
const minimal = `classes:
- storageClassName: CLASS
  resolution: 15s
  readOps: QUERY
  writeOps: w
  readBytes: rb
  writeBytes: wb
  samples: s
`

func TestParseClassesRejects(t *testing.T) {
	for _, tc := range []struct {
		name, file, wantErr string
	}{
		{"an unknown field", minimal + "  readIops: x\n", `unknown field "readIops"`},
		{"no class name", strings.Replace(minimal, "CLASS", `""`, 1), "storageClassName is empty"},
		{"no resolution", strings.Replace(minimal, "  resolution: 15s\n", "", 1), "resolution 0s is not positive"},
		{"a required query missing", strings.Replace(minimal, "  samples: s\n", "", 1), "samples is empty"},
		{"a template that does not parse", strings.Replace(minimal, "QUERY", `"x{{.Node"`, 1), "readOps: template: readOps:1: unclosed action"},
		{"a field a volume does not have", strings.Replace(minimal, "QUERY", `"x{{.Pod}}"`, 1), "readOps: template: readOps:1:3: executing \"readOps\" at <.Pod>: can't evaluate field Pod"},
		{"a class twice", minimal + strings.TrimPrefix(minimal, "classes:\n"), `storage class "CLASS" is named twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseClasses([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseClasses() error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestTemplateQueries(t *testing.T) {
	w := Window{End: time.Unix(1e9, 0), Range: 45 * time.Second}
	for _, tc := range []struct {
		name, query string
		v           Volume
		want        string
	}{
		{"the window's range", `rate(x{pv="{{.PersistentVolume}}"}[{{.Range}}])`, Volume{PersistentVolume: "pvc-1"}, `rate(x{pv="pvc-1"}[45000ms])`},
		{"a device's name from its path", `x{device="{{base .Path}}",instance="{{.Node}}"}`, Volume{Path: "/dev/loop7", Node: "n1"}, `x{device="loop7",instance="n1"}`},
		{"quotes and backslashes cannot end the literal", `x{claim="{{.Claim}}"}`, Volume{Claim: `a"} or vector(1) or x{a="\`}, `x{claim="a\"} or vector(1) or x{a=\"\\"}`},
		{"control characters escaped", `x{h="{{.VolumeHandle}}"}`, Volume{VolumeHandle: "a\nb"}, `x{h="a\nb"}`},
		{"in ASCII: PromQL refuses U+FFFD as it is", `x{h="{{.VolumeHandle}}"}`, Volume{VolumeHandle: "é\uFFFD"}, `x{h="\u00e9\ufffd"}`},
		{"the resolution", `x[{{.Resolution}}]`, Volume{}, `x[15000ms]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := strings.Replace(strings.Replace(minimal, "QUERY", "'"+strings.ReplaceAll(tc.query, "'", "''")+"'", 1), "CLASS", "c", 1)
			classes, err := ParseClasses([]byte(file))
			if err != nil {
				t.Fatal(err)
			}
			means, samples, err := classes["c"].Queries(tc.v, w)
			if err != nil {
				t.Fatal(err)
			}
			if means[ReadOps] != tc.want {
				t.Errorf("readOps = %s, want %s", means[ReadOps], tc.want)
			}
			if samples != "s" || len(means) != 4 {
				t.Errorf("samples = %q and %d means, want s and the 4 rates", samples, len(means))
			}
		})
	}
}

// The documented node-exporter example parses and renders the queries
// its comments promise: latencies in µs as Join reads them.
func TestNodeExporterExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/examples/backend-classes-node-exporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	classes, err := ParseClasses(b)
	if err != nil {
		t.Fatal(err)
	}
	c := classes["local-disk"]
	if c == nil || c.Resolution != 15*time.Second {
		t.Fatalf("class local-disk = %+v, want one of 15s resolution", c)
	}
	means, samples, err := c.Queries(Volume{Path: "/dev/nvme1n1", Node: "worker-2"}, Window{Range: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sel := `{instance="worker-2",device="nvme1n1"}[60000ms]`
	for metric, want := range map[string]string{
		ReadOps:      "rate(node_disk_reads_completed_total" + sel + ")",
		WriteData:    "rate(node_disk_written_bytes_total" + sel + ")",
		WriteLatency: "(\nrate(node_disk_write_time_seconds_total" + sel + ") / rate(node_disk_writes_completed_total" + sel + ")\n) * 1e6",
	} {
		if means[metric] != want {
			t.Errorf("%s = %q, want %q", metric, means[metric], want)
		}
	}
	if len(means) != len(Metrics) || samples != "count_over_time(node_disk_reads_completed_total"+sel+")" {
		t.Errorf("%d means and samples %q", len(means), samples)
	}
}
