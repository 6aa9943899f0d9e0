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
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
)

// memory is the module's memory of a deployed instance, as the instances
// hook writes it in the module namespace.
func memory(namespace, cmName, entry string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: last-valid}
data:
  instance.json: '%s'
`, cmName, namespace, entry)
}

var deployed = memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap"}`)

const metaPVC = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: meta-d8ms-sr-olap-0
  namespace: team
  uid: pvc-uid
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`

func secretData(t *testing.T, u *unstructured.Unstructured, key string) string {
	t.Helper()
	// The fake cluster keeps the typed object's []byte as base64, as the API does.
	enc, ok, _ := unstructured.NestedString(u.Object, "data", key)
	require.True(t, ok, "key %s", key)
	b, err := base64.StdEncoding.DecodeString(enc)
	require.NoError(t, err)
	return string(b)
}

func newHook(t *testing.T) *framework.HookExecutionConfig {
	var f *framework.HookExecutionConfig
	// The hook's own writes go to the fake cluster of the moment: the
	// framework's dependency container keeps the first one it was given.
	run := func(ctx context.Context, input *pkg.HookInput) error {
		fakeClient(f).ClearActions() // writes: this run's writes only
		return handle(ctx, input, kubewrite.NewForClient(f.KubeClient()))
	}
	f = framework.HookExecutionConfigInit(t, Config, run, `{}`, `{}`)
	return f
}

func TestCreatesTheSecretsOfADeployedInstanceOnce(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(deployed)
	f.RunHook()
	require.NoError(t, f.HookError())

	admin := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials")
	require.NotNil(t, admin, "the team's Secret")
	assert.Equal(t, "admin", secretData(t, admin, "username"))
	password := secretData(t, admin, "password")
	assert.Len(t, password, 26)
	assert.Empty(t, admin.GetOwnerReferences(), "held for the FE volume: owned by nothing while there is none (not by the Starrocks, whose deletion would take it)")
	assert.Equal(t, "credentials", admin.GetLabels()["managed-starrocks.deckhouse.io/state"])

	agent := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials")
	require.NotNil(t, agent, "the module's Secret")
	assert.Equal(t, "d8_agent", secretData(t, agent, "username"))
	assert.Len(t, secretData(t, agent, "password"), 26)
	assert.Len(t, secretData(t, agent, "root-password"), 26)
	assert.Equal(t, "agent-credentials", agent.GetLabels()["managed-starrocks.deckhouse.io/state"])

	ks := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-keystore")
	require.NotNil(t, ks)
	all := []string{password, secretData(t, agent, "password"), secretData(t, agent, "root-password"), secretData(t, ks, "password")}
	seen := map[string]bool{}
	for _, p := range all {
		assert.False(t, seen[p], "every password is its own")
		seen[p] = true
		assert.NotContains(t, f.LoggerOutput().String(), p, "a password is never logged")
	}

	t.Run("never rotates an existing password", func(t *testing.T) {
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, writes(f), "the Secrets are in the snapshot, nothing to create")
		assert.Equal(t, password, secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials"), "password"))
	})

	t.Run("follow the FE metadata volume once it exists", func(t *testing.T) {
		f.AddKubeObject(metaPVC)
		f.RunHook()
		require.NoError(t, f.HookError())
		for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
			s := f.KubernetesResource("Secret", "team", name)
			require.Len(t, s.GetOwnerReferences(), 1, name)
			o := s.GetOwnerReferences()[0]
			assert.Equal(t, []string{"PersistentVolumeClaim", "meta-d8ms-sr-olap-0", "pvc-uid"}, []string{o.Kind, o.Name, string(o.UID)}, name)
		}
		assert.Equal(t, password, secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials"), "password"), "re-owning keeps the data")
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, writes(f), "already owned by the volume: nothing to patch")
	})
}

func TestARecreatedInstanceKeepsTheSecretsOfItsRetainedVolume(t *testing.T) {
	// The Starrocks was deleted with Retain: its PVC and the Secrets it owns
	// stay. The new object (another UID) finds them.
	f := newHook(t)
	f.KubeStateSet(deployed + "---" + metaPVC)
	f.RunHook()
	require.NoError(t, f.HookError())
	password := secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials"), "root-password")
	assert.Equal(t, "PersistentVolumeClaim", f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials").GetOwnerReferences()[0].Kind,
		"created directly under the volume when it already exists")

	f.KubeStateSet(memory("d8-managed-starrocks", "last-valid-uid-new", `{"name":"olap","namespace":"team","uid":"uid-new"}`) + "---" + metaPVC + "---" +
		yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials")) + "---" +
		yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials")) + "---" +
		yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-keystore")))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Empty(t, writes(f))
	assert.Equal(t, password, secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials"), "root-password"))
}

// heldSecrets are an instance's Secrets as the hook makes them before its
// FE metadata volume exists: owned by nothing.
func heldSecrets(t *testing.T) string {
	t.Helper()
	f := newHook(t)
	f.KubeStateSet(deployed)
	f.RunHook()
	require.NoError(t, f.HookError())
	var out string
	for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
		s := f.KubernetesResource("Secret", "team", name)
		require.NotNil(t, s, name)
		require.Empty(t, s.GetOwnerReferences(), name)
		out += "---" + yamlOf(t, s)
	}
	return out
}

func TestAnInstanceDeletedBeforeItsSecretsFollowTheVolumeKeepsThem(t *testing.T) {
	// The window this closes: the FE's PVC exists, the hook has not run
	// since, and the Starrocks is deleted (its memory with it). Owned by the
	// Starrocks, the garbage collector would delete the Secrets and leave
	// the retained volume with passwords nobody has.
	f := newHook(t)
	held := heldSecrets(t)
	f.KubeStateSet(metaPVC + held)
	f.RunHook()
	require.NoError(t, f.HookError())
	for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
		s := f.KubernetesResource("Secret", "team", name)
		require.NotNil(t, s, "%s stays with the retained volume", name)
		require.Len(t, s.GetOwnerReferences(), 1, name)
		assert.Equal(t, "pvc-uid", string(s.GetOwnerReferences()[0].UID), name)
	}
}

func TestAnInstanceDeletedBeforeItHadAVolumeLeavesNoSecrets(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(heldSecrets(t))
	f.RunHook()
	require.NoError(t, f.HookError())
	for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
		assert.Nil(t, f.KubernetesResource("Secret", "team", name), "%s: no FE ever used it", name)
	}
	assert.Contains(t, f.LoggerOutput().String(), whyInstanceGone, "the log says why")
}

func TestHeldSecretsStayWhileTheirInstanceMayExist(t *testing.T) {
	lookAlike := `
