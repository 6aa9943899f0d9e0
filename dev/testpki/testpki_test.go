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

package testpki_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

func TestMustIssueSignsAServerCertificateForTheNamesAndLoopback(t *testing.T) {
	ca := testpki.MustCA(t, "test CA")
	leaf := ca.MustIssue(t, "svc.test", "other.test")

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, name := range []string{"svc.test", "other.test", "127.0.0.1"} {
		_, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		require.NoError(t, err, "verify for %s", name)
	}
	_, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: "svc.test"})
	require.Error(t, err, "a leaf must not verify without its CA")
	require.Equal(t, "svc.test", leaf.Cert.Subject.CommonName)
	require.IsType(t, &ecdsa.PublicKey{}, leaf.Cert.PublicKey, "the MariaDB and fake-FE tests rely on ECDSA keys")

	pair, err := leaf.TLSCertificate()
	require.NoError(t, err)
	require.Equal(t, leaf.Cert.Raw, pair.Certificate[0])

	other := ca.MustIssue(t, "svc.test")
	_, err = (&testpki.Leaf{Cert: other.Cert, CertPEM: other.CertPEM, KeyPEM: leaf.KeyPEM}).TLSCertificate()
	require.Error(t, err, "a certificate with another pair's key is no key pair")
}

func TestSecretVolumeSwapsDataLikeTheKubelet(t *testing.T) {
	ca := testpki.MustCA(t, "test CA")
	first, second := ca.MustIssue(t, "a.test"), ca.MustIssue(t, "a.test")
	vol := testpki.NewSecretVolume(t, first.SecretData(ca))

	requireLayout := func(t *testing.T, want map[string][]byte) string {
		t.Helper()
		ts, err := os.Readlink(vol.Path("..data"))
		require.NoError(t, err, "..data must be a symlink")
		require.True(t, strings.HasPrefix(ts, "..") && filepath.Base(ts) == ts, "..data points to a sibling timestamped dir, got %q", ts)
		for name, data := range want {
			target, err := os.Readlink(vol.Path(name))
			require.NoError(t, err, "%s must be a symlink", name)
			require.Equal(t, filepath.Join("..data", name), target)
			got, err := os.ReadFile(vol.Path(name))
			require.NoError(t, err)
			require.Equal(t, data, got, name)
		}
		entries, err := os.ReadDir(vol.Dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.Len(t, names, len(want)+2, "only the keys, ..data and one data dir remain: %v", names)
		return ts
	}

	firstTs := requireLayout(t, first.SecretData(ca))
	vol.Update(second.SecretData(ca))
	secondTs := requireLayout(t, second.SecretData(ca))
	require.NotEqual(t, firstTs, secondTs, "every update writes a new directory")
	_, err := os.Stat(vol.Path(firstTs))
	require.ErrorIs(t, err, os.ErrNotExist, "the previous data directory is deleted")

	vol.Update(map[string][]byte{"tls.crt": first.CertPEM})
	requireLayout(t, map[string][]byte{"tls.crt": first.CertPEM})
	_, err = os.Lstat(vol.Path("tls.key"))
	require.ErrorIs(t, err, os.ErrNotExist, "a key gone from the Secret is unlinked")
}

func TestWriteFilesWritesTheTLSSecretKeys(t *testing.T) {
	ca := testpki.MustCA(t, "test CA")
	leaf, err := ca.Issue("x", nil, []net.IP{net.ParseIP("127.0.0.1")}, 0)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, leaf.WriteFiles(dir, ca))
	for name, want := range leaf.SecretData(ca) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
}
