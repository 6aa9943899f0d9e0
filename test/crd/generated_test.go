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
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/crdgen"
)

// TestCRDsMatchAPITypes regenerates the CRDs from api/v1alpha1 and compares
// them with crds/: the Go types are the single source of the schema.
func TestCRDsMatchAPITypes(t *testing.T) {
	gen, err := controlplane.Tool("controller-gen")
	if err != nil {
		t.Fatal(err)
	}
	root := controlplane.RepoRoot()
	raw, out := t.TempDir(), t.TempDir()
	cmd := exec.Command(gen, "crd:crdVersions=v1", "paths=./api/...", "output:crd:dir="+raw)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, msg)
	}
	if err := crdgen.Generate(raw, out); err != nil {
		t.Fatal(err)
	}
	generated, _ := filepath.Glob(filepath.Join(out, "*.yaml"))
	if len(generated) == 0 {
		t.Fatal("nothing generated")
	}
	for _, g := range generated {
		want, _ := os.ReadFile(g)
		name := filepath.Base(g)
		got, err := os.ReadFile(filepath.Join(root, "crds", name))
		if err != nil {
			t.Errorf("crds/%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("crds/%s differs from what api/v1alpha1 generates: run `make generate` and commit", name)
		}
	}
}
