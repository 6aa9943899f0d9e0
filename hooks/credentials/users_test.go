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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// withUsers is the memory of instance olap declaring these users, built
// from the contract's types (pkg/agentconfig) as pkg/desired fills them.
func withUsers(t *testing.T, users ...agentconfig.GrantsUser) string {
	t.Helper()
	if users == nil {
		users = []agentconfig.GrantsUser{}
	}
	e := desired.Instance{Name: "olap", Namespace: "team", UID: "uid-olap"}
	e.AgentConfig.Grants = &agentconfig.Grants{Databases: []string{}, Roles: []agentconfig.GrantsRole{}, Users: users}
	data, err := json.Marshal(e)
	require.NoError(t, err)
	// The ConfigMap's data is a single-quoted YAML string.
	return memory("d8-managed-starrocks", "last-valid-uid-olap", strings.ReplaceAll(string(data), "'", "''"))
}

func user(name string) agentconfig.GrantsUser {
	return agentconfig.GrantsUser{Name: name, SecretName: desired.UserSecretName("olap", name)}
}

func teamPassword(u agentconfig.GrantsUser) agentconfig.GrantsUser {
	u.PasswordSecret = &agentconfig.SecretKeyRef{Name: "team-passwords", Key: "writer"}
	return u
}

// userSecret is a Secret labelled as a user Secret of instance olap.
func userSecret(namespace, name, ownerKind, ownerName, ownerUID string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, managed-starrocks.deckhouse.io/state: user-credentials}
  ownerReferences: [{apiVersion: v1, kind: %s, name: %s, uid: %s}]
