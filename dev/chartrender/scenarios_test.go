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
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/moduleschema"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The render tests take their values from pkg/desired, the code the hooks
// run, so a template reading a field the hooks do not produce fails here.

var testZones = []string{"zone-a", "zone-b", "zone-c"}

func testClass() *v1alpha1.StarrocksClass {
	step := resource.MustParse("1Gi")
	return &v1alpha1.StarrocksClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "StarrocksClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal, v1alpha1.TopologyTransZonal},
				DefaultTopology:   v1alpha1.TopologyIgnored,
				AllowedZones:      testZones,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{{
				Cores:         v1alpha1.CoreRange{Min: 1, Max: 16},
				Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("128Gi"), Step: &step},
				CoreFractions: []int32{50, 100},
			}},
			OverridableConfiguration: v1alpha1.AllConfigurationKeys,
			Configuration: v1alpha1.Configuration{
				StreamingLoadMaxMb:               ptr(int64(10240)),
				LoadProcessMaxMemoryLimitPercent: ptr(int32(30)),
				CatalogTrashExpireSecond:         ptr(int64(86400)),
			},
			NodeSelector: map[string]string{"node-role.example.com/analytics": ""},
		},
	}
}

func ptr[T any](v T) *T { return &v }

type scenario struct {
	name     string
	sr       *v1alpha1.Starrocks
	settings map[string]any
}

func component(cores int32, mem, disk string) v1alpha1.ComponentSpec {
	return v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: cores, CoreFraction: 100},
		Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(mem)},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse(disk)},
	}
}

func starrocks(namespace, name string, typ v1alpha1.InstanceType) *v1alpha1.Starrocks {
	sr := &v1alpha1.Starrocks{
		TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name), Generation: 1},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "default",
			Type:               typ,
			Frontend:           component(2, "4Gi", "10Gi"),
			Backend:            v1alpha1.BackendSpec{ComponentSpec: component(4, "8Gi", "100Gi")},
		},
	}
	if typ == v1alpha1.TypeCluster {
		sr.Spec.Backend.Replicas = ptr(int32(3))
	}
	return sr
}

func scenarios() []scenario {
	standalone := starrocks("team-a", "solo", v1alpha1.TypeStandalone)
	cluster := starrocks("team-b", "analytics", v1alpha1.TypeCluster)
	transZonal := starrocks("team-c", "spread", v1alpha1.TypeCluster)
	transZonal.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
	zonal := starrocks("team-e", "onezone", v1alpha1.TypeCluster)
	zonal.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyZonal}
	secure := starrocks("team-d", "secure", v1alpha1.TypeStandalone)
	secure.Spec.TLS = &v1alpha1.TLSSpec{RequireSecureTransport: true}
	return []scenario{
		{name: "Standalone", sr: standalone},
		{name: "Cluster", sr: cluster, settings: map[string]any{
			"certificates": map[string]any{"clusterIssuerName": "corporate-ca"},
			"instances":    map[string]any{"persistentVolumeClaimRetention": "Delete"},
		}},
		{name: "TransZonal", sr: transZonal},
		{name: "Zonal", sr: zonal},
		{name: "requireSecureTransport", sr: secure},
	}
}

// entries runs the hook logic for the given objects and fails the test when
// any of them is not valid for the class.
func entries(t testing.TB, objs ...*v1alpha1.Starrocks) []desired.Instance {
	t.Helper()
	out := desired.Compute(desired.Input{
		Instances:     objs,
		Classes:       []*v1alpha1.StarrocksClass{testClass()},
		ClusterDomain: "cluster.local",
	})
	for _, r := range out.Results {
		if !r.Valid() {
			t.Fatalf("test instance %s is invalid for the test class: %v", r.Key, r.Violations)
		}
	}
	return out.Instances
}

func moduleValues(t testing.TB, settings map[string]any, objs ...*v1alpha1.Starrocks) map[string]any {
	t.Helper()
	return checkedValues(t, entries(t, objs...), settings)
}

