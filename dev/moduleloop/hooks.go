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
	"strconv"

	"github.com/deckhouse/deckhouse/pkg/log"
	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	aotypes "github.com/flant/addon-operator/pkg/hook/types"
	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	"github.com/flant/addon-operator/pkg/utils"
	bindingcontext "github.com/flant/shell-operator/pkg/hook/binding_context"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
)

// ModuleName is the Deckhouse name of the module.
const ModuleName = "managed-starrocks"

// hook is one hook of the batch binary, as addon-operator sees it.
type hook struct {
	id     string
	config *sdkhook.HookConfig
	batch  *kind.BatchHook
}

// order sorts hooks the way one addon-operator module run reaches them: the
// hooks that run on Kubernetes events first (their synchronization), then
// the beforeHelm hooks by their order, each group by id. A beforeHelm hook
// so reads the values the event hooks wrote in the same pass.
func (h *hook) order() uint {
	if h.config.OnBeforeHelm != nil {
		return *h.config.OnBeforeHelm + 1
	}
	return 0
}

// loadHooks asks the binary for its configuration (`hook config`) through
// addon-operator's batch-hook code and prepares one BatchHook per entry.
func loadHooks(binary, tmpDir string, logger *log.Logger) ([]*hook, error) {
	cfg, err := kind.GetBatchHookConfig(ModuleName, binary)
	if err != nil {
		return nil, fmt.Errorf("read hook config of %s: %w", binary, err)
	}
	var hooks []*hook
	for id, c := range cfg.Hooks {
		if id == kind.BatchHookReadyKey {
			continue
		}
		name := c.Metadata.Name
		if name == "" {
			name = "hook-" + id
		}
		batch := kind.NewBatchHook(name, binary, ModuleName, id, false, false, logger)
		batch.WithTmpDir(tmpDir)
		hooks = append(hooks, &hook{id: id, config: c, batch: batch})
	}
	sort.Slice(hooks, func(i, j int) bool {
		if hooks[i].order() != hooks[j].order() {
			return hooks[i].order() < hooks[j].order()
		}
		a, _ := strconv.Atoi(hooks[i].id)
		b, _ := strconv.Atoi(hooks[j].id)
		return a < b
	})
	return hooks, nil
}

// bindingContexts builds what addon-operator hands a module-sdk hook whose
// kubernetes bindings all sit in one group: a single Group context carrying
// the snapshots of every binding.
func bindingContexts(h *hook, snapshots map[string][]kemtypes.ObjectAndFilterResult, startup bool) []bindingcontext.BindingContext {
	bc := bindingcontext.BindingContext{Binding: "main"}
	bc.Metadata.Version = h.config.ConfigVersion
	switch {
	case startup:
		bc.Binding = string(htypes.OnStartup)
		bc.Metadata.BindingType = htypes.OnStartup
	case len(h.config.Kubernetes) > 0:
		bc.Metadata.BindingType = htypes.OnKubernetesEvent
		bc.Metadata.Group = "main"
		bc.Metadata.IncludeAllSnapshots = true
		bc.Type = kemtypes.TypeSynchronization
		bc.Snapshots = map[string][]kemtypes.ObjectAndFilterResult{}
		for _, b := range h.config.Kubernetes {
			bc.Snapshots[b.Name] = snapshots[b.Name]
			if bc.Snapshots[b.Name] == nil {
				bc.Snapshots[b.Name] = []kemtypes.ObjectAndFilterResult{}
			}
		}
	default:
		bc.Binding = string(aotypes.BeforeHelm)
		bc.Metadata.BindingType = aotypes.BeforeHelm
	}
	return []bindingcontext.BindingContext{bc}
}

func (h *hook) run(ctx context.Context, contexts []bindingcontext.BindingContext, configValues, values utils.Values) (*kind.HookResult, error) {
	version := h.config.ConfigVersion
	if version == "" {
		version = "v1"
	}
	for i := range contexts {
		contexts[i].Metadata.Version = version
	}
	res, err := h.batch.Execute(ctx, version, contexts, utils.ModuleNameToValuesKey(ModuleName), configValues, values, map[string]string{"hook": h.batch.GetName()})
	if err != nil {
		return nil, fmt.Errorf("hook %s: %w", h.batch.GetName(), err)
	}
	return res, nil
}
