package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/test/build"
)

// The generated CRDs, as `make manifests` writes them.
const (
	benchmarkCRD = "storagebench.io_storagebenchmarks.yaml"
	scheduleCRD  = "storagebench.io_storagebenchmarkschedules.yaml"
)

// crd is a CustomResourceDefinition's validation of a new object, in
// process, as the API server runs it on a create
// (customResourceStrategy.Validate in k8s.io/apiextensions-apiserver):
// the OpenAPI schema, the list types, then the CEL rules, unless a schema
// error blocks them. Its schema is the first (only) version's.
type crd struct {
	def        *apiextensionsv1.CustomResourceDefinition
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	rules      *cel.Validator
}

var (
	crdsOnce sync.Once
	crds     map[string]*crd
	crdsErr  error
)

// loadCRD returns the named CRD of config/crd/bases, read once.
func loadCRD(t *testing.T, file string) *crd {
	t.Helper()
	crdsOnce.Do(func() {
		crds = map[string]*crd{}
		for _, f := range []string{benchmarkCRD, scheduleCRD, volopsCRD} {
			c, err := readCRD(f)
			if err != nil {
				crdsErr = err
				return
			}
			crds[f] = c
		}
	})
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
	return crds[file]
}

func readCRD(file string) (*crd, error) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
	if err != nil {
		return nil, err
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &def); err != nil {
		return nil, err
	}
	if len(def.Spec.Versions) != 1 || def.Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("%s: want one version with a schema", file)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(def.Spec.Versions[0].Schema.OpenAPIV3Schema, &props, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(&props)
	if err != nil {
		return nil, err
	}
	// As the API server serves it: defaults pruned of unknown fields.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	v, _, err := apiservervalidation.NewSchemaValidator(&props)
	if err != nil {
		return nil, err
	}
	return &crd{def: &def, structural: s, schema: v, rules: cel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// store makes obj what the API server would store on a create: unknown
// fields pruned (which fails the test: a typo in a test's patch would
// otherwise vanish silently) and the defaults filled in.
func (c *crd) store(t *testing.T, obj map[string]any) {
	t.Helper()
	if unknown := pruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		t.Fatalf("unknown fields %q", unknown)
	}
	structuraldefaulting.Default(obj, c.structural)
}

// validate is what the API server refuses of a stored object on a create.
func (c *crd) validate(obj map[string]any) field.ErrorList {
	errs := apiservervalidation.ValidateCustomResource(nil, obj, c.schema)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			// The API server does not evaluate the CEL rules then.
			return errs
		}
	}
	return append(errs, c.celErrors(obj)...)
}

// celErrors are the CEL rules' verdicts on obj alone.
func (c *crd) celErrors(obj map[string]any) field.ErrorList {
	errs, _ := c.rules.Validate(context.Background(), nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return errs
}

// celRule is one x-kubernetes-validations rule of a schema.
type celRule struct {
	// path is the schema's path, "spec.load.rate", with "[*]" for the
	// items of a list.
	path, rule, message, fieldPath string
}

// celRules lists every CEL rule of the CRD's schema, depth first.
func (c *crd) celRules() []celRule {
	var out []celRule
	var walk func(s *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, path string) {
		for _, r := range s.XValidations {
			out = append(out, celRule{path: path, rule: r.Rule, message: r.Message, fieldPath: r.FieldPath})
		}
		for _, k := range sortedKeys(s.Properties) {
			p := s.Properties[k]
			walk(&p, strings.TrimPrefix(path+"."+k, "."))
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, path+"[*]")
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema, path+"{*}")
		}
	}
	walk(c.def.Spec.Versions[0].Schema.OpenAPIV3Schema, "")
	return out
}

// schemaAt is the schema at a dotted path of properties.
func (c *crd) schemaAt(t *testing.T, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := c.def.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, k := range strings.Split(path, ".") {
		p, ok := s.Properties[k]
		if !ok {
			t.Fatalf("%s: no property %q in the CRD", path, k)
		}
		s = &p
	}
	return s
}

// baseSpec is a valid spec, before the API server's defaults; every row
// of the tables changes it with a patch.
const baseSpec = `
storage:
  storageClassName: fast
load:
  rate:
    steps: [1000, 2000, 4000]
`

// object is a StorageBenchmark named bench whose spec is baseSpec merged
// with patch, a YAML JSON merge patch (RFC 7386: maps merge, null deletes,
// anything else replaces), decoded as the API server decodes JSON
// (integers as int64).
func object(t *testing.T, patch string) map[string]any {
	t.Helper()
	spec, err := build.PatchedSpec(baseSpec, patch)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "StorageBenchmark",
		"metadata": map[string]any{"name": testName, "namespace": "perf"},
		"spec":     spec,
	}
}

// typed decodes a stored object as the operator's client does.
func typed(obj map[string]any) (*v1alpha1.StorageBenchmark, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var b v1alpha1.StorageBenchmark
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
