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
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// exampleInstances are what the hooks compute for the two Starrocks objects
// behind the examples of the instance schema (pkg/desired/instance.schema.yaml): a
// Standalone whose accounts are ready (client ports open) and a TransZonal
// Cluster with TLS required, one allowed namespace and a declared database,
// role and user.
func exampleInstances(t testing.TB) []desired.Instance {
	t.Helper()
	standalone := starrocks("team-a", "example-standalone", v1alpha1.TypeStandalone)
	standalone.UID = types.UID("7d3c9a52-1b6e-4f0a-9c2d-5e8f1a2b3c4d")
	cluster := starrocks("team-a", "example-cluster", v1alpha1.TypeCluster)
	cluster.UID = types.UID("0f4e8b21-6a9d-4c3e-b7f5-2d1c0a9e8b7f")
	cluster.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
	cluster.Spec.TLS = &v1alpha1.TLSSpec{RequireSecureTransport: true}
	cluster.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{
		{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "team-a-apps"}},
	}}
	cluster.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
	cluster.Spec.Roles = []v1alpha1.Role{{Name: "reader", Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}}}
	cluster.Spec.Users = []v1alpha1.User{{Name: "bi", Roles: []string{"reader"}, PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password"}}}
	out := desired.Compute(desired.Input{
		Instances:     []*v1alpha1.Starrocks{standalone, cluster},
		Classes:       []*v1alpha1.StarrocksClass{testClass()},
		ClusterDomain: "cluster.local",
		Existing: map[string]desired.Existing{
			desired.Key("team-a", "example-standalone"): {CertificateRevision: 1, AccountsReady: true},
		},
	})
	for _, r := range out.Results {
		if !r.Valid() {
			t.Fatalf("example instance %s is invalid for the test class: %v", r.Key, r.Violations)
		}
	}
	return out.Instances
}

// The examples of the instance schema document the entries the hooks hand
// on and are what hooks/instanceobjects' tests render: they must be what the
// hooks produce today.
func TestInstanceExamplesAreWhatTheHooksCompute(t *testing.T) {
	examples, err := desired.InstanceExamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) != 1 {
		t.Fatalf("pkg/desired/instance.schema.yaml has %d examples, want 1", len(examples))
	}
	var want []any
	raw, err := json.Marshal(exampleInstances(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(examples[0], want) {
		text, _ := yaml.Marshal(want)
		t.Fatalf("pkg/desired/instance.schema.yaml: the examples differ from what pkg/desired computes for them; replace the example with:\n%s", text)
	}
}

// dmt matches an exclusion in .dmtlint.yaml by kind and exact name, and it
// lints only what Helm renders (the release; instance objects are applied by
// the hooks and never reach it). Every such entry must name an object of
// the release rendered from the examples (and its container): a stale entry
// hides nothing and misleads.
func TestDmtExclusionsNameRenderedExampleObjects(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), ".dmtlint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["kind"]; ok {
				entries = append(entries, v)
				return
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(cfg)
	vals, err := chartrender.ModuleValues(exampleInstances(t), map[string]any{
		"internal": map[string]any{"webhookCert": webhookCert(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := r.RenderRelease(vals, chartrender.DefaultGlobals())
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, e := range entries {
		kind, _ := e["kind"].(string)
		name, _ := e["name"].(string)
		var found *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == kind && o.GetName() == name {
				found = o
				break
			}
		}
		if found == nil {
			t.Errorf(".dmtlint.yaml excludes %s %q, which the release rendered from the example values does not hold", kind, name)
			continue
		}
		container, _ := e["container"].(string)
		if container == "" {
			continue
		}
		list, _, _ := unstructured.NestedSlice(found.Object, "spec", "template", "spec", "containers")
		has := false
		for _, c := range list {
			if m, ok := c.(map[string]any); ok && m["name"] == container {
				has = true
			}
		}
		if !has {
			t.Errorf(".dmtlint.yaml excludes container %q of %s %q, which has no such container", container, kind, name)
		}
	}
}