// checkedValues are the module values for instances computed by the hooks'
// code, with the settings Deckhouse adds, held to the contract the cluster
// enforces (openapi/).
func checkedValues(t testing.TB, instances []desired.Instance, settings map[string]any) map[string]any {
	t.Helper()
	if settings == nil {
		settings = map[string]any{}
	}
	settings["internal"] = map[string]any{"webhookCert": webhookCert(t)}
	vals, err := chartrender.ModuleValues(instances, settings) // with the registry Deckhouse gives an external module
	if err != nil {
		t.Fatal(err)
	}
	// registry is set by Deckhouse and declared in openapi/values.yaml, so
	// addon-operator's validation of the values accepts it.
	if err := loadSchemas(t).ValidateValues(chartrender.ReleaseValues(vals)); err != nil {
		t.Fatalf("test values break openapi/: %v", err)
	}
	// Each entry holds to the instance schema, as the hooks check it.
	for _, e := range instances {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := desired.ValidateEntry(data); err != nil {
			t.Fatalf("instance %s/%s: %v", e.Namespace, e.Name, err)
		}
	}
	return vals
}

var (
	schemasOnce sync.Once
	schemas     *moduleschema.Schemas
	schemasErr  error
)

func loadSchemas(t testing.TB) *moduleschema.Schemas {
	t.Helper()
	schemasOnce.Do(func() { schemas, schemasErr = moduleschema.Load() })
	if schemasErr != nil {
		t.Fatalf("load openapi schemas: %v", schemasErr)
	}
	return schemas
}

var (
	certOnce sync.Once
	certVals map[string]any
	certErr  error
)

// webhookCert is a real serving certificate, as the module's tls-certificate
// hook would put into values (the apiserver checks the PEM in TLS Secrets).
func webhookCert(t testing.TB) map[string]any {
	t.Helper()
	certOnce.Do(func() {
		ca, err := testpki.NewCA("managed-starrocks-webhook-ca")
		if err != nil {
			certErr = err
			return
		}
		leaf, err := ca.Issue("managed-starrocks-webhook", []string{"managed-starrocks-webhook.d8-managed-starrocks.svc"}, nil, time.Hour)
		if err != nil {
			certErr = err
			return
		}
		certVals = map[string]any{"ca": string(ca.CertPEM), "crt": string(leaf.CertPEM), "key": string(leaf.KeyPEM)}
	})
	if certErr != nil {
		t.Fatalf("issue webhook certificate: %v", certErr)
	}
	return certVals
}

func render(t testing.TB, settings map[string]any, objs ...*v1alpha1.Starrocks) []*unstructured.Unstructured {
	t.Helper()
	out, err := renderValues(moduleValues(t, settings, objs...))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out
}

// releases holds the objects of every release the tests rendered, by the
// JSON of the values tree and globals Helm saw. Helm sees no instance entry
// (ReleaseValues drops them), so the hundreds of renders of the scenario and
// hostile-input tests, which differ only in their entries, would have the
// Helm engine render the same few releases again and again.
var releases sync.Map

// renderValues is chartrender.Render with each distinct release rendered
// once: the instances' objects are rendered anew every time, the release's
// are copies of the first render of the same values.
func renderValues(vals map[string]any) ([]*unstructured.Unstructured, error) {
	globals := chartrender.DefaultGlobals()
	key, err := json.Marshal([]any{chartrender.ReleaseValues(vals), globals})
	if err != nil {
		return nil, err
	}
	cached, ok := releases.Load(string(key))
	if !ok {
		// Helm renders the tree decoded from the key, so that the key
		// stands for exactly what it rendered (values reach Helm through
		// JSON in the cluster too).
		var tree []map[string]any
		if err := json.Unmarshal(key, &tree); err != nil {
			return nil, err
		}
		r, err := chartrender.Default()
		if err != nil {
			return nil, err
		}
		objs, err := r.RenderRelease(tree[0], tree[1])
		if err != nil {
			return nil, err
		}
		cached, _ = releases.LoadOrStore(string(key), objs)
	}
	release := cached.([]*unstructured.Unstructured)
	out := make([]*unstructured.Unstructured, 0, len(release))
	for _, o := range release {
		out = append(out, o.DeepCopy())
	}
	instances, err := chartrender.RenderInstances(vals, globals)
	if err != nil {
		return nil, err
	}
	return append(out, instances...), nil
}
