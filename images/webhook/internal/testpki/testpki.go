// Package testpki makes throwaway CAs and serving certificates for tests. It
// is imported only by tests; nothing in the shipped webhook uses it.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA signs serving certificates.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// NewCA makes a self-signed CA valid for a day.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate CA key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "managed-starrocks-webhook test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("create CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse CA certificate: %v", err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool is a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Serving is a PEM key pair.
type Serving struct {
	CertPEM, KeyPEM []byte
	Serial          *big.Int
}

// Issue signs a serving certificate for 127.0.0.1, localhost and the
// in-cluster Service names.
func (ca *CA) Issue(t testing.TB) Serving {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate serving key: %v", err)
	}
	sn := serial(t)
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: "managed-starrocks-webhook"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "managed-starrocks-webhook",
			"managed-starrocks-webhook.d8-managed-starrocks.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatalf("create serving certificate: %v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("marshal serving key: %v", err)
	}
	return Serving{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		Serial:  sn,
	}
}

// SecretDir lays files out like a kubelet Secret volume: the visible
// tls.crt/tls.key are symlinks through `..data`, which points to a
// timestamped directory and is swapped atomically on update.
type SecretDir struct {
	Dir string
	t   testing.TB
	gen int
}

// NewSecretDir creates the volume with a first key pair.
func NewSecretDir(t testing.TB, pair Serving) *SecretDir {
	t.Helper()
	s := &SecretDir{Dir: t.TempDir(), t: t}
	s.Update(pair)
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(s.Dir, name)); err != nil {
			t.Fatalf("link %s: %v", name, err)
		}
	}
	return s
}

// Update swaps in a new key pair the way the kubelet does.
func (s *SecretDir) Update(pair Serving) {
	s.t.Helper()
	s.gen++
	ts := filepath.Join(s.Dir, "..ts"+big.NewInt(int64(s.gen)).String())
	if err := os.Mkdir(ts, 0o755); err != nil {
		s.t.Fatalf("mkdir %s: %v", ts, err)
	}
	for name, data := range map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM} {
		if err := os.WriteFile(filepath.Join(ts, name), data, 0o600); err != nil {
			s.t.Fatalf("write %s: %v", name, err)
		}
	}
	tmp := filepath.Join(s.Dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		s.t.Fatalf("link ..data_tmp: %v", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, "..data")); err != nil {
		s.t.Fatalf("swap ..data: %v", err)
	}
}

// CertFile and KeyFile are the paths a server is given.
func (s *SecretDir) CertFile() string { return filepath.Join(s.Dir, "tls.crt") }
func (s *SecretDir) KeyFile() string  { return filepath.Join(s.Dir, "tls.key") }

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("serial: %v", err)
	}
	return n
}
