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

// Package hookconfigfloor checks that the addon-operator of the oldest
// Deckhouse module.yaml accepts reads the module's hooks binary.
//
// It is its own Go module because it pins an older addon-operator than the
// repository's go.mod (which holds the current one, tested in
// hooks/batch_test.go): addon-operator v1.9.0 (commit 0a7cbdae, "Add
// readiness probe to batch hook", 2025-06) is the first release whose batch
// hook loader decodes module-sdk's versioned `hook config` answer
// ({"version":"v1","hooks":[...]}), the one module-sdk v0.3 and later print.
// module-sdk's README (v0.12.2, lines 6-10) pairs v0.3+ with Deckhouse
// 1.71 and later. The loader before it (batch_hook.go at b6e8ee23, 2024-12,
// lines 178-193, what Deckhouse 1.68-1.70 run) decoded a plain JSON array
// of hook configs, and nothing else.
//
// test/deckhouse runs this package from the repository's own tests.
package hookconfigfloor

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
)

// hooksBinaryEnv names a hooks binary already built (test/deckhouse passes
// the one dev/gobuild keeps, so this module's tests link no binary of
// their own).
const hooksBinaryEnv = "HOOKCONFIGFLOOR_HOOKS_BINARY"

// buildHooks builds the module's hooks binary as the module's werf recipe
// does (CGO off, -trimpath; module-sdk still names the hooks after their
// managed-starrocks/hooks/... paths), or returns the one hooksBinaryEnv names.
func buildHooks(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(hooksBinaryEnv); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "hooks")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./hooks")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hooks: %v\n%s", err, out)
	}
	return bin
}

func TestFloorAddonOperatorReadsTheHookConfig(t *testing.T) {
	bin := buildHooks(t)

	cfg, err := kind.GetBatchHookConfig("managed-starrocks", bin)
	if err != nil {
		t.Fatalf("addon-operator v1.9.0 cannot read the module's `hook config`: %v", err)
	}
	if len(cfg.Hooks) == 0 {
		t.Fatal("addon-operator v1.9.0 read no hook from `hook config`")
	}
	names := map[string]bool{}
	for _, h := range cfg.Hooks {
		names[h.Metadata.Name] = true
	}
	for _, want := range []string{"instances/hook", "instanceobjects/hook", "credentials/hook", "defaultclass/hook"} {
		found := false
		for n := range names {
			found = found || filepath.Base(filepath.Dir(n))+"/"+filepath.Base(n) == want
		}
		if !found {
			t.Errorf("hook %s is missing from what addon-operator v1.9.0 read: %v", want, names)
		}
	}
}

// TestPreFloorLoaderCannotReadTheHookConfig: what Deckhouse before 1.71 did
// with the same answer. Its loader decoded the output into a slice of hook
// configs; the versioned object does not decode into one, so the module
// would register no hook there. This is why module.yaml's floor is above
// 1.70, and it fails if the binary's answer ever changes shape.
func TestPreFloorLoaderCannotReadTheHookConfig(t *testing.T) {
	out, err := exec.Command(buildHooks(t), "hook", "config").Output()
	if err != nil {
		t.Fatalf("hook config: %v", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(out), []byte("{")) {
		t.Fatalf("`hook config` no longer prints the versioned object: %.200s", out)
	}
	var versioned sdkhook.BatchHookConfig
	if err := json.Unmarshal(out, &versioned); err != nil || versioned.Version != sdkhook.BatchHookConfigV1 {
		t.Fatalf("`hook config` is not module-sdk's v1 object (version %q, %v)", versioned.Version, err)
	}
	var plainArray []sdkhook.HookConfig
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&plainArray); err == nil {
		t.Fatal("the versioned object decoded as a plain array: the loader of Deckhouse 1.68-1.70 would read it, and the floor could be lower")
	}
}
