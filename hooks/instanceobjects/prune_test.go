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
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// olderVersion makes the fake cluster look as a module version that rendered
// more left it: for each extra (kind, name) a copy of the instance's object
// of that kind under the new name, with the module's labels and its
// ownerReference, and the instance's record listing it, with that version's
// checksum. Returns the extras' UIDs by name.
func olderVersion(t *testing.T, c *cluster, inst map[string]any, extras [][2]string) map[string]string {
	t.Helper()
	ns, name, uid := inst["namespace"].(string), inst["name"].(string), inst["uid"].(string)
	cm := c.get(t, "ConfigMap", shared.ModuleNamespace, applied.ConfigMapName(uid))
	data, _, _ := unstructured.NestedString(cm.Object, "data", applied.Key)
	rec, err := applied.Parse(data)
	require.NoError(t, err)
	uids := map[string]string{}
	for _, x := range extras {
		var like *unstructured.Unstructured
		for _, o := range c.live(t, ns) {
			if o.GetKind() == x[0] && o.GetLabels()[shared.LabelServiceName] == name {
				like = o.DeepCopy()
				break
			}
		}
		require.NotNil(t, like, "a %s of %s", x[0], name)
		like.SetName(x[1])
		like.SetUID("")
		like.SetResourceVersion("")
		created, err := c.fake.Resource(kindGVR(x[0])).Namespace(ns).Create(t.Context(), like, metav1.CreateOptions{})
		require.NoError(t, err)
		uids[x[1]] = string(created.GetUID())
		rec.Objects = append(rec.Objects, objectOf(created))
	}
	rec.Checksum = "the-older-version"
	raw, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(cm.Object, string(raw), "data", applied.Key))
	c.update(t, cm)
	return uids
}

func (c *cluster) exists(t *testing.T, kind, namespace, name string) bool {
	t.Helper()
	_, err := c.fake.Resource(kindGVR(kind)).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

// An upgrade to a version that renders fewer objects: what the older version
// made for the instance and the new one does not render is deleted once the
// new render is written; a tenant's look-alike (the module's labels and an
// ownerReference to the same Starrocks, but never in a record), an object
// re-created by the tenant under a recorded name, a StatefulSet and the other
// instance's objects stay.
func TestAnObjectTheNewVersionNoLongerRendersIsPruned(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.run(t)
	a, b := instances[0], instances[1]
	ns, name := a["namespace"].(string), a["name"].(string)
	retiredCM, retiredSvc, swapped, oldSts := "d8ms-sr-"+name+"-retired", "d8ms-sr-"+name+"-retired", "d8ms-sr-"+name+"-swapped", "d8ms-sr-"+name+"-old"
	olderVersion(t, c, a, [][2]string{{"ConfigMap", retiredCM}, {"Service", retiredSvc}, {"ConfigMap", swapped}, {"StatefulSet", oldSts}})

	// The tenant's own doing: a look-alike of the module's objects that no
	// record lists, and a recorded object it deleted and made again.
	lookAlike := c.get(t, "ConfigMap", ns, retiredCM).DeepCopy()
	lookAlike.SetName("d8ms-sr-" + name + "-mine")
	lookAlike.SetUID("")
	lookAlike.SetResourceVersion("")
	_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace(ns).Create(t.Context(), lookAlike, metav1.CreateOptions{})
	require.NoError(t, err)
	again := c.get(t, "ConfigMap", ns, swapped).DeepCopy()
	require.NoError(t, c.fake.Resource(kindGVR("ConfigMap")).Namespace(ns).Delete(t.Context(), swapped, metav1.DeleteOptions{}))
	again.SetUID("")
	again.SetResourceVersion("")
	_, err = c.fake.Resource(kindGVR("ConfigMap")).Namespace(ns).Create(t.Context(), again, metav1.CreateOptions{})
	require.NoError(t, err)
	bObjects := len(record(t, c, b["uid"].(string)).Objects)

	w := c.run(t)
	assert.NotEmpty(t, writtenFor(w, ns, name), "the older version's instance is written")
	assert.False(t, c.exists(t, "ConfigMap", ns, retiredCM), "a ConfigMap the new version does not render is pruned")
	assert.False(t, c.exists(t, "Service", ns, retiredSvc), "a Service the new version does not render is pruned")
	assert.True(t, c.exists(t, "ConfigMap", ns, "d8ms-sr-"+name+"-mine"), "the tenant's look-alike stays")
	assert.True(t, c.exists(t, "ConfigMap", ns, swapped), "an object the tenant made under a recorded name stays")
	assert.True(t, c.exists(t, "StatefulSet", ns, oldSts), "a StatefulSet is never pruned")
	rec := record(t, c, a["uid"].(string))
	assert.Nil(t, rec.Refused)
	assert.NotEqual(t, "the-older-version", rec.Checksum)
	for _, o := range rec.Objects {
		assert.NotContains(t, []string{retiredCM, swapped, oldSts}, o.Name, "the new record lists what the new version rendered")
	}
	assert.Len(t, record(t, c, b["uid"].(string)).Objects, bObjects, "the other instance is untouched")
	assert.Empty(t, c.run(t), "then nothing is written")
}

// A delete the API server refuses (a tenant's admission policy) is recorded
// for its instance like a refused write, the other instance is written in
// the same run and the run succeeds; once the refusal goes, the next run
// prunes it.
func TestARefusedPruneIsRetried(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.run(t)
	a := instances[0]
	ns, name := a["namespace"].(string), a["name"].(string)
	retired := "d8ms-sr-" + name + "-retired"
	olderVersion(t, c, a, [][2]string{{"ConfigMap", retired}})
	refuse := true
	c.fake.PrependReactor("delete", "configmaps", func(act clienttesting.Action) (bool, runtime.Object, error) {
		if refuse && act.GetNamespace() == ns {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, retired, errors.New("denied by the tenant"))
		}
		return false, nil, nil
	})
	bump(t, c, instances, 7200)
	w := c.run(t)
	assert.NotEmpty(t, writtenFor(w, "team-a", instances[1]["name"].(string)), "the other instance is written in the same run")
	assert.True(t, c.exists(t, "ConfigMap", ns, retired))
	rec := record(t, c, a["uid"].(string))
	require.NotNil(t, rec.Refused)
	assert.Equal(t, "delete of ConfigMap "+ns+"/"+retired, rec.Refused.Object)
	assert.Contains(t, rec.Refused.Message, "denied by the tenant")
	assert.Empty(t, rec.Checksum)

	refuse = false
	c.run(t)
	assert.False(t, c.exists(t, "ConfigMap", ns, retired), "pruned once the refusal goes")
	rec = record(t, c, a["uid"].(string))
	assert.Nil(t, rec.Refused)
	assert.NotEmpty(t, rec.Checksum)
}
