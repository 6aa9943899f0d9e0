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
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestCollidingInstancesOnlyTheOlderIsManaged: with the webhook down
// nothing refuses "dev-be" next to "dev", whose FE StatefulSet would be
// dev's BE StatefulSet d8ms-sr-dev-be. The module manages dev alone: its
// BE StatefulSet stays dev's, and dev-be is reported, naming dev and the
// object, with nothing of it deployed.
func TestCollidingInstancesOnlyTheOlderIsManaged(t *testing.T) {
	t.Parallel()
	const ns = "team-names"
	e := sharedEnv(t, withoutWebhook)
	e.apply(testClass)
	e.apply(instance(ns, "dev", "Standalone", ""))
	e.waitObjects(ns, "dev", 1, 1)
	time.Sleep(1100 * time.Millisecond) // creationTimestamp counts whole seconds
	e.apply(instance(ns, "dev-be", "Standalone", ""))

	e.eventually(ns+"/dev-be Available=False/NameConflict", func() (bool, string) {
		s, r, m := e.condition(ns, "dev-be", "Available")
		return s == "False" && r == "NameConflict" && strings.Contains(m, `Starrocks "dev", older in this namespace, already uses the name of StatefulSet d8ms-sr-dev-be`),
			fmt.Sprintf("Available is %q (%s: %s)", s, r, m)
	})
	if e.hasValuesEntry(ns, "dev-be") {
		t.Error("the newer of two colliding instances has a values entry")
	}
	if !e.hasValuesEntry(ns, "dev") {
		t.Error("the older of two colliding instances has no values entry")
	}
	e.eventually("a Warning Event NameConflict", func() (bool, string) {
		ev := e.starrocksEvents(ns, "dev-be")["NameConflict"]
		return len(ev) == 1 && ev[0].Type == corev1.EventTypeWarning, fmt.Sprint(ev)
	})
	// The shared name stays dev's BE StatefulSet, and nothing of dev-be exists.
	sts, err := e.get("StatefulSet", ns, "d8ms-sr-dev-be")
	if err != nil {
		t.Fatal(err)
	}
	if got := sts.GetLabels()["app.kubernetes.io/instance"]; got != "dev" || sts.GetLabels()["app.kubernetes.io/component"] != "backend" {
		t.Errorf("StatefulSet d8ms-sr-dev-be is %q's %s, want dev's backend", got, sts.GetLabels()["app.kubernetes.io/component"])
	}
	for _, kind := range []string{"StatefulSet", "ConfigMap", "Service"} {
		name := map[string]string{"StatefulSet": "d8ms-sr-dev-be-be", "ConfigMap": "d8ms-sr-dev-be-config", "Service": "d8ms-sr-dev-be-fe-headless"}[kind]
		if _, err := e.get(kind, ns, name); err == nil {
			t.Errorf("%s %s of the newer instance exists", kind, name)
		}
	}
	if _, r, _ := e.condition(ns, "dev", "Available"); r == "NameConflict" {
		t.Error("the older instance is reported as the conflicting one")
	}
}
