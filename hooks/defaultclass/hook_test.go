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

package defaultclass

import (
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

func newHook(t *testing.T) *framework.HookExecutionConfig {
	return framework.NewHookExecutionConfig(t, Config, Handle, framework.WithSchemeBuilder(runtime.SchemeBuilder{v1alpha1.AddToScheme}))
}

func TestCreatesTheDefaultClassOnceAndRespectsItsDeletion(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(`{apiVersion: v1, kind: Namespace, metadata: {name: d8-managed-starrocks}}`)
	f.RunHook()
	require.NoError(t, f.HookError())
	require.NotNil(t, f.KubernetesGlobalResource("StarrocksClass", ClassName), "created on the first run")
	require.NotNil(t, f.KubernetesResource("ConfigMap", "d8-managed-starrocks", MarkerName), "and remembered in the cluster")

	// The admin deletes the class; the hooks restart (nothing in memory).
	require.NoError(t, f.KubeClient().Resource(v1alpha1.StarrocksClassGVR).Delete(t.Context(), ClassName, metav1.DeleteOptions{}))
	f = rerun(t, f)
	assert.Nil(t, f.KubernetesGlobalResource("StarrocksClass", ClassName), "a deleted default class does not come back")
}

func rerun(t *testing.T, old *framework.HookExecutionConfig) *framework.HookExecutionConfig {
	t.Helper()
	f := newHook(t)
	f.KubeStateSet(`{apiVersion: v1, kind: Namespace, metadata: {name: d8-managed-starrocks}}`)
	marker := old.KubernetesResource("ConfigMap", "d8-managed-starrocks", MarkerName)
	require.NotNil(t, marker)
	data, err := marker.MarshalJSON()
	require.NoError(t, err)
	f.AddKubeObject(string(data))
	f.RunHook()
	require.NoError(t, f.HookError())
	return f
}

func TestAdoptsAClassTheAdminCreatedFirst(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: default}
spec: {topology: {allowedTopologies: [Zonal], defaultTopology: Zonal}, sizingPolicies: [{cores: {min: 1, max: 2}, memory: {min: 1Gi, max: 2Gi}, coreFractions: [100]}]}
`)
	f.RunHook()
	require.NoError(t, f.HookError())
	cls := f.KubernetesGlobalResource("StarrocksClass", ClassName)
	assert.Equal(t, "Zonal", cls.Object["spec"].(map[string]any)["topology"].(map[string]any)["defaultTopology"], "the admin's class is kept as is")
	require.NotNil(t, f.KubernetesResource("ConfigMap", "d8-managed-starrocks", MarkerName))
}

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name                string
		marker, class       bool
		wantClass, wantMark bool
	}{
		{"first run creates both", false, false, true, true},
		{"an existing class is adopted", false, true, false, true},
		{"a created class is left to the admin", true, true, false, false},
		{"a deleted class stays deleted", true, false, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, m := Decide(tt.marker, tt.class)
			assert.Equal(t, tt.wantClass, c)
			assert.Equal(t, tt.wantMark, m)
		})
	}
}

func TestTheDefaultClassIsValid(t *testing.T) {
	_, problems := classrules.Compile(Class())
	assert.Empty(t, problems)
}

// The class and the marker are the admin's to edit or delete
// (docs/ADMIN_GUIDE.md); Deckhouse's label-objects.deckhouse.io refuses
// every update and delete of a `heritage: deckhouse` object to admins.
func TestTheClassAndTheMarkerAreNotHeritageLabelled(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(`{apiVersion: v1, kind: Namespace, metadata: {name: d8-managed-starrocks}}`)
	f.RunHook()
	require.NoError(t, f.HookError())
	cls := f.KubernetesGlobalResource("StarrocksClass", ClassName)
	require.NotNil(t, cls)
	assert.NotContains(t, cls.GetLabels(), "heritage", "the default class")
	marker := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", MarkerName)
	require.NotNil(t, marker)
	assert.NotContains(t, marker.GetLabels(), "heritage", "the marker")
	assert.Equal(t, "managed-starrocks", cls.GetLabels()["module"])
}

// Those an earlier version made with the label lose it.
func TestTakesTheHeritageLabelOffAnEarlierVersionsClassAndMarker(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(`
apiVersion: v1
kind: Namespace
metadata: {name: d8-managed-starrocks}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: managed-starrocks-default-class, namespace: d8-managed-starrocks, labels: {heritage: deckhouse, module: managed-starrocks}}
data: {class: default}
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: default, labels: {heritage: deckhouse, module: managed-starrocks}}
spec: {topology: {allowedTopologies: [Zonal], defaultTopology: Zonal}, sizingPolicies: [{cores: {min: 1, max: 2}, memory: {min: 1Gi, max: 2Gi}, coreFractions: [100]}]}
`)
	f.RunHook()
	require.NoError(t, f.HookError())
	cls := f.KubernetesGlobalResource("StarrocksClass", ClassName)
	require.NotNil(t, cls)
	assert.NotContains(t, cls.GetLabels(), "heritage")
	assert.Equal(t, "managed-starrocks", cls.GetLabels()["module"], "only the heritage label goes")
	assert.Equal(t, "Zonal", cls.Object["spec"].(map[string]any)["topology"].(map[string]any)["defaultTopology"], "nothing else changes")
	marker := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", MarkerName)
	require.NotNil(t, marker)
	assert.NotContains(t, marker.GetLabels(), "heritage")
}
