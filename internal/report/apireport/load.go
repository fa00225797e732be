package apireport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// Decode reads saved StorageBenchmarks: `kubectl get sbench NAME -o yaml`
// (or -o json), a List of them (`kubectl get sbench -o yaml`), or several
// YAML documents separated by "---". ConfigMaps saved with them (`kubectl
// get sbench,cm -o yaml`, for a step's timeline: StepTimeline) are skipped.
func Decode(data []byte) ([]v1alpha1.StorageBenchmark, error) {
	sbs, _, err := DecodeAll(data)
	return sbs, err
}

// DecodeAll reads saved StorageBenchmarks as Decode does, and the
// ConfigMaps saved with them, in one pass.
func DecodeAll(data []byte) ([]v1alpha1.StorageBenchmark, []corev1.ConfigMap, error) {
	sbs, cms, err := DecodeObjects(data)
	if err == nil && len(sbs) == 0 {
		err = fmt.Errorf("no StorageBenchmark found")
	}
	if err != nil {
		return nil, nil, err
	}
	return sbs, cms, nil
}

// DecodeObjects reads saved StorageBenchmarks and ConfigMaps as DecodeAll
// does, but accepts ConfigMaps alone: step records or a pinned baseline
// saved apart from their benchmarks. It fails on a stream holding neither,
// and on other kinds (VolumeOperationsBenchmarks included: DecodeSaved
// reads them too).
func DecodeObjects(data []byte) ([]v1alpha1.StorageBenchmark, []corev1.ConfigMap, error) {
	s, err := decode(data, false)
	if err != nil {
		return nil, nil, err
	}
	if len(s.Benchmarks) == 0 && len(s.ConfigMaps) == 0 {
		return nil, nil, fmt.Errorf("no StorageBenchmark or ConfigMap found")
	}
	return s.Benchmarks, s.ConfigMaps, nil
}

// Saved are the objects of a saved stream, each kind in the stream's
// order.
type Saved struct {
	Benchmarks []v1alpha1.StorageBenchmark
	Operations []v1alpha1.VolumeOperationsBenchmark
	ConfigMaps []corev1.ConfigMap
}

// DecodeSaved reads saved StorageBenchmarks, VolumeOperationsBenchmarks
// and ConfigMaps (`kubectl get sbench,sbops,cm -o yaml`, single objects or
// several documents). It fails on other kinds, and on a stream holding
// none of these.
func DecodeSaved(data []byte) (Saved, error) {
	s, err := decode(data, true)
	if err != nil {
		return Saved{}, err
	}
	if len(s.Benchmarks) == 0 && len(s.Operations) == 0 && len(s.ConfigMaps) == 0 {
		return Saved{}, fmt.Errorf("no StorageBenchmark, VolumeOperationsBenchmark or ConfigMap found")
	}
	return s, nil
}

// decode reads a stream's StorageBenchmarks and ConfigMaps and, when
// withOperations, its VolumeOperationsBenchmarks; any other kind is an
// error.
func decode(data []byte, withOperations bool) (Saved, error) {
	var s Saved
	err := eachObject(data, func(kind, where string, raw []byte) error {
		switch {
		case kind == "StorageBenchmark" || kind == "":
			return appendDecoded(&s.Benchmarks, raw, where)
		case kind == "VolumeOperationsBenchmark" && withOperations:
			return appendDecoded(&s.Operations, raw, where)
		case kind == "ConfigMap":
			return appendDecoded(&s.ConfigMaps, raw, where)
		case withOperations:
			return fmt.Errorf("%s: kind %q is not a StorageBenchmark, a VolumeOperationsBenchmark or a List of them", where, kind)
		default:
			return fmt.Errorf("%s: kind %q is not a StorageBenchmark or a List of them", where, kind)
		}
	})
	return s, err
}

// appendDecoded decodes raw, the object at where, onto list.
func appendDecoded[T any](list *[]T, raw []byte, where string) error {
	var obj T
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*list = append(*list, obj)
	return nil
}

// eachObject calls fn with every object of a YAML or JSON stream, the items
// of Lists included; an item's kind may be empty (a typed List's items).
func eachObject(data []byte, fn func(kind, where string, raw []byte) error) error {
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		// A document may start with its own "---" line (the reader keeps
		// the separator that opens a stream or follows another separator).
		if len(bytes.TrimSpace(stripComments(bytes.TrimPrefix(doc, []byte("---"))))) == 0 {
			continue
		}
		var probe struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		switch probe.Kind {
		case "List", "StorageBenchmarkList", "VolumeOperationsBenchmarkList":
			for j, raw := range probe.Items {
				var item struct {
					Kind string `json:"kind"`
				}
				if err := yaml.Unmarshal(raw, &item); err != nil {
					return fmt.Errorf("document %d, item %d: %w", i+1, j+1, err)
				}
				// A typed List's items may have no kind: theirs is the
				// List's (an empty kind is a StorageBenchmark's).
				if item.Kind == "" && probe.Kind == "VolumeOperationsBenchmarkList" {
					item.Kind = "VolumeOperationsBenchmark"
				}
				if err := fn(item.Kind, fmt.Sprintf("document %d, item %d", i+1, j+1), raw); err != nil {
					return err
				}
			}
		case "":
			return fmt.Errorf("document %d: kind %q is not a StorageBenchmark or a List of them", i+1, probe.Kind)
		default:
			if err := fn(probe.Kind, fmt.Sprintf("document %d", i+1), doc); err != nil {
				return err
			}
		}
	}
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
