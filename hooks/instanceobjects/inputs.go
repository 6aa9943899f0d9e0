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

	"github.com/deckhouse/module-sdk/pkg"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// The render reads the module's values (image digests, registry, cluster
// domain, settings), which change with a module run, not with any object
// the hook watches. So the hook must run after every module run, yet its
// work (renders and writes into tenant namespaces, where a tenant's
// admission webhook may take up to 30 s to answer each write) must not run
// in the shared main queue: addon-operator runs every before- and after-Helm
// hook in main, inside the module's ModuleRun, whatever the hook's Queue
// (addon-operator v1.24.4 pkg/module_manager/models/modules/basic.go,
// RunHooksByBinding: "AfterHelm,BeforeHelm hooks always handle in main
// queue"; called by module_manager.go's module run for BeforeHelm and, after
// the release, AfterHelm),
// and module-sdk gives a hook no way to queue a task itself (HookInput
// holds snapshots, values, the patch collector, metrics and a logger: no
// binding context, no queue).
//
// What a hook can do is write an object another binding watches. So the
// module run's part is this small hook, after Helm: it writes the checksum
// of the render inputs into ConfigMap
// d8-managed-starrocks/managed-starrocks-render-inputs when it changed, and
// that change is a Kubernetes event of the instanceobjects hook's binding
// (SnapInputs), which does the work in the module's own queue. The run reads
// one ConfigMap of the module namespace and the values, and writes at most
// that ConfigMap, where no tenant writes: nothing a tenant controls reaches
// it or can lengthen it. After Helm, not before: on the first install the
// module namespace is Helm's to create, and a write into it before would
// fail the module's run in main, again and again.
var _ = registry.RegisterFunc(InputsConfig, HandleInputs)

const (
	// SnapInputs is the binding of the render inputs' ConfigMap, in this
	// hook (a snapshot only) and in the instanceobjects hook (a reason to run).
	SnapInputs = "render_inputs"
	// InputsConfigMap holds the checksum of the render inputs.
	InputsConfigMap = "managed-starrocks-render-inputs"
	inputsKey       = "checksum"
)

// InputsConfig runs after every Helm run of the module; its binding only
// gives it the ConfigMap to compare with.
var InputsConfig = &pkg.HookConfig{
	Queue:       shared.QueueObjects,
	OnAfterHelm: &pkg.OrderedConfig{Order: 10},
	Kubernetes:  []pkg.KubernetesConfig{inputsBinding(false)},
}

// inputsBinding watches the render inputs' ConfigMap, by name, in the
// module namespace only.
func inputsBinding(run bool) pkg.KubernetesConfig {
	b := pkg.KubernetesConfig{
		Name:              SnapInputs,
		APIVersion:        "v1",
		Kind:              "ConfigMap",
		NamespaceSelector: shared.ModuleNamespaceSelector,
		NameSelector:      &pkg.NameSelector{MatchNames: []string{InputsConfigMap}},
		JqFilter:          shared.JqTypes + `{checksum: (.data["` + inputsKey + `"] | str)}`,
	}
	if !run {
		no := false
		b.ExecuteHookOnEvents, b.ExecuteHookOnSynchronization = &no, &no
	}
	return b
}

type inputsItem struct {
	Checksum string `json:"checksum"`
}

// HandleInputs writes the render inputs' checksum when it changed.
func HandleInputs(_ context.Context, input *pkg.HookInput) error {
	sum := inputsChecksum(instanceobjects.ModuleFromValues(input.Values.Get))
	for item, err := range objectpatch.SnapshotIter[inputsItem](input.Snapshots.Get(SnapInputs)) {
		if err == nil && item.Checksum == sum {
			return nil
		}
	}
	input.PatchCollector.CreateOrUpdate(&corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      InputsConfigMap,
			Namespace: shared.ModuleNamespace,
			Labels:    map[string]string{"heritage": "deckhouse", "module": "managed-starrocks"},
		},
		Data: map[string]string{inputsKey: sum},
	})
	return nil
}

// inputsChecksum covers the templates and every module input a render reads
// (Module.Checksum without an instance). Missing inputs are no error here:
// the instanceobjects hook names them when it runs.
func inputsChecksum(m instanceobjects.Module) string {
	sum, err := m.Checksum(nil)
	if err != nil {
		return "templates: " + err.Error()
	}
	return sum
}
