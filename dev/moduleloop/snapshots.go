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

package moduleloop

import (
	"fmt"
	"sort"

	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	"github.com/flant/shell-operator/pkg/filter/jq"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// FilterSnapshot turns objects into a binding's snapshot the way
// shell-operator keeps it: only objects of the binding's kind, labels,
// names and namespace names, each with its jq filter result (and without the object when there
// is a filter), sorted by namespace/name.
func FilterSnapshot(b sdkhook.KubernetesConfig, objs []*unstructured.Unstructured) ([]kemtypes.ObjectAndFilterResult, error) {
	apiVersion := b.APIVersion
	if apiVersion == "" {
		apiVersion = "v1"
	}
	sel := labels.Everything()
	if b.LabelSelector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(b.LabelSelector); err != nil {
			return nil, fmt.Errorf("binding %s label selector: %w", b.Name, err)
		}
	}
	// A namespace selector by names is applied here too (shell-operator
	// watches only those namespaces): tests pass objects of every namespace.
	var namespaces map[string]bool
	if b.NamespaceSelector != nil && b.NamespaceSelector.NameSelector != nil && len(b.NamespaceSelector.NameSelector.MatchNames) > 0 {
		namespaces = map[string]bool{}
		for _, n := range b.NamespaceSelector.NameSelector.MatchNames {
			namespaces[n] = true
		}
	}
	var names map[string]bool
	if b.NameSelector != nil {
		names = map[string]bool{}
		for _, n := range b.NameSelector.MatchNames {
			names[n] = true
		}
	}
	out := []kemtypes.ObjectAndFilterResult{}
	for _, obj := range objs {
		if obj.GetKind() != b.Kind || obj.GetAPIVersion() != apiVersion || !sel.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if names != nil && !names[obj.GetName()] {
			continue
		}
		if namespaces != nil && !namespaces[obj.GetNamespace()] {
			continue
		}
		item := kemtypes.ObjectAndFilterResult{Object: obj}
		item.Metadata.JqFilter = b.JqFilter
		item.Metadata.ResourceId = obj.GetNamespace() + "/" + obj.GetName()
		if b.JqFilter != "" {
			result, err := jq.NewFilter().ApplyFilter(b.JqFilter, obj.Object)
			if err != nil {
				return nil, fmt.Errorf("binding %s: jq filter on %s: %w", b.Name, item.Metadata.ResourceId, err)
			}
			item.FilterResult = string(result)
			// addon-operator keeps only the filter result of filtered bindings.
			item.Object = nil
		}
		out = append(out, item)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.ResourceId < out[j].Metadata.ResourceId })
	return out, nil
}
