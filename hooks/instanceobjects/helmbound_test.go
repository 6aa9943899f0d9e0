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
	"testing"

	"github.com/deckhouse/module-sdk/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// addon-operator runs every before- and after-Helm hook in the shared main
// queue, inside the module's run, whatever its Queue. Whatever tenants have
// made stale (here more instances than a batch, none written yet), the
// package's Helm-bound run makes
// no call at all into a tenant namespace, where an admission webhook of the
// tenant's may take 30 s to answer each: it only writes the render inputs'
// checksum into the module namespace, once per change, and that change
// runs the instanceobjects hook in the module's own queue.
func TestTheHelmBoundRunTouchesNoTenantNamespace(t *testing.T) {
	var found int
	for _, h := range registry.Registry().ModuleHooks() {
		if h.Config.OnBeforeHelm == nil && h.Config.OnAfterHelm == nil {
			continue
		}
		found++
		t.Run(h.Config.Metadata.Name, func(t *testing.T) {
			c := newClusterFor(t, &h.Config, h.HookFunc, fleetOf(t, BatchSize+5))
			var tenantCalls []string
			c.fake.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
				if ns := a.GetNamespace(); ns != "" && ns != shared.ModuleNamespace {
					tenantCalls = append(tenantCalls, a.GetVerb()+" "+a.GetResource().Resource+" "+ns)
				}
				return false, nil, nil
			})
			c.refuse = func(verb string, o *unstructured.Unstructured) error {
				if o.GetNamespace() == "team-0" {
					t.Errorf("a write into team-0 in the Helm-bound run: %s %s", verb, o.GetName())
				}
				return nil
			}
			c.f.RunHook()
			require.NoError(t, c.f.HookError())
			assert.Empty(t, tenantCalls, "no call into a tenant namespace")

			cm := c.get(t, "ConfigMap", shared.ModuleNamespace, InputsConfigMap)
			sum, _, _ := unstructured.NestedString(cm.Object, "data", "checksum")
			assert.NotEmpty(t, sum)
			c.f.RunHook()
			assert.Empty(t, c.recordWrites(), "the same inputs: nothing written")

			c.f.ValuesSet("global.modulesImages.digests.managedStarrocks.agent", "sha256:bbbb")
			c.f.RunHook()
			again := c.get(t, "ConfigMap", shared.ModuleNamespace, InputsConfigMap)
			newSum, _, _ := unstructured.NestedString(again.Object, "data", "checksum")
			assert.NotEqual(t, sum, newSum, "a new image: a new checksum, which runs the instanceobjects hook")
			assert.Empty(t, tenantCalls)
		})
	}
	require.Equal(t, 1, found, "one Helm-bound hook in the package")
	assert.Nil(t, Config.OnBeforeHelm, "the instanceobjects hook itself runs in the module's queue only")
	assert.Nil(t, Config.OnAfterHelm)
	assert.Nil(t, InputsConfig.OnBeforeHelm, "after Helm: on the first install the module namespace is Helm's to create")
	var watched bool
	for _, b := range Config.Kubernetes {
		if b.Name == SnapInputs {
			watched = b.ExecuteHookOnEvents == nil || *b.ExecuteHookOnEvents
			assert.Equal(t, []string{InputsConfigMap}, b.NameSelector.MatchNames)
		}
	}
	assert.True(t, watched, "a change of the render inputs runs the instanceobjects hook")
}

// What ends a standing refusal may be no event of the bindings (they
// select by the module's labels): a look-alike whose take-over the tenant's
// webhook refused, deleted afterwards, or a quota deleted. The hook runs
// every minute too, in the module's queue, so such an instance is written
// again within a minute.
func TestTheHookRunsEveryMinute(t *testing.T) {
	require.Len(t, Config.Schedule, 1)
	assert.Equal(t, "* * * * *", Config.Schedule[0].Crontab)
	assert.Equal(t, shared.QueueObjects, Config.Queue)
}
