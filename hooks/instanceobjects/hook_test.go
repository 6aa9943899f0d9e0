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

package instanceobjects

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// exampleInstances are the instances of openapi/values.yaml's x-examples: a
// Standalone and a Cluster in team-a, as the instances hook computes them.
func exampleInstances(t testing.TB) []map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../openapi/values.yaml")
	require.NoError(t, err)
	var schema struct {
		Properties struct {
			Internal struct {
				Properties struct {
					Instances struct {
						Examples [][]map[string]any `json:"x-examples"`
					} `json:"instances"`
				} `json:"properties"`
			} `json:"internal"`
		} `json:"properties"`
	}
	require.NoError(t, yaml.Unmarshal(data, &schema))
	examples := schema.Properties.Internal.Properties.Instances.Examples
	require.NotEmpty(t, examples, "openapi/values.yaml has instance x-examples")
	require.Len(t, examples[0], 2)
	return examples[0]
}

const globals = `{"global": {"discovery": {"clusterDomain": "cluster.local"}, "modulesImages": {"registry": {"base": "registry.example.com/managed-starrocks"},
 "digests": {"managedStarrocks": {"agent": "sha256:aaaa", "starrocksFe": "sha256:cccc", "starrocksBe": "sha256:dddd"}}}}}`

func newHook(t *testing.T, instances []map[string]any) *framework.HookExecutionConfig {
	t.Helper()
	f := framework.NewHookExecutionConfig(t, Config, Handle, framework.WithInitialValues(globals))
	f.RegisterCRD("cert-manager.io", "v1", "Certificate", true)
	f.RegisterCRD("cert-manager.io", "v1", "Issuer", true)
	f.ValuesSet(shared.InstancesValuesPath, instances)
	return f
}

// writes are the objects a run created or updated, as "Kind namespace/name".
func writes(f *framework.HookExecutionConfig) []string {
	var out []string
	for _, p := range f.PatchedOperations() {
		if o, ok := p.Object.(*unstructured.Unstructured); ok {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

func gvr(k instanceobjects.Kind) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(k.APIVersion)
	resource := strings.ToLower(k.Kind) + "s"
	if strings.HasSuffix(k.Kind, "Policy") {
		resource = strings.TrimSuffix(strings.ToLower(k.Kind), "y") + "ies"
	}
	return gv.WithResource(resource)
}

// live lists the instance objects in namespace of the fake cluster.
func live(t *testing.T, f *framework.HookExecutionConfig, namespace string) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	for _, k := range instanceobjects.Kinds {
		list, err := f.KubeClient().Resource(gvr(k)).Namespace(namespace).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err, k.Kind)
		out = append(out, list.Items...)
	}
	return out
}

// rerun is the next hook run on the same cluster and values.
func rerun(t *testing.T, f *framework.HookExecutionConfig) {
	t.Helper()
	f.RunHook()
	require.NoError(t, f.HookError())
}

func TestWritesEveryObjectOnceThenNothingUntilSomethingChanges(t *testing.T) {
	instances := exampleInstances(t)
	f := newHook(t, instances)
	rerun(t, f)
	first := writes(f)
	objs := live(t, f, "team-a")
	require.NotEmpty(t, objs)
	assert.Len(t, first, len(objs), "each object of both instances written once")
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
		assert.NotEmpty(t, o.GetAnnotations()[instanceobjects.ChecksumAnnotation], "%s %s", o.GetKind(), o.GetName())
		assert.Equal(t, "keep", o.GetAnnotations()["helm.sh/resource-policy"], "%s %s", o.GetKind(), o.GetName())
		require.Len(t, o.GetOwnerReferences(), 1, "%s %s", o.GetKind(), o.GetName())
		assert.Equal(t, "Starrocks", o.GetOwnerReferences()[0].Kind)
	}
	assert.Len(t, kinds, len(instanceobjects.Kinds), "every kind of instance object is rendered")
	assert.Equal(t, "StatefulSet", strings.Fields(first[len(first)-1])[0], "the StatefulSets come last, after what their pods mount")

	rerun(t, f)
	assert.Empty(t, writes(f), "a steady cluster gets no write")

	t.Run("a deleted object comes back, and only its instance is written", func(t *testing.T) {
		svc := "d8ms-sr-example-cluster"
		require.NoError(t, f.KubeClient().Resource(gvr(instanceobjects.Kind{APIVersion: "v1", Kind: "Service"})).Namespace("team-a").Delete(t.Context(), svc, metav1.DeleteOptions{}))
		rerun(t, f)
		w := writes(f)
		assert.Contains(t, w, "Service team-a/"+svc)
		for _, x := range w {
			assert.Contains(t, x, "example-cluster", "only the instance that lost an object is written")
		}
	})

	t.Run("a changed entry rewrites its instance", func(t *testing.T) {
		changed := cloneInstances(t, instances)
		changed[1]["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(7200)
		f.ValuesSet(shared.InstancesValuesPath, changed)
		rerun(t, f)
		w := writes(f)
		assert.Contains(t, w, "ConfigMap team-a/d8ms-sr-"+changed[1]["name"].(string)+"-config")
		for _, x := range w {
			assert.Contains(t, x, changed[1]["name"].(string))
		}
		rerun(t, f)
		assert.Empty(t, writes(f))
	})
}

