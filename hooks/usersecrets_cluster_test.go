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
	"context"
	"encoding/json"
	"testing"
	"time"

	htypes "github.com/flant/shell-operator/pkg/hook/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The user Secrets through the built binary and shell-operator's
// ObjectPatcher on a real kube-apiserver: created from the module's memory,
// never rewritten, deleted once the memory no longer declares the user,
// and nothing else deleted.
func TestUserSecretsAgainstARealAPIServer(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, ns := range []string{"d8-managed-starrocks", "team", "evil"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// The memory as the instances hook writes it (pkg/desired fills grants).
	remember := func(users ...agentconfig.GrantsUser) {
		t.Helper()
		e := desired.Instance{Name: "olap", Namespace: "team", UID: "uid-olap"}
		e.AgentConfig.Grants = &agentconfig.Grants{Databases: []string{}, Roles: []agentconfig.GrantsRole{}, Users: append([]agentconfig.GrantsUser{}, users...)}
		data, err := json.Marshal(e)
		require.NoError(t, err)
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "last-valid-uid-olap", Namespace: "d8-managed-starrocks", Labels: map[string]string{
				"managed-services.deckhouse.io/managed-service-type": "starrocks", "managed-starrocks.deckhouse.io/state": "last-valid",
			}},
			Data: map[string]string{"instance.json": string(data)},
		}
		if _, err := client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
			require.NoError(t, err)
		} else {
			require.NoError(t, err)
		}
	}
	reader := agentconfig.GrantsUser{Name: "reader", SecretName: desired.UserSecretName("olap", "reader")}
	writer := agentconfig.GrantsUser{Name: "app_writer", SecretName: desired.UserSecretName("olap", "app_writer"), PasswordSecret: &agentconfig.SecretKeyRef{Name: "team-passwords", Key: "writer"}}
	remember(reader, writer)

	// Look-alikes of a user Secret of olap: in another namespace, and in
	// olap's namespace owned by something else.
	lookAlike := func(ns, name, uid string) {
		t.Helper()
		_, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{
				"managed-services.deckhouse.io/managed-service-type": "starrocks", "app.kubernetes.io/instance": "olap",
				"managed-starrocks.deckhouse.io/state": "user-credentials",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks", Name: "olap", UID: types.UID(uid)}},
		}, StringData: map[string]string{"username": "theirs"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	lookAlike("evil", "d8ms-sr-olap-user.old", "uid-olap")
	lookAlike("team", "d8ms-sr-olap-user.foreign", "uid-someone-else")

	op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	r, err := client.CoreV1().Secrets("team").Get(ctx, reader.SecretName, metav1.GetOptions{})
	require.NoError(t, err, "the reader's Secret")
	assert.Equal(t, "reader", string(r.Data["username"]))
	password := string(r.Data["password"])
	assert.Len(t, password, 26)
	assert.Equal(t, "user-credentials", r.Labels["managed-starrocks.deckhouse.io/state"])
	assert.Empty(t, r.OwnerReferences, "held for the FE volume (none yet), as the instance's other Secrets")
	w, err := client.CoreV1().Secrets("team").Get(ctx, writer.SecretName, metav1.GetOptions{})
	require.NoError(t, err, "the writer's Secret")
	assert.Equal(t, map[string][]byte{"username": []byte("app_writer")}, w.Data, "the team gives the writer's password: the agent copies it in")

	// The agent fills in the other keys; the hook writes nothing again.
	_, err = client.CoreV1().Secrets("team").Patch(ctx, reader.SecretName, types.MergePatchType, []byte(`{"stringData":{"host":"h","port":"9030"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	res, _ := op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	assert.Empty(t, describe(res.ObjectPatcherOperations), "nothing to write on an unchanged cluster")

	// The reader leaves the spec: its Secret goes, nothing else does.
	remember(writer)
	op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	_, err = client.CoreV1().Secrets("team").Get(ctx, reader.SecretName, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the reader's Secret is deleted: %v", err)
	for _, s := range []struct{ ns, name string }{
		{"team", writer.SecretName}, {"team", "d8ms-sr-olap-credentials"}, {"team", "d8ms-sr-olap-agent-credentials"}, {"team", "d8ms-sr-olap-keystore"},
		{"team", "d8ms-sr-olap-user.foreign"}, {"evil", "d8ms-sr-olap-user.old"},
	} {
		_, err := client.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		assert.NoError(t, err, "%s/%s stays", s.ns, s.name)
	}
}
