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
	"context"
	"sort"
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// entriesOf are the entries the hook handed to the instanceobjects hook: the
// desired-state ConfigMaps in the module namespace of the fake cluster,
// sorted by namespace and name.
func entriesOf(t *testing.T, f *framework.HookExecutionConfig) []gjson.Result {
	t.Helper()
	list, err := f.KubeClient().Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(shared.ModuleNamespace).
		List(context.Background(), metav1.ListOptions{LabelSelector: shared.LabelState + "=" + shared.StateDesired})
	if err != nil {
		t.Fatalf("list the desired-state ConfigMaps: %v", err)
	}
	out := make([]gjson.Result, 0, len(list.Items))
	for _, cm := range list.Items {
		data, _, _ := unstructured.NestedString(cm.Object, "data", shared.LastValidKey)
		out = append(out, gjson.Parse(data))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Get("namespace").String()+"/"+out[i].Get("name").String(), out[j].Get("namespace").String()+"/"+out[j].Get("name").String()
		return a < b
	})
	return out
}
