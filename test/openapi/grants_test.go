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

package openapi_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// The values schema of agentConfig.grants holds the same syntax as the CRD
// and the class rules and the same privileges as the class rules: a spec the two accept is an
// entry the values accept, and nothing else.
func TestGrantsSchemaMatchesTheCRDAndTheClassRules(t *testing.T) {
	root := controlplane.RepoRoot()
	read := func(rel string) map[string]any {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	at := func(node any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				node = node.(map[string]any)[k]
			case int:
				node = node.([]any)[k]
			}
			if node == nil {
				t.Fatalf("no %v", path)
			}
		}
		return node
	}
	values := read("pkg/desired/instance.schema.yaml")
	defs := at(values, "definitions")
	crd := at(read("crds/starrocks.yaml"), "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties")

	for _, c := range []struct {
		what      string
		values    any
		crdFields []any
	}{
		{"sqlName", at(defs, "sqlName", "pattern"), []any{
			classrules.NamePattern,
			at(crd, "databases", "items", "properties", "name", "pattern"),
			at(crd, "roles", "items", "properties", "name", "pattern"),
			at(crd, "roles", "items", "properties", "roles", "items", "pattern"),
			at(crd, "roles", "items", "properties", "privileges", "items", "properties", "database", "pattern"),
			at(crd, "users", "items", "properties", "roles", "items", "pattern"),
		}},
		{"sqlUserName", at(defs, "sqlUserName", "pattern"), []any{classrules.UserNamePattern, at(crd, "users", "items", "properties", "name", "pattern")}},
		{"password Secret key", at(defs, "grants", "properties", "users", "items", "properties", "passwordSecret", "properties", "key", "pattern"),
			[]any{at(crd, "users", "items", "properties", "passwordSecretRef", "properties", "key", "pattern")}},
	} {
		for i, p := range c.crdFields {
			if p != c.values {
				t.Errorf("%s: values pattern %v, CRD pattern [%d] %v", c.what, c.values, i, p)
			}
		}
	}

	// The values schema lists the privileges as one alternation (a pattern:
	// Deckhouse's linter wants CamelCase enum values).
	pattern := at(defs, "grants", "properties", "roles", "items", "properties", "privileges", "items", "properties", "privileges", "items", "pattern").(string)
	enum := strings.Split(strings.TrimSuffix(strings.TrimPrefix(pattern, "^("), ")$"), "|")
	var want []string
	for _, on := range classrules.PrivilegeObjects {
		for _, p := range classrules.Privileges[on] {
			if n := classrules.PrivilegeName(p); !slices.Contains(want, n) {
				want = append(want, n)
			}
		}
	}
	slices.Sort(enum)
	slices.Sort(want)
	if !slices.Equal(enum, want) {
		t.Errorf("values privileges %v, class rules %v", enum, want)
	}

	// The objects: the values enum, the CRD enum and the class rules list
	// the same ones (a new object in one layer only is refused by another).
	var objects []any
	for _, on := range classrules.PrivilegeObjects {
		objects = append(objects, string(on))
	}
	if len(objects) != len(classrules.Privileges) {
		t.Errorf("classrules.PrivilegeObjects %v, classrules.Privileges has %d objects", objects, len(classrules.Privileges))
	}
	for what, enum := range map[string]any{
		"values": at(defs, "grants", "properties", "roles", "items", "properties", "privileges", "items", "properties", "object", "enum"),
		"CRD":    at(crd, "roles", "items", "properties", "privileges", "items", "properties", "object", "enum"),
	} {
		if !slices.Equal(enum.([]any), objects) {
			t.Errorf("%s object enum %v, class rules %v", what, enum, objects)
		}
	}
}
