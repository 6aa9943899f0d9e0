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

package main

import (
	"strings"
	"testing"

	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Deckhouse's `main` queue is shared by every module and retries a failed
// task at its head: no binding of this module that sees tenant objects may
// put its runs there. Each hook runs in the module's queue of its purpose
// (/modules/managed-starrocks/<purpose>, as Deckhouse's modules name
// theirs). Read from the built binary, as addon-operator reads it.
//
// The one exception is module-sdk's tls-certificate common hook
// (webhookcert), whose queue cannot be configured: it reads only the webhook
// Secret in the module's own namespace, where no tenant writes.
func TestEveryBindingRunsInTheQueueOfItsPurpose(t *testing.T) {
	cfg := hookConfigs(t)
	want := map[string]string{
		"instances/hook":       shared.QueueInstances,
		"instanceobjects/hook": shared.QueueObjects,
		"credentials/hook":     shared.QueueCredentials,
		"defaultclass/hook":    shared.QueueClasses,
	}
	var bindings int
	for _, h := range cfg.Hooks {
		if h.Metadata.Name == "webhookcert/hook" {
			continue
		}
		queue, ok := want[h.Metadata.Name]
		if !ok {
			// A hook of its own file in a package (instanceobjects' inputs
			// hook) takes its package's queue.
			queue = want[strings.SplitN(h.Metadata.Name, "/", 2)[0]+"/hook"]
		}
		require.NotEmpty(t, queue, "hook %s has no queue in this test: give it one of shared.Queues", h.Metadata.Name)
		for _, k := range h.Kubernetes {
			bindings++
			assert.Equal(t, queue, k.Queue, "hook %s binding %s", h.Metadata.Name, k.Name)
		}
		for _, s := range h.Schedule {
			bindings++
			assert.Equal(t, queue, s.Queue, "hook %s schedule %s", h.Metadata.Name, s.Name)
		}
	}
	assert.Greater(t, bindings, 10, "the binary declares the hooks' bindings")
}

// No Synchronization run of a hook that can fail holds the module's run,
// and so Deckhouse's first converge (addon-operator's ModuleRun waits for
// every Synchronization task with waitForSynchronization, true by default,
// and retries a failing one for ever): a binding that runs its hook on
// Synchronization says waitForSynchronization: false. A binding of a hook
// bound to a Helm run must instead be waited for (the after-Helm run reads
// its snapshot) and so must not run the hook on Synchronization at all.
func TestNoSynchronizationRunHoldsTheModulesRun(t *testing.T) {
	cfg := hookConfigs(t)
	var checked int
	for _, h := range cfg.Hooks {
		if h.Metadata.Name == "webhookcert/hook" {
			continue
		}
		helmBound := h.OnBeforeHelm != nil || h.OnAfterHelm != nil
		for _, k := range h.Kubernetes {
			runsOnSync := k.ExecuteHookOnSynchronization == nil || *k.ExecuteHookOnSynchronization
			waits := k.WaitForSynchronization == nil || *k.WaitForSynchronization
			switch {
			case helmBound && runsOnSync:
				t.Errorf("hook %s (bound to a Helm run) binding %s runs the hook on Synchronization", h.Metadata.Name, k.Name)
			case runsOnSync && waits:
				t.Errorf("hook %s binding %s runs the hook on Synchronization and the module's run waits for it (waitForSynchronization unset or true)", h.Metadata.Name, k.Name)
			case runsOnSync:
				checked++
			}
		}
	}
	assert.Greater(t, checked, 5, "the binary declares bindings that run on Synchronization")
}

func hookConfigs(t *testing.T) *kind.BatchHookConfig {
	t.Helper()
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", buildHooks(t))
	require.NoError(t, err)
	return cfg
}
