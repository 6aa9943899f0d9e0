/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package desired

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// instanceSchemaYAML is the schema of one instance entry (definitions.instance
// and what it refers to). Every string has a pattern and a bound there: it is
// the last layer between a tenant's strings and the templates.
//
//go:embed instance.schema.yaml
var instanceSchemaYAML []byte

var (
	entrySchemaOnce sync.Once
	entrySchema     *spec.Schema
	entrySchemaErr  error
)

// loadEntrySchema reads definitions.instance with every $ref inlined (the
// kube-openapi validator does not follow references) and, as
// addon-operator's values validation does, no property an object schema does
// not declare.
func loadEntrySchema() (*spec.Schema, error) {
	entrySchemaOnce.Do(func() {
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if entrySchemaErr = yaml.Unmarshal(instanceSchemaYAML, &doc); entrySchemaErr != nil {
			return
		}
		root, err := inlineRefs(doc.Definitions["instance"], doc.Definitions, 0)
		if err != nil {
			entrySchemaErr = err
			return
		}
		data, err := json.Marshal(root)
		if err != nil {
			entrySchemaErr = err
			return
		}
		entrySchema = new(spec.Schema)
		entrySchemaErr = json.Unmarshal(data, entrySchema)
	})
	return entrySchema, entrySchemaErr
}

func inlineRefs(node any, defs map[string]any, depth int) (any, error) {
	if depth > 32 {
		return nil, errors.New("instance schema: $ref nesting deeper than 32")
	}
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/definitions/")
			def, exists := defs[name]
			if !found || !exists {
				return nil, fmt.Errorf("instance schema: unknown $ref %q", ref)
			}
			return inlineRefs(def, defs, depth+1)
		}
		out := make(map[string]any, len(n)+1)
		if _, declared := n["properties"]; declared {
			if _, set := n["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		for k, v := range n {
			x, err := inlineRefs(v, defs, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			x, err := inlineRefs(v, defs, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return node, nil
}

// ValidateEntry checks an instance entry (its JSON) against the instance
// schema and returns every violation, each naming the field.
func ValidateEntry(data []byte) error {
	schema, err := loadEntrySchema()
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("instance entry is not JSON: %w", err)
	}
	res := validate.NewSchemaValidator(schema, nil, "", strfmt.Default).Validate(doc)
	if res.IsValid() {
		return nil
	}
	msgs := make([]string, 0, len(res.Errors))
	for _, e := range res.Errors {
		msgs = append(msgs, e.Error())
	}
	return fmt.Errorf("instance entry breaks the instance schema: %s", strings.Join(msgs, "; "))
}

// InstanceExamples are the documented example entries of the instance
// schema (its top-level examples: lists of entries, as the hooks hand them
// on for a set of instances).
func InstanceExamples() ([][]any, error) {
	var doc struct {
		Examples [][]any `json:"examples"`
	}
	if err := yaml.Unmarshal(instanceSchemaYAML, &doc); err != nil {
		return nil, fmt.Errorf("instance schema: %w", err)
	}
	return doc.Examples, nil
}
