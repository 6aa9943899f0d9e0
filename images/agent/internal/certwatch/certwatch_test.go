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

package certwatch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/certwatch"
)

func TestLoad(t *testing.T) {
	ca := testpki.MustCA(t, "ca")
	other := testpki.MustCA(t, "other")
	leaf := ca.MustIssue(t, "fe.test")
	write := func(t *testing.T, caPEM, certPEM []byte) (string, string) {
		dir := t.TempDir()
		caFile, certFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tls.crt")
		if caPEM != nil {
			require.NoError(t, os.WriteFile(caFile, caPEM, 0o600))
		}
		if certPEM != nil {
			require.NoError(t, os.WriteFile(certFile, certPEM, 0o600))
		}
		return caFile, certFile
	}
	tests := []struct {
		name       string
		ca, cert   []byte
		wantReason string
	}{
		{"loads a certificate issued by the CA", ca.CertPEM, leaf.CertPEM, ""},
		{"reports a missing CA", nil, leaf.CertPEM, certwatch.ReasonCertificateMissing},
		{"reports a missing certificate", ca.CertPEM, nil, certwatch.ReasonCertificateMissing},
		{"reports a certificate from another CA (half-rotated volume)", other.CertPEM, leaf.CertPEM, certwatch.ReasonCertificateInvalid},
		{"reports garbage", []byte("not pem"), leaf.CertPEM, certwatch.ReasonCertificateInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := certwatch.Load(write(t, tc.ca, tc.cert))
			if tc.wantReason == "" {
				require.NoError(t, err)
				require.Equal(t, leaf.Cert.SerialNumber, m.Leaf.SerialNumber)
				return
			}
			var le *certwatch.LoadError
			require.True(t, errors.As(err, &le), "want LoadError, got %v", err)
			require.Equal(t, tc.wantReason, le.Reason)
		})
	}
}

func TestWatcherSeesSecretVolumeSwap(t *testing.T) {
	ca := testpki.MustCA(t, "ca")
	first, second := ca.MustIssue(t, "fe.test"), ca.MustIssue(t, "fe.test")
	vol := testpki.NewSecretVolume(t, first.SecretData(ca))
	got := make(chan *certwatch.Material, 8)
	w := &certwatch.Watcher{CAFile: vol.Path("ca.crt"), CertFile: vol.Path("tls.crt"),
		Resync: time.Hour, // only inotify may notice the swap in this test
		OnChange: func(m *certwatch.Material, err error) {
			require.NoError(t, err)
			got <- m
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	require.Equal(t, first.Cert.SerialNumber, (<-got).Leaf.SerialNumber)
	vol.Update(second.SecretData(ca))
	select {
	case m := <-got:
		require.Equal(t, second.Cert.SerialNumber, m.Leaf.SerialNumber)
	case <-time.After(time.Second):
		t.Fatal("swap not seen within 1s")
	}
	select {
	case m := <-got:
		t.Fatalf("one swap reported twice (serial %s)", m.Leaf.SerialNumber)
	case <-time.After(100 * time.Millisecond):
	}
}
