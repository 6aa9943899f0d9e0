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
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// snapshotOf is what objectFilter keeps of o, through gojq as
// shell-operator runs it.
func snapshotOf(t *testing.T, o *unstructured.Unstructured) liveObject {
	t.Helper()
	data, err := json.Marshal(o.Object)
	require.NoError(t, err)
	var l liveObject
	require.NoError(t, helpers.JQRunOnString(context.Background(), objectFilter, string(data), &l))
	return l
}

func genuineStatefulSet() *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet"}}
	o.SetNamespace("team")
	o.SetName("d8ms-sr-olap")
	o.SetUID("uid-sts")
	o.SetGeneration(3)
	o.SetResourceVersion("42")
	o.SetLabels(shared.InstanceLabels("olap", ""))
	o.SetAnnotations(map[string]string{"managed-starrocks.deckhouse.io/render-checksum": strings.Repeat("c", 64), "managed-starrocks.deckhouse.io/render-objects": "15"})
	ctrl := true
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks", Name: "olap", UID: "uid-olap", Controller: &ctrl}})
	return o
}

// What the module writes is within the bounds and kept as it is; a
// snapshot of it is current against the record of the same object.
func TestObjectFilterKeepsTheModulesMetadataWhole(t *testing.T) {
	o := genuineStatefulSet()
	l := snapshotOf(t, o)
	assert.Equal(t, o.GetLabels(), l.Labels)
	assert.Equal(t, o.GetAnnotations(), l.Annotations)
	require.Len(t, l.OwnerReferences, 1)
	assert.Equal(t, ownerRef{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks", Name: "olap", UID: "uid-olap", Controller: true}, l.OwnerReferences[0])
	rec := objectOf(o)
	assert.Equal(t, rec.Metadata, metadataDigest(l.Labels, l.Annotations, l.OwnerReferences))
}

// A tenant's metadata beyond the bounds is kept as markers, in the
// snapshot as in the record's digest of what the API server returned (a
// tenant's mutating webhook may add it to every write: the two still
// agree, so no run rewrites the object for ever); against the record of
// the module's own object it differs, so the object is restored.
func TestObjectFilterBoundsATenantsMetadata(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(o *unstructured.Unstructured)
	}{
		{"a 250 KB annotation", func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a["tenant.example.com/blob"] = strings.Repeat("x", 250<<10)
			o.SetAnnotations(a)
		}},
		{"the render checksum made long", func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a["managed-starrocks.deckhouse.io/render-checksum"] += strings.Repeat("c", 200)
			o.SetAnnotations(a)
		}},
		{"a long label key", func(o *unstructured.Unstructured) {
			l := o.GetLabels()
			l[strings.Repeat("k", 200)+".example.com/x"] = "v"
			o.SetLabels(l)
		}},
		{"a thousand labels", func(o *unstructured.Unstructured) {
			l := o.GetLabels()
			for i := range 1000 {
				l[fmt.Sprintf("tenant.example.com/l%d", i)] = "v"
			}
			o.SetLabels(l)
		}},
		{"a hundred ownerReferences", func(o *unstructured.Unstructured) {
			owners := o.GetOwnerReferences()
			for i := range 100 {
				owners = append(owners, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprintf("cm-%d", i), UID: "u"})
			}
			o.SetOwnerReferences(owners)
		}},
		{"a long ownerReference name", func(o *unstructured.Unstructured) {
			owners := o.GetOwnerReferences()
			owners[0].Name += strings.Repeat("n", 200)
			o.SetOwnerReferences(owners)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			genuine := objectOf(genuineStatefulSet())
			o := genuineStatefulSet()
			tc.tamper(o)
			l := snapshotOf(t, o)
			data, err := json.Marshal(l)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(data), 12<<10, "what the snapshot keeps of the object")
			digest := metadataDigest(l.Labels, l.Annotations, l.OwnerReferences)
			assert.Equal(t, objectOf(o).Metadata, digest, "the record of the same object agrees with its snapshot")
			assert.NotEqual(t, genuine.Metadata, digest, "the tampered object differs from what the module wrote")
		})
	}
}
