package credentials

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const deployed = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: d8ms-sr-olap-last-valid
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: last-valid}
data:
  instance.json: '{"name":"olap","namespace":"team","uid":"uid-olap","names":{"credentialsSecret":"d8ms-sr-olap-credentials"},"tls":{"keystorePasswordSecretName":"d8ms-sr-olap-keystore"}}'
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

func TestCreatesTheSecretsOfADeployedInstanceOnce(t *testing.T) {
	f := framework.HookExecutionConfigInit(t, Config, Handle, `{}`, `{}`)
	f.KubeStateSet(deployed)
	f.RunHook()
	require.NoError(t, f.HookError())

	creds := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials")
	require.NotNil(t, creds)
	assert.Equal(t, "root", secretData(t, creds, "username"))
	password := secretData(t, creds, "password")
	assert.Len(t, password, 26)
	assert.Equal(t, "uid-olap", string(creds.GetOwnerReferences()[0].UID))
	assert.Equal(t, "credentials", creds.GetLabels()["managed-starrocks.deckhouse.io/state"])

	ks := f.KubernetesResource("Secret", "team", "d8ms-sr-olap-keystore")
	require.NotNil(t, ks)
	assert.Len(t, secretData(t, ks, "password"), 26)
	assert.NotEqual(t, password, secretData(t, ks, "password"), "every Secret gets its own password")
	assert.NotContains(t, f.LoggerOutput().String(), password, "the password is never logged")

	t.Run("never rotates an existing password", func(t *testing.T) {
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, f.PatchedOperations(), "the Secrets are in the snapshot, nothing to create")
		assert.Equal(t, password, secretData(t, f.KubernetesResource("Secret", "team", "d8ms-sr-olap-credentials"), "password"))
	})
}

func TestCreatesNothingWithoutADeployedInstance(t *testing.T) {
	f := framework.HookExecutionConfigInit(t, Config, Handle, `{}`, `{}`)
	f.KubeStateSet(strings.Replace(deployed, `'{"name"`, `'{"broken"`, 1))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Empty(t, f.PatchedOperations())
}

func TestPasswordsAreRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s := NewSecret(Want{Instance: Instance{Namespace: "n", Name: "a", UID: "u"}, Name: "x", State: "credentials"})
		p := string(s.Data["password"])
		assert.False(t, seen[p], "password repeated")
		seen[p] = true
	}
}