data: {username: Ym9i}
`, name, namespace, ownerKind, ownerName, ownerUID)
}

func TestCreatesOneSecretPerDeclaredUser(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(withUsers(t, user("reader"), teamPassword(user("app_writer"))))
	f.RunHook()
	require.NoError(t, f.HookError())

	reader := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.reader")
	require.NotNil(t, reader, "the reader's Secret")
	assert.Equal(t, "reader", secretData(t, reader, "username"))
	password := secretData(t, reader, "password")
	assert.Len(t, password, 26, "a generated password, like the other Secrets'")
	assert.NotContains(t, f.LoggerOutput().String(), password, "a password is never logged")
	assert.Equal(t, "user-credentials", reader.GetLabels()["managed-starrocks.deckhouse.io/state"])
	assert.Equal(t, "olap", reader.GetLabels()["app.kubernetes.io/instance"])
	assert.Empty(t, reader.GetOwnerReferences(), "held for the FE volume, as the instance's other Secrets")

	writer := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.app-writer")
	require.NotNil(t, writer, "the writer's Secret: '_' becomes '-'")
	assert.Equal(t, "app_writer", secretData(t, writer, "username"))
	_, has, _ := unstructuredField(writer, "password")
	assert.False(t, has, "no generated password when the team gives one: the agent copies it in")

	t.Run("never updates a user Secret", func(t *testing.T) {
		// The agent has written the other keys meanwhile.
		reader.Object["data"].(map[string]any)["host"] = "aG9zdA=="
		f.KubeStateSet(withUsers(t, user("reader"), teamPassword(user("app_writer"))) + "---" + yamlOf(t, reader) + "---" + yamlOf(t, writer) +
			"---" + yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials")) +
			"---" + yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-agent-credentials")) +
			"---" + yamlOf(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-keystore")))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, writes(f))
		got := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.reader")
		assert.Equal(t, password, secretData(t, got, "password"))
		assert.Equal(t, "host", secretData(t, got, "host"))
	})

	t.Run("follow the FE metadata volume once it exists", func(t *testing.T) {
		f.AddKubeObject(metaPVC)
		f.RunHook()
		require.NoError(t, f.HookError())
		for _, name := range []string{"d8ms-sr-olap-user.reader", "d8ms-sr-olap-user.app-writer"} {
			s := f.KubernetesResource("Secret", "team", name)
			require.Len(t, s.GetOwnerReferences(), 1, name)
			assert.Equal(t, "pvc-uid", string(s.GetOwnerReferences()[0].UID), name)
		}
		assert.Equal(t, password, secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.reader"), "password"))
	})
}

func unstructuredField(u interface{ UnstructuredContent() map[string]any }, key string) (any, bool, error) {
	data, _ := u.UnstructuredContent()["data"].(map[string]any)
	v, ok := data[key]
	return v, ok, nil
}

func TestDeletesTheSecretOfAUserNoLongerDeclared(t *testing.T) {
	for _, owner := range []struct{ kind, name, uid string }{
		{"Starrocks", "olap", "uid-olap"},
		{"PersistentVolumeClaim", "meta-d8ms-sr-olap-0", "pvc-uid"},
	} {
		t.Run("owned by "+owner.kind, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(withUsers(t, user("reader")) + "---" + metaPVC + "---" +
				userSecret("team", "d8ms-sr-olap-user.reader", owner.kind, owner.name, owner.uid) + "---" +
				userSecret("team", "d8ms-sr-olap-user.gone", owner.kind, owner.name, owner.uid))
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.Nil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.gone"), "the user left the memory")
			assert.NotNil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.reader"), "a declared user keeps its Secret")
			for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
				assert.NotNil(t, f.KubernetesResource("Secret", "team", name), "the instance's own credentials stay: %s", name)
			}
		})
	}

	t.Run("every user removed", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(withUsers(t) + "---" + userSecret("team", "d8ms-sr-olap-user.gone", "Starrocks", "olap", "uid-olap"))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Nil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.gone"))
	})
}

func TestKeepsUserSecretsWhenInDoubt(t *testing.T) {
	for _, tt := range []struct{ name, state string }{
		{"memory unreadable", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"broken"`)},
		{"users of the wrong type", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap","agentConfig":{"grants":{"users":"all"}}}`)},
		{"grants of the wrong type", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap","agentConfig":{"grants":[]}}`)},
		{"no agentConfig", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap"}`)},
		{"a user that is not an object", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap","agentConfig":{"grants":{"users":[7]}}}`)},
		{"a user with a name of the wrong type", memory("d8-managed-starrocks", "last-valid-uid-olap", `{"name":"olap","namespace":"team","uid":"uid-olap","agentConfig":{"grants":{"users":[{"name":1,"secretName":"d8ms-sr-olap-user.gone"}]}}}`)},
		{"no memory at all", ""},
		{"a second memory of the instance (re-created, the old one not deleted yet), both following the volume", withUsers(t, user("gone")) + "---" + metaPVC + "---" +
			memory("d8-managed-starrocks", "last-valid-uid-new", `{"name":"olap","namespace":"team","uid":"uid-new","agentConfig":{"grants":{"users":[]}}}`)},
		{"memory of another instance", memory("d8-managed-starrocks", "last-valid-uid-other", `{"name":"other","namespace":"team","uid":"uid-other","agentConfig":{"grants":{"users":[]}}}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			gone := userSecret("team", "d8ms-sr-olap-user.gone", "Starrocks", "olap", "uid-olap")
			if strings.Contains(tt.state, "meta-d8ms-sr-olap-0") {
				gone = userSecret("team", "d8ms-sr-olap-user.gone", "PersistentVolumeClaim", "meta-d8ms-sr-olap-0", "pvc-uid")
			}
			state := gone
			if tt.state != "" {
				state = tt.state + "---" + gone
			}
			f.KubeStateSet(state)
			f.RunHook()
			require.NoError(t, f.HookError(), "an unreadable memory never fails the run")
			assert.NotNil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.gone"))
		})
	}
}

func TestRefusesAUserWhoseSecretNameIsNotTheModules(t *testing.T) {
	for _, u := range []agentconfig.GrantsUser{
		{Name: "reader", SecretName: "d8ms-sr-olap-credentials"},
		{Name: "reader", SecretName: "team-passwords"},
		{Name: "reader", SecretName: ""},
		{Name: "Root'; --", SecretName: desired.UserSecretName("olap", "Root'; --")},
		{Name: "bad_", SecretName: desired.UserSecretName("olap", "bad_")},
	} {
		t.Run(u.Name+" "+u.SecretName, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(withUsers(t, u, user("ok")) + "---" + userSecret("team", "d8ms-sr-olap-user.gone", "Starrocks", "olap", "uid-olap"))
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.NotNil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.ok"), "the other users get theirs")
			if u.SecretName != "" {
				if s := f.KubernetesResource("Secret", "team", u.SecretName); s != nil {
					assert.NotEqual(t, "user-credentials", s.GetLabels()["managed-starrocks.deckhouse.io/state"], "no user Secret under a name the module does not give")
				}
			}
			assert.Nil(t, f.KubernetesResource("Secret", "team", desired.UserSecretName("olap", u.Name)), "no Secret for a refused user")
			assert.NotNil(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.gone"), "nothing is deleted while part of the memory is refused")
			assert.Contains(t, f.LoggerOutput().String(), "agentConfig.grants.users[0]")
		})
	}
}

func TestLeavesLookAlikeUserSecretsAlone(t *testing.T) {
	for _, tt := range []struct{ name, secret string }{
		{"in another namespace", userSecret("other-team", "d8ms-sr-olap-user.gone", "Starrocks", "olap", "uid-olap")},
		{"owned by another object", userSecret("team", "d8ms-sr-olap-user.gone", "Starrocks", "olap", "uid-someone-else")},
		{"owned by another PVC", userSecret("team", "d8ms-sr-olap-user.gone", "PersistentVolumeClaim", "meta-d8ms-sr-olap-0", "other-pvc-uid")},
		{"owned by a Deployment of the team", userSecret("team", "d8ms-sr-olap-user.gone", "Deployment", "app", "uid-olap")},
		{"of another instance", `
apiVersion: v1
kind: Secret
metadata:
  name: d8ms-sr-olap-user.gone
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap2, managed-starrocks.deckhouse.io/state: user-credentials}
  ownerReferences: [{apiVersion: v1, kind: Starrocks, name: olap, uid: uid-olap}]
`},
		{"the instance's own credentials", `
apiVersion: v1
kind: Secret
metadata:
  name: d8ms-sr-olap-user.gone
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, managed-starrocks.deckhouse.io/state: credentials}
  ownerReferences: [{apiVersion: v1, kind: Starrocks, name: olap, uid: uid-olap}]
`},
		{"without the instance label", `
apiVersion: v1
kind: Secret
metadata:
  name: d8ms-sr-olap-user.gone
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: user-credentials}
  ownerReferences: [{apiVersion: v1, kind: Starrocks, name: olap, uid: uid-olap}]
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(withUsers(t, user("reader")) + "---" + metaPVC + "---" + tt.secret)
			f.RunHook()
			require.NoError(t, f.HookError())
			for _, ns := range []string{"team", "other-team"} {
				if f.KubernetesResource("Secret", ns, "d8ms-sr-olap-user.gone") != nil {
					return
				}
			}
			t.Fatal("a Secret that is not the module's was deleted")
		})
	}
}

func TestTheSecretSnapshotHoldsNoData(t *testing.T) {
	var filter string
	for _, b := range Config.Kubernetes {
		if b.Name == SnapSecrets {
			filter = b.JqFilter
		}
	}
	var got map[string]any
	require.NoError(t, helpers.JQRunOnString(context.Background(), filter,
		`{"metadata":{"name":"d8ms-sr-olap-user.app","namespace":"team","labels":{"app.kubernetes.io/instance":"olap","managed-starrocks.deckhouse.io/state":"user-credentials"},`+
			`"uid":"secret-uid","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"c2VjcmV0\"}}"},"ownerReferences":[{"kind":"Starrocks","name":"olap","uid":"u"}]},`+
			`"data":{"password":"c2VjcmV0"},"stringData":{"password":"secret"}}`, &got))
	assert.Equal(t, map[string]any{"namespace": "team", "name": "d8ms-sr-olap-user.app", "state": "user-credentials", "instance": "olap", "heritage": "", "uid": "secret-uid",
		"owners": []any{map[string]any{"kind": "Starrocks", "name": "olap", "uid": "u"}}}, got)
}
