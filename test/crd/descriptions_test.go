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

package crd_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// internalWords are names a user of `kubectl explain` has no use for: the
// repository's tooling and Go code.
var internalWords = regexp.MustCompile(`dev/|gencrds|crdgen|controller-gen|kubebuilder|pkg/|hooks/|zz_generated|\+optional|deepcopy`)

// goDocVerbs are the verbs of Go doc sentences ("StarrocksSpec is what a
// user orders."): a type name as the subject reads as code, not as docs.
const goDocVerbs = `is|are|holds|names|says|sizes|places|describes|counts|configures|opens|selects|limits|lists|keeps|tells`

// TestDescriptionsReadAsUserDocs: every description in crds/ (and its
// Russian twin) is what `kubectl explain` shows, so it must not mention
// the tooling or start like a Go doc comment, and quantities are strings
// (int-or-string shows as `<Object>` in kubectl explain).
func TestDescriptionsReadAsUserDocs(t *testing.T) {
	root := controlplane.RepoRoot()
	goSubject := regexp.MustCompile(`^(` + strings.Join(apiTypeNames(t, root), "|") + `|[A-Z][a-zA-Z]+(Spec|Status))\s+(` + goDocVerbs + `)\b`)
	files, _ := filepath.Glob(filepath.Join(root, "crds", "*.yaml"))
	if len(files) != 6 {
		t.Fatalf("crds/ holds %d files, want 6 (three CRDs and their doc-ru twins)", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(f)
		checked := 0
		walkSchema(doc, "", func(path string, node map[string]any) {
			if node["x-kubernetes-int-or-string"] == true {
				t.Errorf("%s %s: int-or-string (kubectl explain shows <Object>); quantities are strings", name, path)
			}
			desc, ok := node["description"].(string)
			if !ok {
				return
			}
			checked++
			if w := internalWords.FindString(desc); w != "" {
				t.Errorf("%s %s: description mentions %q:\n%s", name, path, w, desc)
			}
			if m := goSubject.FindString(strings.TrimSpace(desc)); m != "" {
				t.Errorf("%s %s: description starts like a Go doc comment (%q):\n%s", name, path, m, desc)
			}
		})
		if checked < 20 {
			t.Errorf("%s: only %d descriptions found; the walk is broken", name, checked)
		}
	}
}

// apiTypeNames lists the types declared in api/v1alpha1.
func apiTypeNames(t *testing.T, root string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), filepath.Join(root, "api", "v1alpha1"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, s := range g.Specs {
						names = append(names, s.(*ast.TypeSpec).Name.Name)
					}
				}
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found %d types in api/v1alpha1", len(names))
	}
	return names
}

// walkSchema calls fn for every map in doc with its path.
func walkSchema(node any, path string, fn func(string, map[string]any)) {
	switch n := node.(type) {
	case map[string]any:
		fn(path, n)
		for k, v := range n {
			walkSchema(v, path+"."+k, fn)
		}
	case []any:
		for _, v := range n {
			walkSchema(v, path+"[]", fn)
		}
	}
}
