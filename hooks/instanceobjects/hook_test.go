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
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// exampleInstances are the examples of the instance schema
// (pkg/desired/instance.schema.yaml): a Standalone and a Cluster in team-a,
// as the instances hook computes them.
func exampleInstances(t testing.TB) []map[string]any {
	t.Helper()
	examples, err := desired.InstanceExamples()
	require.NoError(t, err)
	require.NotEmpty(t, examples, "the instance schema has examples")
	require.Len(t, examples[0], 2)
	data, err := json.Marshal(examples[0])
	require.NoError(t, err)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// setEntries hands entries to the hook as the instances hook does: one
// ConfigMap desired-<uid> each in the module namespace, replacing those there.
func setEntries(t testing.TB, client dynamic.Interface, instances []map[string]any) {
	t.Helper()
	cms := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(shared.ModuleNamespace)
	list, err := cms.List(context.Background(), metav1.ListOptions{LabelSelector: shared.LabelState + "=" + shared.StateDesired})
	require.NoError(t, err)
	for _, cm := range list.Items {
		require.NoError(t, cms.Delete(context.Background(), cm.GetName(), metav1.DeleteOptions{}))
	}
	for _, inst := range instances {
		data, err := json.Marshal(inst)
		require.NoError(t, err)
		uid, _ := inst["uid"].(string)
		name, _ := inst["name"].(string)
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(shared.ModuleNamespace)
		cm.SetName(shared.DesiredConfigMapName(uid))
		cm.SetLabels(shared.InstanceLabels(name, shared.StateDesired))
		require.NoError(t, unstructured.SetNestedField(cm.Object, string(data), "data", shared.LastValidKey))
		_, err = cms.Create(context.Background(), cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

const globals = `{"global": {"discovery": {"clusterDomain": "cluster.local"}, "modulesImages": {"registry": {"base": "registry.example.com/managed-starrocks"},
 "digests": {"managedStarrocks": {"agent": "sha256:aaaa", "starrocksFe": "sha256:cccc", "starrocksBe": "sha256:dddd", "starrocksCn": "sha256:eeee"}}}}}`

var starrocksGVR = schema.GroupVersionResource{Group: "managed-services.deckhouse.io", Version: "v1alpha1", Resource: "starrockses"} // the fake cluster guesses the plural

// cluster is the framework's fake cluster made to answer as an API server
// does for what the hook reads (a UID on create, a resourceVersion on every
// write, a generation for the kinds that have one, bumped when anything but
// metadata and status changes), recording the instance objects each run
// writes and refusing what a test tells it to.
type cluster struct {
	f      *framework.HookExecutionConfig
	fake   *dynamicfake.FakeDynamicClient
	mu     sync.Mutex
	rv     int
	writes map[string]bool
	// refuse returns the API server's refusal of a write (verb create or
	// update), or nil.
	refuse func(verb string, o *unstructured.Unstructured) error
}

// generationKinds are the kinds of instance objects the API server gives a
// metadata.generation.
var generationKinds = map[string]bool{"StatefulSet": true, "PodDisruptionBudget": true, "NetworkPolicy": true, "Certificate": true, "Issuer": true}

func newCluster(t *testing.T, instances []map[string]any) *cluster {
	t.Helper()
	return newClusterFor(t, Config, Handle, instances)
}

// newClusterFor is newCluster running another hook of the package.
func newClusterFor(t *testing.T, config *pkg.HookConfig, handle func(context.Context, *pkg.HookInput) error, instances []map[string]any) *cluster {
	t.Helper()
	f := framework.NewHookExecutionConfig(t, config, handle, framework.WithInitialValues(globals))
	f.RegisterCRD("cert-manager.io", "v1", "Certificate", true)
	f.RegisterCRD("cert-manager.io", "v1", "Issuer", true)
	f.RegisterCRD("managed-services.deckhouse.io", "v1alpha1", "Starrocks", true)
	c := &cluster{f: f, fake: f.KubeClient().(*dynamicfake.FakeDynamicClient), writes: map[string]bool{}}
	setEntries(t, c.fake, instances)
	c.fake.PrependReactor("*", "*", c.react)
	for _, inst := range instances {
		c.addStarrocks(t, inst)
	}
	return c
}

// addStarrocks creates the Starrocks of a values entry, with its UID.
func (c *cluster) addStarrocks(t *testing.T, inst map[string]any) {
	t.Helper()
	sr := &unstructured.Unstructured{}
	sr.SetAPIVersion("managed-services.deckhouse.io/v1alpha1")
	sr.SetKind("Starrocks")
	sr.SetNamespace(inst["namespace"].(string))
	sr.SetName(inst["name"].(string))
	sr.SetUID(types.UID(inst["uid"].(string)))
	_, err := c.fake.Resource(starrocksGVR).Namespace(sr.GetNamespace()).Create(t.Context(), sr, metav1.CreateOptions{})
	require.NoError(t, err)
}

func (c *cluster) react(a clienttesting.Action) (bool, runtime.Object, error) {
	var o *unstructured.Unstructured
	switch x := a.(type) {
	case clienttesting.CreateAction:
		o, _ = x.GetObject().(*unstructured.Unstructured)
	case clienttesting.UpdateAction:
		o, _ = x.GetObject().(*unstructured.Unstructured)
	}
	if o == nil {
		return false, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse != nil {
		if err := c.refuse(a.GetVerb(), o); err != nil {
			return true, nil, err
		}
	}
	old, err := c.fake.Tracker().Get(a.GetResource(), a.GetNamespace(), o.GetName())
	exists := err == nil
	if a.GetVerb() == "create" && exists {
		return false, nil, nil // the tracker answers AlreadyExists
	}
	c.rv++
	o.SetResourceVersion(fmt.Sprint(c.rv))
	if exists {
		prev := old.(*unstructured.Unstructured)
		o.SetUID(prev.GetUID())
		gen := prev.GetGeneration()
		if generationKinds[o.GetKind()] && !equality.Semantic.DeepEqual(content(prev), content(o)) {
			gen++
		}
		o.SetGeneration(gen)
	} else {
		if o.GetUID() == "" {
			o.SetUID(uuid.NewUUID())
		}
		if generationKinds[o.GetKind()] {
			o.SetGeneration(1)
		}
	}
	if o.GetNamespace() != shared.ModuleNamespace && o.GetKind() != "Event" && o.GetKind() != "Starrocks" {
		c.writes[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = true
	}
	return false, nil, nil
}

// content is an object without metadata and status: what a generation
// counts.
func content(o *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range o.Object {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	return out
}

// run is the next hook run on the same cluster and values; it returns the
// instance objects written, sorted.
func (c *cluster) run(t *testing.T) []string {
	t.Helper()
	c.mu.Lock()
	c.writes = map[string]bool{}
	c.mu.Unlock()
	c.f.RunHook()
	require.NoError(t, c.f.HookError())
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.writes))
	for w := range c.writes {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// records are the ConfigMaps the last run wrote or deleted in the module
// namespace (the patch collector's operations).
func (c *cluster) recordWrites() []string {
	var out []string
	for _, p := range c.f.PatchedOperations() {
		if o, err := meta.Accessor(p.Object); err == nil && p.Object != nil {
			out = append(out, o.GetName())
		} else if p.Name != "" {
			out = append(out, string(p.Type)+" "+p.Name)
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

func kindGVR(kind string) schema.GroupVersionResource {
	for _, k := range instanceobjects.Kinds {
		if k.Kind == kind {
			return gvr(k)
		}
	}
	return schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(kind) + "s"}
}

// live lists the instance objects in namespace of the fake cluster.
func (c *cluster) live(t *testing.T, namespace string) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	for _, k := range instanceobjects.Kinds {
		list, err := c.fake.Resource(gvr(k)).Namespace(namespace).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err, k.Kind)
		out = append(out, list.Items...)
	}
	return out
}

func (c *cluster) get(t *testing.T, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	o, err := c.fake.Resource(kindGVR(kind)).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err, "%s %s/%s", kind, namespace, name)
	return o
}

func (c *cluster) update(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	_, err := c.fake.Resource(kindGVR(o.GetKind())).Namespace(o.GetNamespace()).Update(t.Context(), o, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func cloneInstances(t testing.TB, in []map[string]any) []map[string]any {
	t.Helper()
	data, err := json.Marshal(in)
	require.NoError(t, err)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// twoTenants are the examples' Standalone in team-a and Cluster in team-b.
func twoTenants(t testing.TB) []map[string]any {
	t.Helper()
	out := cloneInstances(t, exampleInstances(t))
	out[1]["namespace"] = "team-b"
	return out
}

func TestWritesEveryObjectOnceThenNothingUntilSomethingChanges(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	first := c.run(t)
	objs := c.live(t, "team-a")
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
	// Every kind but the CN autoscaler, which only a shared-data instance
	// with compute.autoscaling has (TestSharedDataAutoscalerOwnsTheCNCount).
	assert.Len(t, kinds, len(instanceobjects.Kinds)-1, "every kind of instance object is rendered")
	assert.False(t, kinds["HorizontalPodAutoscaler"])
	for _, inst := range instances {
		rec := record(t, c, inst["uid"].(string))
		assert.NotEmpty(t, rec.Checksum)
		assert.Nil(t, rec.Refused)
		assert.NotEmpty(t, rec.Objects)
	}

	assert.Empty(t, c.run(t), "a steady cluster gets no write")
	assert.Empty(t, c.recordWrites(), "nor a record")

	t.Run("a deleted object comes back, and only its instance is written", func(t *testing.T) {
		svc := "d8ms-sr-example-cluster"
		require.NoError(t, c.fake.Resource(kindGVR("Service")).Namespace("team-a").Delete(t.Context(), svc, metav1.DeleteOptions{}))
		w := c.run(t)
		assert.Contains(t, w, "Service team-a/"+svc)
		for _, x := range w {
			assert.Contains(t, x, "example-cluster", "only the instance that lost an object is written")
		}
		assert.Empty(t, c.run(t))
	})

	t.Run("a changed entry rewrites its instance", func(t *testing.T) {
		changed := cloneInstances(t, instances)
		changed[1]["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(7200)
		setEntries(t, c.fake, changed)
		w := c.run(t)
		assert.Contains(t, w, "ConfigMap team-a/d8ms-sr-"+changed[1]["name"].(string)+"-config")
		for _, x := range w {
			assert.Contains(t, x, changed[1]["name"].(string))
		}
		assert.Empty(t, c.run(t))
	})
}

// A rewrite of an instance replaces the objects the snapshots have without
// trying to create them first (a create the API server would admit in full
// before finding the name taken); one deleted after the snapshot is created
// again in the same run.
func TestARewriteReplacesLiveObjectsWithoutACreate(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.run(t)
	name := instances[1]["name"].(string)
	gone := "d8ms-sr-" + name
	deleted := false
	c.fake.PrependReactor("get", "services", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if g := a.(clienttesting.GetAction); g.GetName() == gone && !deleted {
			deleted = true
			require.NoError(t, c.fake.Tracker().Delete(a.GetResource(), g.GetNamespace(), g.GetName()))
		}
		return false, nil, nil
	})
	changed := cloneInstances(t, instances)
	changed[1]["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(7200)
	setEntries(t, c.fake, changed)
	c.fake.ClearActions()
	written := c.run(t)
	require.NotEmpty(t, written)
	require.True(t, deleted, "the Service %s was read before its update", gone)
	var creates []string
	for _, a := range c.fake.Actions() {
		if a.GetVerb() == "create" && a.GetNamespace() == "team-a" {
			creates = append(creates, a.GetResource().Resource+" "+a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured).GetName())
		}
	}
	assert.Equal(t, []string{"services " + gone}, creates, "only the object deleted after the snapshot is created")
	c.get(t, "Service", "team-a", gone)
	assert.Nil(t, record(t, c, changed[1]["uid"].(string)).Refused)
}

// record reads the record of the Starrocks with uid from the fake cluster.
func record(t *testing.T, c *cluster, uid string) *appliedRecord {
	t.Helper()
	cm := c.get(t, "ConfigMap", shared.ModuleNamespace, "applied-"+uid)
	assert.Equal(t, "applied", cm.GetLabels()[shared.LabelState])
	assert.Equal(t, "starrocks", cm.GetLabels()[shared.LabelServiceType])
	data, _, _ := unstructured.NestedString(cm.Object, "data", "record.json")
	var r appliedRecord
	require.NoError(t, json.Unmarshal([]byte(data), &r))
	return &r
}

// appliedRecord is the record as JSON has it (the test reads it from the
// outside, as a person would).
type appliedRecord struct {
	Namespace, Name, UID, Checksum string
	Objects                        []struct{ Kind, Name, UID, Version, Metadata string }
	Refused                        *struct{ Object, Message string }
}

// A tenant of another namespace copies an instance's objects, labels and
// checksums included: the instance of team-a is still rendered (an object
// counts only in its own namespace).
func TestLookAlikesInAnotherNamespaceDoNotCount(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.run(t)
	for _, o := range c.live(t, "team-a") {
		copied := o.DeepCopy()
		copied.SetNamespace("team-b")
		copied.SetResourceVersion("")
		copied.SetUID("")
		_, err := c.fake.Resource(kindGVR(o.GetKind())).Namespace("team-b").Create(t.Context(), copied, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	victim := c.live(t, "team-a")
	for _, o := range victim {
		require.NoError(t, c.fake.Resource(kindGVR(o.GetKind())).Namespace("team-a").Delete(t.Context(), o.GetName(), metav1.DeleteOptions{}))
	}
	assert.Len(t, c.run(t), len(victim), "team-a's objects are written again despite the copies in team-b")
}

// An entry that cannot render (here: no namespace, which the instance schema
// refuses) is logged; the other instances are
// written and the run succeeds, since a failed run would drop every write.
func TestAnEntryThatCannotRenderHoldsBackNoOther(t *testing.T) {
	instances := exampleInstances(t)
	broken := cloneInstances(t, instances[:1])[0]
	delete(broken, "namespace")
	c := newCluster(t, instances[1:])
	setEntries(t, c.fake, append([]map[string]any{broken}, instances[1:]...))
	w := c.run(t)
	require.NotEmpty(t, w)
	for _, x := range w {
		assert.Contains(t, x, instances[1]["name"].(string))
	}
	assert.Contains(t, c.f.LoggerOutput().String(), "instance objects not rendered")
}

// An entry that breaks the instance schema (here a storage class name that
// could end a YAML scalar, which every layer before refuses) is not
// rendered: the schema is the last layer between a tenant's strings and the
// templates. The other instances are written and the run succeeds.
func TestAnEntryBreakingTheInstanceSchemaIsNotRendered(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	broken := cloneInstances(t, instances)
	broken[0]["frontend"].(map[string]any)["storage"].(map[string]any)["storageClassName"] = "x\"\n  evil: true"
	setEntries(t, c.fake, broken)
	w := c.run(t)
	require.NotEmpty(t, w)
	for _, x := range w {
		assert.Contains(t, x, instances[1]["name"].(string), "only the valid instance is written")
	}
	assert.Contains(t, c.f.LoggerOutput().String(), "instance schema")
}

// Without the images or the cluster domain nothing can render: the run fails
// and says what is missing (Deckhouse shows a failing hook).
func TestMissingModuleInputsFailTheRun(t *testing.T) {
	f := framework.NewHookExecutionConfig(t, Config, Handle, framework.WithInitialValues(`{"global": {"discovery": {"clusterDomain": "cluster.local"}}}`))
	f.RegisterCRD("cert-manager.io", "v1", "Certificate", true)
	f.RegisterCRD("cert-manager.io", "v1", "Issuer", true)
	f.RegisterCRD("managed-services.deckhouse.io", "v1alpha1", "Starrocks", true)
	setEntries(t, f.KubeClient(), exampleInstances(t))
	f.RunHook()
	require.Error(t, f.HookError())
	assert.Contains(t, f.HookError().Error(), "global.modulesImages.digests.managedStarrocks.starrocksFe")
}

// An external module's registry (managedStarrocks.registry.base, which
// Deckhouse sets from the ModuleSource) is where the instance pods' images
// come from, read by the hook from its values as lib-helm's
// helm_lib_module_image reads it: <base>/managed-starrocks@<digest>.
func TestInstanceImagesComeFromTheModulesRegistry(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.f.ValuesSet("managedStarrocks.registry.base", "registry.example.com/modules-source/")
	c.run(t)
	for _, o := range c.live(t, "team-a") {
		if o.GetKind() != "StatefulSet" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		require.NotEmpty(t, containers)
		for _, x := range containers {
			image, _ := x.(map[string]any)["image"].(string)
			assert.True(t, strings.HasPrefix(image, "registry.example.com/modules-source/managed-starrocks@sha256:"), "%s: image %s", o.GetName(), image)
		}
	}
}
