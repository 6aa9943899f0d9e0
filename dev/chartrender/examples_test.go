package chartrender_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// exampleInstances are what the hooks compute for the two Starrocks objects
// behind the x-examples of internal.instances in openapi/values.yaml: a
// Standalone whose accounts are ready (client ports open) and a TransZonal
// Cluster with TLS required and one allowed namespace.
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

// The x-examples of internal.instances are how dmt (Deckhouse's module
// linter) renders the instance templates: it takes values from the openapi
// schemas, and without an example the list is empty. They must be what the
// hooks produce today, or dmt lints objects the module never renders.
func TestValuesExamplesAreWhatTheHooksCompute(t *testing.T) {
	examples, err := loadSchemas(t).InstanceExamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) != 1 {
		t.Fatalf("openapi/values.yaml: internal.instances has %d x-examples, want 1 (dmt renders one value set)", len(examples))
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
		t.Fatalf("openapi/values.yaml: the x-examples of internal.instances differ from what pkg/desired computes for them; replace the example with:\n%s", text)
	}
}
