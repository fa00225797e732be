package spectimes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func spec(texts []string, leaf string, node types.NodeType, state types.SpecState, d time.Duration) types.SpecReport {
	return types.SpecReport{ContainerHierarchyTexts: texts, LeafNodeText: leaf, LeafNodeType: node, State: state, RunTime: d}
}

// TestRows keeps the specs that ran, one line each with their seconds and
// whole text, and leaves out skipped and pending specs and suite nodes.
func TestRows(t *testing.T) {
	r := types.Report{SpecReports: types.SpecReports{
		spec([]string{"A run"}, "ends  when\nits steps end", types.NodeTypeIt, types.SpecStatePassed, 1234*time.Millisecond),
		spec([]string{"A run"}, "fails", types.NodeTypeIt, types.SpecStateFailed, 61*time.Second),
		spec(nil, "skipped", types.NodeTypeIt, types.SpecStateSkipped, 0),
		spec(nil, "pending", types.NodeTypeIt, types.SpecStatePending, 0),
		spec(nil, "", types.NodeTypeBeforeSuite, types.SpecStatePassed, 90*time.Second),
	}}
	got := Rows("e2e", r)
	want := []string{"1.2\te2e\tA run ends when its steps end", "61.0\te2e\tA run fails"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestRecordAppends: a suite run twice leaves both runs' rows.
func TestRecordAppends(t *testing.T) {
	dir := t.TempDir()
	r := types.Report{SpecReports: types.SpecReports{spec(nil, "x", types.NodeTypeIt, types.SpecStatePassed, time.Second)}}
	for range 2 {
		if err := record(dir, "s", r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "s.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "1.0\ts\tx\n1.0\ts\tx\n" {
		t.Fatalf("file %q", got)
	}
}