apiVersion: v1
kind: Secret
metadata:
  name: team-own
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: credentials, app.kubernetes.io/instance: olap}
`
	for _, tt := range []struct{ name, state string }{
		{"its memory names it", deployed + heldSecrets(t)},
		{"re-created: memory of another UID names it", memory("d8-managed-starrocks", "last-valid-uid-new", `{"name":"olap","namespace":"team","uid":"uid-new"}`) + heldSecrets(t)},
		{"an unreadable memory may be its", memory("d8-managed-starrocks", "last-valid-uid-x", `{"broken"`) + heldSecrets(t)},
		{"a memory not named after its UID may be its", memory("d8-managed-starrocks", "last-valid-uid-other", `{"name":"olap","namespace":"team","uid":"uid-olap"}`) + heldSecrets(t)},
		{"a look-alike not named as the module names it", lookAlike},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(tt.state)
			f.RunHook()
			require.NoError(t, f.HookError())
			for _, a := range writes(f) {
				assert.NotEqual(t, "delete", a.GetVerb(), "nothing is deleted: %v", a)
			}
		})
	}
}

func yamlOf(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	require.NotNil(t, u)
	data, err := u.MarshalJSON()
	require.NoError(t, err)
	return "\n" + string(data) + "\n"
}

func TestCreatesNothingWithoutTrustedMemory(t *testing.T) {
	for _, tt := range []struct{ name, state string }{
		{"unreadable memory", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"broken"`)},
		{"memory named after another UID", memory("d8-managed-starrocks", "last-valid-uid-other", `{"name":"olap","namespace":"team","uid":"uid-olap"}`)},
		{"a copy in a tenant namespace", memory("team", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap"}`)},
		{"a Secret with a wrong-typed owner list does not fail the run", deployed[:0] + `
apiVersion: v1
kind: Secret
metadata:
  name: junk
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: credentials}
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(tt.state)
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.Empty(t, writes(f))
		})
	}
}

func TestPasswordsAreRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s := NewSecret(Want{Instance: Instance{Namespace: "n", Name: "a", UID: "u"}, Name: "x", State: "agent-credentials"})
		for _, k := range []string{"password", "root-password"} {
			p := string(s.Data[k])
			assert.False(t, seen[p], "password repeated")
			seen[p] = true
		}
	}
}
