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

	"github.com/deckhouse/managed-starrocks/images/webhook/internal/certwatch"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/secretvol"
)

func TestServesRotatedCertificateAfterSecretVolumeSwap(t *testing.T) {
	ca := secretvol.NewCA(t)
	first := secretvol.Issue(t, ca)
	vol := secretvol.New(t, first.CertPEM, first.KeyPEM)

	reloads := make(chan error, 16)
	w, err := certwatch.New(vol.CertFile(), vol.KeyFile(), slog.New(slog.NewTextHandler(io.Discard, nil)),
		certwatch.Options{OnReload: func(_ *x509.Certificate, err error) { reloads <- err }})
	if err != nil {
		t.Fatalf("new watcher: %v", err)
	}
	<-reloads // the initial load
	addr := serveTLS(t, w)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = w.Run(ctx) }()

	if got := servedSerial(t, addr, pool(ca.Cert)); got.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v, want the first certificate %v", got, first.Cert.SerialNumber)
	}

	// fsnotify needs the watch in place before the swap; retry the swap
	// until a reload is seen rather than sleeping a guessed time.
	second := secretvol.Issue(t, ca)
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		vol.Update(second.CertPEM, second.KeyPEM)
		select {
		case err := <-reloads:
			if err != nil {
				t.Fatalf("reload failed: %v", err)
			}
			seen = true
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("no reload within 10s of swapping ..data")
		}
	}
	if got := servedSerial(t, addr, pool(ca.Cert)); got.Cmp(second.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v after rotation, want %v", got, second.Cert.SerialNumber)
	}
}

func TestKeepsPreviousCertificateWhenNewFilesAreBroken(t *testing.T) {
	ca := secretvol.NewCA(t)
	first := secretvol.Issue(t, ca)
	vol := secretvol.New(t, first.CertPEM, first.KeyPEM)
	reloads := make(chan error, 16)
	w, err := certwatch.New(vol.CertFile(), vol.KeyFile(), slog.New(slog.NewTextHandler(io.Discard, nil)),
		certwatch.Options{OnReload: func(_ *x509.Certificate, err error) { reloads <- err }})
	if err != nil {
		t.Fatalf("new watcher: %v", err)
	}
	<-reloads
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = w.Run(ctx) }()

	// A certificate with the key of another pair is not a valid pair.
	other := secretvol.Issue(t, ca)
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		vol.Update(other.CertPEM, first.KeyPEM)
		select {
		case err := <-reloads:
			if err == nil {
				t.Fatal("reload of a mismatched key pair succeeded")
			}
			seen = true
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("no reload attempt within 10s")
		}
	}
	if got := w.Leaf().SerialNumber; got.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("serving serial %v, want the previous certificate %v kept", got, first.Cert.SerialNumber)
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
