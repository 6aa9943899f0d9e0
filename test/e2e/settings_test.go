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

// TestSettingsChangeUpgradesTheReleaseWithTheWebhookRedirected: with the
// webhook redirected to the local server (as under `make run`), changing
// the module's settings while addon-operator runs upgrades the release,
// twice, and the webhook configurations point at the local webhook again.
func TestSettingsChangeUpgradesTheReleaseWithTheWebhookRedirected(t *testing.T) {
	t.Parallel()
	// Its own env: it changes the module's settings and counts the
	// module's failed runs, other tests' included on a shared one.
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	for _, n := range []int{7, 8} {
		if err := e.ao.SetSettings(ctx, maxCount(n)); err != nil {
			t.Fatal(err)
		}
		e.eventually(fmt.Sprintf("a release deployed with instances.maxCount %d", n), func() (bool, string) {
			rel, err := e.ao.DeployedRelease(ctx)
			if err != nil {
				return false, err.Error()
			}
			got := fmt.Sprint(digValue(rel.Config, "managedStarrocks", "instances", "maxCount"))
			return got == fmt.Sprint(n), fmt.Sprintf("release v%d has maxCount %s; module errors %v", rel.Version, got, e.moduleErrors())
		})
		e.waitWebhookRedirected()
	}
	if n := e.moduleErrors(); n != 0 {
		t.Errorf("%v failed module or hook runs, want none (addon-operator log: %s)", n, e.ao.LogPath)
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
