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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// TestInstanceObjectsComeBackAndFollowTheSpecAndTheClass plays someone who
// deletes objects of an instance (the control plane's admin: Deckhouse's
// policies refuse it to a tenant, TestUnderDeckhousePlatformPolicies, and
// an older Deckhouse may lack them): the instanceobjects hook, not Helm,
// writes them, so its runs under addon-operator must bring them back. A changed
// spec then rewrites every object of the instance through the real
// apiserver (Update of a Service keeps its allocated clusterIP). Last, the
// admin changes a class default: the instance follows it for the key its
// user left out (the webhook never wrote it into the spec) and keeps its own
// value of the key its user set.
func TestInstanceObjectsComeBackAndFollowTheSpecAndTheClass(t *testing.T) {
	t.Parallel()
	const ns, name = "team-o", "ledger"
	e := sharedEnv(t, withWebhook)
	// A class of its own: the test changes a class default, which would
	// change the instances of the other tests on the shared env.
	class := strings.Replace(testClass, "name: analytics", "name: instance-objects", 1)
	ofClass := func(config string) string {
		return strings.Replace(instance(ns, name, "Standalone", config), "starrocksClassName: analytics", "starrocksClassName: instance-objects", 1)
	}
	e.apply(class)
	e.apply(ofClass(""))
	e.waitObjects(ns, name, 1, 1)

	client := "d8ms-sr-" + name
	release, err := e.ao.DeployedRelease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(release.Manifest, "namespace: "+ns) || strings.Contains(release.Manifest, `namespace: "`+ns+`"`) {
		t.Fatalf("the Helm release renders objects in %s: instance objects belong to the hook", ns)
	}
	for _, kind := range []string{"Service", "NetworkPolicy", "ConfigMap"} {
		objName := client
		if kind == "ConfigMap" {
			objName = client + "-config"
		}
		// Lost objects: under Deckhouse's policies only the platform (or
		// a maintenance mode) can delete them, an admin as little as the
		// tenant.
		if err := e.platformResource(kind, ns).Delete(context.Background(), objName, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s %s: %v", kind, objName, err)
		}
	}
	var clusterIP string
	e.eventually("the deleted Service, NetworkPolicy and ConfigMap are back", func() (bool, string) {
		var missing []string
		for _, kind := range []string{"Service", "NetworkPolicy", "ConfigMap"} {
			objName := client
			if kind == "ConfigMap" {
				objName = client + "-config"
			}
			o, err := e.get(kind, ns, objName)
			if apierrors.IsNotFound(err) {
				missing = append(missing, kind)
				continue
			}
			if err != nil {
				return false, err.Error()
			}
			if kind == "Service" {
				clusterIP, _, _ = unstructured.NestedString(o.Object, "spec", "clusterIP")
			}
		}
		return len(missing) == 0, fmt.Sprintf("missing %v", missing)
	})

	before, err := e.get("StatefulSet", ns, client)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(ofClass("    catalogTrashExpireSecond: 7200"))
	e.eventually("every object of the instance carries the new render checksum", func() (bool, string) {
		cm, err := e.get("ConfigMap", ns, client+"-config")
		if err != nil {
			return false, err.Error()
		}
		fe, _, _ := unstructured.NestedString(cm.Object, "data", "fe.conf")
		if !strings.Contains(fe, "catalog_trash_expire_second = 7200") {
			return false, "fe.conf not updated yet"
		}
		sum := cm.GetAnnotations()[instanceobjects.ChecksumAnnotation]
		for _, kind := range []string{"Service", "NetworkPolicy", "StatefulSet", "PodDisruptionBudget", "Certificate"} {
			o, err := e.get(kind, ns, client)
			if err != nil {
				return false, err.Error()
			}
			if got := o.GetAnnotations()[instanceobjects.ChecksumAnnotation]; got != sum {
				return false, fmt.Sprintf("%s render checksum %q, the ConfigMap's %q", kind, got, sum)
			}
		}
		return true, ""
	})
	svc, err := e.get("Service", ns, client)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); got != clusterIP || got == "" {
		t.Errorf("client Service clusterIP %q after the update, want the allocated %q kept", got, clusterIP)
	}
	after, err := e.get("StatefulSet", ns, client)
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() {
		t.Errorf("the FE StatefulSet was replaced (UID %s -> %s), want it updated in place", before.GetUID(), after.GetUID())
	}

	if sr, err := e.get("Starrocks", ns, name); err != nil {
		t.Fatal(err)
	} else if cfg, found, _ := unstructured.NestedMap(sr.Object, "spec", "configuration"); found && cfg["streamingLoadMaxMb"] != nil {
		t.Fatalf("spec.configuration.streamingLoadMaxMb = %v: the webhook wrote the class default into the spec", cfg["streamingLoadMaxMb"])
	}
	e.apply(strings.Replace(class, "streamingLoadMaxMb: 10240", "streamingLoadMaxMb: 20480", 1))
	e.eventually("be.conf follows the new class default, fe.conf keeps the user's value", func() (bool, string) {
		data := e.configMapData(ns, client+"-config")
		be, fe := fmt.Sprint(data["be.conf"]), fmt.Sprint(data["fe.conf"])
		ok := strings.Contains(be, "streaming_load_max_mb = 20480") && strings.Contains(fe, "catalog_trash_expire_second = 7200")
		return ok, "be.conf:\n" + be + "\nfe.conf:\n" + fe
	})
}
