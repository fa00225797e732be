// Package spectimes records how long each spec of a Ginkgo suite took, so
// that make test can say which specs cost the suite most (hack/timed.sh
// prints the slowest of each part). A suite calls Record from its
// ReportAfterSuite; the rows go to _work/spec-times/<suite>.tsv in the
// clone, one per spec that ran: seconds, the suite, the spec's full text.
// A suite run twice (the e2e suite's single-node and multi-node runs)
// appends; hack/timed.sh empties the directory before each part.
package spectimes

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Dir is where the rows go: _work/spec-times in the clone this file is in.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("_work", "spec-times")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "_work", "spec-times")
}

// Rows are the report's specs that ran, one line each: seconds (to the
// tenth), the suite, the spec's text; in the report's order.
func Rows(suite string, r types.Report) []string {
	var rows []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || s.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
			continue
		}
		text := strings.Join(strings.Fields(s.FullText()), " ")
		rows = append(rows, fmt.Sprintf("%.1f\t%s\t%s", s.RunTime.Seconds(), suite, text))
	}
	return rows
}

// Record appends the report's rows to Dir()/<suite>.tsv.
func Record(suite string, r types.Report) error { return record(Dir(), suite, r) }

func record(dir, suite string, r types.Report) error {
	rows := Rows(suite, r)
	if len(rows) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, suite+".tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(rows, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
