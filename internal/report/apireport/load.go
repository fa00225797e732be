package apireport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Decode reads saved StorageBenchmarks: `kubectl get sbench NAME -o yaml`
// (or -o json), a List of them (`kubectl get sbench -o yaml`), or several
// YAML documents separated by "---".
func Decode(data []byte) ([]v1alpha1.StorageBenchmark, error) {
	var out []v1alpha1.StorageBenchmark
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		// A document may start with its own "---" line (the reader keeps
		// the separator that opens a stream or follows another separator).
		if len(bytes.TrimSpace(stripComments(bytes.TrimPrefix(doc, []byte("---"))))) == 0 {
			continue
		}
		var probe struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		switch probe.Kind {
		case "StorageBenchmark":
			var sb v1alpha1.StorageBenchmark
			if err := yaml.Unmarshal(doc, &sb); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			out = append(out, sb)
		case "List", "StorageBenchmarkList":
			for j, raw := range probe.Items {
				var sb v1alpha1.StorageBenchmark
				if err := yaml.Unmarshal(raw, &sb); err != nil {
					return nil, fmt.Errorf("document %d, item %d: %w", i+1, j+1, err)
				}
				if sb.Kind != "" && sb.Kind != "StorageBenchmark" {
					return nil, fmt.Errorf("document %d, item %d: kind %s is not a StorageBenchmark", i+1, j+1, sb.Kind)
				}
				out = append(out, sb)
			}
		default:
			return nil, fmt.Errorf("document %d: kind %q is not a StorageBenchmark or a List of them", i+1, probe.Kind)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no StorageBenchmark found")
	}
	return out, nil
}

// stripComments drops YAML comment lines, so that a document of comments
// only counts as empty.
func stripComments(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] == '#' {
			continue
		}
		out = append(out, l)
	}
	return bytes.Join(out, []byte("\n"))
}
