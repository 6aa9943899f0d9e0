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

package credentials

import (
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func fakeClient(f *framework.HookExecutionConfig) *dynamicfake.FakeDynamicClient {
	return f.KubeClient().(*dynamicfake.FakeDynamicClient)
}

// writes are the writes of the last run (the hook makes them itself, not
// through the patch collector).
func writes(f *framework.HookExecutionConfig) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range fakeClient(f).Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	return out
}

// refuse makes the fake API server refuse a verb on a resource in a
// namespace, as a ResourceQuota or an admission policy would.
func refuse(f *framework.HookExecutionConfig, verb, resource, namespace string, err error) {
	fakeClient(f).PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != namespace {
			return false, nil, nil
		}
		return true, nil, err
	})
}

type errString string

func (e errString) Error() string { return string(e) }

func namespaceYAML(name string, terminating bool) string {
	if terminating {
		return "\napiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + ", deletionTimestamp: \"2026-12-02T09:00:00Z\", finalizers: [kubernetes]}\nstatus: {phase: Terminating}\n"
	}
	return "\napiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}

// twoTenants: instance a in team-a, instance b in team-b, both deployed.
var twoTenants = memory("d8-managed-starrocks", "last-valid-uid-a", `{"name":"a","namespace":"team-a","uid":"uid-a"}`) + "---" +
	memory("d8-managed-starrocks", "last-valid-uid-b", `{"name":"b","namespace":"team-b","uid":"uid-b"}`)

func TestKeepsARefusedSecretWithItsInstance(t *testing.T) {
	t.Run("a ResourceQuota refuses a's Secrets: logged with its words, a Warning Event, b's Secrets created, the run succeeds", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(namespaceYAML("team-a", false) + "---" + namespaceYAML("team-b", false) + "---" + twoTenants)
		words := `secrets "d8ms-sr-a-credentials" is forbidden: exceeded quota: secrets, requested: count/secrets=1, used: count/secrets=10, limited: count/secrets=10`
		refuse(f, "create", "secrets", "team-a", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "d8ms-sr-a-credentials", errString(words)))
		f.RunHook()
		require.NoError(t, f.HookError(), "one tenant's quota never fails the run")
		assert.Nil(t, f.KubernetesResource("Secret", "team-a", "d8ms-sr-a-credentials"))
		for _, name := range []string{"d8ms-sr-b-credentials", "d8ms-sr-b-agent-credentials", "d8ms-sr-b-keystore"} {
			assert.NotNil(t, f.KubernetesResource("Secret", "team-b", name), "b's %s lands in the same run", name)
		}
		log := f.LoggerOutput().String()
		assert.Contains(t, log, "d8ms-sr-a-credentials")
		assert.Contains(t, log, "exceeded quota: secrets")
		var warned bool
		for _, a := range writes(f) {
			if c, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "events" && a.GetNamespace() == "team-a" {
				u := c.GetObject().(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()
				warned = warned || (u["reason"] == ReasonSecretRefused && u["type"] == "Warning" && strings.Contains(u["message"].(string), "exceeded quota"))
			}
		}
		assert.True(t, warned, "a Warning Event on a's Starrocks names the Secret and the API server's words")
	})
	t.Run("a 409 Conflict on a's Secret: no Warning Event, no refusal in the log, the next run writes it", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(namespaceYAML("team-a", false) + "---" + namespaceYAML("team-b", false) + "---" + twoTenants)
		refuse(f, "create", "secrets", "team-a", apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, "d8ms-sr-a-credentials",
			errString("the object has been modified; please apply your changes to the latest version and try again")))
		f.RunHook()
		require.NoError(t, f.HookError())
		for _, a := range writes(f) {
			assert.False(t, a.GetResource().Resource == "events" && a.GetNamespace() == "team-a", "a conflict is announced as a refusal: %s", a)
		}
		assert.NotContains(t, f.LoggerOutput().String(), "refused", "a conflict is no refusal")
		assert.NotNil(t, f.KubernetesResource("Secret", "team-b", "d8ms-sr-b-credentials"))
	})
	t.Run("a namespace being deleted: no Secret is created, re-owned or deleted there, the other tenant's are created", func(t *testing.T) {
		f := newHook(t)
		// A held Secret of an instance there whose memory is gone: the
		// namespace's deletion takes it.
		held := `
apiVersion: v1
kind: Secret
metadata:
  name: d8ms-sr-gone-credentials
  namespace: team-a
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: credentials, app.kubernetes.io/instance: gone}
`
		f.KubeStateSet(namespaceYAML("team-a", true) + "---" + namespaceYAML("team-b", false) + "---" + twoTenants + "---" + held)
		f.RunHook()
		require.NoError(t, f.HookError())
		for _, a := range writes(f) {
			assert.NotEqual(t, "team-a", a.GetNamespace(), "nothing is written into a terminating namespace: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		assert.NotNil(t, f.KubernetesResource("Secret", "team-b", "d8ms-sr-b-credentials"))
	})
	t.Run("a namespace found terminating or gone at the first write: the instance's other writes stop, the run succeeds", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(twoTenants)
		gone := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "d8ms-sr-a-credentials", errString("namespace team-a is being terminated"))
		gone.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "NamespaceTerminating"}}
		refuse(f, "create", "secrets", "team-a", gone)
		f.RunHook()
		require.NoError(t, f.HookError())
		var attempts int
		for _, a := range fakeClient(f).Actions() {
			if a.GetVerb() == "create" && a.GetNamespace() == "team-a" {
				attempts++
			}
		}
		assert.Equal(t, 1, attempts, "one refused write ends the instance's writes; no Event in a namespace being deleted")
		assert.NotNil(t, f.KubernetesResource("Secret", "team-b", "d8ms-sr-b-credentials"))
	})
}
