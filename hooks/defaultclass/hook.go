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

// Package defaultclass creates the StarrocksClass "default" once.
//
// The admin owns the class afterwards: edits stay, and a deleted class does
// not come back. "Created once" is remembered in the cluster, not in memory:
// a ConfigMap in the module namespace marks that the class was created, so a
// restart of the hooks (or of Deckhouse) does not recreate a class the admin
// deleted. The hook runs after Helm, when the module namespace exists.
// Deleting the marker too (or the module namespace, with the module disabled)
// brings the default class back on the next run.
package defaultclass

import (
	"context"
	"fmt"

	"github.com/deckhouse/module-sdk/pkg"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Snapshot names.
const (
	SnapMarker = "default_class_marker"
	SnapClass  = "default_class"
)

// ClassName is the name of the class the module creates.
const ClassName = "default"

// MarkerName is the ConfigMap recording that the class was created.
const MarkerName = "managed-starrocks-default-class"

var _ = registry.RegisterFunc(Config, Handle)

var no = false

// Config reads the marker and the class after every Helm run; events do not
// run it (nothing to do between Helm runs).
var Config = &pkg.HookConfig{
	Queue:       shared.QueueClasses,
	OnAfterHelm: &pkg.OrderedConfig{Order: 10},
	Kubernetes: []pkg.KubernetesConfig{
		{
			Name:                         SnapMarker,
			APIVersion:                   "v1",
			Kind:                         "ConfigMap",
			NamespaceSelector:            &pkg.NamespaceSelector{NameSelector: &pkg.NameSelector{MatchNames: []string{shared.ModuleNamespace}}},
			NameSelector:                 &pkg.NameSelector{MatchNames: []string{MarkerName}},
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     labelledFilter,
		},
		{
			Name:                         SnapClass,
			APIVersion:                   v1alpha1.SchemeGroupVersion.String(),
			Kind:                         v1alpha1.StarrocksClassKind,
			NameSelector:                 &pkg.NameSelector{MatchNames: []string{ClassName}},
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     labelledFilter,
		},
	},
}

// labelledFilter keeps the name and whether the object still carries the
// heritage label an earlier version gave it.
const labelledFilter = `{name: .metadata.name, heritage: ((.metadata.labels // {}).heritage // "")}`

// snap is what labelledFilter keeps.
type snap struct {
	Name     string `json:"name"`
	Heritage string `json:"heritage"`
}

// Labels of the class and the marker. Both are the admin's to change or
// delete (docs/ADMIN_GUIDE.md): without `heritage: deckhouse`, which
// Deckhouse's label-objects.deckhouse.io policy would let no admin update
// or delete. Nothing selects them by labels: the bindings name them, and
// only admins can write a cluster-scoped StarrocksClass or a ConfigMap in
// the module's namespace, so the label defends nothing here.
func labels() map[string]string { return map[string]string{"module": "managed-starrocks"} }

// dropHeritage is the merge patch that takes the label off.
var dropHeritage = map[string]any{"metadata": map[string]any{"labels": map[string]any{shared.HeritageLabel: nil}}}

// Handle creates the class and the marker when the marker is missing.
func Handle(_ context.Context, input *pkg.HookInput) error {
	markerExists := len(input.Snapshots.Get(SnapMarker)) > 0
	classExists := len(input.Snapshots.Get(SnapClass)) > 0
	createClass, createMarker := Decide(markerExists, classExists)
	if createClass {
		input.PatchCollector.CreateIfNotExists(Class())
		input.Logger.Info("creating the default StarrocksClass", "name", ClassName)
	}
	if createMarker {
		input.PatchCollector.CreateIfNotExists(Marker())
	}
	// An earlier version made both with `heritage: deckhouse`: the hooks
	// (exempt from the policy) take it off, so the admin may edit them.
	for _, s := range labelled(input, SnapClass) {
		input.Logger.Info("the default StarrocksClass loses its heritage label, so that admins may change it", "name", s.Name)
		input.PatchCollector.PatchWithMerge(dropHeritage, v1alpha1.SchemeGroupVersion.String(), v1alpha1.StarrocksClassKind, "", s.Name, objectpatch.WithIgnoreMissingObject(true))
	}
	for _, s := range labelled(input, SnapMarker) {
		input.PatchCollector.PatchWithMerge(dropHeritage, "v1", "ConfigMap", shared.ModuleNamespace, s.Name, objectpatch.WithIgnoreMissingObject(true))
	}
	return nil
}

// labelled are the snapshot's objects that still carry the heritage label.
func labelled(input *pkg.HookInput, name string) []snap {
	var out []snap
	for _, o := range input.Snapshots.Get(name) {
		var s snap
		if err := o.UnmarshalTo(&s); err != nil || s.Heritage == "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Decide: the marker means "done, whatever happened to the class since"; an
// existing class without a marker (made by the admin first) is adopted as is.
func Decide(markerExists, classExists bool) (createClass, createMarker bool) {
	if markerExists {
		return false, false
	}
	return !classExists, true
}

// Marker is the ConfigMap that remembers the class was created.
func Marker() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      MarkerName,
			Namespace: shared.ModuleNamespace,
			Labels:    labels(),
		},
		Data: map[string]string{
			"class": ClassName,
			"note":  fmt.Sprintf("The module created StarrocksClass %q once. Delete this ConfigMap to have it created again.", ClassName),
		},
	}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity {
	v := q(s)
	return &v
}

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }

// Class is the default StarrocksClass: sizes from a development Standalone
// to a large Cluster, every topology, every key overridable. Memory per core
// stays between 2 and 8 GiB: StarRocks BEs are memory-bound and an FE below
// 2 GiB runs out of heap with a few hundred tables.
func Class() *v1alpha1.StarrocksClass {
	return &v1alpha1.StarrocksClass{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksClassKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:   ClassName,
			Labels: labels(),
		},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal, v1alpha1.TopologyTransZonal},
				DefaultTopology:   v1alpha1.TopologyIgnored,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{
				{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, Memory: v1alpha1.MemoryRange{Min: q("2Gi"), Max: q("16Gi"), Step: qp("1Gi")}, CoreFractions: []int32{25, 50, 100}},
				{Cores: v1alpha1.CoreRange{Min: 5, Max: 16}, Memory: v1alpha1.MemoryRange{Min: q("10Gi"), Max: q("128Gi"), Step: qp("2Gi")}, CoreFractions: []int32{50, 100}},
				{Cores: v1alpha1.CoreRange{Min: 17, Max: 64}, Memory: v1alpha1.MemoryRange{Min: q("34Gi"), Max: q("512Gi"), Step: qp("4Gi")}, CoreFractions: []int32{100}},
			},
			Validations: []v1alpha1.ValidationRule{{
				Rule:    "configuration.streamingLoadMaxMb * 1048576 <= backend.memory.size",
				Message: "In the default class, streamingLoadMaxMb may not exceed the memory of one BE; choose a smaller value or larger BEs.",
			}},
			OverridableConfiguration: []v1alpha1.ConfigurationKey{
				v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyLoadProcessMaxMemoryLimitPercent, v1alpha1.KeyCatalogTrashExpireSecond,
			},
			Configuration: v1alpha1.Configuration{
				StreamingLoadMaxMb:               i64(1024),
				LoadProcessMaxMemoryLimitPercent: i32(30),
				CatalogTrashExpireSecond:         i64(86400),
			},
		},
	}
}
