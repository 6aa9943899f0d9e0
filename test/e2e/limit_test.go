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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func maxCount(n int) map[string]any {
	return map[string]any{"instances": map[string]any{"maxCount": n}}
}

// TestSettingsThenMaxCountThenDisable runs the settings test, the maxCount
// test and the disable test one after the other on one env.
func TestSettingsThenMaxCountThenDisable(t *testing.T) {
	t.Parallel()
	// Its own env: the settings and maxCount tests change the module's
	// settings (instances.maxCount counts every instance in the cluster),
	// the settings test counts the module's failed runs, the maxCount test
	// stops the webhook and restarts the module, the disable test turns the
	// module off and on and deletes the default class. Other tests would
	// see each of these. The settings test comes first, with the webhook
	// running as under `make run`; the disable test last.
	e := newEnv(t, envOptions{})
	e.step(t, "a settings change upgrades the release with the webhook redirected", func(t *testing.T) {
		testSettingsChangeUpgradesTheReleaseWithTheWebhookRedirected(t, e)
	})
	e.step(t, "instances beyond maxCount are left alone", func(t *testing.T) {
		testInstancesBeyondMaxCountAreLeftAlone(t, e)
	})
	e.step(t, "disabling the module leaves the instances", func(t *testing.T) {
		testModuleDisableLeavesTheInstances(t, e)
	})
}

// testInstancesBeyondMaxCountAreLeftAlone: with the webhook down nothing
// refuses the second instance; the module renders only the oldest
// instances.maxCount, raising the limit deploys the newer one, and lowering
// it again leaves that one's objects, Secrets and memory where they are.
func testInstancesBeyondMaxCountAreLeftAlone(t *testing.T, e *env) {
	e.stopWebhook()
	e.setMaxCount(1)
	e.apply(testClass)
	e.apply(instance("team", "first", "Standalone", ""))
	e.waitObjects("team", "first", 1, 1)
	time.Sleep(1100 * time.Millisecond) // creationTimestamp counts whole seconds
	second := e.apply(instance("team", "second", "Standalone", ""))

	limited := func() {
		t.Helper()
		e.eventually("team/second Available=False/InstanceLimitReached", func() (bool, string) {
			s, r, m := e.condition("team", "second", "Available")
			return s == "False" && r == "InstanceLimitReached", fmt.Sprintf("Available is %q (%s: %s)", s, r, m)
		})
		e.eventually("no values entry for team/second", func() (bool, string) {
			if e.hasValuesEntry("team", "second") {
				return false, "team/second has a values entry"
			}
			return true, ""
		})
		if !e.hasValuesEntry("team", "first") {
			t.Errorf("the older instance has no values entry")
		}
		if _, r, _ := e.condition("team", "first", "Available"); r == "InstanceLimitReached" {
			t.Errorf("the older instance is reported beyond the limit")
		}
	}
	limited()
	if _, err := e.get("StatefulSet", "team", "d8ms-sr-second"); err == nil {
		t.Error("a StatefulSet of the instance beyond the limit exists")
	}
	e.eventually("a Warning Event InstanceLimitReached", func() (bool, string) {
		ev := e.starrocksEvents("team", "second")["InstanceLimitReached"]
		return len(ev) == 1 && ev[0].Type == corev1.EventTypeWarning, fmt.Sprint(ev)
	})

	// The admin raises the limit: the newer instance is deployed.
	e.stopModule()
	e.settings = maxCount(2)
	e.startModule()
	e.waitObjects("team", "second", 1, 1)
	e.waitVolume("team", "second")
	memory := "last-valid-" + string(second.GetUID())
	if _, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").Get(context.Background(), memory, metav1.GetOptions{}); err != nil {
		t.Fatalf("memory of team/second: %v", err)
	}

	// And lowers it again: the newer instance is left as it is, with its
	// memory (and so its credentials).
	e.stopModule()
	e.settings = maxCount(1)
	e.startModule()
	limited()
	e.assertStays("team", instanceObjects("second")...)
	if _, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").Get(context.Background(), memory, metav1.GetOptions{}); err != nil {
		t.Errorf("memory of the instance beyond the limit: %v, want it kept", err)
	}
	e.assertStays("team", instanceObjects("first")...)
}
