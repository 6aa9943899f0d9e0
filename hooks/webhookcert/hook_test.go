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

package webhookcert

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	tlscert "github.com/deckhouse/module-sdk/common-hooks/tls-certificate"
	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGeneratesAServingCertificateForTheWebhookService(t *testing.T) {
	f := framework.HookExecutionConfigInit(t, tlscert.GenSelfSignedTLSConfig(Conf), tlscert.GenSelfSignedTLS(Conf),
		`{"global": {"discovery": {"clusterDomain": "k8s.example"}}, "managedStarrocks": {"internal": {"webhookCert": {}}}}`, `{}`)
	f.RunHook()
	require.NoError(t, f.HookError())

	block, _ := pem.Decode([]byte(f.ValuesGet(ValuesPath + ".crt").String()))
	require.NotNil(t, block, "webhookCert.crt is PEM")
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"managed-starrocks-webhook",
		"managed-starrocks-webhook.d8-managed-starrocks",
		"managed-starrocks-webhook.d8-managed-starrocks.svc",
		"managed-starrocks-webhook.d8-managed-starrocks.svc.k8s.example",
	}, cert.DNSNames)

	caBlock, _ := pem.Decode([]byte(f.ValuesGet(ValuesPath + ".ca").String()))
	require.NotNil(t, caBlock)
	ca, err := x509.ParseCertificate(caBlock.Bytes)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "managed-starrocks-webhook.d8-managed-starrocks.svc", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	assert.NoError(t, err, "the certificate verifies against the CA in values for the name the apiserver dials")
	assert.Contains(t, f.ValuesGet(ValuesPath+".key").String(), "PRIVATE KEY")
}
