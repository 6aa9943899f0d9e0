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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The agent writes the connection keys of the users' Secrets, and
// Deckhouse's policy label-objects.deckhouse.io refuses any write of an
// object labelled heritage: deckhouse by an account outside d8-*/kube-*:
// user Secrets go without the label, the module's own Secrets keep it.
func TestUserSecretsGoWithoutTheHeritageLabel(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(withUsers(t, user("reader"), teamPassword(user("app_writer"))))
	f.RunHook()
	require.NoError(t, f.HookError())
	for _, name := range []string{desired.UserSecretName("olap", "reader"), desired.UserSecretName("olap", "app_writer")} {
		s := f.KubernetesResource("Secret", "team", name)
		require.NotNil(t, s, name)
		assert.NotContains(t, s.GetLabels(), "heritage", "%s: the agent must be able to write it", name)
		assert.Equal(t, "user-credentials", s.GetLabels()["managed-starrocks.deckhouse.io/state"], name)
	}
	for _, name := range []string{"d8ms-sr-olap-credentials", "d8ms-sr-olap-agent-credentials", "d8ms-sr-olap-keystore"} {
		s := f.KubernetesResource("Secret", "team", name)
		require.NotNil(t, s, name)
		assert.Equal(t, "deckhouse", s.GetLabels()["heritage"], "%s: only the module writes it", name)
	}
}

// A user Secret made by an earlier version carries heritage: deckhouse;
// the hook (Deckhouse's own account, which the policy lets through) takes
// the label off, and nothing else: data and owner stay.
func TestTakesTheHeritageLabelOffAUserSecretOfAnEarlierVersion(t *testing.T) {
	labelled := strings.Replace(userSecret("team", "d8ms-sr-olap-user.reader", "Starrocks", "olap", "uid-olap"),
		"labels: {", "labels: {heritage: deckhouse, ", 1)
	lookAlike := strings.Replace(userSecret("team", "d8ms-sr-olap-user.other", "Starrocks", "someone-else", "uid-other"),
		"labels: {", "labels: {heritage: deckhouse, ", 1)
	f := newHook(t)
	f.KubeStateSet(withUsers(t, user("reader"), user("other")) + "---" + labelled + "---" + lookAlike)
	f.RunHook()
	require.NoError(t, f.HookError())
	s := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.reader")
	require.NotNil(t, s)
	assert.NotContains(t, s.GetLabels(), "heritage")
	assert.Equal(t, "user-credentials", s.GetLabels()["managed-starrocks.deckhouse.io/state"])
	assert.Equal(t, "bob", secretData(t, s, "username"), "the data stays")
	require.Len(t, s.GetOwnerReferences(), 1)
	assert.Equal(t, "uid-olap", string(s.GetOwnerReferences()[0].UID), "the owner stays")
	// A Secret of the same name owned by something else is not the
	// module's: left as it is.
	other := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-user.other")
	require.NotNil(t, other)
	assert.Equal(t, "deckhouse", other.GetLabels()["heritage"])
}
