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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Data is never removed by accident: while a
// Starrocks exists nothing removes its StatefulSets, PVCs or credentials;
// disabling the module leaves the instances in place; deleting and
// re-creating an instance on retained volumes keeps its passwords.

var credentialSecrets = []string{"credentials", "agent-credentials", "keystore"}

// waitVolume waits for the FE's first metadata PVC (the StatefulSet
// controller creates it with the pod) and the credentials Secrets the hook
// moves under it.
func (e *env) waitVolume(namespace, name string) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	e.eventually("FE metadata PVC and the Secrets it owns", func() (bool, string) {
		var err error
		pvc, err = e.kube.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), "meta-d8ms-sr-"+name+"-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, s := range credentialSecrets {
			sec, err := e.kube.CoreV1().Secrets(namespace).Get(context.Background(), "d8ms-sr-"+name+"-"+s, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != pvc.UID {
				return false, fmt.Sprintf("Secret %s owned by %v, want the PVC %s", sec.Name, sec.OwnerReferences, pvc.UID)
			}
		}
		return true, ""
	})
	return pvc
}

func (e *env) secretData(namespace, name string) map[string][]byte {
	e.t.Helper()
	s, err := e.kube.CoreV1().Secrets(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return s.Data
}

// assertStays checks for a few module passes that the objects exist and
// are not being deleted.
func (e *env) assertStays(namespace string, objects ...[2]string) {
	e.t.Helper()
	for range 3 {
		time.Sleep(time.Second)
		for _, o := range objects {
			var (
				obj metav1.Object
				err error
			)
			switch o[0] {
			case "PersistentVolumeClaim":
				obj, err = e.kube.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), o[1], metav1.GetOptions{})
			case "Secret":
				obj, err = e.kube.CoreV1().Secrets(namespace).Get(context.Background(), o[1], metav1.GetOptions{})
			default:
				var u *unstructured.Unstructured
				u, err = e.get(o[0], namespace, o[1])
				if err == nil {
					obj = u
				}
			}
			if err != nil {
				e.t.Fatalf("%s %s/%s: %v, want it kept", o[0], namespace, o[1], err)
			}
			if obj.GetDeletionTimestamp() != nil {
				e.t.Fatalf("%s %s/%s is being deleted, want it kept", o[0], namespace, o[1])
			}
		}
	}
}

func instanceObjects(name string) [][2]string {
	p := "d8ms-sr-" + name
	return [][2]string{
		{"StatefulSet", p}, {"StatefulSet", p + "-be"},
		{"PersistentVolumeClaim", "meta-" + p + "-0"}, {"PersistentVolumeClaim", "storage-" + p + "-be-0"},
		{"Secret", p + "-credentials"}, {"Secret", p + "-agent-credentials"}, {"Secret", p + "-keystore"},
	}
}

func TestInvalidSpecWithoutMemoryKeepsTheObjects(t *testing.T) {
	t.Parallel()
	const ns = "team-invalid"
	e := sharedEnv(t, withoutWebhook)
	e.apply(testClass)
	sr := e.apply(instance(ns, "olap", "Standalone", ""))
	e.waitObjects(ns, "olap", 1, 1)
	e.waitVolume(ns, "olap")
	if !e.hasValuesEntry(ns, "olap") {
		t.Fatal("a deployed instance has no values entry: hasValuesEntry cannot see entries")
	}

	// The spec breaks the class (the webhook is down), then the module's
	// memory is lost: no entry is rendered for the instance any more.
	e.apply(instance(ns, "olap", "Standalone", "    streamingLoadMaxMb: 204800"))
	e.waitCondition(ns, "olap", "LastValidConfigurationApplied", "True")
	// A pass that began before the invalid spec was stored may still
	// persist generation 1 once more: delete the memory until the module
	// reports it missing.
	var reason, message string
	e.eventually("the module sees its memory lost", func() (bool, string) {
		err := e.platformKube.CoreV1().ConfigMaps("d8-managed-starrocks").Delete(context.Background(), "last-valid-"+string(sr.GetUID()), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err.Error()
		}
		var status string
		status, reason, message = e.condition(ns, "olap", "LastValidConfigurationApplied")
		return status == "False", fmt.Sprintf("LastValidConfigurationApplied is %q (%s: %s)", status, reason, message)
	})
	t.Logf("LastValidConfigurationApplied: %s: %s", reason, message)
	if r, _ := e.waitCondition(ns, "olap", "Available", "False"); r != "NotManaged" {
		t.Errorf("Available reason %q, want NotManaged (the objects are left as they are)", r)
	}
	e.eventually("no values entry for the instance", func() (bool, string) {
		if e.hasValuesEntry(ns, "olap") {
			return false, ns + "/olap still has a values entry"
		}
		return true, ""
	})
	e.assertStays(ns, instanceObjects("olap")...)
	// kubectl describe warns that the objects are left unmanaged.
	e.eventually("a Warning Event NotManaged", func() (bool, string) {
		ev := e.starrocksEvents(ns, "olap")["NotManaged"]
		return len(ev) == 1 && ev[0].Type == corev1.EventTypeWarning, fmt.Sprint(ev)
	})

	// A valid spec again: the instance is managed again, on its old volumes.
	e.apply(instance(ns, "olap", "Standalone", ""))
	e.waitCondition(ns, "olap", "ConfigurationValid", "True")
	e.waitCondition(ns, "olap", "LastValidConfigurationApplied", "True")
	e.assertStays(ns, instanceObjects("olap")...)
}