func cloneInstances(t testing.TB, in []map[string]any) []map[string]any {
	t.Helper()
	data, err := json.Marshal(in)
	require.NoError(t, err)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// A tenant of another namespace copies an instance's objects, labels and
// checksums included, and claims its name: the instance of team-a is still
// rendered (an object counts only in its own namespace).
func TestLookAlikesInAnotherNamespaceDoNotCount(t *testing.T) {
	instances := exampleInstances(t)
	f := newHook(t, instances)
	rerun(t, f)
	for _, o := range live(t, f, "team-a") {
		copied := o.DeepCopy()
		copied.SetNamespace("team-b")
		copied.SetResourceVersion("")
		copied.SetUID("")
		_, err := f.KubeClient().Resource(gvr(instanceobjects.Kind{APIVersion: o.GetAPIVersion(), Kind: o.GetKind()})).Namespace("team-b").Create(t.Context(), copied, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	victim := live(t, f, "team-a")
	for _, o := range victim {
		require.NoError(t, f.KubeClient().Resource(gvr(instanceobjects.Kind{APIVersion: o.GetAPIVersion(), Kind: o.GetKind()})).Namespace("team-a").Delete(t.Context(), o.GetName(), metav1.DeleteOptions{}))
	}
	rerun(t, f)
	assert.Len(t, writes(f), len(victim), "team-a's objects are written again despite the copies in team-b")
}

// An entry that cannot render (here: no namespace, which openapi/ refuses
// before it could reach the hook) is logged; the other instances are
// written and the run succeeds, since a failed run would drop every write.
func TestAnEntryThatCannotRenderHoldsBackNoOther(t *testing.T) {
	instances := exampleInstances(t)
	broken := cloneInstances(t, instances[:1])[0]
	delete(broken, "namespace")
	f := newHook(t, append([]map[string]any{broken}, instances[1:]...))
	rerun(t, f)
	w := writes(f)
	require.NotEmpty(t, w)
	for _, x := range w {
		assert.Contains(t, x, instances[1]["name"].(string))
	}
	assert.Contains(t, f.LoggerOutput().String(), "instance objects not rendered")
}

// Without the images or the cluster domain nothing can render: the run fails
// and says what is missing (Deckhouse shows a failing hook).
func TestMissingModuleInputsFailTheRun(t *testing.T) {
	f := framework.NewHookExecutionConfig(t, Config, Handle, framework.WithInitialValues(`{"global": {"discovery": {"clusterDomain": "cluster.local"}}}`))
	f.RegisterCRD("cert-manager.io", "v1", "Certificate", true)
	f.RegisterCRD("cert-manager.io", "v1", "Issuer", true)
	f.ValuesSet(shared.InstancesValuesPath, exampleInstances(t))
	f.RunHook()
	require.Error(t, f.HookError())
	assert.Contains(t, f.HookError().Error(), "global.modulesImages.digests.managedStarrocks.starrocksFe")
	assert.Empty(t, writes(f))
}
