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

package desired

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// The hooks→templates contract: every entry Compute makes validates against
// the embedded instance schema, which refuses what it does not describe and
// every string without its pattern.
func TestEntriesMatchTheInstanceSchema(t *testing.T) {
	standalone := instance("ns", "solo")
	standalone.Spec.Type, standalone.Spec.Backend.Replicas = v1alpha1.TypeStandalone, nil
	cl := class()
	cl.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "k", Operator: corev1.NodeSelectorOpExists}}}},
	}}
	withUsers := instance("ns", "users")
	withUsers.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
	withUsers.Spec.Users = []v1alpha1.User{{Name: "etl"}}
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{instance("ns", "cluster"), standalone, withUsers}, Classes: []*v1alpha1.StarrocksClass{cl}})
	require.Len(t, out.Instances, 3)
	for _, e := range out.Instances {
		data, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NoError(t, ValidateEntry(data), "entry %s/%s", e.Namespace, e.Name)
	}

	entry := func(edit func(map[string]any)) []byte {
		data, _ := json.Marshal(out.Instances[0])
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		edit(m)
		data, _ = json.Marshal(m)
		return data
	}
	for _, tt := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"an undeclared property", func(m map[string]any) { m["names"].(map[string]any)["undeclared"] = "x" }, "undeclared"},
		{"a name that could end a YAML scalar", func(m map[string]any) { m["name"] = "a\"\n  b: c" }, "name"},
		{"a storage class name of another shape", func(m map[string]any) {
			m["frontend"].(map[string]any)["storage"].(map[string]any)["storageClassName"] = "x; rm -rf"
		}, "storageClassName"},
		{"a missing required field", func(m map[string]any) { delete(m, "uid") }, "uid"},
	} {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			err := ValidateEntry(entry(tt.edit))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.ErrorContains(t, ValidateEntry([]byte("{not json")), "not JSON")
}

// The schema's examples hold to it, as the hooks' output does.
func TestInstanceExamplesAreValid(t *testing.T) {
	examples, err := InstanceExamples()
	require.NoError(t, err)
	require.NotEmpty(t, examples, "instance.schema.yaml has examples")
	for i, list := range examples {
		require.NotEmpty(t, list, "examples[%d]", i)
		for j, e := range list {
			data, err := json.Marshal(e)
			require.NoError(t, err)
			assert.NoError(t, ValidateEntry(data), "examples[%d][%d]", i, j)
		}
	}
}

// requireEntriesValid holds entries to the instance schema.
func requireEntriesValid(t *testing.T, entries []Instance) {
	t.Helper()
	for _, e := range entries {
		data, err := json.Marshal(e)
		require.NoError(t, err)
		require.NoError(t, ValidateEntry(data), "entry %s/%s", e.Namespace, e.Name)
	}
}
