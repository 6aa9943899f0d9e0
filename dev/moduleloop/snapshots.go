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
	"context"
	"fmt"
	"sort"
	"strings"

	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	"github.com/flant/shell-operator/pkg/filter/jq"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// gvrOf maps a binding's apiVersion and kind to its resource.
func gvrOf(client *kubeutil.Client, apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	if apiVersion == "" {
		apiVersion = "v1"
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	mapping, err := client.Mapping(gv.WithKind(kind))
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	return mapping.Resource, mapping.Scope.Name() == "namespace", nil
}

// snapshot lists the objects a binding selects and applies its jq filter,
// producing what shell-operator keeps as the binding's snapshot.
func snapshot(ctx context.Context, client *kubeutil.Client, b sdkhook.KubernetesConfig) ([]kemtypes.ObjectAndFilterResult, error) {
	gvr, namespaced, err := gvrOf(client, b.APIVersion, b.Kind)
	if err != nil {
		return nil, fmt.Errorf("binding %s: %w", b.Name, err)
	}
	namespaces := []string{metav1.NamespaceAll}
	if namespaced && b.NamespaceSelector != nil {
		if namespaces, err = selectNamespaces(ctx, client, b.NamespaceSelector); err != nil {
			return nil, fmt.Errorf("binding %s: %w", b.Name, err)
		}
	}
	// Select on the server too, so a binding on Pods does not list every Pod.
	opts := metav1.ListOptions{}
	if b.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(b.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("binding %s label selector: %w", b.Name, err)
		}
		opts.LabelSelector = sel.String()
	}
	if b.FieldSelector != nil {
		var parts []string
		for _, e := range b.FieldSelector.MatchExpressions {
			op := "="
			if e.Operator == "NotEquals" || e.Operator == "!=" {
				op = "!="
			}
			parts = append(parts, e.Field+op+e.Value)
		}
		opts.FieldSelector = strings.Join(parts, ",")
	}
	var objs []*unstructured.Unstructured
	for _, ns := range namespaces {
		res := client.Dynamic.Resource(gvr)
		var list *unstructured.UnstructuredList
		if namespaced && ns != "" {
			list, err = res.Namespace(ns).List(ctx, opts)
		} else {
			list, err = res.List(ctx, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("binding %s: list %s: %w", b.Name, gvr.Resource, err)
		}
		for i := range list.Items {
			objs = append(objs, &list.Items[i])
		}
	}
	return FilterSnapshot(b, objs)
}

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
	// A namespace selector by names is applied here too (snapshot lists
	// only those namespaces already): tests pass objects of every namespace.
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

func selectNamespaces(ctx context.Context, client *kubeutil.Client, sel *sdkhook.NamespaceSelector) ([]string, error) {
	if sel.NameSelector != nil && len(sel.NameSelector.MatchNames) > 0 {
		return sel.NameSelector.MatchNames, nil
	}
	if sel.LabelSelector == nil {
		return []string{metav1.NamespaceAll}, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
	if err != nil {
		return nil, err
	}
	list, err := client.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		List(ctx, metav1.ListOptions{LabelSelector: s.String()})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.GetName())
	}
	if len(names) == 0 {
		// No namespace matches: select nothing rather than everything.
		return []string{}, nil
	}
	return names, nil
}
