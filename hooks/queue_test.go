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
	"testing"

	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Deckhouse's `main` queue is shared by every module and retries a failed
// task at its head: no binding of this module that sees tenant objects may
// put its runs there. Read from the built binary, as addon-operator reads it.
//
// The one exception is module-sdk's tls-certificate common hook
// (webhookcert), whose queue cannot be configured: it reads only the webhook
// Secret in the module's own namespace, where no tenant writes.
func TestNoBindingRunsInTheSharedMainQueue(t *testing.T) {
	bin := buildHooks(t)
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", bin)
	require.NoError(t, err)
	var bindings int
	for _, h := range cfg.Hooks {
		if h.Metadata.Name == "webhookcert/hook" {
			continue
		}
		for _, k := range h.Kubernetes {
			bindings++
			assert.Equal(t, shared.Queue, k.Queue, "hook %s binding %s", h.Metadata.Name, k.Name)
		}
		for _, s := range h.Schedule {
			bindings++
			assert.Equal(t, shared.Queue, s.Queue, "hook %s schedule %s", h.Metadata.Name, s.Name)
		}
	}
	assert.Greater(t, bindings, 10, "the binary declares the hooks' bindings")
}