// testModuleDisableLeavesTheInstances disables the module and enables it
// again; it runs last on its env (TestSettingsThenMaxCountThenDisable),
// after the maxCount test, which left instances.maxCount 1 and two
// instances: it raises the limit so that its own instance is deployed too.
func testModuleDisableLeavesTheInstances(t *testing.T, e *env) {
	e.setMaxCount(3)
	e.apply(testClass)
	sr := e.apply(instance("team", "olap", "Standalone", ""))
	e.waitObjects("team", "olap", 1, 1)
	e.waitVolume("team", "olap")
	password := e.secretData("team", "d8ms-sr-olap-agent-credentials")["root-password"]
	e.eventually("the default class and its marker", func() (bool, string) {
		_, err := e.get("StarrocksClass", "", "default")
		return err == nil, fmt.Sprint(err)
	})

	// Disabled through addon-operator's config: it stops the module's
	// hooks and deletes its Helm release.
	if err := e.ao.Disable(context.Background(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.AppsV1().Deployments("d8-managed-starrocks").Get(context.Background(), "webhook", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the module's webhook Deployment after the disable: %v, want it deleted with the release", err)
	}
	e.assertStays("team", instanceObjects("olap")...)
	if got := e.secretData("team", "d8ms-sr-olap-agent-credentials")["root-password"]; string(got) != string(password) {
		t.Error("the agent's Secret changed")
	}
	for _, k := range []string{"Service", "ConfigMap"} {
		if _, err := e.get(k, "team", map[string]string{"Service": "d8ms-sr-olap", "ConfigMap": "d8ms-sr-olap-config"}[k]); err != nil {
			t.Errorf("%s of the instance: %v, want it kept (resource-policy keep)", k, err)
		}
	}
	// The module's memory outlives the disable: the last valid state of each
	// instance and the marker that the default class was made (an admin who
	// deleted the class must not get it back by disabling and enabling).
	ctx := context.Background()
	uid := string(sr.GetUID())
	ns, err := e.kube.CoreV1().Namespaces().Get(ctx, "d8-managed-starrocks", metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("the module namespace after the disable: %v (deleting: %v), want it kept with the module's memory", err, ns != nil && ns.DeletionTimestamp != nil)
	}
	for _, name := range []string{"last-valid-" + uid, "managed-starrocks-default-class"} {
		if _, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap d8-managed-starrocks/%s after the disable: %v, want it kept", name, err)
		}
	}

	// Enabled again: the instance is managed from its memory, the deleted
	// default class stays deleted.
	if err := e.resource("StarrocksClass", "").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := e.ao.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.ao.WaitRelease(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	e.waitCondition("team", "olap", "LastValidConfigurationApplied", "True")
	e.assertStays("team", instanceObjects("olap")...)
	if _, err := e.get("StarrocksClass", "", "default"); !apierrors.IsNotFound(err) {
		t.Errorf("StarrocksClass default after re-enabling: %v, want it to stay deleted", err)
	}
}

func TestRecreatedInstanceOnRetainedVolumesKeepsItsCredentials(t *testing.T) {
	t.Parallel()
	const ns = "team-recreated"
	e := sharedEnv(t, withoutWebhook)
	e.apply(testClass)
	sr := e.apply(instance(ns, "olap", "Standalone", ""))
	e.waitObjects(ns, "olap", 1, 1)
	pvc := e.waitVolume(ns, "olap")
	before := map[string]map[string][]byte{}
	for _, s := range credentialSecrets {
		before[s] = e.secretData(ns, "d8ms-sr-olap-"+s)
	}

	// Delete the instance: Kubernetes GC removes its objects (owned by the
	// Starrocks), the PVCs stay (persistentVolumeClaimRetention Retain) and
	// with them the Secrets they own.
	if err := e.resource("Starrocks", ns).Delete(context.Background(), "olap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the StatefulSets collected with the Starrocks", func() (bool, string) {
		_, err := e.get("StatefulSet", ns, "d8ms-sr-olap")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	e.eventually("the module's memory of the deleted object deleted", func() (bool, string) {
		_, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").Get(context.Background(), "last-valid-"+string(sr.GetUID()), metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	e.assertStays(ns, [2]string{"PersistentVolumeClaim", "meta-d8ms-sr-olap-0"}, [2]string{"Secret", "d8ms-sr-olap-credentials"},
		[2]string{"Secret", "d8ms-sr-olap-agent-credentials"}, [2]string{"Secret", "d8ms-sr-olap-keystore"})

	// Re-create it under the same name: same volumes, same passwords.
	again := e.apply(instance(ns, "olap", "Standalone", ""))
	if again.GetUID() == sr.GetUID() {
		t.Fatal("the re-created Starrocks has the old UID")
	}
	e.waitObjects(ns, "olap", 1, 1)
	if got := e.waitVolume(ns, "olap"); got.UID != pvc.UID {
		t.Errorf("FE metadata PVC %s, want the retained %s", got.UID, pvc.UID)
	}
	for _, s := range credentialSecrets {
		got := e.secretData(ns, "d8ms-sr-olap-"+s)
		if fmt.Sprint(got) != fmt.Sprint(before[s]) {
			t.Errorf("Secret d8ms-sr-olap-%s changed on re-creation: the retained FE metadata would refuse the new passwords", s)
		}
	}
}
