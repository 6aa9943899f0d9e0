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

// Package deckhouse tests what the module asks of the Deckhouse it runs on.
package deckhouse

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
)

// Floor is the oldest Deckhouse the module runs on, and why:
//   - 1.71: the first whose addon-operator reads the hooks binary's
//     `hook config` answer (module-sdk v0.3+ prints a versioned object,
//     1.68-1.70 decode a plain array): dev/hookconfigfloor;
//   - 1.74 brought d8ms-prefix.deckhouse.io, which refused cert-manager's
//     requests for d8ms-* Certificates until deckhouse PR 17440 (backported
//     to release-1.74 as PR 17455, 2026-01-14): no instance gets its TLS
//     certificate on the 1.74 patches before it. Which 1.74 patch carries
//     the backport is not known here, so the floor is the next minor, 1.75,
//     whose every patch has the fix.
const Floor = "1.75.0"

func moduleRequirement(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "module.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Requirements struct {
			Deckhouse string `json:"deckhouse"`
		} `json:"requirements"`
	}
	if err := yaml.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	return def.Requirements.Deckhouse
}

// The requirement admits no Deckhouse below the floor and admits the floor.
func TestModuleYAMLRequiresTheFloor(t *testing.T) {
	req := moduleRequirement(t)
	c, err := semver.NewConstraint(req)
	if err != nil {
		t.Fatalf("module.yaml requirements.deckhouse %q: %v", req, err)
	}
	for _, v := range []string{"1.68.0", "1.70.9", "1.71.0", "1.74.0", "1.74.99"} {
		if c.Check(semver.MustParse(v)) {
			t.Errorf("module.yaml requirements.deckhouse %q admits Deckhouse %s, below the floor %s", req, v, Floor)
		}
	}
	for _, v := range []string{Floor, "1.78.0"} {
		if !c.Check(semver.MustParse(v)) {
			t.Errorf("module.yaml requirements.deckhouse %q refuses Deckhouse %s", req, v)
		}
	}
}

// The floor's addon-operator reads the module's hooks binary: the test lives
// in its own Go module (it pins an older addon-operator), run from here so
// that the repository's tests cover it.
func TestFloorAddonOperatorReadsTheHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hooks binary and an older addon-operator")
	}
	// The hooks binary as the module loop runs it (CGO off, -s -w) and the
	// floor module's test binary, both from dev/gobuild's cache: linked only
	// when their code changed, where go test with two go builds of the
	// hooks cost about 11 CPU-seconds a run.
	bin := t.TempDir()
	hooks, err := moduleloop.BuildBinary(t.Context(), moduleloop.HooksPackage, bin)
	if err != nil {
		t.Fatal(err)
	}
	floorDir := filepath.Join(controlplane.RepoRoot(), "dev", "hookconfigfloor")
	err = gobuild.Cached(t.Context(), "dev/hookconfigfloor test", bin, []string{"hookconfigfloor.test"}, func(cacheDir string) error {
		build := exec.CommandContext(t.Context(), "go", "test", "-c", "-o", filepath.Join(cacheDir, "hookconfigfloor.test"), ".")
		build.Dir = floorDir
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go test -c: %w\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("dev/hookconfigfloor: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(bin, "hookconfigfloor.test"), "-test.count=1", "-test.v")
	cmd.Dir = floorDir
	cmd.Env = append(os.Environ(), "HOOKCONFIGFLOOR_HOOKS_BINARY="+hooks)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dev/hookconfigfloor: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("dev/hookconfigfloor ran no test:\n%s", out)
	}
}
