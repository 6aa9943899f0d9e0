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

package rbac_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// exampleEntries are the values examples of openapi/values.yaml (two
// instances of namespace team-a), as generic JSON.
func exampleEntries(t *testing.T) []any {
	t.Helper()
	examples, err := desired.InstanceExamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 || len(examples[0]) != 2 {
		t.Fatalf("the instance schema's examples: %d lists, want one of 2 instances", len(examples))
	}
	return examples[0]
}

// The agent's Role on a real apiserver: its ServiceAccount reads and
// writes exactly the Secrets of its instance's declared users and reads
// the team's password Secrets they name; with no user declared it
// reaches no Secret at all (a rule with an empty resourceNames would
// allow every one).
func TestAgentReachesOnlyItsUsersSecrets(t *testing.T) {
	entries := exampleEntries(t)
	withUsers, without := entries[0].(map[string]any), entries[1].(map[string]any)
	ns := withUsers["namespace"].(string)
	if without["namespace"] != ns {
		t.Fatalf("the examples are in %s and %s, want one namespace", ns, without["namespace"])
	}
	name, other := withUsers["name"].(string), without["name"].(string)
	reader, writer := desired.UserSecretName(name, "reader"), desired.UserSecretName(name, "app_writer")
	withUsers["agentConfig"].(map[string]any)["grants"] = map[string]any{"databases": []any{}, "roles": []any{}, "users": []any{
		map[string]any{"name": "reader", "secretName": reader},
		map[string]any{"name": "app_writer", "secretName": writer, "passwordSecret": map[string]any{"name": "team-passwords", "key": "writer"}},
	}}
	without["agentConfig"].(map[string]any)["grants"] = map[string]any{"databases": []any{}, "roles": []any{}, "users": []any{}}
	vals, err := chartrender.ModuleValues(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := chartrender.RenderInstances(vals, chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}

	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.ModuleCRDDir()}})
	c := &cluster{cfg: cp.RESTConfig()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resources := map[string]schema.GroupVersionResource{
		"ServiceAccount": {Version: "v1", Resource: "serviceaccounts"},
		"Role":           {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
		"RoleBinding":    {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	}
	for _, o := range objs {
		gvr, ok := resources[o.GetKind()]
		if !ok {
			continue
		}
		o = o.DeepCopy()
		o.SetOwnerReferences(nil) // no Starrocks exists here
		if _, err := admin.Resource(gvr).Namespace(ns).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	secret := func(verb, name string) check {
		return check{verb: verb, resource: "secrets", namespace: ns, name: name}
	}
	for _, tt := range []struct {
		instance string
		allowed  []check
	}{
		{name, []check{secret("get", reader), secret("patch", reader), secret("get", writer), secret("patch", writer), secret("get", "team-passwords")}},
		{other, nil},
	} {
		t.Run(tt.instance, func(t *testing.T) {
			sa := "system:serviceaccount:" + ns + ":" + desired.NamesFor(tt.instance).FrontendStatefulSet + "-agent"
			cfg := rest.CopyConfig(c.cfg)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
			cs := mustClientset(t, cfg)
			allowed := map[string]bool{}
			for _, a := range tt.allowed {
				allowed[a.String()] = true
			}
			checks := []check{
				{verb: "list", resource: "secrets", namespace: ns}, {verb: "watch", resource: "secrets", namespace: ns}, {verb: "create", resource: "secrets", namespace: ns},
				{verb: "deletecollection", resource: "secrets", namespace: ns},
				secret("patch", "team-passwords"), secret("update", reader), secret("delete", reader),
				secret("get", desired.NamesFor(name).CredentialsSecret), secret("get", desired.NamesFor(name).AgentCredentialsSecret),
				secret("get", desired.UserSecretName(other, "reader")), secret("get", "anything"), secret("get", ""),
				{verb: "get", resource: "secrets", namespace: otherNS, name: reader},
			}
			checks = append(checks, tt.allowed...)
			if tt.instance == other {
				checks = append(checks, secret("get", reader), secret("get", "team-passwords"))
			}
			for _, chk := range checks {
				got, err := can(ctx, cs, chk)
				if err != nil {
					t.Fatal(err)
				}
				if want := allowed[chk.String()]; got != want {
					t.Errorf("%s: %s allowed=%v, want %v", sa, chk, got, want)
				}
			}
		})
	}
}

func mustClientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
