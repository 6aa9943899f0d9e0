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

package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
)

// TestKubeSecrets runs the client-go SecretStore against a real
// kube-apiserver with RBAC, as the agent's ServiceAccount with a Role by
// resourceNames like the instance's.
func TestKubeSecrets(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{})
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "default"
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "user"}, Data: map[string][]byte{"username": []byte("app"), "dsn": []byte("old")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Data: map[string][]byte{"pw": []byte("team-password")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}, Data: map[string][]byte{"x": []byte("y")}},
	} {
		_, err := admin.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"user", "team", "missing"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"patch"}, ResourceNames: []string{"user", "missing"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "agent"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "agent", Namespace: ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := rest.CopyConfig(cp.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":agent"}
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	store := &agent.KubeSecrets{Secrets: cs.CoreV1(), Namespace: ns}

	// The apiserver's RBAC authorizer learns the new Role from an informer:
	// wait until it allows what the Role says.
	var data map[string][]byte
	require.Eventually(t, func() bool {
		data, err = store.Get(ctx, "team")
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "the Role allows get on team: %v", err)
	require.Equal(t, "team-password", string(data["pw"]))

	_, err = store.Get(ctx, "missing")
	require.ErrorIs(t, err, agent.ErrSecretNotFound)

	_, err = store.Get(ctx, "unrelated")
	require.Error(t, err)
	require.False(t, errors.Is(err, agent.ErrSecretNotFound))
	require.ErrorContains(t, err, "get Secret unrelated")
	require.ErrorContains(t, err, "forbidden")

	require.NoError(t, store.Patch(ctx, "user", map[string][]byte{"password": []byte("a 'quoted' \x00 password"), "port": []byte("9030")}, []string{"dsn"}))
	s, err := admin.CoreV1().Secrets(ns).Get(ctx, "user", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"username": []byte("app"), "password": []byte("a 'quoted' \x00 password"), "port": []byte("9030")}, s.Data)

	require.ErrorIs(t, store.Patch(ctx, "missing", map[string][]byte{"x": []byte("y")}, nil), agent.ErrSecretNotFound)
	err = store.Patch(ctx, "team", map[string][]byte{"pw": []byte("x")}, nil)
	require.ErrorContains(t, err, "forbidden", "the team's Secret is only read")
}
