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

package chartrender_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// namesUsed are the names (by kind) a rendered object is or makes or
// refers to in its namespace: itself, a StatefulSet's pods and PVCs, the
// Secrets, ConfigMaps, ServiceAccounts, Services and Issuers it names, and
// the pods and Secrets the agent's Role names.
func namesUsed(t *testing.T, o *unstructured.Unstructured) []string {
	t.Helper()
	used := []string{o.GetKind() + " " + o.GetName()}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			str := func(k string) string { s, _ := v[k].(string); return s }
			switch key {
			case "secretKeyRef", "passwordSecretRef":
				used = append(used, "Secret "+str("name"))
			case "configMap":
				// kube-root-ca.crt is the one Kubernetes publishes in
				// every namespace, in the projected token volume.
				if str("name") != "kube-root-ca.crt" {
					used = append(used, "ConfigMap "+str("name"))
				}
			case "issuerRef":
				if str("kind") == "Issuer" {
					used = append(used, "Issuer "+str("name"))
				}
			case "roleRef":
				used = append(used, str("kind")+" "+str("name"))
			}
			for k, x := range v {
				switch k {
				case "secretName":
					used = append(used, "Secret "+fmt.Sprint(x))
				case "serviceAccountName":
					used = append(used, "ServiceAccount "+fmt.Sprint(x))
				case "serviceName":
					used = append(used, "Service "+fmt.Sprint(x))
				}
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		}
	}
	walk("", o.Object)
	switch o.GetKind() {
	case "StatefulSet":
		replicas, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
		r, _ := replicas.(float64) // as the manifests decode JSON numbers
		if r < 1 {
			t.Fatalf("StatefulSet %s: replicas %v", o.GetName(), replicas)
		}
		claims, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates")
		for n := range int(r) {
			used = append(used, fmt.Sprintf("Pod %s-%d", o.GetName(), n))
			for _, c := range claims {
				claim, _, _ := unstructured.NestedString(c.(map[string]any), "metadata", "name")
				used = append(used, fmt.Sprintf("PersistentVolumeClaim %s-%s-%d", claim, o.GetName(), n))
			}
		}
	case "Role", "RoleBinding":
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, r := range rules {
			resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
			names, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resourceNames")
			for _, res := range resources {
				kind := map[string]string{"pods": "Pod", "secrets": "Secret"}[res]
				for _, n := range names {
					used = append(used, kind+" "+n)
				}
			}
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m := s.(map[string]any)
			used = append(used, fmt.Sprint(m["kind"])+" "+fmt.Sprint(m["name"]))
		}
	}
	return used
}

// TestObjectNamesListEveryRenderedName keeps desired.ObjectNames, the one
// list the collision rule compares, complete: every object an instance's
// render makes, and every object in its namespace those objects name or
// make (pods, PVCs, Secrets), is in it.
func TestObjectNamesListEveryRenderedName(t *testing.T) {
	sr := starrocks("team-b", "analytics", v1alpha1.TypeCluster)
	sr.Spec.Users = []v1alpha1.User{{Name: "analyst"}, {Name: "etl_job"}}
	objs, err := chartrender.RenderInstances(moduleValues(t, nil, sr), chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}
	names := desired.ObjectNames(sr.Name)
	seen := map[string]bool{}
	for _, o := range objs {
		for _, u := range namesUsed(t, o) {
			kind, name, _ := cut(u)
			seen[kind] = true
			if !desired.Has(names, kind, name) {
				t.Errorf("%s %s uses %s, which desired.ObjectNames(%q) does not list", o.GetKind(), o.GetName(), u, sr.Name)
			}
		}
	}
	for _, kind := range []string{"StatefulSet", "Pod", "PersistentVolumeClaim", "Secret", "ConfigMap", "Service", "Certificate", "Issuer", "ServiceAccount", "Role", "RoleBinding", "PodDisruptionBudget", "NetworkPolicy"} {
		if !seen[kind] {
			t.Errorf("no %s checked: the test no longer sees what the render makes", kind)
		}
	}
	// The user Secrets are checked through the agent's Role.
	for _, u := range sr.Spec.Users {
		if !desired.Has(names, "Secret", desired.UserSecretName(sr.Name, u.Name)) {
			t.Errorf("user %s: Secret %s not listed", u.Name, desired.UserSecretName(sr.Name, u.Name))
		}
	}
}

func cut(s string) (kind, name string, ok bool) {
	for i := range s {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}
