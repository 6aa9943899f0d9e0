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
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/certwatch"
)

// webhookDNSNames are the names of the webhook's serving certificate in the
// cluster (the first is its common name); MustIssue adds 127.0.0.1, which the
// test dials.
var webhookDNSNames = []string{"managed-starrocks-webhook", "localhost", "managed-starrocks-webhook.d8-managed-starrocks.svc"}

func TestServesRotatedCertificateAfterSecretVolumeSwap(t *testing.T) {
	f := newFixture(t)
	addr := serveTLS(t, f.w)
	f.run(t)

	if got := servedSerial(t, addr, pool(f.ca.Cert)); got.Cmp(f.first.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v, want the first certificate %v", got, f.first.Cert.SerialNumber)
	}

	second := f.ca.MustIssue(t, webhookDNSNames...)
	if err := f.swapUntilReload(t, second.SecretData(f.ca)); err != nil {
		t.Fatalf("reload failed: %v", err)
	}
	if got := servedSerial(t, addr, pool(f.ca.Cert)); got.Cmp(second.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v after rotation, want %v", got, second.Cert.SerialNumber)
	}
}

func TestKeepsPreviousCertificateWhenNewFilesAreBroken(t *testing.T) {
	f := newFixture(t)
	f.run(t)

	// A certificate with the key of another pair is not a valid pair.
	mismatched := f.first.SecretData(f.ca)
	mismatched["tls.crt"] = f.ca.MustIssue(t, webhookDNSNames...).CertPEM
	if err := f.swapUntilReload(t, mismatched); err == nil {
		t.Fatal("reload of a mismatched key pair succeeded")
	}
	if got := f.w.Leaf().SerialNumber; got.Cmp(f.first.Cert.SerialNumber) != 0 {
		t.Fatalf("serving serial %v, want the previous certificate %v kept", got, f.first.Cert.SerialNumber)
	}
}

// fixture is a serving key pair in a Secret volume and a watcher on it that
// has done its initial load.
type fixture struct {
	ca      *testpki.CA
	first   *testpki.Leaf
	vol     *testpki.SecretVolume
	w       *certwatch.Watcher
	reloads chan error
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ca: testpki.MustCA(t, "managed-starrocks-webhook test CA"), reloads: make(chan error, 16)}
	f.first = f.ca.MustIssue(t, webhookDNSNames...)
	f.vol = testpki.NewSecretVolume(t, f.first.SecretData(f.ca))
	w, err := certwatch.New(f.vol.Path("tls.crt"), f.vol.Path("tls.key"), slog.New(slog.NewTextHandler(io.Discard, nil)),
		certwatch.Options{OnReload: func(_ *x509.Certificate, err error) { f.reloads <- err }})
	if err != nil {
		t.Fatalf("new watcher: %v", err)
	}
	f.w = w
	<-f.reloads // the initial load
	return f
}

// run starts the watcher until the test ends.
func (f *fixture) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = f.w.Run(ctx) }()
}

// swapUntilReload swaps data into the volume until the watcher reports a
// reload and returns that reload's error. fsnotify needs the watch in place
// before the swap, so the swap is retried rather than delayed a guessed time.
func (f *fixture) swapUntilReload(t *testing.T, data map[string][]byte) error {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.vol.Update(data)
		select {
		case err := <-f.reloads:
			return err
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("no reload attempt within 10s of swapping ..data")
		}
	}
}

func TestNewFailsWithoutCertificateFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/tls.key", []byte("nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := certwatch.New(dir+"/tls.crt", dir+"/tls.key", slog.Default(), certwatch.Options{}); err == nil {
		t.Fatal("New succeeded with no certificate file")
	}
}

func serveTLS(t *testing.T, w *certwatch.Watcher) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: w.GetCertificate, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func servedSerial(t *testing.T, addr string, roots *x509.CertPool) *big.Int {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

func pool(ca *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca)
	return p
}
