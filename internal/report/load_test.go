package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDecodeStream feeds Decode multi-document streams as `kubectl get -o
// yaml`, `helm template` or a hand-edited file produce them: "---"
// separators (with or without a leading one), comments-only documents, JSON
// documents among YAML ones, and errors that must name the right document.
func TestDecodeStream(t *testing.T) {
	oltp, err := os.ReadFile("testdata/oltp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seq, err := os.ReadFile("testdata/throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.MarshalIndent(fixture(t, "oltp"), "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	one, two, js := string(oltp), string(seq), string(asJSON)+"\n"
	cases := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "leading separator", in: "---\n" + one, want: []string{"oltp-ontap-nas"}},
		{name: "separators and a JSON document", in: "---\n" + one + "---\n" + js + "---\n" + two, want: []string{"oltp-ontap-nas", "oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "JSON first, no leading separator", in: js + "---\n" + two, want: []string{"oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "trailing separator", in: one + "---\n", want: []string{"oltp-ontap-nas"}},
		{name: "separator with trailing blanks and comment", in: one + "---  \t\n" + two + "--- # last\n" + one, want: []string{"oltp-ontap-nas", "seq-gcnv-extreme", "oltp-ontap-nas"}},
		{name: "empty and comments-only documents skipped", in: "---\n---\n# nothing here\n---\n" + two + "---\n\n---\n", want: []string{"seq-gcnv-extreme"}},
		{name: "CRLF line endings", in: strings.ReplaceAll("---\n"+one+"---\n"+two, "\n", "\r\n"), want: []string{"oltp-ontap-nas", "seq-gcnv-extreme"}},
		{name: "separator-like text inside a document", in: "# --- not a separator\n" + one, want: []string{"oltp-ontap-nas"}},
		{name: "error names the document", in: one + "---\n" + js + "---\nkind: [\n", wantErr: "document 3: "},
		{name: "error numbering counts comments-only documents", in: "# saved by hand\n---\n" + one + "---\nkind: [\n", wantErr: "document 3: "},
		{name: "error in a JSON document", in: two + "---\n{\"kind\": \"StorageBenchmark\", \"spec\": [}\n", wantErr: "document 2: "},
		{name: "other kind in the stream", in: one + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", wantErr: `document 2: kind "ConfigMap"`},
		{name: "list item in the stream", in: one + "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n", wantErr: "document 2, item 1: kind Pod"},
		{name: "error after a leading separator is in document 1", in: "---\nkind: [\n", wantErr: "document 1: "},
		{name: "malformed separator belongs to the document it ends", in: one + "----\n" + two, wantErr: "document 1: "},
		{name: "only separators", in: "---\n--- # nothing\n---\n", wantErr: "no StorageBenchmark"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sbs, err := Decode([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sb := range sbs {
				got = append(got, sb.Name)
				if len(sb.Status.Steps) == 0 {
					t.Errorf("%s: no steps decoded", sb.Name)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("names = %v, want %v", got, c.want)
			}
		})
	}
}
