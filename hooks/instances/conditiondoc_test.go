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

package instances

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// conditionsAreDocumented: `kubectl explain starrocks.status` (the CRD and
// its Russian twin) lists every condition type the hooks set on a running
// instance, and says that credentialsSecretName holds the team's admin
// account, not root.
func conditionsAreDocumented(t *testing.T, st v1alpha1.StarrocksStatus) {
	t.Helper()
	require.NotEmpty(t, st.Conditions)
	for _, file := range []string{"starrocks.yaml", "doc-ru-starrocks.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "crds", file))
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal(data, &doc))
		status := schemaAt(t, doc, "status")
		conditions, _ := status["conditions"].(map[string]any)["description"].(string)
		for _, c := range st.Conditions {
			assert.Contains(t, conditions, c.Type, "%s: status.conditions does not list %s", file, c.Type)
		}
		secret, _ := status["credentialsSecretName"].(map[string]any)["description"].(string)
		assert.Contains(t, secret, "`admin`", "%s: status.credentialsSecretName names the account", file)
		assert.NotContains(t, secret, "root", "%s: status.credentialsSecretName is not root's", file)
	}
}

// schemaAt is the properties of a top-level field of the first version's
// schema.
func schemaAt(t *testing.T, doc map[string]any, field string) map[string]any {
	t.Helper()
	node := doc
	for _, k := range strings.Split("spec.versions.0.schema.openAPIV3Schema.properties."+field+".properties", ".") {
		switch v := node[k].(type) {
		case map[string]any:
			node = v
		case []any:
			require.NotEmpty(t, v)
			node = v[0].(map[string]any)
		default:
			if k == "0" {
				continue
			}
			t.Fatalf("no %s in the CRD", k)
		}
	}
	return node
}
