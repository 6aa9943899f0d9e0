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

package e2e_test

import (
	"context"
	"fmt"
	"testing"
)

// testSettingsChangeUpgradesTheReleaseWithTheWebhookRedirected: with the
// webhook redirected to the local server (as under `make run`), changing
// the module's settings while addon-operator runs upgrades the release,
// twice, and the webhook configurations point at the local webhook again.
// It runs first on its env (TestSettingsThenMaxCountThenDisable), so it
// counts every failed run since the env started.
func testSettingsChangeUpgradesTheReleaseWithTheWebhookRedirected(t *testing.T, e *env) {
	for _, n := range []int{7, 8} {
		e.setMaxCount(n)
	}
	if n := e.moduleErrors(); n != 0 {
		t.Errorf("%v failed module or hook runs, want none (addon-operator log: %s)", n, e.ao.LogPath)
	}
}

// setMaxCount changes the module's instances.maxCount while addon-operator
// runs, as an admin does, and waits for a release deployed with it and
// the webhook configurations pointing at the local webhook again.
func (e *env) setMaxCount(n int) {
	e.t.Helper()
	ctx := context.Background()
	e.settings = maxCount(n)
	if err := e.ao.SetSettings(ctx, e.settings); err != nil {
		e.t.Fatal(err)
	}
	e.eventually(fmt.Sprintf("a release deployed with instances.maxCount %d", n), func() (bool, string) {
		rel, err := e.ao.DeployedRelease(ctx)
		if err != nil {
			return false, err.Error()
		}
		got := fmt.Sprint(digValue(rel.Config, "managedStarrocks", "instances", "maxCount"))
		return got == fmt.Sprint(n), fmt.Sprintf("release v%d has maxCount %s; module errors %v", rel.Version, got, e.moduleErrors())
	})
	if err := e.waitWebhookRedirected(); err != nil {
		e.t.Fatal(err)
	}
}

func digValue(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
